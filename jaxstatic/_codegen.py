"""The flat cache key, and the generated code that builds it and dispatches a call.

Cache keys are flat: ``(vid, type0, value0, type1, value1, ...)``, one pair per static parameter. An atomic value
(``type(v) in _freeze.ATOMIC``) is its own pair; any other value is ``(FROZEN, its frozen key)``. Flat keys hash and
compare faster than nested ones (measured: ~100 ns a call).

For each call shape, ``generate`` writes its functions from the same lines: ``key(args, kwargs)`` (the key alone, for
ahead-of-time objects), the dispatcher (the key, the lookup, the call), and ``key_then_begin`` (the dispatcher up
to a miss, for a shape's first call). Like attrs' generated methods, the source is compiled under a unique file
name with a ``linecache`` entry, so tracebacks and pdb show the real lines, and ``inspect.getsource`` reads them: a
function's dispatcher of calls with ``n`` positional values is ``inspect.getsource(f._core._by_nargs[n])``. The
names the code calls are bound by ``Core._namespace``.
"""

from __future__ import annotations

import inspect
import itertools
import linecache
import operator
import threading
import weakref
from collections.abc import Callable
from typing import Any

from . import _freeze, _memo, _traceback
from ._plan import Layout, Plan


class _FrozenMarker:
    __slots__ = ()

    def __repr__(self) -> str:
        return "FROZEN"


FROZEN = _FrozenMarker()

KeyPair = Callable[[Any, int], tuple[Any, Any]]

_HASH_ONCE_LEN = 16


def to_pair(key: Any) -> tuple[Any, Any]:
    """The pair of a frozen key inside a flat cache key. Long containers get their hash computed once (``Hashed``);
    short ones stay plain tuples, which hash in C faster than a Python-level ``__hash__`` is called."""
    if not _freeze.is_container(key):
        return key  # type: ignore[no-any-return]
    if type(key) is not _freeze.Hashed and _freeze.size(key) >= _HASH_ONCE_LEN:
        key = _freeze.Hashed(key)
    return (FROZEN, key)


def static_keys(key: tuple[Any, ...]) -> list[Any]:
    """The frozen key of each static parameter, from a flat cache key."""
    pairs = zip(key[1::2], key[2::2])
    return [v if t is FROZEN else (t, v) for t, v in pairs]


def _constant_key(value: Any) -> Any:
    """The key of a default value that can never change (atomic, or an immutable tuple), else None."""
    try:
        key = _freeze.freeze(value)
    except _freeze.Unfreezable:
        return None
    return key if _freeze.is_immutable(key) else None


def constant_pair(value: Any) -> tuple[Any, Any] | None:
    """The key pair of a default value that can never change, which a call leaving it out keys by, else None."""
    key = _constant_key(value)
    return None if key is None else to_pair(key)


def _key_lines(plan: Plan, ns: dict[str, Any]) -> tuple[list[str], str]:
    """The statements that compute the key of a call of this shape into ``key``, and its tuple expression."""
    lines: list[str] = []
    keys = [str(plan.vid)]
    for j, (_, src) in enumerate(plan.statics):
        if src.kind == "default" and _constant_key(src.default) is not None:
            ns[f"T{j}"], ns[f"V{j}"] = to_pair(_constant_key(src.default))
            keys += [f"T{j}", f"V{j}"]
            continue
        ns[f"D{j}"] = src.default
        # A float that is neither zero nor NaN is its own exact key, as _freeze gives it: only ±0.0 and NaN
        # compare unlike their bits. Inline, it costs ~0.1 us less than key_pair (float statics are common).
        # A container remembered by identity (_memo.IdentityMemo) is checked here, not in key_pair: two
        # Python calls fewer, ~0.2 us of a same-object dict config's hit.
        same = _memo.UNCHANGED.format(v=f"v{j}", h=f"h{j}", t=f"t{j}")
        lines += [f"v{j} = {src.expr(f'D{j}')}", f"t{j} = type(v{j})", f"if t{j} not in ATOMIC:",
                  f"    if t{j} is not float or not v{j} or v{j} != v{j}:",
                  f"        h{j} = remembered(id(v{j}))",
                  f"        if h{j} is not None and h{j}[0] is v{j} and ({same}):",
                  f"            t{j}, v{j} = h{j}[1]",
                  "        else:",
                  f"            t{j}, v{j} = key_pair(v{j}, {j})"]
        keys += [f"t{j}", f"v{j}"]
    return lines, f"({', '.join(keys)},)"


