"""What a function closes over, read when a transform is made: the key that lets ``js.jit`` of a closure, a
``functools.partial`` or a function with defaults share its programs with an earlier wrapper of the same code, and
the words that say why it could not.

``make_train(config)`` returns a new ``train`` on each call; ``jax.jit`` compiles each one anew. Two such functions
compute the same thing when they run the same code (the same code object, by identity) over the same globals (the
module's dict, by identity) and every value they close over is equal under the static rule: their cells, their
``__defaults__`` and ``__kwdefaults__``, and a partial's function, arguments and keywords. Those values are frozen as
a ``Static`` parameter's are (``_freeze``: ``1``, ``1.0`` and ``True`` differ), once, when the wrapper is made:
they are the wrapper's, as a ``Static`` value is a call's. A function closed over is keyed the same way, by its code
and what it closes over (``linear_schedule`` inside ``make_train``); a partial by its parts.

A value that cannot be static never shares: an array (never compared by value), and an object compared by identity
(an environment made on each call: two wrappers over two of them are two programs, whatever their state). Nor does
a closure whose values changed after it was made: the trace checks what it runs against the key it was shared
under (``matches``), so a program is only ever made for the values its key says.

Cost: one pass over the closure when the wrapper is made (a closure over a 20-entry config dict: ~40 us, of which
~15 us freeze the dict, measured on a shared 2-core machine; ``benchmarks/wrap.py`` times the whole wrapper); nothing
on a call.
"""

from __future__ import annotations

import functools
import types
from typing import Any, NamedTuple

from . import _builds, _freeze

_DEPTH = 8  # functions closed over, inside functions closed over: deeper ones are not read (no sharing)


class Blocked(NamedTuple):
    """A closed-over value that cannot be static, and why (``config``, ``a jax.Array ...``); its key is this."""

    kind: str  # "identity", "unfreezable", "deep"
    type_name: str
    ident: int  # an identity-compared object's id (told apart from another, never used as a key)


class Closed(NamedTuple):
    """What a function closes over, as ``read`` finds it when a transform is made."""

    family: tuple[int, ...]  # ids of the code object and globals (kept alive by ``holds``)
    name: str  # ``train``
    where: str  # ``ppo.py:81``, where the function is defined
    labels: tuple[str, ...]  # ``config``, ``lr (default)``, ``args[0]``
    keys: tuple[Any, ...]  # each value's key: a frozen key, a ``Nested`` function, or ``Blocked``
    holds: tuple[Any, ...]  # what the family's ids name (the code, the globals): alive while this is
    key: tuple[Any, ...] | None  # the key equal wrappers share (``keys``), or None where a value cannot be static


class Nested(NamedTuple):
    """A function closed over: its code and globals (by id), and what it closes over in turn."""

    family: tuple[int, ...]
    name: str
    labels: tuple[str, ...]
    keys: tuple[Any, ...]
    holds: tuple[Any, ...]

    def __eq__(self, other: object) -> bool:
        return type(other) is Nested and self[:2] == other[:2] and self.labels == other.labels and \
            self.keys == other.keys

    def __hash__(self) -> int:
        return hash((self.family, self.keys))


def _blocked(key: Any) -> bool:
    if type(key) is Blocked:
        return True
    return type(key) is Nested and any(_blocked(k) for k in key.keys)


def read(fn: Any) -> Closed | None:
    """What ``fn`` closes over; None for anything but a Python function or a ``functools.partial``."""
    if type(fn) is not types.FunctionType and type(fn) is not functools.partial:
        return None
    family, holds, name, labels, values = _identity(fn)
    seen = {id(fn): 0}
    keys = tuple(_key(v, seen, 1) for v in values)
    return Closed(family, name, _builds.where(fn), labels, keys, holds, None if any(map(_blocked, keys)) else keys)


def _identity(fn: Any) -> tuple[tuple[int, ...], tuple[Any, ...], str, tuple[str, ...], tuple[Any, ...]]:
    """A function's or partial's family (ids of its code and globals; a partial's: of its function's code), what
    keeps those ids alive, its name, and its closed-over values by label."""
    if type(fn) is types.FunctionType:
        code = fn.__code__
        return (id(code), id(fn.__globals__)), (code, fn.__globals__), fn.__name__, *_parts(fn)
    inner = getattr(fn.func, "__code__", None)
    family, holds = ((-1, id(inner)), (inner,)) if inner is not None else ((-2, id(fn.func)), (fn.func,))
    labels = ("func", *(f"args[{i}]" for i in range(len(fn.args))), *fn.keywords)
    name = f"partial({getattr(fn.func, '__name__', type(fn.func).__name__)})"
    return family, holds, name, labels, (fn.func, *fn.args, *fn.keywords.values())


def _parts(fn: types.FunctionType) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """A function's closed-over values, by label: its cells (``config``), then its defaults (``lr (default)``)."""
    held = _builds.closed_over(fn)
    return tuple(f"{n} (default)" if default else n for default, n, _ in held), tuple(v for _, _, v in held)


_EMPTY = ("<empty cell>",)  # the key of a cell not assigned yet: equal to another empty one


