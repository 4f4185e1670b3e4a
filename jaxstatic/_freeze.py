"""The static-hashable rule for values: freeze a static argument into a hashable key with strict types.

A value may be static when it is hashable, or when it is a ``dict``, ``list``, ``tuple`` (named tuples too), ``set``
or ``frozenset`` whose keys and items are static-hashable. Arrays never are.

Keys are strict about types at every depth: ``1``, ``1.0`` and ``True`` compare equal in Python, but they compile to
different programs, so a leaf's key is ``(type(leaf), leaf)``. Containers become ``(kind, payload)`` tuples of
builtin tuples and frozensets (see ``freeze``).
"""

from __future__ import annotations

import operator
import types
from collections.abc import Iterator
from itertools import repeat
from typing import Any, Final

import jax
import jax.core
import numpy as np

from ._errors import NonStaticValueError

# Leaf types whose instances are always hashable, immutable and never containers: their key is ``(type, value)``,
# built without further checks. It grows at run time with classes that keep object's identity hash and equality
# (jitted functions, functools.partial, plain user objects), which can never become unhashable.
ATOMIC: Final[set[type]] = {
    int, float, bool, complex, str, bytes, type(None), type(Ellipsis), type, range, slice,
    types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType,
}

_KINDS: Final = frozenset({dict, list, tuple, set, frozenset})
_OBJECT_HASH: Final = object.__hash__
_OBJECT_EQ: Final = object.__eq__


class Unfreezable(Exception):
    """Raised inside the fast path; the caller turns it into a ``NonStaticValueError`` with a path."""


class Hashed:
    """A container's key with its hash computed once.

    A plain tuple key would be hashed again, element by element, on every lookup: 20 us for a 1000-element tuple.
    """

    __slots__ = ("_hash", "key")

    def __init__(self, key: Any) -> None:
        self.key = key
        self._hash = hash(key)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is Hashed and self._hash == other._hash and self.key == other.key)


def freeze(value: Any) -> Any:
    """The hashable key of a static value. Raises ``Unfreezable`` when the value cannot be static.

    A leaf's key is ``(type, value)``; a container's is ``(kind, payload)``, built from builtin tuples and frozensets
    so that hashing and comparing keys runs in C:

    - list/tuple: ``(item types, items)`` when no item is a container, else ``(None, item keys)``;
    - dict: a frozenset of ``((k, v), type(k), type(v))`` when no key or value is a container, else of
      ``((key of k, key of v), None, None)``;
    - set/frozenset: a frozenset of item keys.

    Which form a container takes depends only on its contents. Cost: for a container of atomic entries, a few
    C-level passes (about 1.5 us for a 10-entry dict on the reference machine).
    """
    t = type(value)
    if t in ATOMIC:
        return (t, value)
    if t is dict:
        if ATOMIC.issuperset(map(type, value)) and ATOMIC.issuperset(map(type, value.values())):
            return (dict, frozenset(zip(value.items(), map(type, value), map(type, value.values()))))
        return (dict, _dict_entries(value))
    if t is tuple or t is list or _is_namedtuple(t):
        items = tuple(value)
        if ATOMIC.issuperset(map(type, items)):
            return (t, (tuple(map(type, items)), items))
        return (t, _seq_payload(items))
    if t is set or t is frozenset:
        return (t, frozenset(map(freeze, value)))
    return _freeze_other(t, value)


def _dict_entries(d: dict[Any, Any]) -> frozenset[Any]:
    keys = tuple(map(freeze, d))
    vals = tuple(map(freeze, d.values()))
    if any(map(is_container, keys)) or any(map(is_container, vals)):
        return frozenset(zip(zip(keys, vals), repeat(None), repeat(None)))
    return frozenset(((k[1], v[1]), k[0], v[0]) for k, v in zip(keys, vals))


def _seq_payload(items: tuple[Any, ...]) -> tuple[Any, ...]:
    keys = tuple(map(freeze, items))
    if any(map(is_container, keys)):
        return (None, keys)
    return (tuple(k[0] for k in keys), tuple(k[1] for k in keys))


def size(key: Any) -> int:
    """How many entries a container key holds."""
    kind, payload = key
    return len(payload) if kind is dict or kind is set or kind is frozenset else len(payload[1])


def dict_items(payload: frozenset[Any]) -> list[tuple[Any, Any]]:
    """The ``(key of k, key of v)`` pairs of a frozen dict."""
    return [kv if tk is None else ((tk, kv[0]), (tv, kv[1])) for kv, tk, tv in payload]


def seq_items(payload: tuple[Any, ...]) -> tuple[Any, ...]:
    """The item keys of a frozen list or tuple."""
    types_, items = payload
    return items if types_ is None else tuple(zip(types_, items))


def _freeze_other(t: type, value: Any) -> tuple[type, Any]:
    if is_array(value):
        raise Unfreezable(value)
    if getattr(t, "__hash__", None) is _OBJECT_HASH and getattr(t, "__eq__", None) is _OBJECT_EQ:
        ATOMIC.add(t)  # identity semantics: every instance is hashable, now and later
        return (t, value)
    try:
        hash(value)
    except TypeError:
        raise Unfreezable(value) from None
    return (t, value)


def is_container(key: Any) -> bool:
    if type(key) is Hashed:
        return True
    kind = key[0]
    return kind in _KINDS or _is_namedtuple(kind)


