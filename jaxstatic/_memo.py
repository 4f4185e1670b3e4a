"""Static keys remembered by identity: a config passed again, as the same object or rebuilt from the same objects,
is not frozen again (``IdentityMemo``)."""

from __future__ import annotations

import operator
from typing import Any, Final

from ._keys import Hashed

UNCHANGED: Final = ("{h}[4] < 0 or (len({v}) == {h}[4] and not any(map(is_not, {v}, {h}[2]))"
                    " and ({t} is not dict or not any(map(is_not, {v}.values(), {h}[3]))))")
"""``unchanged``'s test as source text (``{t}``: the type of ``{v}``), which the generated dispatchers
(``_codegen``) run inline."""


def unchanged(v: Any, h: tuple[Any, Any, tuple[Any, ...], tuple[Any, ...], int]) -> bool:
    """Whether the container ``v``, remembered as ``h``, still holds the very objects it held: an immutable one
    always; a list its items, a dict its keys and values, in order. Identity, never ``==``: ``1 == 1.0 == True``
    and ``0.0 == -0.0`` are different keys. Spelled as ``UNCHANGED``."""
    is_not = operator.is_not
    return h[4] < 0 or (len(v) == h[4] and not any(map(is_not, v, h[2])) and (
        type(v) is not dict or not any(map(is_not, v.values(), h[3]))))


class IdentityMemo:
    """Keys of static containers remembered by the container's identity, so a config passed as the same object
    call after call is not frozen again; and of dicts by the identity of their contents, so a config *rebuilt* on
    every call from the same objects (``step(x, {"lr": lr, "opt": opt})``) is not frozen again either.

    An immutable container (a tuple, frozenset or record with nothing mutable inside) can never change. A dict or
    list whose entries are immutable can, so its entry is valid only while it holds the very same entry objects in
    the same order, checked by identity in C (``operator.is_not``): about 0.3 us for 10 entries against about 2 us to
    freeze it again. An entry holds its container, so the id cannot be reused while remembered; ``discard`` forgets
    one (a call that failed), ``clear`` all. The generated dispatchers (``_codegen``) run the same check inline
    (``UNCHANGED``) on ``remembered(id(value))``, which spares a hit two Python calls.

    By contents: a dict whose entries are all immutable is keyed by the ids of its keys and values, a value that is
    a plain tuple or named tuple by its type and its items' ids (a named tuple of optimizer functions is rebuilt as
    often as the dict around it). The entry holds the first such dict's keys and values, so no id it names can be
    reused by another object while it is remembered: equal ids are the very same objects, whose key is the same.
    Measured on a rebuilt 10-entry config: ~1.5 us against ~5 us to freeze and hash it.
    """

    def __init__(self, maxsize: int = 256) -> None:
        self._maxsize = maxsize
        # id -> (value, pair, its keys or items, its values, its length; -1: immutable, never checked)
        self._entries: dict[int, tuple[Any, Any, tuple[Any, ...], tuple[Any, ...], int]] = {}
        self.remembered = self._entries.get  # the same dict for good: clear() empties it in place
        self._contents: dict[Any, tuple[Any, Any]] = {}  # contents signature -> (pair, objects held)
        self._nested: dict[tuple[int, ...], tuple[int, ...]] = {}  # key ids -> positions of tuple values
        self._tuple_types: dict[type, bool] = {tuple: True}
        # read by the general path's hit in C (``_hits.KeyCall``), as ``get`` reads them: the same dicts for good
        self.dicts = (self._entries, self._contents, self._nested, self._tuple_types)

    def get(self, value: Any) -> Any:
        hit = self._entries.get(id(value))
        if hit is None or hit[0] is not value:
            if type(value) is dict:
                found = self._contents.get(self._signature(value))
                return None if found is None else found[0]
            return None
        return hit[1] if unchanged(value, hit) else None

    def _signature(self, value: dict[Any, Any]) -> Any:
        """The identity of a dict's contents: the ids of its keys and values, tuple values by their items' ids."""
        kids = tuple(map(id, value))
        nested = self._nested.get(kids)
        if not nested:
            return kids, tuple(map(id, value.values()))
        vals = tuple(value.values())
        sig: list[Any] = list(map(id, vals))
        for i in nested:
            if self._shallow(type(vals[i])):
                sig[i] = (type(vals[i]), tuple(map(id, vals[i])))
        return kids, tuple(sig)

    def put(self, value: Any, pair: tuple[Any, Any]) -> None:
        """Remember ``pair``, a ``(marker, frozen key)`` pair, for the container ``value`` when that is safe."""
        key = pair[1].key if type(pair[1]) is Hashed else pair[1]
        t = type(value)
        entry: tuple[Any, Any, tuple[Any, ...], tuple[Any, ...], int] = (value, pair, (), (), -1)
        if t is dict and key[0] == 1:
            entry = (value, pair, tuple(value), tuple(value.values()), len(value))
            self._put_contents(value, pair, entry[2:4])
        elif t is list and key[0] == 1:
            entry = (value, pair, tuple(value), (), len(value))
        elif key[0] != 0:
            return
        if len(self._entries) >= self._maxsize:
            self._entries.clear()
        self._entries[id(value)] = entry

    def _put_contents(self, value: dict[Any, Any], pair: tuple[Any, Any], items: tuple[Any, Any]) -> None:
        if len(self._contents) >= self._maxsize:
            self._contents.clear()
            self._nested.clear()
        kids = tuple(map(id, value))
        nested = tuple(i for i, v in enumerate(items[1]) if self._shallow(type(v)))
        if self._nested.get(kids, ()) != nested:
            self._nested[kids] = nested
        self._contents[self._signature(value)] = (pair, items)

    def discard(self, value: Any) -> None:
        """Forget ``value`` (a failed call must not keep its static values alive)."""
        hit = self._entries.get(id(value))
        if hit is not None and hit[0] is value:
            del self._entries[id(value)]
        if type(value) is dict:
            self._contents.pop(self._signature(value), None)

    def clear(self) -> tuple[dict[Any, Any], ...]:
        """Forget everything, in place (the hit in C holds these dicts); returns what was held, for the caller to
        let go of outside its lock (a value's finalizer may call the function)."""
        held = tuple(d.copy() for d in self.dicts)  # copied by their stored hashes: no key's __hash__ runs
        for d in self.dicts:
            d.clear()
        self._tuple_types[tuple] = True
        return held

    def _shallow(self, t: type) -> bool:
        """A tuple type whose instances are their items and nothing else: ``tuple``, or a named tuple (no
        ``__dict__``, no ``__eq__``/``__hash__``/``__iter__`` of its own: what iterating it gives is what it holds,
        in the order the hit in C reads them); decided once per type, forgotten by ``clear``, and at most
        ``maxsize`` types kept (a named tuple type made per call is not kept alive)."""
        known = self._tuple_types.get(t)
        if known is None:
            if len(self._tuple_types) >= self._maxsize:
                self._tuple_types.clear()
                self._tuple_types[tuple] = True
            known = self._tuple_types[t] = (issubclass(t, tuple) and hasattr(t, "_fields") and "__dict__" not in dir(t)
                                            and t.__eq__ is tuple.__eq__ and t.__hash__ is tuple.__hash__
                                            and t.__iter__ is tuple.__iter__)
        return known


__all__ = ["UNCHANGED", "IdentityMemo", "unchanged"]
