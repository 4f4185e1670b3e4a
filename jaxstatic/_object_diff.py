"""Where two unequal objects differ, named as Python spells it: ``cfg.depth: 2 -> 3``, ``state.tx.update: a new
function object on each call (...)``, ``s['b']: added (float32[1])``.

A retrace is often blamed on one object that the key holds whole (an Equinox module, an optax transformation, the
static half of ``eqx.partition``) or on a pytree node whose metadata changed (a flax ``struct`` field with
``pytree_node=False``, a ``jdc.Static`` field, a ``register_dataclass`` meta field). Their reprs are long and cut
short, so the two sides of ``->`` would read the same. Instead both objects are walked side by side, descending only
where the two sides are unequal: by field for named tuples, dataclasses (Equinox modules, flax and jax_dataclasses
structs among them), attrs classes and pydantic models; by the key paths ``jax.tree_util`` gives any other pytree node,
whose metadata is compared as the node's own (an nnx module by its attributes); by key for mappings and
``ConfigDict``-like ones, index for sequences; ``func``, ``args`` and ``keywords`` for partials, the captured values
and defaults for two functions of the same code; by attribute name (``__dict__``, ``__slots__``) for any other
object. An object that compares by identity is said to be a new object, with the fix, before its attributes that
differ. What is left is a leaf, put in words with the reason it is new: a function object made again from the same
code, a method bound to a new object, or the two reprs, cut around their first difference, never before it and
never inside a class name.

Structures rebuilt from a treedef (``rebuilt``) hold new objects on each side wherever the node makes one: there,
what differs only by identity is said only when nothing else differs.

Runs only when a retrace is explained; its cost is bounded (``_BUDGET`` objects visited) and it never raises: a user
``__eq__``, ``__repr__`` or attribute that fails gives a plainer text.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import os
import re
import sys
import types
from collections.abc import Mapping
from typing import Any

import jax

from ._builds import by_identity, closure_parts, equal_build, from_library, identity_fix, partial_parts, same
from ._keys import safe_repr

_LIMIT = 60  # characters of one side of "->"
_CONTEXT = 20  # characters kept before the first difference when a side is cut
_MAX_LINES = 5  # lines about one object before "and N more changes"
_BUDGET = 2000  # objects visited while explaining one change
_DEPTH = 32
_ATOMS = frozenset({int, float, complex, str, bytes, bool})  # no parts: said as they are, without asking JAX


def object_diff(label: str, old: Any, new: Any, rebuilt: bool = False) -> list[str]:
    """``["cfg.depth: 2 -> 3"]``: where ``old`` and ``new`` differ, one line per difference (at most a few); a
    single line for the whole objects when no part of them can be told apart. ``rebuilt``: both were rebuilt from
    a pytree structure, so that what differs only by identity is said only when nothing else differs. Never
    raises."""
    walk = _Walk(rebuilt)
    # a part that fails to compare, to list or to print: what was found so far, or the whole
    with contextlib.suppress(Exception):
        walk.go(label, old, new, 0)
    if not walk.out and walk.weak:
        walk.out = walk.weak[:_MAX_LINES]
    if not walk.out:
        try:
            return [leaf_text(label, old, new)]
        except Exception:
            return [f"{label}: a {_type_name(old)} -> a {_type_name(new)}, not equal"]
    if walk.more:
        walk.out.append(f"{label}: and {walk.more} more changes")
    return walk.out


class _Walk:
    """One side-by-side walk: the lines found so far, and what is left of its budget."""

    def __init__(self, rebuilt: bool = False) -> None:
        self.out: list[str] = []
        self.more = 0
        self.budget = _BUDGET
        self.note: str | None = None  # the name of the (name, value) entry being walked
        self.identity_counts = not rebuilt  # a new object is a cause (a static value), not a rebuild's artifact
        self.weak: list[str] = []  # objects that differ by identity alone, said when nothing else differs

    def add(self, line: str) -> None:
        if len(self.out) < _MAX_LINES:
            self.out.append(line + (f" ({self.note!r})" if self.note is not None else ""))
        else:
            self.more += 1

    def go(self, label: str, a: Any, b: Any, depth: int) -> None:
        self.budget -= 1
        if same(a, b):
            return
        if (type(a) is not type(b) or type(a) in _ATOMS or isinstance(a, (type, enum.Enum)) or depth > _DEPTH
                or self.budget < 0):
            self.add(leaf_text(label, a, b))
            return
        if self.identity_counts and by_identity(a) and not _callable_names(a, b):
            self.identity(label, a, b, depth)
            return
        for children in (_bound_object, partial_parts, closure_parts, _fields, _mapping, _sequence, _pytree, _attributes):
            pairs = children(label, a, b)
            if pairs is None:
                continue
            before = len(self.out) + self.more
            for lab, x, y in pairs:
                if self.budget < 0:  # the rest of a very large object is left uncompared
                    break
                if isinstance(x, _Meta):
                    if x.fallback and len(self.out) + self.more > before:
                        continue
                    self.add(f"{lab}: pytree metadata {' -> '.join(sides(_repr(x.data), _repr(y.data)))}")
                elif isinstance(x, _Gone) or isinstance(y, _Gone):
                    self.add(f"{lab}: {'removed' if isinstance(y, _Gone) else 'added'} ({_one_line(x, y)})")
                elif isinstance(x, _Named):
                    outer, self.note = self.note, x.name
                    self.go(lab, x.value, y.value, depth + 1)
                    self.note = outer
                else:
                    self.go(lab, x, y, depth + 1)
            if len(self.out) + self.more > before:
                return
            break  # every part equal, yet the objects are not: say so about the whole
        if by_identity(a) and not _callable_names(a, b):  # another object, where that is no cause
            self.weak.append(f"{label}: another {_type_name(a)} object (compared by identity)")
            return
        self.add(leaf_text(label, a, b))

    def identity(self, label: str, a: Any, b: Any, depth: int) -> None:
        """An object that compares by identity, where that is a cause: a new one is a new static value (said first,
        with the fix), then the attributes that differ, inside which a new object alone is no cause."""
        self.add(f"{label}: {identity_fix(a)}")
        self.identity_counts = False
        try:
            for lab, x, y in (() if from_library(a) else _attributes(label, a, b) or ()):
                self.go(lab, x, y, depth + 1)
        finally:
            self.identity_counts = True


class _Gone:
    """The side of an entry that one object has and the other has not."""


_GONE = _Gone()


class _Named:
    """The value of a ``(name, value)`` entry of a sequence (nnx's graph attributes): lines below it end with the
    name, so that what changed is named even where it is held by position."""

    def __init__(self, name: str, value: Any) -> None:
        self.name, self.value = name, value


class _Meta:
    """A pytree node's metadata (its aux data), which is said whole: its layout is the node's own."""

    def __init__(self, data: Any, fallback: bool = False) -> None:
        self.data = data
        self.fallback = fallback  # said only when the pairs before it show no difference


class StandIn:
    """A placeholder for a value that only its description stands for (a traced array, ``float32[3]``): said as
    ``an array float32[3]``, never by its class."""

    __slots__ = ()
    kind = "an array"


Pairs = list[tuple[str, Any, Any]]


def _bound_object(label: str, a: Any, b: Any) -> Pairs | None:
    """The object a method is bound to, when it has an equality of its own (a model whose configuration changed)."""
    if type(a) is not types.MethodType or a.__func__ is not b.__func__ or not _compares_values(a.__self__):
        return None
    return [(f"{label}.__self__", a.__self__, b.__self__)]


def _compares_values(value: Any) -> bool:
    """An equality of its own, not identity (``object.__eq__``)."""
    eq: Any = type(value).__eq__
    return eq is not object.__eq__


def _fields(label: str, a: Any, b: Any) -> Pairs | None:
    """The compared fields of a named tuple, a dataclass (Equinox modules, flax and jax_dataclasses structs) or an
    attrs class, by name: what ``==`` compares, static metadata included."""
    names: Any = None
    t = type(a)
    if isinstance(a, tuple) and isinstance(getattr(t, "_fields", None), tuple):
        names = t._fields
    elif dataclasses.is_dataclass(a):
        names = [f.name for f in dataclasses.fields(a) if f.compare]
    elif hasattr(t, "__attrs_attrs__"):
        names = [f.name for f in t.__attrs_attrs__ if getattr(f, "eq", True)]
    elif isinstance(getattr(t, "model_fields", None), dict) and hasattr(a, "__pydantic_fields_set__"):
        names = list(t.model_fields)  # a pydantic model
    if names is None:
        return None
    return [(f"{label}.{n}", getattr(a, n, _GONE), getattr(b, n, _GONE)) for n in names]


def _mapping(label: str, a: Any, b: Any) -> Pairs | None:
    """A mapping, or an object read as one (an ``ml_collections`` ``ConfigDict``: ``keys()`` and ``[key]``), by
    key."""
    if not isinstance(a, Mapping) and not (callable(getattr(type(a), "keys", None))
                                           and callable(getattr(type(a), "__getitem__", None))):
        return None
    keys_a, keys_b = dict.fromkeys(a.keys()), dict.fromkeys(b.keys())
    changed = [(f"{label}[{_one_line(k)}]", a[k], b[k] if k in keys_b else _GONE) for k in keys_a]
    return changed + [(f"{label}[{_one_line(k)}]", _GONE, b[k]) for k in keys_b if k not in keys_a]


def _sequence(label: str, a: Any, b: Any) -> Pairs | None:
    if not isinstance(a, (list, tuple)):
        return None
    n = max(len(a), len(b))
    pairs = [(f"{label}[{k}]", a[k] if k < len(a) else _GONE, b[k] if k < len(b) else _GONE) for k in range(n)]
    return [_named(*pair) for pair in pairs]


def _named(label: str, x: Any, y: Any) -> tuple[str, Any, Any]:
    if (type(x) is tuple and type(y) is tuple and len(x) == len(y) == 2 and type(x[0]) is str and x[0] == y[0]
            and not same(x[1], y[1])):
        return f"{label}[1]", _Named(x[0], x[1]), _Named(y[0], y[1])
    return label, x, y


def _pytree(label: str, a: Any, b: Any) -> Pairs | None:
    """Any other pytree node: its metadata (the node data ``jax.tree_util`` compares), then its children by key path
    (``GetAttrKey``, ``DictKey``, ``SequenceKey``, ``FlattenedIndexKey``)."""
    (kids_a, node_a), (kids_b, node_b) = _one_level(a), _one_level(b)
    if node_a is None or node_b is None:
        return None
    if not same(node_a[1], node_b[1]):
        if _is_nnx(a):  # its metadata holds its attributes: said by name, the metadata whole if none differs
            return [*(_attributes(label, a, b) or ()), (label, _Meta(node_a[1], True), _Meta(node_b[1]))]
        return [(label, _Meta(node_a[1]), _Meta(node_b[1]))]
    if [p for p, _ in kids_a] != [p for p, _ in kids_b]:
        return None
    return [(label + jax.tree_util.keystr(p), x, y) for (p, x), (_, y) in zip(kids_a, kids_b)]


def _one_level(value: Any) -> tuple[list[tuple[Any, Any]], Any]:
    """A pytree node's children with their key paths, and its node data (type, metadata); no node data for a leaf."""
    top = functools.partial(_below, value)
    kids, treedef = jax.tree_util.tree_flatten_with_path(value, is_leaf=top)
    node = getattr(treedef, "node_data")()  # noqa: B009 (public in every supported JAX, not in its stubs)
    if node is None or (len(kids) == 1 and kids[0][1] is value):
        return [], None
    return kids, node


def _below(top: Any, x: Any) -> bool:
    return x is not top


def _is_nnx(value: Any) -> bool:
    """A flax nnx module or other nnx pytree object."""
    return any(c.__module__.startswith("flax.nnx") for c in type(value).__mro__[:-1])


def _attributes(label: str, a: Any, b: Any) -> Pairs | None:
    """Any other object, by attribute name: its declared fields if it has some, else its ``__dict__`` and
    ``__slots__``; none for an object without attributes."""
    declared = _fields(label, a, b)
    if declared is not None:
        return declared
    names_a, names_b = _attribute_names(a), _attribute_names(b)
    if not names_a and not names_b:
        return None
    return [(f"{label}.{n}", names_a.get(n, _GONE), names_b.get(n, _GONE)) for n in {**names_a, **names_b}]


def _attribute_names(value: Any) -> dict[str, Any]:
    """An object's attributes by name: its ``__dict__``, then its ``__slots__`` that are set."""
    own = getattr(value, "__dict__", None)
    out = dict(own) if isinstance(own, dict) else {}
    for cls in type(value).__mro__[:-1]:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and name not in out:
                with contextlib.suppress(AttributeError):
                    out[name] = getattr(value, name)
    return out


def leaf_text(label: str, a: Any, b: Any) -> str:
    """One line for two unequal values whose parts cannot be told apart (or that have none), with the reason it is
    a new value when there is one; the two sides never read the same."""
    fresh = fresh_object(a, b) if type(a) is type(b) else None
    if fresh:
        return f"{label}: {fresh}"
    names = _callable_names(a, b) or _code_places(a, b)
    if names:
        return f"{label}: {names[0]} -> {names[1]}"
    old, new = sides(_repr(a), _repr(b))
    if isinstance(a, StandIn) or isinstance(b, StandIn):
        return f"{label}: {_passed(a, old)} -> {_passed(b, new)}"
    if type(a) is not type(b):
        return f"{label}: {old} ({_type_name(a)}) -> {new} ({_type_name(b)})"
    if old == new:
        return f"{label}: {old} -> {new} (another object, not equal to the first)"
    return f"{label}: {old} -> {new}"


def fresh_object(a: Any, b: Any) -> str | None:
    """Two function objects made from the same code, or a method bound to a new object: the caller builds a new one
    (a lambda, a closure, a partial, an optimizer, a model) on every call, and each is a new static value."""
    if type(a) is functools.partial:
        return "a new functools.partial object on each call; define it once" if equal_build(a, b) else None
    if type(a) is types.MethodType and a.__func__ is getattr(b, "__func__", None):
        owner = type(a.__self__).__name__
        if same(a.__self__, b.__self__):
            equal = " (equal to the old one, but a bound method compares its object by identity)"
        elif not _compares_values(a.__self__):
            equal = ""
        else:  # another configuration: said by the walk below __self__
            return None
        return f"{a.__func__.__qualname__} bound to a new {owner} object on each call{equal}; make the {owner} once"
    if type(a) is not types.FunctionType or not equal_build(a, b):
        return None
    code = a.__code__
    where = f"{a.__qualname__}, {os.path.basename(code.co_filename)}:{code.co_firstlineno}"
    if str(getattr(a, "__module__", "")).partition(".")[0] == "optax":
        return f"a new function object on each call ({where}); define it once: build the optimizer once, outside the loop"
    return f"a new function object on each call ({where}); define it once"


def _passed(value: Any, text: str) -> str:
    """What was passed: ``an array float32[3]``, ``None``, ``'relu' (str)``."""
    if isinstance(value, StandIn):
        return f"{value.kind} {text}"
    return text if value is None else f"{text} ({_type_name(value)})"


def _callable_names(a: Any, b: Any) -> tuple[str, str] | None:
    """``relu -> tanh``: two different functions by name, when their names differ."""
    if isinstance(a, type) or isinstance(b, type) or not (callable(a) and callable(b)):
        return None
    old, new = (getattr(x, "__qualname__", None) or getattr(x, "__name__", None) for x in (a, b))
    if not isinstance(old, str) or not isinstance(new, str) or old == new:
        return None
    return old, new


def _code_places(a: Any, b: Any) -> tuple[str, str] | None:
    """``<lambda> (train.py:3) -> <lambda> (train.py:9)``: two functions of the same name and other code."""
    if type(a) is not types.FunctionType or type(b) is not types.FunctionType:
        return None
    old, new = (f"{f.__qualname__} ({os.path.basename(f.__code__.co_filename)}:{f.__code__.co_firstlineno})"
                for f in (a, b))
    return (old, new) if old != new else (old, f"{new}, other code")


def sides(old: str, new: str, limit: int = _LIMIT) -> tuple[str, str]:
    """Two texts cut to about ``limit`` characters each, around their first difference: what they share before it
    is elided, never the difference itself."""
    if len(old) <= limit and len(new) <= limit:
        return old, new
    common = next((k for k, (x, y) in enumerate(zip(old, new)) if x != y), min(len(old), len(new)))
    start = max(common - _CONTEXT, 0)
    opened = old.rfind("<", 0, common)  # inside <module.Class object at 0x...>: from its "<", the class kept
    if 0 <= opened < start and ">" not in old[opened:common] and common - opened < limit - _CONTEXT:
        start = opened
    return _window(old, start, limit), _window(new, start, limit)


def _window(text: str, start: int, limit: int) -> str:
    piece = text[start : start + limit]
    return ("..." if start else "") + piece + ("..." if start + limit < len(text) else "")


_SPACE = re.compile(r"\s*\n\s*")


def _repr(value: Any) -> str:
    """``repr(value)`` on one line (a multi-line Equinox or flax repr joined), uncut; a placeholder when it fails."""
    return _SPACE.sub(" ", safe_repr(value, limit=sys.maxsize))


def _one_line(*values: Any) -> str:
    value = values[0] if not isinstance(values[0], _Gone) else values[-1]
    return sides(_repr(value), "", 40)[0]


def _type_name(value: Any) -> str:
    return getattr(type(value), "__qualname__", None) or type(value).__name__


__all__ = ["StandIn", "fresh_object", "leaf_text", "object_diff", "same", "sides"]
