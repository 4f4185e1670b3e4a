"""The values of a ``jaxstatic.dataclass`` instance's static fields: frozen once, kept beside the instance, and
checked for changes made in place.

An instance's static fields make one ``StaticFields`` object, the pytree metadata JAX reads from the hidden
attribute ``__jaxstatic_aux__``. When every static value is immutable, that object sits in the instance's
``__dict__`` and JAX's C++ flatten reads it with no Python frame. When one holds a ``dict``, ``list`` or ``set``,
the instance keeps it under another name, beside a snapshot of those containers' entries, and reading
``__jaxstatic_aux__`` falls through to a class-level descriptor (``CurrentStatics``): the same object while the
entries are the same objects (checked by identity), else frozen again, and a new object if they changed.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, Protocol

from . import _freeze
from ._errors import NonStaticValueError, find_unfreezable, static_field_message, why_not_static
from ._keytext import describe
from ._tree_repr import callable_name

AUX = "__jaxstatic_aux__"  # the metadata attribute JAX reads; in __dict__ when the instance's statics cannot change
BUILDING = "__jaxstatic_building__"  # in __dict__ while __init__ runs
_LAST = "__jaxstatic_last__"  # where an instance whose statics can change keeps its latest StaticFields
_SNAPSHOT = "__jaxstatic_snapshot__"  # ...and the entries of those containers when _LAST was made


class Owner(Protocol):
    """What these functions need to know of a decorated class."""

    cls: type
    statics: tuple[str, ...]  # the static fields, in field order
    get_statics: Callable[[Any], tuple[Any, ...]]
    empty: StaticFields


class StaticFields:
    """The metadata of one instance: the frozen key of each static field (in field order) and the values.

    Compared by key and hashed once. ``mutable`` lists the fields whose key can change in place (a ``dict``,
    ``list`` or ``set`` inside): they are frozen again at each flatten and rebuilt from the key at each unflatten.
    """

    __slots__ = ("_hash", "key", "mutable", "names", "values")

    def __init__(self, names: tuple[str, ...], key: tuple[Any, ...], values: tuple[Any, ...],
                 mutable: tuple[int, ...]) -> None:
        self.names, self.key, self.values, self.mutable = names, key, values, mutable
        self._hash = hash(key)

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is StaticFields and self._hash == other._hash and self.key == other.key)

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as names and values, frozen again when loaded: keys hold classes such as ``function`` that
        pickle cannot name, and string hashes differ between processes."""
        return _refrozen, (self.names, self.fresh_values())

    def __repr__(self) -> str:  # shown inside PyTreeDef(...)
        return "{" + ", ".join(f"{n}={callable_name(v) or describe(k)}"
                               for n, k, v in zip(self.names, self.key, self.values)) + "}"

    def fresh_values(self) -> tuple[Any, ...]:
        """The values for a rebuilt instance: shared when immutable, rebuilt from the key when mutable."""
        if not self.mutable:
            return self.values
        values = list(self.values)
        for i in self.mutable:
            values[i] = _freeze.thaw(self.key[i])
        return tuple(values)


def _refrozen(names: tuple[str, ...], values: tuple[Any, ...]) -> StaticFields:
    keys = tuple(map(_freeze.freeze, values))
    return StaticFields(names, keys, values, tuple(i for i, k in enumerate(keys) if not _freeze.is_immutable(k)))


class CurrentStatics:
    """The class-level ``__jaxstatic_aux__``, read only by instances that hold none of their own: those whose
    static fields hold a mutable container, and those whose ``__init__`` has not finished."""

    def __init__(self, state: Owner) -> None:
        self._state = state

    def __get__(self, o: Any, owner: type | None = None) -> Any:
        if o is None:
            return self
        d = o.__dict__
        last = d.get(_LAST)
        if last is None or BUILDING in d:
            return statics_of(o, self._state)
        return _refresh(o, last, self._state)


def statics_of(o: Any, state: Owner) -> StaticFields:
    if not state.statics:
        return state.empty
    values = state.get_statics(o)
    try:
        keys = tuple(map(_freeze.freeze, values))
    except _freeze.Unfreezable:
        for name, value in zip(state.statics, values):
            _freeze_field(state, name, value)  # raises, naming the field
        raise
    if all(map(_freeze.is_immutable, keys)):
        return StaticFields(state.statics, keys, values, ())
    mutable = tuple(i for i, k in enumerate(keys) if not _freeze.is_immutable(k))
    return StaticFields(state.statics, keys, values, mutable)


def store(d: dict[str, Any], s: StaticFields) -> None:
    """Keep ``s`` on an instance: as its own ``__jaxstatic_aux__`` (read by JAX in C) when it cannot change,
    else beside a snapshot of its mutable containers."""
    if not s.mutable:
        d.pop(_LAST, None)
        d.pop(_SNAPSHOT, None)
        d[AUX] = s
        return
    d.pop(AUX, None)
    d[_LAST] = s
    d[_SNAPSHOT] = tuple(_snapshot(d[s.names[i]]) for i in s.mutable)


def _refresh(o: Any, last: StaticFields, state: Owner) -> StaticFields:
    """The metadata of an instance with mutable static containers: the same object while they hold the same
    entries (checked by identity, cheaper than freezing them again), else frozen again, and new if they changed."""
    d = o.__dict__
    values = state.get_statics(o)
    snapshots = d.get(_SNAPSHOT)
    if snapshots is not None and all(map(_unchanged, [values[i] for i in last.mutable], snapshots)):
        return last
    key = list(last.key)
    for i in last.mutable:
        key[i] = _freeze_field(state, last.names[i], values[i], " (changed in place after the object was built)")
    current = last if tuple(key) == last.key else StaticFields(last.names, tuple(key), values, last.mutable)
    store(d, current)
    return current


def _snapshot(value: Any) -> tuple[Any, ...] | None:
    """A ``dict`` or ``list`` of atomic entries (immutable, so the same objects give the same key), with its
    entries; None for other containers, which are frozen again at each flatten."""
    atomic = _freeze.ATOMIC
    if type(value) is dict and atomic.issuperset(map(type, value)) and atomic.issuperset(map(type, value.values())):
        return value, tuple(value), tuple(value.values())
    if type(value) is list and atomic.issuperset(map(type, value)):
        return value, tuple(value), ()
    return None


def _unchanged(value: Any, snapshot: tuple[Any, ...] | None) -> bool:
    if snapshot is None or value is not snapshot[0] or len(value) != len(snapshot[1]):
        return False
    if type(value) is dict:
        return all(map(operator.is_, value, snapshot[1])) and all(map(operator.is_, value.values(), snapshot[2]))
    return all(map(operator.is_, value, snapshot[1]))


def _freeze_field(state: Owner, name: str, value: Any, when: str = "") -> Any:
    try:
        return _freeze.freeze(value)
    except _freeze.Unfreezable:
        owner = state.cls.__name__
        culprit = find_unfreezable(value)
        raise NonStaticValueError(static_field_message(
            owner, name, f"{owner}.{name}{culprit.path}", _freeze.type_name(culprit.leaf),
            why_not_static(culprit.leaf), when)) from None


def restore_statics(d: dict[str, Any], names: tuple[str, ...]) -> None:
    s: StaticFields = d[AUX]
    if s.mutable:
        d.update(zip(names, s.fresh_values()))
        store(d, s)
    else:
        d.update(zip(names, s.values))


__all__ = ["AUX", "BUILDING", "CurrentStatics", "Owner", "StaticFields", "restore_statics", "statics_of", "store"]