# The numbers in use per name ("dispatch of f(2 positional)"): a file name is taken again once its functions are
# gone, since JAX keeps every file name its tracebacks met for good (``source_info_util.is_user_filename``, ~90
# bytes each); a new name per wrapper was JAX's memory that a wrapper made per call left behind.
_numbers: dict[str, set[int]] = {}
_numbers_lock = threading.Lock()  # the finalizer below takes none: set.discard is atomic


def _compile(source: str, ns: dict[str, Any], what: str, owner: str) -> None:
    """Run ``source`` into ``ns``, its lines in ``linecache`` while the function ``ns[owner]`` lives.

    The generated functions share ``ns`` as their globals, so each keeps the others alive: the entry goes with all
    of them. Kept for good, a wrapper made per call (``js.jit(self.step)``, a lambda) left ~12 KB of source behind
    it each time; a debugger or a traceback of a live function still reads its lines."""
    with _numbers_lock:
        used = _numbers.setdefault(what, set())
        number = next(k for k in itertools.count() if k not in used)
        used.add(number)
    filename = f"{_traceback.GENERATED}/{what} #{number}"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec"), ns)
    weakref.finalize(ns[owner], _forget, filename, used, number).atexit = False


def _forget(filename: str, used: set[int], number: int) -> None:
    linecache.cache.pop(filename, None)
    used.discard(number)


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def _miss_lines(miss: str, p: str = "") -> list[str]:
    """The ``_miss.Miss`` that the expression ``miss`` gives, run in the generated function's own frame (why:
    ``Miss``). ``p`` prefixes the names it sets (the lane's ``__call__`` has the user's parameters for locals)."""
    return [f"{p}miss = {miss}", "try:", f"    {p}result = {p}miss.program(*{p}miss.pos, **{p}miss.kw)",
            f"except BaseException as {p}err:", f"    {p}raised = {p}miss.fail({p}err)", f"    if {p}raised is {p}err:",
            "        raise", f"    raise {p}raised from None", f"return {p}miss.done({p}result)"]


