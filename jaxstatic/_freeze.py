"""The static-hashable rule for values: freeze a static argument into a key that is equal exactly when reusing a
compiled program cannot change its result.

A value may be static when it is hashable, or when it is a ``dict``, ``list``, ``tuple``, ``set`` or ``frozenset`` (or
a subclass of one, named tuples included) whose entries are static-hashable. Arrays never are.

Keys are strict at every depth: about types (``1``, ``1.0`` and ``True`` compile to different programs), about
order (a dict is keyed in insertion order, since a body that iterates it depends on it; sets have no order), and
about bits (``0.0`` and ``-0.0`` differ; NaNs with the same bits are one key). A frozen dataclass or attrs class
whose ``__eq__``/``__hash__`` are generated is a *record*, keyed by its type and its compared fields' keys; a class
with its own ``__eq__``/``__hash__`` is trusted with them. The layout of keys is in ``_keys``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import operator
import types
import weakref
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterator
from itertools import chain, compress, repeat
from typing import Any, Final

import jax
import jax.core
import numpy as np

from ._keys import (
    ATTRS,
    BUILTIN_BASES,
    FACTORY,
    HEAD,
    MAP,
    PACK_D,
    PACK_DD,
    PACKED,
    REC,
    SEQ,
    SET,
    SLICE,
    Exemplar,
    Frozen,
    Hashed,
    Kind,
    is_container,
    is_immutable,
    size,
    thaw,
)

# Types for which ``(type(v), v)`` is an exact key: equal pairs mean values no program can tell apart. Fixed, so
# nothing user-defined is kept alive by it. Not float/complex (0.0 == -0.0), slice or range (range(0) == range(5, 5)).
ATOMIC: Final[frozenset[type]] = frozenset({
    int, bool, str, bytes, type(None), type(Ellipsis), type(NotImplemented), type,
    types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType, functools.partial,
    type(jax.jit(operator.pos)), np.bool_, *(np.dtype(code).type for code in np.typecodes["AllInteger"]),
})
_FAST: Final = ATOMIC | {float}

# The exact-key lane's types (``_lane``): the atomic types whose values cannot be weakly referenced. A lane value
# enters JAX's own process-wide caches, which keep static arguments after ``clear_cache()`` and after the function
# is dropped; for these values that costs nothing, while a function or class (a closure holding arrays) must be
# released as the general path releases it, so those stay on the general path.
LANE: Final[frozenset[type]] = frozenset(t for t in ATOMIC if not hasattr(t, "__weakrefoffset__") or
                                         not t.__weakrefoffset__)


class Unfreezable(Exception):
    """Raised inside the fast path; the caller turns it into a ``NonStaticValueError`` with a path."""


# ---------------------------------------------------------------------------------------------------------------
# Freezing.


def freeze(value: Any) -> Any:
    """The key of a static value. Raises ``Unfreezable`` when the value cannot be static.

    Cost: a dict, list or tuple of atomic entries and ordinary floats is keyed in a few C-level passes (about 2 us
    for 10 entries); anything else walks the value with an explicit stack.
    """
    t = type(value)
    if t in ATOMIC:
        return (t, value)
    if t is float:
        return (t, value if value == value and value != 0.0 else _PACK_FLOAT(value))
    if t is dict or t is list or t is tuple:
        flat = _flat(value, t, 0 if t is tuple else 1)
        if flat is not None:
            return Frozen(flat)
    elif t not in _OPENED_BY_TYPE:
        how, _ = class_info(t)
        if how is not CONTAINER and how is not RECORD:
            return (t, _leaf_value(value, how))
    out: list[Any] = [0]
    _emit(value, t, out)
    return (out[1], out[2]) if len(out) == 3 and type(out[1]) is not Kind else Frozen(out)


_OPENED_BY_TYPE: Final = frozenset({set, frozenset, slice, range})


def _flat(value: Any, t: type, *head: int) -> tuple[Any, ...] | None:
    """``head``, then the packed node of a dict, list or tuple whose entries are all atomic or ordinary floats
    (else None): the types and the values as tuples of their own, built in C (a tuple's values are the tuple)."""
    if t is dict:
        keys, vals = tuple(value), tuple(value.values())
        kt, vt = tuple(map(type, keys)), tuple(map(type, vals))
        if not (_plain(keys, kt) and _plain(vals, vt)):
            return None
        return (*head, MAP, 4, len(keys), t, PACKED, kt, keys, vt, vals)
    items = value if t is tuple else tuple(value)
    ts = tuple(map(type, items))
    if not _plain(items, ts):
        return None
    return (*head, SEQ, 2, len(items), t, PACKED, ts, items)


def _plain(items: tuple[Any, ...], ts: tuple[type, ...]) -> bool:
    """Every item atomic or a float that is neither zero nor NaN (those are keyed by their bits), checked in C."""
    if ATOMIC.issuperset(ts):
        return True
    if not _FAST.issuperset(ts):
        return False
    floats = tuple(compress(items, map(operator.is_, ts, repeat(float))))
    return 0.0 not in floats and not any(map(operator.ne, floats, floats))


def _emit(root: Any, t: type, out: list[Any]) -> None:
    """Append the tokens of ``root`` to ``out``, depth first with an explicit stack (nesting costs no recursion).

    ``out[0]`` counts mutable containers. A container met again while it is still open is a cycle.
    """
    pos = len(out)
    opened = _open(root, t, out)
    if opened is None:
        return
    open_ids = {id(root)}
    stack = [(iter(()), pos, id(root), opened[1])]
    it = opened[0]
    while stack:
        for value in it:
            t = type(value)
            if t in ATOMIC:
                out += (t, value)
                continue
            if t is float:
                out += (t, value if value == value and value != 0.0 else _PACK_FLOAT(value))
                continue
            if t is dict or t is list or t is tuple:
                flat = _flat(value, t)
                if flat is not None:
                    out.extend(flat)
                    out[0] += t is not tuple
                    continue
            pos = len(out)
            opened = _open(value, t, out)
            if opened is None:
                continue
            if id(value) in open_ids:
                raise Unfreezable(value)
            open_ids.add(id(value))
            stack.append((it, pos, id(value), opened[1]))
            it = opened[0]
            break
        else:
            it, pos, vid, closing = stack.pop()
            if closing is not None:
                out.append(closing)
            out[pos + 1] = len(out) - pos - HEAD
            open_ids.discard(vid)


Opened = tuple[Iterator[Any], Any]


def _open(value: Any, t: type, out: list[Any]) -> Opened | None:
    """Append a leaf's pair (and return None), or a node's head (and return its children and closing token)."""
    if t is dict or t is list or t is tuple:
        out[0] += t is not tuple
        out += (MAP if t is dict else SEQ, 0, len(value), t, 0)
        return (chain.from_iterable(value.items()) if t is dict else iter(value)), None
    if t is set or t is frozenset:
        out[0] += t is set
        out += (SET, 1, len(value), t, 0, frozenset(map(freeze, value)))
        return None
    if t is slice:
        out += (SLICE, 0, 3, t, 0)
        return iter((value.start, value.stop, value.step)), None
    if t is range:
        out += (t, (value.start, value.stop, value.step))
        return None
    how, extra = class_info(t)
    if how is CONTAINER:
        return _open_subclass(value, t, extra, out)
    if how is RECORD:
        _check_hash(value)
        out += (REC, 0, len(extra), t, extra)
        closing = Exemplar()
        closing.record = value
        return map(getattr, repeat(value), extra), closing
    out += (t, _leaf_value(value, how))
    return None


def _open_subclass(value: Any, t: type, base: type, out: list[Any]) -> Opened | None:
    attrs = getattr(value, "__dict__", None)
    out[0] += (base is not tuple and base is not frozenset) or attrs is not None
    tail = (attrs,) if attrs else ()
    flags = ATTRS if attrs else 0
    if base is set or base is frozenset:
        out += (SET, 1, len(value), t, 0, frozenset(map(freeze, value)))
        return None
    if base is list or base is tuple:
        out += (SEQ, 0, len(value), t, flags)
        return chain(value, tail), None
    head = (value.default_factory,) if base is defaultdict else ()
    out += (MAP, 0, len(value), t, flags | (FACTORY if head else 0))
    return chain(head, chain.from_iterable(value.items()), tail), None


def _leaf_value(value: Any, how: object) -> Any:
    if how is _IDENTITY:
        return value
    if how is _BITS:
        return _bits(value)
    if how is _HASH:
        _check_hash(value)
        return value
    raise Unfreezable(value)  # arrays, and classes that set __hash__ = None


def _check_hash(value: Any) -> None:
    try:
        hash(value)
    except TypeError:
        raise Unfreezable(value) from None


_PACK_FLOAT: Final[Callable[[float], bytes]] = PACK_D.pack


def _bits(value: Any) -> bytes:
    """The exact bits of a float, complex or numpy scalar (``0.0 == -0.0``, but the two compile differently)."""
    if isinstance(value, np.generic):
        return value.tobytes()
    if isinstance(value, complex):
        return PACK_DD.pack(value.real, value.imag)
    return _PACK_FLOAT(value)


# ---------------------------------------------------------------------------------------------------------------
# What a class's instances are, worked out once per class and remembered weakly (a class that dies is forgotten).

_IDENTITY, _HASH, _BITS, _ARRAY, _UNHASHABLE, CONTAINER, RECORD = (object() for _ in range(7))
_CLASSES: dict[int, tuple[weakref.ref[type], tuple[object, Any]]] = {}


def class_info(t: type) -> tuple[object, Any]:
    hit = _CLASSES.get(id(t))
    if hit is not None and hit[0]() is t:
        return hit[1]
    info = _classify(t)
    with contextlib.suppress(TypeError):  # a class that is not weakly referable is classified again next time
        _CLASSES[id(t)] = (weakref.ref(t, functools.partial(_forget, id(t))), info)
    return info


def _forget(key: int, ref: weakref.ref[type]) -> None:
    hit = _CLASSES.get(key)
    if hit is not None and hit[0] is ref:
        del _CLASSES[key]


def _classify(t: type) -> tuple[object, Any]:
    if issubclass(t, (jax.Array, np.ndarray, jax.core.Tracer)):
        return _ARRAY, None
    base = next((b for b in BUILTIN_BASES if issubclass(t, b)), None)
    if base is not None:
        own = t.__hash__ is not base.__hash__ or (t.__eq__ is not base.__eq__ and base in (tuple, frozenset))
        if not own or t.__hash__ is None:
            return CONTAINER, (dict if base is OrderedDict else base)
    if _inexact(t):
        return _BITS, None
    fields = _record_fields(t)
    if fields is not None:
        return RECORD, fields
    if t.__hash__ is object.__hash__ and t.__eq__ is object.__eq__:
        return _IDENTITY, None
    return (_UNHASHABLE if t.__hash__ is None else _HASH), None


def _inexact(t: type) -> bool:
    """Floats, complex numbers and numpy inexact scalars (ml_dtypes' too) that keep the builtin equality."""
    if issubclass(t, np.generic):
        return issubclass(t, np.inexact) or t.__module__.startswith("ml_dtypes")
    return issubclass(t, (float, complex)) and t.__eq__ in (float.__eq__, complex.__eq__)


@dataclasses.dataclass(frozen=True)
class _Probe:
    field: int


_DATACLASS_CODE: Final = _Probe.__eq__.__code__.co_filename  # where dataclasses compiles the methods it writes


def _record_fields(t: type) -> tuple[str, ...] | None:
    """The compared fields of a frozen dataclass or attrs class whose ``__eq__``/``__hash__`` are generated."""
    params = getattr(t, "__dataclass_params__", None)
    if params is not None and params.frozen and params.eq and _made_by(t, lambda f: f == _DATACLASS_CODE):
        return tuple(f.name for f in dataclasses.fields(t) if f.compare)
    fields = getattr(t, "__attrs_attrs__", None)
    frozen = getattr(getattr(t, "__setattr__", None), "__name__", "") == "_frozen_setattrs"
    if fields is not None and frozen and _made_by(t, lambda f: f.startswith("<attrs generated")):
        return tuple(a.name for a in fields if a.eq)
    return None


def _made_by(t: type, generated: Callable[[str], bool]) -> bool:
    codes = (getattr(getattr(t, name, None), "__code__", None) for name in ("__eq__", "__hash__"))
    return all(code is not None and generated(code.co_filename) for code in codes)


def is_array(value: object) -> bool:
    """Arrays and tracers: never static, whatever their hash says."""
    return isinstance(value, (jax.Array, np.ndarray, jax.core.Tracer))


def compared_by_identity(t: type) -> bool:
    """Whether instances of ``t`` keep ``object``'s own ``__eq__`` and ``__hash__`` (an environment, a trainer):
    not a class, function or module, whose identity is what they are."""
    return t not in ATOMIC and not issubclass(t, type) and class_info(t)[0] is _IDENTITY


def shaped(value: Any) -> str:
    """``float32[3,4]``: an array's dtype and shape, as retrace explanations print them."""
    return f"{value.dtype}[{','.join(map(str, value.shape))}]"


def type_name(value: object) -> str:
    if isinstance(value, jax.core.Tracer):
        return f"tracer ({shaped(value)})"
    if isinstance(value, jax.Array):
        return f"jax.Array ({shaped(value)})"
    if isinstance(value, np.ndarray):
        return f"numpy.ndarray ({shaped(value)})"
    return class_name(type(value))


def class_name(t: type) -> str:
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


__all__ = ["ATOMIC", "CONTAINER", "RECORD", "Hashed", "Unfreezable", "class_info", "class_name",
           "compared_by_identity", "freeze", "is_array", "is_container", "is_immutable", "shaped", "size", "thaw", "type_name"]
