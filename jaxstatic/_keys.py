"""The key format: how a frozen static value is laid out, and how it is read back.

A leaf's key is the pair ``(type, value)``, ``value`` replaced by an encoding where Python's equality is not exact:
the bits of floats that are zero or NaN, of complex numbers and of numpy inexact scalars; ``(start, stop, step)`` for
ranges. A container's key is a ``Frozen`` tuple: the count of mutable containers inside, then the container's tokens,
depth first::

    node:  kind, span, n, type, extra, <children>     (span: the children's token count; n: entries)
    leaf:  type, value

so that hashing and comparing a key runs in C and costs no recursion however deep the value, and ``span`` lets a
reader skip a subtree. ``extra`` holds flags for container subclasses (an instance ``__dict__`` as the last child, a
``default_factory`` as the first) and a record's field names. A set's one child is the frozenset of its items' keys;
a record's last child is an ``Exemplar`` holding the record, equal to every other exemplar, which ``thaw`` hands back.

The commonest node, a plain dict, list or tuple whose entries are all atomic or ordinary floats, is *packed*:
``extra`` is ``PACKED`` and its children are tuples (types, values; for a dict key types, keys, value types, values),
built in C, a tuple's values being the tuple itself. Which form a node takes depends only on its contents.
"""

from __future__ import annotations

import struct
from collections import OrderedDict, defaultdict
from typing import Any, Final

import numpy as np


class Kind:
    """The first token of a container node (never a type, so a node is told from a leaf by one check)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


SEQ, MAP, SET, REC, SLICE = Kind("SEQ"), Kind("MAP"), Kind("SET"), Kind("REC"), Kind("SLICE")
HEAD: Final = 5  # kind, span, n, type, extra
ATTRS, FACTORY = 1, 2  # ``extra`` flags of container subclasses: an instance __dict__ child, a default_factory child
PACKED = 4  # ``extra`` of a dict, list or tuple of atomic entries: its children are tuples of types and of values


class Frozen(tuple[Any, ...]):
    """A container's key: a flat tuple of tokens, compared and hashed in C."""

    __slots__ = ()


class Exemplar(tuple[()]):
    """An empty tuple (so equal to every other) carrying a record for ``thaw``."""

    record: Any


class Hashed(frozenset[Any]):
    """A container's key with its hash computed once: a one-element frozenset, whose hash CPython caches.

    A plain tuple key would be hashed again, token by token, on every lookup (for a 10-entry dict, ~50 tokens);
    a frozenset hashes once and compares in C, with no Python-level ``__hash__``/``__eq__`` call on the hit path
    (measured: ~0.3 us a call less than a class with its own ``__hash__`` for a 10-entry dict config).
    """

    __slots__ = ()

    def __new__(cls, key: Any) -> Hashed:
        return super().__new__(cls, (key,))

    @property
    def key(self) -> Any:
        return next(iter(self))


BUILTIN_BASES: Final = (defaultdict, OrderedDict, dict, list, tuple, set, frozenset)
PACK_D: Final = struct.Struct("<d")
PACK_DD: Final = struct.Struct("<dd")


def unbits(t: Any, data: Any) -> Any:
    if t is range:
        return range(*data)
    if issubclass(t, np.generic):
        return np.frombuffer(data, dtype=t)[0]
    if issubclass(t, complex):
        return t(complex(*PACK_DD.unpack(data)))
    return t(PACK_D.unpack(data)[0])


def is_container(key: Any) -> bool:
    return type(key) is Frozen or type(key) is Hashed


def is_immutable(key: Any) -> bool:
    """No ``dict``/``list``/``set`` (or instance ``__dict__``) anywhere inside: a key that can never go stale."""
    if type(key) is Hashed:
        key = key.key
    return type(key) is not Frozen or key[0] == 0


def size(key: Any) -> int:
    """About how many objects hashing a container key visits: its tokens, and a packed root's entries."""
    if type(key) is Hashed:
        key = key.key
    packed = type(key[5]) is int and key[5] == PACKED
    return len(key) + (key[3] * key[2] if packed else 0)


def item_span(tokens: tuple[Any, ...], i: int) -> int:
    """How many tokens the item starting at ``tokens[i]`` takes."""
    tok = tokens[i]
    if type(tok) is Kind:
        return HEAD + tokens[i + 1]  # type: ignore[no-any-return]
    return 1 if type(tok) is Exemplar else 2


def thaw_leaf(t: type, value: Any) -> Any:
    return value if type(value) is t else unbits(t, value)


