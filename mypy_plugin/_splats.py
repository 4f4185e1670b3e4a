"""Which value a ``*args``/``**kwargs`` splat gives a parameter, when the splat's type or spelling says exactly.

``f(x, **{"cfg": {...}})`` gives ``cfg`` the literal's value; ``f(x, **opts)`` with ``opts: Cfg`` (a ``TypedDict``)
gives it the item's type when the key is required; ``f(*args)`` with ``args: tuple[Array, dict[str, Array]]``
gives each parameter its item. A ``dict[str, V]`` gives ``V`` only to a parameter that is required and can get its
value from nowhere else (the call fails otherwise), and to ``**options`` when no other parameter can take its keys
(only an empty dict would give it nothing). Anything else (a list, a ``**`` inside the literal, keys
built at run time, a parameter with a default) tells nothing: silence.
"""

from __future__ import annotations

from typing import TypeGuard

from mypy.checker import TypeChecker
from mypy.nodes import ARG_STAR, ARG_STAR2, ArgKind, DictExpr, Expression, StrExpr
from mypy.types import (
    Instance,
    ProperType,
    TupleType,
    Type,
    TypedDictType,
    UnpackType,
    get_proper_type,
)

from ._values import expression_type

__all__ = ["given", "star_types"]


def star_types(api: TypeChecker, args: list[Expression], kinds: list[ArgKind]) -> list[Type | None] | None:
    """The types of the splatted arguments (``None`` elsewhere), or ``None`` when there are none (most calls)."""
    if not any(k.is_star() for k in kinds):
        return None
    return [expression_type(api, a, None) if k.is_star() else None for a, k in zip(args, kinds)]


def given(
    sig_kinds: list[ArgKind],
    sig_names: list[str | None],
    formal: int,
    actual: int,
    args: list[Expression],
    kinds: list[ArgKind],
    formal_to_actual: list[list[int]],
    types: list[Type | None],
) -> list[Expression | Type]:
    """The values (expressions, or types when only those are known) the splat ``args[actual]`` gives ``formal``."""
    if kinds[actual] == ARG_STAR2:
        return _from_mapping(sig_kinds, sig_names, formal, actual, args[actual], formal_to_actual, types[actual])
    t = get_proper_type(types[actual])
    if kinds[actual] != ARG_STAR or sig_kinds[formal] == ARG_STAR or not isinstance(t, TupleType):
        return []
    if any(isinstance(get_proper_type(item), UnpackType) for item in t.items):
        return []  # ``tuple[int, *Ts]``: positions unknown
    position = sum(1 for f in range(formal) if actual in formal_to_actual[f])
    return [t.items[position]] if position < len(t.items) else []


def _from_mapping(
    sig_kinds: list[ArgKind],
    sig_names: list[str | None],
    formal: int,
    actual: int,
    expr: Expression,
    formal_to_actual: list[list[int]],
    splat: Type | None,
) -> list[Expression | Type]:
    name = sig_names[formal]
    if isinstance(expr, DictExpr):
        keys = [key.value if isinstance(key, StrExpr) else None for key, _ in expr.items]
        if None in keys:
            return []  # ``**{**base, ...}`` or a key built at run time
        if sig_kinds[formal] == ARG_STAR2:  # collected by ``**options``: the keys no other parameter takes
            taken = {n for n, k in zip(sig_names, sig_kinds) if n is not None and not k.is_star()}
            return [value for key, (_, value) in zip(keys, expr.items) if key not in taken]
        found: list[Expression | Type] = [value for key, (_, value) in zip(keys, expr.items) if key == name]
        return found[-1:]  # the last one wins in a dict literal
    t = get_proper_type(splat)
    if sig_kinds[formal] == ARG_STAR2:
        alone = all(actual not in actuals for f, actuals in enumerate(formal_to_actual) if f != formal)
        return [t.args[1]] if alone and _str_dict(t) else []
    if name is None:
        return []
    if isinstance(t, TypedDictType):
        return [t.items[name]] if name in t.items and name in t.required_keys else []
    if (
        _str_dict(t)
        and sig_kinds[formal].is_required()
        and formal_to_actual[formal] == [actual]
    ):
        return [t.args[1]]
    return []


def _str_dict(t: ProperType | None) -> TypeGuard[Instance]:
    """``dict[str, V]``: a splat whose keys are names known only at run time."""
    return isinstance(t, Instance) and t.type.fullname == "builtins.dict" and len(t.args) == 2
