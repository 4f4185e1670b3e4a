"""A module with ``from __future__ import annotations`` whose ``Donate[T]`` names a type only a checker sees."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jaxstatic import Donate, Static

if TYPE_CHECKING:
    from jax import Array


def scale(x: Donate[Array], n: Static[int]) -> Array:
    return x * n
