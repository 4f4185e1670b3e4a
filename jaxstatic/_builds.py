"""Values that compare by identity, and when two of them are builds of the same thing.

A function, a ``functools.partial`` and any object without an ``__eq__`` of its own compare by identity: each one
built is a new static value, so that a value built on every call traces again on every call. Two such values are
*equal builds* when nothing but their identity tells them apart (the same code capturing equal values, a partial of
equal parts): then the fix is to build it once. Otherwise what differs is named: a partial's ``func``, ``args`` and
``keywords``, a function's captured values and defaults, after its code's location.

Used by ``_object_diff`` only when a retrace is explained; nothing here raises for a value that misbehaves while
compared (``same`` answers False).
"""

from __future__ import annotations

import enum
import functools
import os
import types
from typing import Any

_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial, types.ModuleType)
_DEPTH = 8  # functions capturing functions, looked into before two builds are said to differ


class Empty:
    """A captured variable not yet given a value (an empty cell)."""

    def __repr__(self) -> str:
        return "<not yet assigned>"


EMPTY = Empty()

Pairs = list[tuple[str, Any, Any]]


def same(a: object, b: object) -> bool:
    """``a == b``, false when a user ``__eq__`` raises or answers something not a bool (an array)."""
    try:
        return a is b or (a == b) is True
    except Exception:
        return False


def by_identity(value: Any) -> bool:
    """An object that compares by identity alone (no ``__eq__`` of its own), other than a function or a partial
    (said as one) and an enum member (one of a few, each made once): each one built is a new static value."""
    eq: Any = type(value).__eq__
    return eq is object.__eq__ and not isinstance(value, (*_FUNCTIONS, enum.Enum))


_LIBRARIES = frozenset({"builtins", "functools", "jax", "jaxlib", "numpy", "flax", "optax", "equinox"})


def from_library(value: Any) -> bool:
    """An object of a class of Python's, JAX's or a library's, whose attributes are its own business."""
    return str(getattr(type(value), "__module__", "")).partition(".")[0] in _LIBRARIES


def identity_fix(value: Any) -> str:
    """What to do about a value of a class that compares by identity: make it once, or, for a class of the user's
    own (not one of JAX's or a library's), give it an equality."""
    t = type(value)
    name = getattr(t, "__qualname__", t.__name__)
    if from_library(value):
        return f"a new {name} object on each call, and {name} compares by identity; make it once"
    return (f"a new {name} object on each call, and {name} compares by identity (it defines no __eq__); make it "
            f"once, or give {name} __eq__ and __hash__")


def equal_build(a: Any, b: Any, depth: int = 0) -> bool:
    """Equal, or two builds of the same thing that differ only as new objects: functions of the same code with
    such captured values and defaults, partials of such functions and arguments, and tuples, lists and dicts of
    such (an optax chain captures its parts' functions in a tuple)."""
    if same(a, b):
        return True
    if type(a) is not type(b) or depth > _DEPTH:
        return False
    if type(a) is functools.partial:
        return all(equal_build(getattr(a, n), getattr(b, n), depth + 1) for n in ("func", "args", "keywords"))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(equal_build(x, y, depth + 1) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(equal_build(a[k], b[k], depth + 1) for k in a)
    if type(a) is not types.FunctionType or a.__code__ is not b.__code__:
        return False
    return all(equal_build(x, y, depth + 1) for _, x, y in _captured(a, b))


def partial_parts(label: str, a: Any, b: Any) -> Pairs | None:
    """Two partials compared as what they hold: ``act.keywords['approximate']: True -> False``; none when they are
    equal builds (said as a new partial on each call)."""
    if type(a) is not functools.partial or equal_build(a, b):
        return None
    return [(f"{label}.{n}", getattr(a, n), getattr(b, n)) for n in ("func", "args", "keywords")]


def closure_parts(label: str, a: Any, b: Any) -> Pairs | None:
    """Two functions of the same code: their captured values and defaults, after the code's location
    (``act: make.<locals>.<lambda> (train.py:12) captures scale: 2.0 -> 3.0``); none when they are equal builds
    (said as a new function on each call)."""
    if type(a) is not types.FunctionType or a.__code__ is not getattr(b, "__code__", None) or equal_build(a, b):
        return None
    at = f"{label}: {a.__qualname__} ({where(a)})"
    return [(f"{at} {what}", x, y) for what, x, y in _captured(a, b)]


def _captured(a: types.FunctionType, b: types.FunctionType) -> list[tuple[str, Any, Any]]:
    """What two functions of the same code hold besides it: ``("captures scale", 2.0, 3.0)``, ``("default s", ...)``."""
    held_a = {(default, n): v for default, n, v in closed_over(a)}
    held_b = {(default, n): v for default, n, v in closed_over(b)}
    return [(f"{'default' if default else 'captures'} {n}", held_a.get((default, n), EMPTY),
             held_b.get((default, n), EMPTY)) for default, n in {**held_a, **held_b}]


def closed_over(fn: types.FunctionType) -> list[tuple[bool, str, Any]]:
    """What a function holds besides its code, by name: its cells (an empty one as ``EMPTY``), then its defaults
    (``True`` first), positional then keyword-only. The one reading of a function's captured values, for telling
    two builds apart here and for keying closures (``_closures``)."""
    code = fn.__code__
    held = [(False, n, _cell(c)) for n, c in zip(code.co_freevars, fn.__closure__ or ())]
    defaults = fn.__defaults__ or ()
    named = code.co_varnames[code.co_argcount - len(defaults) : code.co_argcount] if defaults else ()
    held += [(True, n, v) for n, v in zip(named, defaults)]
    return held + [(True, n, v) for n, v in (fn.__kwdefaults__ or {}).items()]


def where(fn: Any) -> str:
    """Where a function (or a partial's function) is defined, ``train.py:12``; empty for one without code."""
    code = getattr(getattr(fn, "func", fn), "__code__", None)
    return "" if code is None else f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"


def _cell(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # a cell not yet filled
        return EMPTY


__all__ = ["EMPTY", "by_identity", "closed_over", "closure_parts", "equal_build", "from_library", "identity_fix",
           "partial_parts", "same", "where"]