def generate(plan: Plan, namespace: dict[str, Any], function: str) -> dict[str, Callable[..., Any]]:
    """``{"key": key, "dispatch": dispatch, "key_then_begin": key_then_begin, "entry": entry}`` for one call shape.

    ``namespace`` supplies ``cache``, ``lookup`` (its bound ``get``), ``touch``, ``begin`` (``_miss.begin``: the
    ``Miss`` of a key not cached), ``key_pair``, ``remembered`` (``IdentityMemo.remembered``), ``dynamic_error``,
    ``failed``, ``uncomparable``, ``next_call``, ``reroute`` and ``route`` (the dispatcher of any call's shape).
    The dispatcher takes ``(args, kwargs)``: it counts the call, builds the key, looks the program up (keeping the
    cache's order of use when it holds more than one), and calls it with the dynamic values, or runs the miss
    (``_miss_lines``). A plan for keyword calls is found
    by keyword names alone, so it checks the number of positionals and reroutes on a mismatch. ``key_then_begin(args,
    kwargs)`` is the dispatcher's lines up to the miss, returning the ``Miss`` (a key cached runs as a hit does):
    for a caller that runs it in its own frame, a shape's first call (``Core._first_call``).
    ``entry(self, *args, **kwargs)`` does the same as a ``__call__`` for calls of this shape, and hands any other
    shape to that shape's dispatcher: the first positional shape's is the function's own ``__call__`` (one Python
    frame per call instead of two: about 150 ns of the ~400 ns jaxstatic adds to a call), and each shape's is what
    its hit in C hands a miss to (``_miss_lines``).
    """
    ns = dict(namespace, ATOMIC=_freeze.ATOMIC, hide=_traceback.hide, is_not=operator.is_not)
    key_lines, key_expr = _key_lines(plan, ns)
    call = ", ".join("*" + src.expr("") if src.kind == "varpos" else "**" + src.expr("") if src.kind == "varkw"
                     else src.expr("") for _, src in plan.dynamics)
    # Counted once the key is found (a key's __hash__ that raises leaves no call counted); from then on a failure,
    # the order of use kept (which hashes the key again) included, is counted as failed, never as a hit.
    # A key's __eq__ that raises (met on a hash collision) is a static value that cannot be compared: said so, as a
    # ValueError too, as jax.jit does; a __hash__ that raises is raised as it is (uncomparable tells them apart).
    found = [*key_lines, f"key = {key_expr}", "try:", "    fn = lookup(key)", "except Exception as err:",
             "    raise uncomparable(key, args, kwargs, err)", "next_call()"]
    body = [*found, "if fn is None:", *_indent(_miss_lines("begin(key, args, kwargs)")),
            "try:", "    if len(cache) > 1:", "        touch(key)", f"    return fn({call})",
            "except TypeError as err:", "    raise dynamic_error(args, kwargs, err)",
            "except BaseException:", "    failed(args, kwargs)", "    raise"]
    reroute = [f"if len(args) != {plan.nargs}:", "    return reroute(args, kwargs)"] if plan.kwnames else []
    other = (f"len(args) != {plan.nargs} or tuple(kwargs) != {plan.kwnames!r}" if plan.kwnames
             else f"kwargs or len(args) != {plan.nargs}")
    # The frame a user calls drops jaxstatic's frames from a failure's traceback (_traceback.hide).
    lines = ["def key(args, kwargs):", *_indent([*key_lines, f"return {key_expr}"]), "",
             "def dispatch(args, kwargs):", *_indent([*reroute, *body]), "",
             "def key_then_begin(args, kwargs):", *_indent([*found, "return begin(key, args, kwargs)"]), "",
             "def entry(self, /, *args, **kwargs):",
             *_indent(["try:", *_indent([f"if {other}:", "    return route(args, kwargs)(args, kwargs)", *body]),
                       "except BaseException as err:", "    hide(err)", "    raise"])]
    shape = ", ".join([f"{plan.nargs} positional", *plan.kwnames])
    _compile("\n".join(lines) + "\n", ns, f"dispatch of {function}({shape})", "key")
    return {name: ns[name] for name in ("key", "dispatch", "key_then_begin", "entry")}


def generate_lane(layout: Layout, namespace: dict[str, Any], function: str) -> Callable[..., Any]:
    """The ``__call__`` of the exact-key lane (``_lane``): the user's parameters by name, so that Python binds any
    call shape in C, then one type check per static value and JAX's own call.

    ``namespace`` supplies ``_js_fast`` (the ``jax.jit`` whose static arguments are ours), ``_js_next`` (counts the
    call), ``_js_kept`` (the ``get`` of ``id -> object`` of the other static values the lane takes),
    ``_js_other(self, positional, keyword_only, rest)`` (a call missing or given extra arguments),
    ``_js_switch(self, positional, keyword_only)`` (a static value of another type) and
    ``_js_dynamic_error``/``_js_failed`` (``(args, kwargs)`` of the canonical call). An extra positional argument,
    or a dynamic parameter with a default left out, reaches ``_js_other`` (the function's own error, or the general
    path's handling); Python's binding errors (a missing argument, an unknown keyword, a value given twice) name the
    user's function.
    The generated names start with ``_js_``; ``_lane`` refuses functions whose parameters do too.
    """
    params = list(layout.signature.parameters.values())
    ns = dict(namespace, _js_NO=NO, _js_ATOMIC=_freeze.LANE, _js_type=type, _js_hide=_traceback.hide)
    lines = [f"def __call__(_js_self, {', '.join(_lane_parameters(params, layout.static, ns))}):",
             *_lane_body(params, layout.static, ns)]
    # The outermost frame of a call drops jaxstatic's frames from a failure's traceback (``_traceback.hide``); a
    # ``try`` costs nothing when the call succeeds.
    lines = [lines[0], "  try:", *(" " * 2 + line for line in lines[1:]),
             "  except BaseException as _js_exc:", "    _js_hide(_js_exc)", "    raise"]
    _compile("\n".join(lines) + "\n", ns, f"exact-key lane of {function}", "__call__")
    entry: Callable[..., Any] = ns["__call__"]
    entry.__qualname__ = function  # what Python's own binding errors name: "f() got multiple values for ..."
    return entry


