"""How calls bind to parameters: a ``Layout`` per function, a ``Plan`` per call shape.

A call shape is the number of positional arguments and the keyword names. Everything about binding that shape --
which values are static, which dynamic, which defaults fill the gaps -- is worked out once, by ``inspect``, when the
shape is first seen. What is left for every later call is generated as a plain function (``generate_dispatch``)
that indexes ``args``/``kwargs`` directly: the cache-hit path then costs about as much as building a tuple key and one
dict lookup (see ``benchmarks/dispatch.py``).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from . import _freeze, _hidden
from ._annotations import find_static_params

_Kind = inspect.Parameter


@dataclasses.dataclass(frozen=True)
class Source:
    """Where a parameter's value comes from in one call shape."""

    kind: str  # "arg" | "kw" | "default" | "varpos" | "varkw"
    index: int = 0  # "arg": position; "varpos": first extra position
    names: tuple[str, ...] = ()  # "kw": (name,); "varkw": extra keyword names
    default: Any = None  # "default": the value

    def get(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
        if self.kind == "arg":
            return args[self.index]
        if self.kind == "kw":
            return kwargs[self.names[0]]
        if self.kind == "varpos":
            return args[self.index :]
        if self.kind == "varkw":
            return {n: kwargs[n] for n in self.names}
        return self.default

    def expr(self, slot: str) -> str:
        """Python source for the value, in generated code; ``slot`` names a constant for defaults."""
        if self.kind == "arg":
            return f"args[{self.index}]"
        if self.kind == "kw":
            return f"kwargs[{self.names[0]!r}]"
        if self.kind == "varpos":
            return f"args[{self.index}:]"
        if self.kind == "varkw":
            return "{" + ", ".join(f"{n!r}: kwargs[{n!r}]" for n in self.names) + "}"
        return slot


@dataclasses.dataclass(frozen=True)
class Layout:
    """The static/dynamic split of one function's parameters."""

    function: str
    signature: inspect.Signature
    static: frozenset[str]  # parameter names, variadic ones included when their extras are static

    @classmethod
    def of(cls, fn: Callable[..., Any], function: str, extra_names: frozenset[str],
           extra_nums: tuple[int, ...]) -> Layout:
        signature = inspect.signature(fn)
        params = find_static_params(fn, function)
        static = set(params.names) | set(extra_names) | _names_of(signature, extra_nums, function)
        for p in signature.parameters.values():
            if (p.kind is _Kind.VAR_POSITIONAL and params.var_positional) or (
                p.kind is _Kind.VAR_KEYWORD and params.var_keyword
            ):
                static.add(p.name)
        unknown = static - set(signature.parameters)
        if unknown:
            raise TypeError(f"{function}(): static_argnames names {sorted(unknown)}, which are not parameters of "
                            f"{function}{signature}.")
        _hidden.warn_if_hidden(fn, static)
        return cls(function, signature, frozenset(static))

    @property
    def static_labels(self) -> tuple[str, ...]:
        return tuple(n for n in self.signature.parameters if n in self.static)

    def assemble(self, dynamic: Mapping[str, Any], statics: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """Rebuild the call of the user's function from its parts, by parameter name."""
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for name, p in self.signature.parameters.items():
            given = statics if name in statics else dynamic
            if p.kind is _Kind.VAR_POSITIONAL:
                args.extend(given.get(name, ()))
            elif p.kind is _Kind.VAR_KEYWORD:
                kwargs.update(given.get(name, {}))
            else:  # an absent parameter gets its default here, just as if the call had left it out
                value = given.get(name, p.default)
                if p.kind is _Kind.KEYWORD_ONLY:
                    kwargs[name] = value
                else:
                    args.append(value)
        return args, kwargs


def _names_of(signature: inspect.Signature, nums: tuple[int, ...], function: str) -> set[str]:
    positional = [p.name for p in signature.parameters.values()
                  if p.kind in (_Kind.POSITIONAL_ONLY, _Kind.POSITIONAL_OR_KEYWORD)]
    out = set()
    for i in nums:
        if not -len(positional) <= i < len(positional):
            raise TypeError(f"{function}(): static_argnums contains {i}, but {function} has "
                            f"{len(positional)} positional parameters {positional}.")
        out.add(positional[i])
    return out


class _Pos(int):
    """Placeholder for a positional argument while binding a call shape."""


class _Kw(str):
    """Placeholder for a keyword argument while binding a call shape."""


@dataclasses.dataclass(frozen=True)
class Plan:
    """One call shape of one function: where each static and dynamic value comes from."""

    layout: Layout
    statics: tuple[tuple[str, Source], ...]  # in signature order: the key's order
    dynamics: tuple[tuple[str, Source], ...]  # present dynamic values, in signature order
    variant: tuple[str, ...]  # names of the dynamic parameters given
    vid: int  # a small number per variant: the first item of every cache key
    nargs: int
    kwnames: tuple[str, ...]

    @classmethod
    def bind(cls, layout: Layout, nargs: int, kwnames: tuple[str, ...], variants: dict[tuple[str, ...], int]) -> Plan:
        try:
            bound = layout.signature.bind(*map(_Pos, range(nargs)), **{k: _Kw(k) for k in kwnames})
        except TypeError as err:
            raise TypeError(f"{layout.function}(): {err}") from None
        statics: list[tuple[str, Source]] = []
        dynamics: list[tuple[str, Source]] = []
        for name, p in layout.signature.parameters.items():
            src = _source(p, bound.arguments.get(name, _MISSING))
            if name in layout.static:
                statics.append((name, src if src is not None else _default_source(p)))
            elif src is not None:
                dynamics.append((name, src))
        # variadic extras go last, so that the program's positional arguments are the named ones, then *args
        dynamics.sort(key=lambda item: item[1].kind in ("varpos", "varkw"))
        variant = tuple(n for n, _ in dynamics)
        vid = variants.setdefault(variant, len(variants))
        return cls(layout, tuple(statics), tuple(dynamics), variant, vid, nargs, kwnames)

    def key(self, args: tuple[Any, ...], kwargs: Mapping[str, Any], freeze_pair: FreezePair) -> tuple[Any, ...]:
        """The cache key of a call: the generic form of what ``dispatch`` computes inline."""
        key: list[Any] = [self.vid]
        for j, (_, src) in enumerate(self.statics):
            value = src.get(args, kwargs)
            key.extend((type(value), value) if type(value) in _freeze.ATOMIC else freeze_pair(value, j))
        return tuple(key)

    def static_values(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        return {name: src.get(args, kwargs) for name, src in self.statics}

    def dynamic_values(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """Positional values for the jitted program, and the extra keywords of a dynamic ``**kwargs``."""
        pos: list[Any] = []
        kw: dict[str, Any] = {}
        for _, src in self.dynamics:
            if src.kind == "varpos":
                pos.extend(src.get(args, kwargs))
            elif src.kind == "varkw":
                kw.update(src.get(args, kwargs))
            else:
                pos.append(src.get(args, kwargs))
        return pos, kw


_MISSING = object()

FreezePair = Callable[[Any, int], tuple[Any, Any]]


class _FrozenMarker:
    __slots__ = ()

    def __repr__(self) -> str:
        return "FROZEN"


FROZEN = _FrozenMarker()
"""Cache keys are flat: ``(vid, type0, value0, type1, value1, ...)``, one pair per static parameter. An atomic
value is its own pair; any other value is ``(FROZEN, its frozen key)``. Flat keys hash and compare faster than
nested ones (measured: ~100 ns a call)."""


def to_pair(key: Any) -> tuple[Any, Any]:
    """The pair of a frozen key inside a flat cache key. Long containers get their hash computed once (``Hashed``);
    short ones stay plain tuples, which hash in C faster than a Python-level ``__hash__`` is called."""
    if not _freeze.is_container(key):
        return key  # type: ignore[no-any-return]
    if type(key) is not _freeze.Hashed and _freeze.size(key) >= _HASH_ONCE_LEN:
        key = _freeze.Hashed(key)
    return (FROZEN, key)


_HASH_ONCE_LEN = 16


def static_keys(key: tuple[Any, ...]) -> list[Any]:
    """The frozen key of each static parameter, from a flat cache key."""
    pairs = zip(key[1::2], key[2::2])
    return [v if t is FROZEN else (t, v) for t, v in pairs]


def _source(p: inspect.Parameter, bound: Any) -> Source | None:
    if bound is _MISSING:
        return None
    if p.kind is _Kind.VAR_POSITIONAL:
        return Source("varpos", index=int(bound[0])) if bound else None
    if p.kind is _Kind.VAR_KEYWORD:
        return Source("varkw", names=tuple(bound)) if bound else None
    if isinstance(bound, _Kw):
        return Source("kw", names=(str(bound),))
    return Source("arg", index=int(bound))


def _default_source(p: inspect.Parameter) -> Source:
    if p.kind is _Kind.VAR_POSITIONAL:
        return Source("default", default=())
    if p.kind is _Kind.VAR_KEYWORD:
        return Source("default", default={})
    return Source("default", default=p.default)


def generate_dispatch(plan: Plan, namespace: dict[str, Any], entry: bool = False) -> Callable[..., Any]:
    """Write the cache-hit path of one call shape as a plain function.

    ``namespace`` supplies ``cache``, ``miss``, ``freeze_pair``, ``dynamic_error``, ``next_call`` and ``reroute``.
    The result takes ``(args, kwargs)``: it counts the call, builds the flat key (atomic statics inline, others
    through ``freeze_pair``), looks the program up and calls it with the dynamic values. A plan for keyword calls is
    found by keyword names alone, so it checks the number of positionals and reroutes on a mismatch.

    With ``entry``, the result is a ``__call__(self, *args, **kwargs)`` for this shape of positional call, which
    hands any other shape to ``general(self, args, kwargs)``: one Python frame per call instead of two, about
    150 ns of the ~400 ns jaxstatic adds to a call.
    """
    ns = dict(namespace, ATOMIC=_freeze.ATOMIC)
    if entry:
        lines = ["def dispatch(self, *args, **kwargs):", f"    if kwargs or len(args) != {plan.nargs}:",
                 "        return general(self, args, kwargs)"]
    else:
        lines = ["def dispatch(args, kwargs):"]
    if plan.kwnames:
        lines += [f"    if len(args) != {plan.nargs}:", "        return reroute(args, kwargs)"]
    keys = [str(plan.vid)]
    for j, (_, src) in enumerate(plan.statics):
        if src.kind == "default" and _constant_key(src.default) is not None:
            ns[f"T{j}"], ns[f"V{j}"] = to_pair(_constant_key(src.default))
            keys += [f"T{j}", f"V{j}"]
            continue
        ns[f"D{j}"] = src.default
        lines += [f"    v{j} = {src.expr(f'D{j}')}", f"    t{j} = type(v{j})",
                  f"    if t{j} not in ATOMIC:", f"        t{j}, v{j} = freeze_pair(v{j}, {j})"]
        keys += [f"t{j}", f"v{j}"]
    call = []
    for _, src in plan.dynamics:
        call.append("*" + src.expr("") if src.kind == "varpos" else "**" + src.expr("") if src.kind == "varkw"
                    else src.expr(""))
    lines += [f"    key = ({', '.join(keys)},)", "    next_call()", "    fn = cache.get(key)",
              "    if fn is None:", "        return miss(key, args, kwargs)",
              "    try:", f"        return fn({', '.join(call)})",
              "    except TypeError as err:", "        raise dynamic_error(args, kwargs, err)"]
    exec("\n".join(lines), ns)
    dispatch: Callable[..., Any] = ns["dispatch"]
    return dispatch


def _constant_key(value: Any) -> Any:
    """The key of a default value that can never change (atomic, or an immutable tuple), else None."""
    try:
        key = _freeze.freeze(value)
    except _freeze.Unfreezable:
        return None
    return key if _freeze.is_immutable(key) else None
