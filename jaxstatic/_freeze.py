"""The static-hashable rule for values: freeze a static argument into a hashable key with strict types.

A value may be static when it is hashable, or when it is a ``dict``, ``list``, ``tuple`` (named tuples too), ``set``
or ``frozenset`` whose keys and items are static-hashable. Arrays never are.

Keys are strict about types at every depth: ``1``, ``1.0`` and ``True`` compare equal in Python, but they compile to
different programs, so a leaf's key is ``(type(leaf), leaf)``. Containers become ``Frozen`` nodes, whose hash is
computed once, when they are built.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any, Final

import jax
import numpy as np

from ._errors import NonStaticValueError

# Leaf types that are hashable, immutable and never containers: their key is built without further checks.
ATOMIC: Final[frozenset[type]] = frozenset({
    int, float, bool, complex, str, bytes, type(None), type(Ellipsis), type, range, slice,
    types.FunctionType, types.BuiltinFunctionType, types.MethodType,
})

_MUTABLE_KINDS: Final = (dict, list, set)


class Unfreezable(Exception):
    """Raised inside the fast path; the caller turns it into a ``NonStaticValueError`` with a path."""


class Frozen:
    """A frozen builtin container: its kind, its frozen items, and a hash computed once.

    ``items`` keeps the caller's order (for explanations); equality ignores order for dicts and sets.
    ``immutable`` is true when no ``dict``/``list``/``set`` sits anywhere inside, so the key of one tuple object
    never changes and may be remembered by identity.
    """

    __slots__ = ("_cmp", "_hash", "immutable", "items", "kind")

    def __init__(self, kind: type, items: tuple[Any, ...], immutable: bool) -> None:
        self.kind = kind
        self.items = items
        self.immutable = immutable
        self._cmp: object = frozenset(items) if issubclass(kind, (dict, set, frozenset)) else items
        self._hash = hash((kind, self._cmp))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (
            type(other) is Frozen
            and self._hash == other._hash
            and self.kind is other.kind
            and self._cmp == other._cmp
        )

    def __repr__(self) -> str:
        return f"Frozen({self.kind.__name__}, {len(self.items)} items)"


def freeze(value: Any) -> Any:
    """The hashable key of a static value. Raises ``Unfreezable`` when the value cannot be static.

    Cost: one tuple for an atomic leaf; one pass over a container, with C-level ``map``/``zip`` when all its
    entries are atomic (a 10-entry dict of numbers and functions takes about a microsecond).
    """
    t = type(value)
    if t in ATOMIC:
        return (t, value)
    if t is dict:
        return _freeze_dict(value)
    if t is list or t is tuple or _is_namedtuple(t):
        return _freeze_seq(t, value)
    if t is set or t is frozenset:
        return _freeze_set(t, value)
    return _freeze_other(t, value)


def _all_atomic(values: Any) -> bool:
    return ATOMIC.issuperset(map(type, values))


def _leaf_keys(values: tuple[Any, ...]) -> tuple[Any, ...]:
    if _all_atomic(values):
        return tuple(zip(map(type, values), values))
    return tuple(map(freeze, values))


def _freeze_dict(d: dict[Any, Any]) -> Frozen:
    keys = _leaf_keys(tuple(d))
    vals = _leaf_keys(tuple(d.values()))
    return Frozen(dict, tuple(zip(keys, vals)), False)


def _freeze_seq(t: type, seq: Any) -> Frozen:
    items = _leaf_keys(tuple(seq))
    immutable = t is not list and all(_immutable_key(k) for k in items)
    return Frozen(t, items, immutable)


def _freeze_set(t: type, s: Any) -> Frozen:
    items = _leaf_keys(tuple(s))
    immutable = t is frozenset and all(_immutable_key(k) for k in items)
    return Frozen(t, items, immutable)


def _immutable_key(key: Any) -> bool:
    return key.immutable if type(key) is Frozen else True


def _freeze_other(t: type, value: Any) -> tuple[type, Any]:
    if is_array(value):
        raise Unfreezable(value)
    try:
        hash(value)
    except TypeError:
        raise Unfreezable(value) from None
    return (t, value)


def _is_namedtuple(t: type) -> bool:
    return issubclass(t, tuple) and hasattr(t, "_fields")


def is_array(value: object) -> bool:
    """Arrays and tracers: never static, whatever their hash says."""
    return isinstance(value, (jax.Array, np.ndarray, jax.core.Tracer))


# ---------------------------------------------------------------------------------------------------------------
# Thawing: an equal, fresh value from a key (for retraces of a program whose first caller's object is gone).


def thaw(key: Any) -> Any:
    if type(key) is not Frozen:
        return key[1]
    if key.kind is dict:
        return {thaw(k): thaw(v) for k, v in key.items}
    items = [thaw(k) for k in key.items]
    if _is_namedtuple(key.kind):
        return key.kind(*items)
    return key.kind(items)


# ---------------------------------------------------------------------------------------------------------------
# Errors: walk the value again, this time with paths, to say exactly what cannot be static.


def _children(value: Any) -> Iterator[tuple[str, Any]]:
    t = type(value)
    if t is dict:
        for k, v in value.items():
            yield "{key}", k
            yield f"[{k!r}]", v
    elif t is list or t is tuple or _is_namedtuple(t):
        for i, v in enumerate(value):
            yield f"[{i}]", v
    elif t is set or t is frozenset:
        for v in value:
            yield "{item}", v


def find_unfreezable(value: Any, path: str = "") -> tuple[str, Any]:
    """The path and the leaf that makes ``value`` non-static (``("['weights']", array)``)."""
    for step, child in _children(value):
        try:
            freeze(child)
        except Unfreezable:
            return find_unfreezable(child, path + ("" if step.startswith("{") else step))
    return path, value


def shaped(value: Any) -> str:
    """``float32[3,4]``: an array's dtype and shape, as retrace explanations print them."""
    return f"{value.dtype}[{','.join(map(str, value.shape))}]"