def _key(value: Any, seen: dict[int, int], depth: int) -> Any:
    """One closed-over value's key: a function by its code and what it closes over, a partial by its parts, an
    object compared by identity or a value that cannot be static as ``Blocked``, anything else frozen."""
    t = type(value)
    if t is types.FunctionType or t is functools.partial:
        if id(value) in seen:  # a function closing over itself: keyed by the depth where the cycle closes
            return ("<cycle>", seen[id(value)])
        if depth >= _DEPTH:
            return Blocked("deep", "function", id(value))
        return _nested(value, seen, depth)
    if value is _builds.EMPTY:
        return _EMPTY
    if _freeze.compared_by_identity(t):
        return Blocked("identity", t.__qualname__, id(value))
    try:
        return _freeze.freeze(value)
    except _freeze.Unfreezable:
        return Blocked("unfreezable", _freeze.type_name(value), id(value))


def _nested(fn: Any, seen: dict[int, int], depth: int) -> Nested:
    """A function or partial closed over, keyed by its code (or function) and what it closes over."""
    family, holds, name, labels, values = _identity(fn)
    seen[id(fn)] = depth
    try:
        return Nested(family, name, labels, tuple(_key(v, seen, depth + 1) for v in values), holds)
    finally:
        del seen[id(fn)]


RECIPE = "docs/migration.md#a-config-held-in-a-closure"
"""The recipe messages point to: the closed-over config made a Static parameter."""


def made_again(old: Closed, new: Closed) -> tuple[tuple[str, ...], str] | None:
    """``why_not_shared`` where ``new`` is ``old``'s function made again: the same code closing over the same
    functions (a decorator's wrapper over another function is another function, with nothing to explain)."""
    if old.family != new.family or old.labels != new.labels or not _same_functions(old.keys, new.keys):
        return None
    return why_not_shared(old, new)


def _same_functions(keys: tuple[Any, ...], new_keys: tuple[Any, ...]) -> bool:
    for a, b in zip(keys, new_keys):
        if type(a) is Nested or type(b) is Nested:
            if type(a) is not type(b) or a.family != b.family or not _same_functions(a.keys, b.keys):
                return False
        elif type(a) is tuple and type(b) is tuple and len(a) == 2 == len(b) and a != b and callable(a[1]) and \
                callable(b[1]) and a[0] is not type:
            return False  # two builtins or jitted functions
    return True


def why_not_shared(old: Closed, new: Closed | None) -> tuple[tuple[str, ...], str]:
    """Why a function made again could not share the programs of the one made before it of the same code: what
    differs, one entry per value and path (``train's closure: config['LR']: 0.1 -> 0.2``), and the fix."""
    fix = (f"{new.name if new else old.name} (defined at {old.where}) was made again closing over other values, so "
           f"it shares no program with the one made before; to share them, make these values Static parameters "
           f"({RECIPE})")
    if new is None or new.family != old.family:
        return (f"{old.name}: no longer the same function",), fix
    if not new.labels:
        return ((f"{new.name}: a new function of the same code (defined at {new.where}) on each call, compared by "
                 "identity, as jax.jit compares it"),), "Define it once, outside the loop or call that makes it"
    changes = [f"{new.name}'s closure: {c}" for c in _differences(old.labels, old.keys, new.labels, new.keys)]
    return tuple(changes or [f"{new.name}'s closure: {c}" for c in _unshareable(new.labels, new.keys)]), fix


def _differences(labels: tuple[str, ...], keys: tuple[Any, ...], new_labels: tuple[str, ...],
                 new_keys: tuple[Any, ...]) -> list[str]:
    if labels != new_labels:
        return [f"closes over {', '.join(new_labels) or 'nothing'} (was {', '.join(labels) or 'nothing'})"]
    out: list[str] = []
    for label, a, b in zip(labels, keys, new_keys):
        if a == b and not _blocked(b):
            continue
        out.extend(_difference(label, a, b))
    return out


def _difference(label: str, a: Any, b: Any) -> list[str]:
    if type(b) is Blocked:
        if b.kind == "identity":
            new = "a new " if type(a) is Blocked and a.ident != b.ident else "a "
            return [f"{label}: {new}{b.type_name} object on each call, compared by identity"
                    if new == "a new " else f"{label}: a {b.type_name} object, compared by identity"]
        if b.kind == "deep":
            return [f"{label}: functions closed over nested too deep to compare"]
        return [f"{label}: a {b.type_name}, which cannot be static (never compared by value)"]
    if type(a) is Nested and type(b) is Nested:
        if a.family != b.family:
            return [f"{label}: another function ({a.name} -> {b.name})"]
        inner = _differences(a.labels, a.keys, b.labels, b.keys)
        return [f"{label}'s closure: {c}" for c in inner]
    from . import _keytext  # loaded by the first explanation

    return _keytext.diff(label, a, b) or [f"{label}: changed"]


def _unshareable(labels: tuple[str, ...], keys: tuple[Any, ...]) -> list[str]:
    """The values that kept a function from being shared, where none differs from the earlier one's."""
    return [c for label, k in zip(labels, keys) if _blocked(k) for c in _difference(label, k, k)]


def matches(fn: Any, closed: Closed) -> bool:
    """Whether ``fn`` still closes over the values ``closed`` was read from (a cell rebound, a dict changed since
    are not)."""
    now = read(fn)
    return now is not None and now.family == closed.family and now.keys == closed.keys


__all__ = ["RECIPE", "Blocked", "Closed", "Nested", "made_again", "matches", "read", "why_not_shared"]
