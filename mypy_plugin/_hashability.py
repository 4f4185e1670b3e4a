"""The static-hashable rule, judged over mypy types.

A value may be static when it is hashable, or when it is a builtin ``dict``, ``list``, ``tuple``, ``set`` or
``frozenset`` (or a subclass that keeps its base's hash: ``OrderedDict``, ``Counter``, ``class Registry(dict)``,
named tuples) whose keys and items are static; arrays never are. ``judge`` returns why a type breaks the rule, or
``None`` when it keeps it *or when the type cannot tell* (``Any``, type variables without a bound, protocols):
a false error costs users more than a missed one. For the same reason a union is rejected only when none of its
members could be static.

How a class hashes is read along its MRO (``hash_mode``): ``__hash__ = None`` (typeshed's ``dict``, ``list``), an own
``__hash__`` (trusted), a class whose ``__hash__`` hashes its fields (frozen dataclasses, ``eqx.Module``), or what
``@dataclass`` made of it. mypy does not model the last one, so ``record_dataclass`` writes it into the class as a
plugin-generated attribute: being part of the class's symbol table, a change of ``eq``/``frozen``/``unsafe_hash``
changes the class's snapshot, which is what dmypy's fine-grained mode follows. Every member consulted is added to
``deps`` (as fine-grained triggers), so the call sites judged are rechecked when one changes.

Every recursion is bounded by depth: recursive aliases (``Nested = list["Nested"]``) and self-referencing classes
must never crash mypy.
"""

from __future__ import annotations

from typing import Final

from mypy.maptype import map_instance_to_supertype
from mypy.nodes import (
    Decorator,
    FuncBase,
    TypeInfo,
    Var,
)
from mypy.subtypes import find_member
from mypy.types import (
    Instance,
    LiteralType,
    NoneType,
    TupleType,
    Type,
    TypedDictType,
    TypeVarType,
    UnionType,
    get_proper_type,
)

from ._fullnames import (
    ARRAY_TYPES,
    EQ_WITHOUT_HASH,
    FREEZABLE_CONTAINERS,
    HASH_BY_FIELDS,
    HASH_BY_ITEMS,
    SLICE,
)
from ._markers import is_static
from ._messages import DynamicPytree, dynamic_pytree
from ._records import (
    ATTRS_METADATA,
    FIELDS,
    HASH_NONE_METADATA,
    INHERIT,
    NONE,
    PYTREE,
    RECORD,
    TRUSTED,
    UNKNOWN,
    is_pytree_dataclass,
    unhashed_fields,
)

# Nested generics deeper than this are not judged: silence rather than a slow check (or a recursion).
_MAX_DEPTH: Final = 8


def judge(typ: Type, *, freeze: bool, deps: set[str] | None = None) -> str | None:
    """Why a value of ``typ`` cannot be static, or ``None``.

    ``freeze=True`` is jaxstatic's rule (builtin containers are frozen); ``freeze=False`` is plain ``hash()``, what
    ``jax.jit(static_argnames=...)`` needs. ``deps`` collects the fine-grained triggers the answer depends on.
    """
    return _judge(typ, freeze, 0, frozenset(), deps if deps is not None else set())


def is_array(typ: Type) -> bool:
    """True for ``jax.Array``, tracers and ``numpy.ndarray`` (subclasses included)."""
    p = get_proper_type(typ)
    return isinstance(p, Instance) and _is_array_info(p.type)


def holds_array(typ: Type, depth: int = 0) -> bool:
    """True when every value of ``typ`` is an array or a builtin container holding arrays: never static."""
    if depth > _MAX_DEPTH:
        return False
    p = get_proper_type(typ)
    if isinstance(p, Instance):
        if _is_array_info(p.type):
            return True
        if p.type.fullname in FREEZABLE_CONTAINERS and p.args:
            return any(holds_array(a, depth + 1) for a in p.args)
    if isinstance(p, TupleType):
        return any(holds_array(item, depth + 1) for item in p.items)
    if isinstance(p, UnionType):
        items = p.relevant_items()
        return bool(items) and all(holds_array(item, depth + 1) for item in items)
    return False


def _is_array_info(info: TypeInfo) -> bool:
    return any(info.has_base(name) for name in ARRAY_TYPES)