def type_name(value: object) -> str:
    t = type(value)
    if isinstance(value, jax.core.Tracer):
        return f"tracer ({shaped(value)})"
    if isinstance(value, jax.Array):
        return f"jax.Array ({shaped(value)})"
    if isinstance(value, np.ndarray):
        return f"numpy.ndarray ({shaped(value)})"
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _why_unhashable(leaf: object) -> str:
    cls = type(leaf)
    if is_array(leaf):
        return "an array's contents can change while it stays the same object, so a compiled program would go stale"
    if getattr(cls, "__hash__", None) is None:
        params = getattr(cls, "__dataclass_params__", None)
        if params is not None and not params.frozen:
            return "it is a dataclass with eq=True and frozen=False, so Python sets its __hash__ to None"
        return "its class sets __hash__ = None"
    try:
        hash(leaf)
    except TypeError as err:
        return f"hashing it fails ({err})"
    return "it cannot be frozen"


def _fix(leaf: object) -> str:
    if is_array(leaf):
        return ("Pass it through a parameter that is not Static, or, if it truly is a constant, "
                "convert it to a tuple (tuple(x.tolist())).")
    params = getattr(type(leaf), "__dataclass_params__", None)
    if params is not None and not params.frozen:
        return "Make it hashable with @dataclass(frozen=True), or pass it through a parameter that is not Static."
    return ("Make it hashable (define __hash__ and __eq__, or use a tuple/frozen dataclass), or pass it through a "
            "parameter that is not Static.")


def non_static_error(function: str, param: str, value: Any) -> NonStaticValueError:
    """The error a user sees when ``value`` is bound to the Static parameter ``param`` of ``function``."""
    path, leaf = find_unfreezable(value)
    return NonStaticValueError(
        f"{function}(): parameter {param!r} is Static, but {param}{path} is a {type_name(leaf)}, which cannot be "
        f"static: {_why_unhashable(leaf)}. {_fix(leaf)}"
    )


def check_static(function: str, param: str, value: Any) -> Any:
    """``freeze(value)``, raising the user-facing error."""
    try:
        return freeze(value)
    except Unfreezable:
        raise non_static_error(function, param, value) from None


# ---------------------------------------------------------------------------------------------------------------
# Explanations: how one static key differs from another, leaf by leaf.


def describe(key: Any) -> str:
    if type(key) is not Frozen:
        return _short_repr(key[1])
    return _short_repr(thaw(key))


def _short_repr(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def diff(label: str, old: Any, new: Any) -> list[str]:
    """Where two keys differ: ``["cfg['lr']: 0.1 -> 0.2"]``; empty when equal."""
    if old == new:
        return []
    if type(old) is Frozen and type(new) is Frozen and old.kind is new.kind:
        sub = _diff_items(label, old, new)
        if sub:
            return sub
    if type(old) is not Frozen and type(new) is not Frozen and old[0] is not new[0] and old[1] == new[1]:
        return [f"{label}: {_short_repr(old[1])} ({old[0].__name__}) -> {_short_repr(new[1])} ({new[0].__name__})"]
    return [f"{label}: {describe(old)} -> {describe(new)}"]


def _diff_items(label: str, old: Frozen, new: Frozen) -> list[str]:
    if old.kind is dict:
        before, after = dict(old.items), dict(new.items)
        out: list[str] = []
        for k in before.keys() | after.keys():
            name = f"{label}[{_short_repr(k[1]) if type(k) is not Frozen else describe(k)}]"
            if k not in after:
                out.append(f"{name}: removed")
            elif k not in before:
                out.append(f"{name}: added ({describe(after[k])})")
            else:
                out.extend(diff(name, before[k], after[k]))
        return sorted(out)
    if old.kind in (set, frozenset):
        return []
    if len(old.items) != len(new.items):
        return [f"{label}: length {len(old.items)} -> {len(new.items)}"]
    out = []
    for i, (a, b) in enumerate(zip(old.items, new.items)):
        out.extend(diff(f"{label}[{i}]", a, b))
    return out


__all__ = ["ATOMIC", "Frozen", "Unfreezable", "check_static", "describe", "diff", "freeze", "is_array",
           "non_static_error", "thaw", "type_name"]