def _lane_parameters(params: list[inspect.Parameter], static: frozenset[str], ns: dict[str, Any]) -> list[str]:
    """The lane's parameters, as the user's: Python binds the call and raises the function's own error for a missing
    argument (no default of ours to test per required parameter: ~0.1 us a call less). A positional Static default
    is the default itself (passed to JAX explicitly: one key either way). A keyword-only one is ``_js_NO``, then its
    default (``_lane_body``): a call with extra positionals keeps the keywords the caller gave, for the function's
    own message. A left-out dynamic parameter with a default goes the general path (JAX would trace its default).
    No ``**extra``: an unknown keyword gets Python's own error, and the empty dict Python would make for it on every
    call cost ~0.1 us (2% of a ``jax.jit`` hit)."""
    spelled = {}
    for p in params:
        spelled[p.name] = p.name
        if p.default is not p.empty:
            given = p.name in static and p.kind is not p.KEYWORD_ONLY
            ns[f"_js_D_{p.name}"] = p.default if given else NO
            spelled[p.name] += f"=_js_D_{p.name}"
    head = ([spelled[p.name] for p in params if p.kind is not p.KEYWORD_ONLY] + ["*_js_rest"]
            + [spelled[p.name] for p in params if p.kind is p.KEYWORD_ONLY])
    pos_only = sum(p.kind is p.POSITIONAL_ONLY for p in params)
    if pos_only:
        head.insert(pos_only, "/")
    return head


def _lane_body(params: list[inspect.Parameter], static: frozenset[str], ns: dict[str, Any]) -> list[str]:
    """The lane's statements: a call the lane cannot take handed on, a keyword-only Static default filled in, the
    type check of each static value, JAX's call, and the miss of a static value of another type."""
    positional = [p.name for p in params if p.kind is not p.KEYWORD_ONLY]
    kwonly = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
    left_out = [p.name for p in params if p.default is not p.empty and p.name not in static]
    pos_tuple = "(" + "".join(f"{n}, " for n in positional) + ")"
    kw_dict = "{" + ", ".join(f"{n!r}: {n}" for n in kwonly) + "}"
    lines = ["    if _js_rest" + "".join(f" or {n} is _js_NO" for n in left_out) + ":",
             f"        return _js_other(_js_self, {pos_tuple}, {kw_dict}, _js_rest)"]
    for p in params:
        if p.name in static and p.kind is p.KEYWORD_ONLY and p.default is not p.empty:
            ns[f"_js_V_{p.name}"] = p.default
            lines += [f"    if {p.name} is _js_NO:", f"        {p.name} = _js_V_{p.name}"]
    check = " and ".join(f"(_js_type({p.name}) in _js_ATOMIC or _js_kept(id({p.name})) is {p.name})"
                         for p in params if p.name in static) or "True"
    call = ", ".join(positional + [f"{n}={n}" for n in kwonly])
    return [*lines, f"    if {check}:", "        _js_next()", "        try:", f"            return _js_fast({call})",
            "        except TypeError as _js_err:",
            f"            raise _js_dynamic_error({pos_tuple}, {kw_dict}, _js_err)",
            "        except BaseException:", f"            _js_failed({pos_tuple}, {kw_dict})", "            raise",
            *_indent(_miss_lines(f"_js_switch(_js_self, {pos_tuple}, {kw_dict})", "_js_"))]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


NO = _Missing()
"""A parameter the caller left out, in the lane's ``__call__``."""


__all__ = ["FROZEN", "NO", "KeyPair", "constant_pair", "generate", "generate_lane", "static_keys", "to_pair"]
