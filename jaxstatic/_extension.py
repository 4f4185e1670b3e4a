"""The compiled part of jaxstatic (``_hits.c``), if it was built: what every layer that has a C road reads.

``extension`` is ``jaxstatic._hits`` or None (built where a C compiler was found at install time;
``JAXSTATIC_PURE_PYTHON=1`` leaves it unused, and every hit then has a Python frame pdb can step into). ``compiled``
is what builds hits and recorders now: ``extension``, or None when tests run the Python roads alone. Both are read at
each use, never copied into another module. This module imports nothing of jaxstatic's, so the hit paths
(``_c_hits``, ``_lane``), the statistics (``_stats``) and donation (``_donate``) all stand on it.
"""

from __future__ import annotations

import itertools
import os
import types
from collections.abc import Iterator
from typing import TYPE_CHECKING

extension: types.ModuleType | None = None
if not os.environ.get("JAXSTATIC_PURE_PYTHON"):
    try:
        from . import _hits as extension
    except ImportError:  # pragma: no cover (an install without a C compiler)
        extension = None

compiled = extension
"""What builds the hits: ``extension``, or None, and then the generated code takes every call. Read at each use, so
tests can run without it."""


class _NoSlot:
    """``StaticFunction``'s base without the extension: nothing."""

    __slots__ = ()


if TYPE_CHECKING:
    Base = _NoSlot
else:
    Base = _NoSlot if extension is None else extension.Base
"""``StaticFunction``'s base: with the extension, its instances carry a call slot of their own, which ``attach``
points at their hit in C, so that no argument tuple is built for them."""


def counter() -> Iterator[int]:
    """A function's count of calls: the extension's ``Counter``, to which a hit in C adds without making an int, or
    ``itertools.count()``. Both count from 0 on ``next()``, exactly under the GIL, and read as ``count(N)``."""
    return itertools.count() if compiled is None else compiled.Counter()


__all__ = ["Base", "compiled", "counter", "extension"]