def thaw(key: Any) -> Any:
    """A value structurally identical to the one frozen: the same container types, order and leaf objects (floats
    and complex numbers as bit-identical copies, records as the first instance seen). Built with an explicit stack."""
    if type(key) is Hashed:
        key = key.key
    if type(key) is not Frozen:
        return thaw_leaf(*key)
    return thaw_at(key, 1)


def thaw_at(tokens: tuple[Any, ...], i: int) -> Any:
    """The value of the item starting at ``tokens[i]``."""
    stack: list[list[Any]] = []  # [kind, type, extra, n, children, children still to come]
    while True:
        tok = tokens[i]
        if type(tok) is Kind:
            kind, _, n, t, extra = tokens[i : i + HEAD]
            i += HEAD
            if type(extra) is int and extra == PACKED:
                value, i = _unpack_value(t, tokens, i), i + tokens[i - HEAD + 1]
            elif kind is SET:
                value, i = _make_set(t, tokens[i]), i + 1
            elif count := _child_count(kind, n, extra):
                stack.append([kind, t, extra, n, [], count])
                continue
            else:
                value = _make(kind, t, extra, n, [])
        elif type(tok) is Exemplar:
            value, i = tok.record, i + 1
        else:
            value, i = thaw_leaf(tok, tokens[i + 1]), i + 2
        while stack:
            frame = stack[-1]
            frame[4].append(value)
            frame[5] -= 1
            if frame[5]:
                break
            stack.pop()
            value = _make(*frame[:5])
        else:
            return value


def _unpack_value(t: type, tokens: tuple[Any, ...], i: int) -> Any:
    """A packed dict, list or tuple: its values are the leaves themselves."""
    if t is dict:
        return dict(zip(tokens[i + 1], tokens[i + 3]))
    return tokens[i + 1] if t is tuple else list(tokens[i + 1])


def unpacked(tokens: tuple[Any, ...], i: int, first: int | None = None) -> tuple[Any, ...]:
    """The item at ``tokens[i]`` as its own token stream, a packed node written out leaf by leaf (only its
    ``first`` entries, if given)."""
    span = item_span(tokens, i)
    if type(tokens[i]) is not Kind or not (type(tokens[i + 4]) is int and tokens[i + 4] == PACKED):
        return tokens[i : i + span]
    parts = tuple(part[:first] for part in tokens[i + HEAD : i + span])
    n = len(parts[1])
    out: list[Any] = [None] * (HEAD + len(parts) * n)
    out[:HEAD] = (tokens[i], len(out) - HEAD, n, tokens[i + 3], 0)
    for k, part in enumerate(parts):
        out[HEAD + k :: len(parts)] = part
    return tuple(out)


def _child_count(kind: Kind, n: int, extra: Any) -> int:
    if kind is SEQ:
        return n + int(extra & ATTRS)
    if kind is MAP:
        return 2 * n + int(extra & ATTRS) + int(extra & FACTORY) // FACTORY
    return 0 if kind is SET else 3 if kind is SLICE else n + 1


def _make(kind: Kind, t: type, extra: Any, n: int, children: list[Any]) -> Any:
    if kind is REC:
        return children[-1]
    if kind is SLICE:
        return slice(*children)
    attrs = children.pop() if extra & ATTRS else None
    if kind is SEQ:
        value = children if t is list else tuple(children) if t is tuple else _make_seq(t, children)
    else:
        factory = children.pop(0) if extra & FACTORY else None
        value = dict(zip(children[::2], children[1::2])) if t is dict else _make_map(t, factory, children)
    if attrs:
        value.__dict__.update(attrs)
    return value


def _make_seq(t: Any, items: list[Any]) -> Any:
    if issubclass(t, tuple):
        return tuple.__new__(t, items)
    value = list.__new__(t)
    list.extend(value, items)
    return value


def _make_map(t: Any, factory: Any, items: list[Any]) -> Any:
    base: Any = next(b for b in BUILTIN_BASES if issubclass(t, b))
    value = base.__new__(t)
    if factory is not None:
        value.default_factory = factory
    for k, v in zip(items[::2], items[1::2]):
        base.__setitem__(value, k, v)
    return value


def _make_set(t: Any, keys: frozenset[Any]) -> Any:
    items = map(thaw, keys)
    if t is set or t is frozenset:
        return t(items)
    if issubclass(t, frozenset):
        return frozenset.__new__(t, items)
    value = set.__new__(t)
    set.update(value, items)
    return value


def safe_repr(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters; a plain placeholder when ``__repr__`` fails."""
    try:
        text = repr(value)
        if type(text) is not str:
            raise TypeError
    except Exception:
        return f"<{type(value).__qualname__} object>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