def _judge(typ: Type, freeze: bool, depth: int, seen: frozenset[str], deps: set[str]) -> str | None:
    if depth > _MAX_DEPTH:
        return None
    p = get_proper_type(typ)
    if isinstance(p, Instance):
        return _judge_instance(p, freeze, depth, seen, deps)
    if isinstance(p, TupleType):
        if own_tuple_hash(p.partial_fallback.type, deps):
            return None  # a named tuple defining ``__hash__``: its own, not its items'
        return _first(p.items, freeze, depth, seen, deps)
    if isinstance(p, TypedDictType):
        if not freeze:
            return f'"{p.fallback.type.name}" is a dict'
        return _first(list(p.items.values()), freeze, depth, seen, deps)
    if isinstance(p, UnionType):
        # ``ArrayLike = Array | ndarray | int | float | ...`` as a static parameter holds the scalars in practice:
        # a union is rejected only when no member could be static.
        reasons = [_judge(item, freeze, depth + 1, seen, deps) for item in p.relevant_items()]
        return reasons[0] if reasons and all(reasons) else None
    if isinstance(p, TypeVarType):
        return _judge(p.upper_bound, freeze, depth + 1, seen, deps)
    # Any, None, literals, callables, type objects, Never: hashable, or nothing to tell.
    return None


def own_tuple_hash(info: TypeInfo, deps: set[str]) -> bool:
    """A tuple subclass (a named tuple) that hashes its own way, not by its items."""
    if info.fullname in HASH_BY_ITEMS:
        return False
    mode, where = hash_mode(info, deps)
    return mode == TRUSTED and where is not None and where.fullname not in HASH_BY_ITEMS


def _first(
    types: list[Type], freeze: bool, depth: int, seen: frozenset[str], deps: set[str]
) -> str | None:
    for t in types:
        reason = _judge(t, freeze, depth + 1, seen, deps)
        if reason is not None:
            return reason
    return None


def _judge_instance(
    t: Instance, freeze: bool, depth: int, seen: frozenset[str], deps: set[str]
) -> str | None:
    info = t.type
    if _is_array_info(info):
        return f'"{info.name}" is an array'
    if info.fullname in FREEZABLE_CONTAINERS and freeze:
        return _first(list(t.args), freeze, depth, seen, deps)
    if info.fullname == SLICE and not freeze and _python_version < (3, 12):
        return '"slice" is not hashable before Python 3.12'
    if info.fullname in HASH_BY_ITEMS or info.fullname == SLICE:
        return _first(list(t.args), freeze, depth, seen, deps)
    key = _seen_key(t)
    if info.fullname == "builtins.object" or key in seen:
        return None
    mode, where = hash_mode(info, deps)
    container = _container_base(info, mode, where, freeze)
    if container is not None and info.tuple_type is None:
        # A subclass of a builtin container that keeps its hash (``OrderedDict``, ``class Registry(dict)``): the
        # runtime freezes it like its base, keeping the class in the key.
        items = map_instance_to_supertype(t, container).args
        return _first(list(items), freeze, depth, seen | {key}, deps)
    if mode == NONE:
        return _hash_none_reason(info, where)
    if mode == FIELDS:
        # ``eqx.Module.__hash__`` hashes every field of the instance; a generated hash, those of its class.
        by = None if where is not None and where.fullname in HASH_BY_FIELDS else where
        return _judge_fields(t, by, depth, seen | {key}, deps)
    if mode == PYTREE:
        return _judge_pytree(t, depth, seen | {key}, deps)
    if info.tuple_type is not None and (where is None or where.fullname in HASH_BY_ITEMS):
        # A named tuple subclass seen as an instance: judge its items like a tuple (unless it hashes its own way).
        return _judge(info.tuple_type, freeze, depth + 1, seen | {key}, deps)
    return None


def _hash_none_reason(info: TypeInfo, where: TypeInfo | None) -> str:
    if where is not None and _recorded(where) == NONE:
        kind = "an attrs class" if ATTRS_METADATA in where.metadata else "a dataclass"
        return f'"{info.name}" is {kind} with eq=True, frozen=False'
    data = where.metadata.get(HASH_NONE_METADATA) if where is not None else None
    if isinstance(data, dict) and data.get("eq"):
        return f'"{where.name if where is not None else info.name}" defines __eq__ without __hash__, so __hash__ is None'
    return f'"{info.name}" sets __hash__ to None'


