"""The static-hashable rule, judged over mypy types.

A value may be static when it is hashable, or when it is a builtin ``dict``, ``list``, ``tuple``, ``set`` or
``frozenset`` whose keys and items are static; arrays never are. ``judge`` returns why a type breaks the rule, or
``None`` when it keeps it *or when the type cannot tell* (``Any``, type variables without a bound, protocols):
a false error costs users more than a missed one. For the same reason a union is rejected only when none of its
members could be static.

mypy does not model two facts the rule needs, so they are explicit here: an ``eq=True, frozen=False`` dataclass has
``__hash__ = None`` (recorded by ``record_dataclass`` while mypy analyses the class), and ``jax.Array`` is not
hashable although its stub keeps ``object.__hash__``.
"""

from __future__ import annotations

from typing import Final

from mypy.nodes import CallExpr, Expression, FuncBase, NameExpr, TypeInfo, Var
from mypy.plugin import ClassDefContext
from mypy.subtypes import find_member
from mypy.types import (
    Instance,
    NoneType,
    TupleType,
    Type,
    TypedDictType,
    TypeVarType,
    UnionType,
    get_proper_type,
)

from ._fullnames import ARRAY_TYPES, FREEZABLE_CONTAINERS, HASH_BY_ITEMS

METADATA_KEY: Final = "jaxstatic"
# Nested generics deeper than this are not judged: silence rather than a slow check.
_MAX_DEPTH: Final = 8


def judge(typ: Type, *, freeze: bool) -> str | None:
    """Why a value of ``typ`` cannot be static, or ``None``.

    ``freeze=True`` is jaxstatic's rule (builtin containers are frozen); ``freeze=False`` is plain ``hash()``, what
    ``jax.jit(static_argnames=...)`` needs.
    """
    return _judge(typ, freeze, 0, frozenset())


def is_array(typ: Type) -> bool:
    """True for ``jax.Array``, tracers and ``numpy.ndarray`` (subclasses included)."""
    p = get_proper_type(typ)
    return isinstance(p, Instance) and _is_array_info(p.type)


def holds_array(typ: Type) -> bool:
    """True when every value of ``typ`` is an array or a builtin container holding arrays: never static."""
    p = get_proper_type(typ)
    if isinstance(p, Instance):
        if _is_array_info(p.type):
            return True
        if p.type.fullname in FREEZABLE_CONTAINERS and p.args:
            return any(holds_array(a) for a in p.args)
    if isinstance(p, TupleType):
        return any(holds_array(item) for item in p.items)
    return False


def _is_array_info(info: TypeInfo) -> bool:
    return any(info.has_base(name) for name in ARRAY_TYPES)


def _judge(typ: Type, freeze: bool, depth: int, seen: frozenset[str]) -> str | None:
    if depth > _MAX_DEPTH:
        return None
    p = get_proper_type(typ)
    if isinstance(p, Instance):
        return _judge_instance(p, freeze, depth, seen)
    if isinstance(p, TupleType):
        return _first(p.items, freeze, depth, seen)
    if isinstance(p, TypedDictType):
        if not freeze:
            return f'"{p.fallback.type.name}" is a dict'
        return _first(list(p.items.values()), freeze, depth, seen)
    if isinstance(p, UnionType):
        # ``ArrayLike = Array | ndarray | int | float | ...`` as a static parameter holds the scalars in practice:
        # a union is rejected only when no member could be static.
        reasons = [_judge(item, freeze, depth + 1, seen) for item in p.relevant_items()]
        return reasons[0] if reasons and all(reasons) else None
    if isinstance(p, TypeVarType):
        return _judge(p.upper_bound, freeze, depth + 1, seen)
    # Any, None, literals, callables, type objects, Never: hashable, or nothing to tell.
    return None


def _first(types: list[Type], freeze: bool, depth: int, seen: frozenset[str]) -> str | None:
    for t in types:
        reason = _judge(t, freeze, depth + 1, seen)
        if reason is not None:
            return reason
    return None


def _judge_instance(t: Instance, freeze: bool, depth: int, seen: frozenset[str]) -> str | None:
    info = t.type
    if _is_array_info(info):
        return f'"{info.name}" is an array'
    if info.fullname in FREEZABLE_CONTAINERS and freeze:
        return _first(list(t.args), freeze, depth, seen)
    if info.fullname in HASH_BY_ITEMS:
        return _first(list(t.args), freeze, depth, seen)
    if info.fullname == "builtins.object":
        return None
    if _hash_is_none(info):
        return f'"{info.name}" sets __hash__ to None'
    if "dataclass" in info.metadata and info.fullname not in seen:
        return _judge_dataclass(t, depth, seen | {info.fullname})
    if info.tuple_type is not None and info.fullname not in seen:
        # A named tuple subclass seen as an instance: judge its items like a tuple.
        return _judge(info.tuple_type, freeze, depth + 1, seen | {info.fullname})
    return None


def _hash_is_none(info: TypeInfo) -> bool:
    """``__hash__ = None`` (or ``__hash__: ClassVar[None]``) along the MRO, as typeshed marks dict, list, set."""
    sym = info.get("__hash__")
    if sym is None or not isinstance(sym.node, Var) or sym.node.type is None:
        return False
    return isinstance(get_proper_type(sym.node.type), NoneType)


def _judge_dataclass(t: Instance, depth: int, seen: frozenset[str]) -> str | None:
    info = t.type
    data = info.metadata["dataclass"]
    if not isinstance(data, dict):
        return None
    if _explicit_hash(info):
        return None
    if not data.get("frozen", False):
        if _records_unhashable(info):
            return f'"{info.name}" is a dataclass with eq=True, frozen=False'
        return None
    # A frozen dataclass hashes its fields: each must be hashable as it is (nothing freezes them).
    for attr in data.get("attributes", []):
        name = attr.get("name") if isinstance(attr, dict) else None
        if not isinstance(name, str):
            continue
        member = find_member(name, t, t)
        if member is None:
            continue
        reason = _judge(member, False, depth + 1, seen)
        if reason is not None:
            return f'field "{name}" of "{info.name}": {reason}'
    return None


def _explicit_hash(info: TypeInfo) -> bool:
    sym = info.names.get("__hash__")
    return sym is not None and isinstance(sym.node, FuncBase) and not sym.plugin_generated


def _records_unhashable(info: TypeInfo) -> bool:
    data = info.metadata.get(METADATA_KEY)
    return isinstance(data, dict) and bool(data.get("unhashable_dataclass", False))


def record_dataclass(ctx: ClassDefContext) -> None:
    """Remember whether a ``@dataclass`` class gets ``__hash__ = None`` (mypy's own metadata keeps only frozen)."""
    options = {"eq": True, "frozen": False, "unsafe_hash": False}
    reason = ctx.reason
    if isinstance(reason, CallExpr):
        for name, arg in zip(reason.arg_names, reason.args):
            if name in options:
                value = _bool_literal(arg)
                if value is None:
                    return  # not a literal: unsure, record nothing and stay silent
                options[name] = value
    unhashable = options["eq"] and not options["frozen"] and not options["unsafe_hash"]
    ctx.cls.info.metadata[METADATA_KEY] = {"unhashable_dataclass": unhashable}


def _bool_literal(expr: Expression) -> bool | None:
    if isinstance(expr, NameExpr) and expr.fullname in ("builtins.True", "builtins.False"):
        return expr.fullname == "builtins.True"
    return None
