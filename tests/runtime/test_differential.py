"""``js.jit`` against ``jax.jit``, differentially: generated signatures, options and call sequences, in both hit paths.

Each example writes a function (positional-only parameters, defaults, ``*args``, keyword-only ones, ``**kwargs``),
chooses which parameters are static and which donated, and how each is said (``Static[...]``/``Donate[...]``,
``static_argnums``/``static_argnames``, ``donate_argnums``/``donate_argnames``, negative positions and positions into
``*args``), then makes a sequence of calls (equal arguments again, changed statics, equal statics of other types,
keyword or positional spelling, a donated array passed again, one array twice, calls from two threads). The same
calls go to ``js.jit`` and to ``jax.jit`` given the same options, each over its own twin arrays, and after each call
the two agree on: the result (and both on the result computed without jit: no stale program), the exception's class
(jaxstatic's is a subclass of JAX's), the traces of the body, and which inputs are deleted.

The documented differences are modelled, not skipped: ``jax.jit`` is given the options resolved as jaxstatic resolves
them (a parameter static or donated however it is passed, a negative position counted from the named parameters)
and each call as jaxstatic binds it (named parameters positionally where they can be, a static parameter left to
its default given it), since ``js.jit`` shares one program across spellings that ``jax.jit`` traces apart; calls
made from two threads at once may trace fewer times in jaxstatic (equal keys wait on one trace), never more; and
``jax.jit`` shares a program between the static values 0.0 and -0.0, which jaxstatic keeps apart (its result for the
other zero is then not compared, and jaxstatic traces once more).

CI runs a bounded number of examples (``JAXSTATIC_DIFFERENTIAL_EXAMPLES``, default 12 per hit path: about 20 s on two
cores). A long run (``docs/contributing.md``):

    JAXSTATIC_DIFFERENTIAL_EXAMPLES=2000 .venv/bin/python -m pytest tests/runtime/test_differential.py -p no:randomly
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import os
import threading
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import jaxstatic as js
from jaxstatic import Donate, Static

EXAMPLES = int(os.environ.get("JAXSTATIC_DIFFERENTIAL_EXAMPLES", "12"))
_Kind = inspect.Parameter
# 1, 1.0 and True are equal values of other types: each a program in both. 0.0 and -0.0 are equal values of one type:
# jax.jit shares one program between them, js.jit does not (the key follows the program: docs/guides/static-rule.md)
STATICS = [1, 2, 1.0, True, "a", (1, 2), 0.0, -0.0]
KEYS = ("e1", "e2")  # the **kwargs entries calls may give
MAX_EXTRAS = 3


# -- the function under test -------------------------------------------------------------------------------------


def _code(value: Any) -> float:
    """A number for a static value that tells its type too (1, 1.0 and True apart)."""
    if isinstance(value, bool):
        return 10.0 + value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, float):
        return 20.0 + value + 0.5 * (math.copysign(1.0, value) < 0)
    if isinstance(value, str):
        return 30.0 + len(value)
    return 40.0 + sum(map(_code, value))


def combine(values: list[tuple[str, Any]]) -> tuple[Any, ...]:
    """The body of every generated function: each value weighed by where it came from, and a copy of each array
    (so that every donated buffer has an output to be reused for)."""
    flat: list[Any] = []
    for name, value in values:
        if name == "args":
            flat += value
        elif name == "kw":
            flat += [value[k] for k in sorted(value)]
        else:
            flat.append(value)
    total: Any = 0.0
    copies = []
    for i, value in enumerate(flat):
        weight = 1.0 + 0.37 * i
        if hasattr(value, "shape"):
            total = total + weight * value
            copies.append(value + 0)
        else:
            total = total + weight * _code(value)
    return (total, *copies)


@dataclasses.dataclass(frozen=True)
class Param:
    name: str
    kind: Any
    default: Any  # _Kind.empty: none
    role: str  # "static", "donate" or "plain"
    how: str  # "annotation", "argnums", "negative" or "argnames"

    def positional(self) -> bool:
        return self.kind in (_Kind.POSITIONAL_ONLY, _Kind.POSITIONAL_OR_KEYWORD)


@dataclasses.dataclass(frozen=True)
class Spec:
    params: tuple[Param, ...]
    varargs: bool
    varkw: bool
    static_extras: frozenset[int]
    donate_extras: frozenset[int]
    static_entries: frozenset[str]
    donate_entries: frozenset[str]

    def positional(self) -> list[Param]:
        return [p for p in self.params if p.positional()]

    def source(self) -> str:
        parts: list[str] = []
        for p in self.params:
            if p.kind is _Kind.KEYWORD_ONLY and "*" not in parts and "*args" not in parts:
                parts.append("*args" if self.varargs else "*")
            note = {"static": ": Static[Any]", "donate": ": Donate[Any]"}.get(p.role, "") if p.how == "annotation" \
                else ""
            parts.append(f"{p.name}{note}{'' if p.default is _Kind.empty else f' = {p.default!r}'}")
            if p.kind is _Kind.POSITIONAL_ONLY and p is [q for q in self.params if q.kind is p.kind][-1]:
                parts.append("/")
        if self.varargs and "*args" not in parts:
            parts.append("*args")
        if self.varkw:
            parts.append("**kw")
        names = [f"({p.name!r}, {p.name})" for p in self.params if p.positional()]
        names += ["('args', args)"] * self.varargs
        names += [f"({p.name!r}, {p.name})" for p in self.params if not p.positional()]
        names += ["('kw', kw)"] * self.varkw
        return f"def f({', '.join(parts)}):\n    _traced()\n    return combine([{', '.join(names)}])\n"

    def make(self, counter: list[int]) -> Any:
        def traced() -> None:
            counter[0] += 1

        namespace = {"Static": Static, "Donate": Donate, "Any": Any, "combine": combine, "_traced": traced}
        exec(self.source(), namespace)  # the generated function under test
        return namespace["f"]

    def js_options(self) -> dict[str, Any]:
        """The options as the example says them (annotations aside)."""
        npos = len(self.positional())
        out: dict[str, list[Any]] = {"static_argnums": [], "static_argnames": [], "donate_argnums": [],
                                     "donate_argnames": []}
        for i, p in enumerate(self.positional()):
            if p.role != "plain" and p.how in ("argnums", "negative"):
                out[f"{p.role}_argnums"].append(i - npos if p.how == "negative" else i)
        for p in self.params:
            if p.role != "plain" and p.how == "argnames":
                out[f"{p.role}_argnames"].append(p.name)
        out["static_argnums"] += [npos + k for k in sorted(self.static_extras)]
        out["donate_argnums"] += [npos + k for k in sorted(self.donate_extras)]
        out["static_argnames"] += sorted(self.static_entries)
        out["donate_argnames"] += sorted(self.donate_entries)
        return {k: tuple(v) for k, v in out.items() if v}

    def jax_options(self) -> dict[str, Any]:
        """The same options, resolved as jaxstatic resolves them: every static or donated parameter by position
        where it can be passed by position and by name where by keyword, positions counted from 0."""
        npos = len(self.positional())
        out: dict[str, Any] = {}
        for role in ("static", "donate"):
            extras = self.static_extras if role == "static" else self.donate_extras
            entries = self.static_entries if role == "static" else self.donate_entries
            out[f"{role}_argnums"] = tuple(i for i, p in enumerate(self.positional()) if p.role == role) + tuple(
                npos + k for k in sorted(extras))
            out[f"{role}_argnames"] = tuple(p.name for p in self.params if p.role == role
                                            and p.kind is not _Kind.POSITIONAL_ONLY) + tuple(sorted(entries))
        return out


# -- generating ----------------------------------------------------------------------------------------------------


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    kinds = ([_Kind.POSITIONAL_ONLY] * draw(st.integers(0, 2)) + [_Kind.POSITIONAL_OR_KEYWORD] * draw(st.integers(0, 3))
             + [_Kind.KEYWORD_ONLY] * draw(st.integers(0, 2)))
    varargs, varkw = draw(st.booleans()), draw(st.booleans())
    npos = sum(k is not _Kind.KEYWORD_ONLY for k in kinds)
    first_default = draw(st.integers(0, npos))
    params = []
    for i, kind in enumerate(kinds):
        role = draw(st.sampled_from(["static", "donate", "plain", "plain"]))
        has_default = draw(st.booleans()) if kind is _Kind.KEYWORD_ONLY else i >= first_default
        default = _Kind.empty if not has_default else (draw(st.sampled_from(STATICS)) if role == "static" else 0.5)
        if role == "donate" and has_default:
            role = "plain"  # a donated parameter left to its default donates nothing: kept simple
        ways = ["annotation"]
        if kind is not _Kind.KEYWORD_ONLY:
            ways += ["argnums", "negative"]
        if kind is not _Kind.POSITIONAL_ONLY:
            ways.append("argnames")
        params.append(Param(f"p{i}", kind, default, role, draw(st.sampled_from(ways)) if role != "plain" else ""))
    static_extras = frozenset(draw(st.sets(st.integers(0, MAX_EXTRAS - 1), max_size=2))) if varargs else frozenset()
    donate_extras = frozenset(draw(st.sets(st.integers(0, MAX_EXTRAS - 1), max_size=2))) - static_extras \
        if varargs else frozenset()
    static_entries = frozenset(draw(st.sets(st.sampled_from(KEYS), max_size=1))) if varkw else frozenset()
    donate_entries = frozenset(draw(st.sets(st.sampled_from(KEYS), max_size=1))) - static_entries \
        if varkw else frozenset()
    return Spec(tuple(params), varargs, varkw, static_extras, donate_extras, static_entries, donate_entries)


@dataclasses.dataclass(frozen=True)
class Call:
    """One call: each value is ("array", id) or ("static", value); ``by_position``: how many of the named parameters
    given are passed by position (the rest by keyword); ``threads``: made from two threads at once."""

    named: tuple[tuple[str, Any], ...]  # the named parameters given, in signature order
    extras: tuple[Any, ...]
    entries: tuple[tuple[str, Any], ...]
    by_position: int
    threads: bool


@st.composite
def calls(draw: st.DrawFn, spec: Spec, sizes: list[int], previous: list[Call]) -> Call:
    """A call of ``spec``'s function; ``sizes``: the size of each array made so far, by id (an id again is the same
    array object: passed again after it was donated, or twice in one call)."""
    size = draw(st.sampled_from([2, 3]))
    last = dict(previous[-1].named) if previous else {}
    here: list[int] = []

    def array() -> tuple[str, int]:
        how = draw(st.sampled_from(["fresh"] * 3 + ["again"] * bool(sizes) + ["twice"] * bool(here)))
        if how == "fresh":
            sizes.append(size)
        i = draw(st.sampled_from(here)) if how == "twice" else draw(st.sampled_from(range(len(sizes)))) \
            if how == "again" else len(sizes) - 1
        here.append(i)
        return ("array", i)

    def static(name: str) -> tuple[str, Any]:
        old = last.get(name)
        if old is not None and old[0] == "static" and draw(st.booleans()):
            return old  # equal statics again
        return ("static", draw(st.sampled_from(STATICS)))

    named: list[tuple[str, Any]] = []
    skipped_positional_only = False
    for p in spec.params:
        omit = p.default is not _Kind.empty and ((skipped_positional_only and p.kind is _Kind.POSITIONAL_ONLY)
                                                  or draw(st.booleans()))
        if omit:
            skipped_positional_only |= p.kind is _Kind.POSITIONAL_ONLY
            continue
        named.append((p.name, static(p.name) if p.role == "static" else array()))
    order = [p.name for p in spec.positional()]
    given = [n for n, _ in named if n in order]
    prefix = _prefix(given, order)
    nextras = draw(st.integers(0, MAX_EXTRAS)) if spec.varargs and given == order else 0
    extras = tuple(static(f"args[{k}]") if k in spec.static_extras else array() for k in range(nextras))
    least = sum(1 for p in spec.params if p.kind is _Kind.POSITIONAL_ONLY and p.name in dict(named))
    by_position = len(given) if nextras else draw(st.integers(least, max(least, prefix)))
    entries = tuple((k, static(k) if k in spec.static_entries else array())
                    for k in KEYS if spec.varkw and draw(st.booleans()))
    return Call(tuple(named), extras, entries, by_position, draw(st.booleans()))


def _prefix(given: list[str], order: list[str]) -> int:
    n = 0
    while n < len(given) and given[n] == order[n]:
        n += 1
    return n


# -- running -------------------------------------------------------------------------------------------------------


class Side:
    """One of the two functions compared, with its own twin arrays (by id; ``host``: NumPy's, for the result
    computed without jit)."""

    def __init__(self, fn: Any, sizes: list[int], host: bool = False) -> None:
        self.fn, self.sizes, self.host = fn, sizes, host
        self.arrays: dict[int, Any] = {}

    def value(self, spec: tuple[str, Any]) -> Any:
        kind, v = spec
        if kind == "static":
            return v
        if v not in self.arrays:
            made = np.arange(self.sizes[v], dtype=np.float32) + v
            self.arrays[v] = made if self.host else jnp.asarray(made)
        return self.arrays[v]


def spelled(spec: Spec, call: Call, side: Side, canonical: bool) -> tuple[list[Any], dict[str, Any]]:
    """The call's arguments; ``canonical``: as jaxstatic binds it (named positional parameters by position where
    they can be, a static parameter left to its default given it), the spelling ``jax.jit`` is compared with."""
    named = dict(call.named)
    if canonical:  # a static parameter left to its default is given it, where the call can give it
        for i, p in enumerate(spec.params):
            reachable = p.kind is not _Kind.POSITIONAL_ONLY or all(q.name in named for q in spec.params[:i])
            if p.role == "static" and p.name not in named and reachable:
                named[p.name] = ("static", p.default)
    order = [p.name for p in spec.params if p.name in named]
    positional = [p.name for p in spec.positional()]
    count = _prefix([n for n in order if n in positional], positional) if canonical else call.by_position
    args = [side.value(named[n]) for n in order[:count]]
    kwargs = {n: side.value(named[n]) for n in order[count:]}
    args += [side.value(v) for v in call.extras]
    kwargs.update((k, side.value(v)) for k, v in call.entries)
    return args, kwargs


def run(fn: Any, args: list[Any], kwargs: dict[str, Any]) -> tuple[Any, BaseException | None]:
    try:
        return jax.block_until_ready(fn(*args, **kwargs)), None
    except Exception as err:
        return None, err


def expected(spec: Spec, call: Call, sizes: list[int], counter: list[int]) -> Any:
    """The result computed without jit, over NumPy twins."""
    side = Side(spec.make(counter), sizes, host=True)
    try:
        return run(side.fn, *spelled(spec, call, side, canonical=False))[0]
    except Exception:
        return None


def outcomes(spec: Spec, call: Call, side: Side, canonical: bool) -> list[tuple[Any, BaseException | None]]:
    """What the call gives on one side: once, or from two threads at once (over the same arrays: both read them)."""
    prepared = [spelled(spec, call, side, canonical) for _ in range(2 if call.threads else 1)]
    if not call.threads:
        return [run(side.fn, *prepared[0])]
    results: list[Any] = [None, None]
    barrier = threading.Barrier(2)

    def go(j: int) -> None:
        barrier.wait()
        results[j] = run(side.fn, *prepared[j])

    workers = [threading.Thread(target=go, args=(j,)) for j in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return results


def compare(spec: Spec, call: Call, mine: Side, theirs: Side, counts: tuple[list[int], list[int]],
            reference: Any) -> None:
    """The call made on both sides: the same results (and the result without jit), exceptions of the same class,
    as many traces (from two threads, no more in jaxstatic), the same inputs deleted."""
    before = counts[0][0], counts[1][0]
    zero = _signed_zero(spec, call)  # jax.jit may reuse the program of the other zero: its result is not compared
    given = zip(outcomes(spec, call, mine, canonical=False), outcomes(spec, call, theirs, canonical=True))
    for (out, err), (ref_out, ref_err) in given:
        if ref_err is None:
            assert err is None, f"js.jit raised {err!r} where jax.jit returned"
            if not zero:
                _same(out, ref_out)
            if reference is not None:
                _same(out, reference)
        else:
            assert err is not None, f"js.jit returned where jax.jit raised {ref_err!r}"
            # JAX refuses a deleted array with a RuntimeError on a program's first call and a ValueError from its
            # cached dispatch: where jax.jit reused the other zero's program, either class may come
            expect = (RuntimeError, ValueError) if zero and isinstance(ref_err, (RuntimeError, ValueError)) \
                else type(ref_err)
            assert isinstance(err, expect), f"js.jit raised {err!r}, jax.jit {ref_err!r}"
    mine_traces, their_traces = counts[0][0] - before[0], counts[1][0] - before[1]
    if call.threads and zero:
        pass  # fewer traces from the threads, one more for the other zero: neither bound holds
    elif call.threads:
        assert mine_traces <= their_traces, "js.jit traced more often from two threads"
    elif zero:
        assert mine_traces >= their_traces, "js.jit shared a program between 0.0 and -0.0"
    else:
        assert mine_traces == their_traces, f"js.jit traced {mine_traces} times, jax.jit {their_traces}"
    for i in mine.arrays.keys() & theirs.arrays.keys():
        assert mine.arrays[i].is_deleted() == theirs.arrays[i].is_deleted(), f"array {i} deleted in one only"


def _signed_zero(spec: Spec, call: Call) -> bool:
    """Whether a static value of the call (or a static default) is a float zero, signed or not."""
    values = [v for _, v in call.named] + list(call.extras) + [v for _, v in call.entries]
    values += [("static", p.default) for p in spec.params if p.role == "static" and p.name not in dict(call.named)]
    return any(kind == "static" and type(v) is float and v == 0 for kind, v in values)


def _same(a: Any, b: Any) -> None:
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])
@given(data=st.data())
def test_js_jit_does_what_jax_jit_does(hit_path: str, data: st.DataObject) -> None:
    spec = data.draw(specs(), label="spec")
    mine_count, theirs_count, plain_count = [0], [0], [0]
    sizes: list[int] = []
    mine = Side(js.jit(spec.make(mine_count), **spec.js_options()), sizes)
    theirs = Side(jax.jit(spec.make(theirs_count), **spec.jax_options()), sizes)
    history: list[Call] = []
    for _ in range(data.draw(st.integers(1, 5), label="calls")):
        again = bool(history) and data.draw(st.booleans(), label="the same call again")
        call = history[-1] if again else data.draw(calls(spec, sizes, history), label="call")
        if call.threads and _unsafe_from_threads(spec, call):
            call = dataclasses.replace(call, threads=False)
        history.append(call)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compare(spec, call, mine, theirs, (mine_count, theirs_count), expected(spec, call, sizes, plain_count))


def _unsafe_from_threads(spec: Spec, call: Call) -> bool:
    """A call that donates is not made twice at once over the same arrays: which thread consumes them races."""
    donated = {p.name for p in spec.params if p.role == "donate"}
    return (any(n in donated for n, _ in call.named) or bool(spec.donate_extras & set(range(len(call.extras))))
            or any(k in spec.donate_entries for k, _ in call.entries))