_python_version: tuple[int, int] = (3, 12)
"""The Python the checked code is for (mypy's ``python_version``): slices hash from 3.12."""


def configure(python_version: tuple[int, int]) -> None:
    """Set once by the plugin from mypy's options (one per run: a daemon restarts when they change)."""
    global _python_version
    _python_version = python_version


def _seen_key(t: Instance) -> str:
    """What a class being judged is known by on the way down: a generic one with its arguments, since
    ``Box[Box[Array]]`` holds a ``Box[Array]``, which must be judged too (depth bounds a growing recursion)."""
    return str(t) if t.args else t.type.fullname


def _container_base(info: TypeInfo, mode: str, where: TypeInfo | None, freeze: bool) -> TypeInfo | None:
    """The builtin container ``info`` subclasses, when the runtime treats its instances as that container: the
    hash is the container's own (``None`` for ``dict``/``list``/``set``, frozen under jaxstatic's rule; the items'
    for ``tuple``/``frozenset``), not one the subclass defines. ``None`` for the builtins themselves."""
    if info.fullname in FREEZABLE_CONTAINERS or where is None:
        return None
    base = next((b for b in info.mro[1:] if b.fullname in FREEZABLE_CONTAINERS), None)
    if base is None:
        return None
    if mode == NONE and freeze:
        return base
    return base if where is base and base.fullname in HASH_BY_ITEMS else None


def hash_mode(info: TypeInfo, deps: set[str]) -> tuple[str, TypeInfo | None]:
    """How instances of ``info`` hash, and the class along the MRO that decides it."""
    for base in info.mro:
        deps.update((f"<{base.fullname}>", f"<{base.fullname}.__hash__>", f"<{base.fullname}.{RECORD}>"))
        if base.fullname == "builtins.object":
            return TRUSTED, base
        own = _own_hash(base)
        if own is not None:
            return own, base
        if base.fullname in EQ_WITHOUT_HASH and not info.is_abstract:
            return NONE, base  # a concrete ``UserDict``: Python set ``Mapping.__hash__`` to None (``__eq__``)
        recorded = _recorded(base)
        if recorded is not None and recorded != INHERIT:
            return recorded, base
        dataclass = base.metadata.get("dataclass")
        if recorded is None and isinstance(dataclass, dict) and dataclass.get("frozen", False):
            return FIELDS, base  # a frozen dataclass (by its transform's default too) hashes its fields
        data = base.metadata.get(HASH_NONE_METADATA)
        if isinstance(data, dict):
            # ``__eq__`` without ``__hash__``: Python set ``__hash__`` to None. An abstract class or a protocol may
            # stand for a subclass that defines one, and a metaclass may add one (pydantic's frozen models): unsure,
            # silent.
            unsure = info.is_abstract or info.is_protocol or (data.get("eq") and _custom_metaclass(base))
            return (UNKNOWN if unsure else NONE), base
    return UNKNOWN, None


def _custom_metaclass(info: TypeInfo) -> bool:
    meta = info.metaclass_type
    return meta is not None and meta.type.fullname not in ("builtins.type", "abc.ABCMeta")


def _own_hash(info: TypeInfo) -> str | None:
    sym = info.names.get("__hash__")
    if sym is None or sym.plugin_generated:
        return None
    node = sym.node
    if isinstance(node, (FuncBase, Decorator)):
        if node.info is not info:
            return None  # ``object.__hash__`` put there by mypy's attrs plugin: ``RECORD`` says how
        return FIELDS if info.fullname in HASH_BY_FIELDS else TRUSTED
    if isinstance(node, Var) and node.type is not None:
        return NONE if isinstance(get_proper_type(node.type), NoneType) else TRUSTED
    if isinstance(node, Var) and HASH_NONE_METADATA in info.metadata:
        return NONE
    return None


