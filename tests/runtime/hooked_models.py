"""Imported only through ``jaxtyping.install_import_hook`` (``test_dataclass_checkers``), which puts
``@jaxtyped(typechecker=beartype)`` on every class and function of the module: postponed annotations, shapes."""

# ruff: noqa: F722  # jaxtyping's shape strings, such as "n m", are not forward references

from __future__ import annotations

from typing import TYPE_CHECKING

from jaxtyping import Array, Float

import jaxstatic as js
from jaxstatic import Static

if TYPE_CHECKING:
    from collections.abc import Callable


@js.dataclass
class Layer:
    w: Float[Array, "n n"]
    b: Float[Array, " n"]
    activation: Static[Callable[[Array], Array]]
    name: Static[str] = "layer"


def apply(layer: Layer, x: Float[Array, " n"]) -> Float[Array, " n"]:
    return layer.activation(layer.w @ x + layer.b)
