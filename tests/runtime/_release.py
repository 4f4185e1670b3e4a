"""A static value is held only while its program is cached: the check that ``clear_cache()`` lets it go."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import Any

import jax


class Token:
    """A static value compared by identity (so each one is a new key) that can also be called as an activation."""

    def __call__(self, x: jax.Array) -> jax.Array:
        return x * 2.0


def held_until_cleared(f: Any, make: Callable[[], object], call: Callable[[Any, Any], object]) -> None:
    """``call(f, value)`` gives ``f`` a value made by ``make``: it is held while its program is cached, and released by
    ``f.clear_cache()``. The value is made here, so no frame of the test keeps it alive."""
    value = make()
    ref = weakref.ref(value)
    call(f, value)
    del value
    gc.collect()
    assert ref() is not None, "the static value is held while its program is cached"
    f.clear_cache()
    gc.collect()
    assert ref() is None, "clear_cache() released the static value"