def _judge_fields(
    t: Instance, where: TypeInfo | None, depth: int, seen: frozenset[str], deps: set[str]
) -> str | None:
    """A class that hashes its fields: each must be hashable as it is (nothing freezes them). The fields are those
    of the class whose hash it is (``where``: a subclass with ``eq=False`` hashes as its base), less those
    declared out of the hash (``field(compare=False)``)."""
    unhashed = unhashed_fields(where) if where is not None else set()
    for name, member in _fields(t, deps, where):
        if name in unhashed:
            continue
        reason = _judge(member, False, depth + 1, seen, deps)
        if reason is None:
            continue
        said = f'field "{name}" of "{t.type.name}": {reason}'
        # A pytree (``eqx.Module``) holding a dynamic pytree is one too: the fix is the same.
        return DynamicPytree(said) if isinstance(reason, DynamicPytree) and _is_pytree_class(t.type) else said
    return None


def _judge_pytree(t: Instance, depth: int, seen: frozenset[str], deps: set[str]) -> str | None:
    """A frozen ``jaxstatic.dataclass`` hashes its children's leaves (containers are pytree nodes, so judged as
    frozen) and its ``Static`` fields as they are (a ``dict`` there can change in place: no hash). An array among
    the children makes it a dynamic pytree, which no rule about hashing fixes."""
    for name, member in _fields(t, deps):
        static = is_static(member)
        reason = _judge(member, False, depth + 1, seen, deps) if static else _judge_child(member, depth + 1, seen, deps)
        if reason is None:
            continue
        if not static and (isinstance(reason, DynamicPytree) or _any_array(member, 0)):
            return dynamic_pytree(t.type.name, name)
        if static and _judge(member, True, depth + 1, seen, deps) is None:
            return f'Static field "{name}" of "{t.type.name}" holds a container that can change in place'
        return f'{"Static field" if static else "field"} "{name}" of "{t.type.name}": {reason}'
    return None


def _judge_child(typ: Type, depth: int, seen: frozenset[str], deps: set[str]) -> str | None:
    """A child of a ``jaxstatic.dataclass`` is hashed as JAX flattens it: a pytree class (an ``eqx.Module``,
    another ``jaxstatic.dataclass``, frozen or not) by its own children and static fields, whatever its own
    ``__hash__`` says; builtin containers are pytree nodes (judged as frozen); anything else is a leaf."""
    p = get_proper_type(typ)
    if isinstance(p, Instance) and _seen_key(p) not in seen and _is_pytree_class(p.type):
        return _judge_pytree(p, depth, seen | {_seen_key(p)}, deps)
    return _judge(typ, True, depth, seen, deps)


def _is_pytree_class(info: TypeInfo) -> bool:
    return any(is_pytree_dataclass(base) or base.fullname in HASH_BY_FIELDS for base in info.mro)


def _fields(t: Instance, deps: set[str], where: TypeInfo | None = None) -> list[tuple[str, Type]]:
    """The dataclass (or attrs) fields of ``where`` (default ``t``'s class; inherited ones included) with their
    types as seen from ``t``."""
    mro = (where or t.type).mro
    info, data = next(
        ((b, b.metadata.get(k)) for b in mro for k in ("dataclass", "attrs") if isinstance(b.metadata.get(k), dict)),
        (None, None),
    )
    if info is None or not isinstance(data, dict):
        return []
    attributes = data.get("attributes", [])
    found = []
    for attr in attributes if isinstance(attributes, list) else []:
        name = attr.get("name") if isinstance(attr, dict) else None
        if not isinstance(name, str):
            continue
        deps.add(f"<{info.fullname}.{name}>")
        member = find_member(name, t, t)
        if member is not None:
            found.append((name, member))
    return found


def _any_array(typ: Type, depth: int) -> bool:
    """True when some value of ``typ`` holds an array (``holds_array`` asks whether every value does)."""
    if depth > _MAX_DEPTH:
        return False
    p = get_proper_type(typ)
    if isinstance(p, Instance):
        return _is_array_info(p.type) or any(_any_array(a, depth + 1) for a in p.args)
    if isinstance(p, (TupleType, UnionType)):
        return any(_any_array(item, depth + 1) for item in p.items)
    return False


def _recorded(info: TypeInfo) -> str | None:
    sym = info.names.get(RECORD)
    t = get_proper_type(sym.node.type) if sym is not None and isinstance(sym.node, Var) else None
    if t is None:
        return None
    if isinstance(t, Instance) and t.last_known_value is not None:
        t = t.last_known_value
    return t.value if isinstance(t, LiteralType) and isinstance(t.value, str) else None