def is_immutable(key: Any) -> bool:
    """No ``dict``/``list``/``set`` anywhere inside: the key of one such object can never change."""
    if type(key) is Hashed:
        key = key.key
    kind, payload = key
    if kind is dict or kind is list or kind is set:
        return False
    if kind is frozenset:
        return all(map(is_immutable, payload))
    if kind is tuple or _is_namedtuple(kind):
        return all(map(is_immutable, seq_items(payload)))
    return True


class IdentityMemo:
    """Keys of static containers remembered by the container's identity, so a config passed as the same object
    call after call is not frozen again.

    A tuple or frozenset with nothing mutable inside can never change. A dict or list of atomic entries can, so its
    entry is valid only while it holds the very same entry objects, checked by identity in C (``operator.is_``):
    about 0.3 us for 10 entries against about 3 us to freeze it again. An entry holds its container, so the id
    cannot be reused while remembered; ``clear()`` lets go of everything.
    """

    def __init__(self, maxsize: int = 256) -> None:
        self._maxsize = maxsize
        self._entries: dict[int, tuple[Any, Any, Any]] = {}

    def get(self, value: Any) -> Any:
        hit = self._entries.get(id(value))
        if hit is None or hit[0] is not value:
            return None
        items = hit[2]
        if type(value) is dict:
            ks, vs = items
            if not (len(value) == len(ks) and all(map(operator.is_, value, ks))
                    and all(map(operator.is_, value.values(), vs))):
                return None
        elif type(value) is list and not (len(value) == len(items) and all(map(operator.is_, value, items))):
            return None
        return hit[1]

    def put(self, value: Any, pair: tuple[Any, Any]) -> None:
        """Remember ``pair``, a ``(marker, frozen key)`` pair, for the container ``value`` when that is safe."""
        t = type(value)
        items: Any = None
        if t is dict:
            items = (tuple(value), tuple(value.values()))
            if not (ATOMIC.issuperset(map(type, items[0])) and ATOMIC.issuperset(map(type, items[1]))):
                return
        elif t is list:
            items = tuple(value)
            if not ATOMIC.issuperset(map(type, items)):
                return
        elif not is_immutable(pair[1]):
            return
        if len(self._entries) >= self._maxsize:
            self._entries.clear()
        self._entries[id(value)] = (value, pair, items)

    def discard(self, value: Any) -> None:
        """Forget ``value`` (a failed call must not keep its static values alive)."""
        hit = self._entries.get(id(value))
        if hit is not None and hit[0] is value:
            del self._entries[id(value)]

    def clear(self) -> None:
        self._entries.clear()


def _is_namedtuple(t: type) -> bool:
    return issubclass(t, tuple) and hasattr(t, "_fields")


def is_array(value: object) -> bool:
    """Arrays and tracers: never static, whatever their hash says."""
    return isinstance(value, (jax.Array, np.ndarray, jax.core.Tracer))


# ---------------------------------------------------------------------------------------------------------------
# Thawing: an equal, fresh value from a key (for retraces of a program whose first caller's object is gone).


def thaw(key: Any) -> Any:
    if type(key) is Hashed:
        key = key.key
    kind, payload = key
    if not is_container(key):
        return payload
    if kind is dict:
        return {thaw(k): thaw(v) for k, v in dict_items(payload)}
    items = map(thaw, payload if kind is set or kind is frozenset else seq_items(payload))
    return kind(*items) if _is_namedtuple(kind) else kind(items)


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
    return _short_repr(thaw(key))


def _short_repr(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def diff(label: str, old: Any, new: Any) -> list[str]:
    """Where two keys differ: ``["cfg['lr']: 0.1 -> 0.2"]``; empty when equal."""
    old, new = (k.key if type(k) is Hashed else k for k in (old, new))
    if old == new:
        return []
    if is_container(old) and is_container(new) and old[0] is new[0]:
        sub = _diff_items(label, old, new)
        if sub:
            return sub
    elif not is_container(old) and not is_container(new) and old[0] is not new[0] and old[1] == new[1]:
        return [f"{label}: {_short_repr(old[1])} ({old[0].__name__}) -> {_short_repr(new[1])} ({new[0].__name__})"]
    return [f"{label}: {describe(old)} -> {describe(new)}"]


def _diff_items(label: str, old: Any, new: Any) -> list[str]:
    kind, before, after = old[0], old[1], new[1]
    if kind is dict:
        b, a = dict(dict_items(before)), dict(dict_items(after))
        out: list[str] = []
        for k in b.keys() | a.keys():
            name = f"{label}[{describe(k)}]"
            if k not in a:
                out.append(f"{name}: removed")
            elif k not in b:
                out.append(f"{name}: added ({describe(a[k])})")
            else:
                out.extend(diff(name, b[k], a[k]))
        return sorted(out)
    if kind is set or kind is frozenset:
        return []
    before, after = seq_items(before), seq_items(after)
    if len(before) != len(after):
        return [f"{label}: length {len(before)} -> {len(after)}"]
    out = []
    for i, (x, y) in enumerate(zip(before, after)):
        out.extend(diff(f"{label}[{i}]", x, y))
    return out


__all__ = ["ATOMIC", "Hashed", "IdentityMemo", "Unfreezable", "check_static", "describe", "diff", "freeze", "is_array",
           "is_immutable", "non_static_error", "thaw", "type_name"]
