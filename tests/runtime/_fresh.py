"""A copy of a module-level function, for tests that count what one transform of it traces or holds: transforms of
the same function with equal options are one function (``jaxstatic._shared``), shared with every other test; and so
are transforms of functions of the same code closing over equal values (``jaxstatic._closures``), so the copy has
a code object of its own."""

from __future__ import annotations

import functools
import types
from typing import Any, TypeVar

_F = TypeVar("_F")


def fresh(fn: _F) -> _F:
    """A new function with a copy of ``fn``'s code, its globals, defaults, closure, annotations and names."""
    f: Any = fn
    copy = types.FunctionType(f.__code__.replace(), f.__globals__, f.__name__, f.__defaults__, f.__closure__)
    copy.__kwdefaults__ = f.__kwdefaults__
    return functools.update_wrapper(copy, f, updated=())  # type: ignore[return-value]
