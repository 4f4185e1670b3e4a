"""``js.dataclass`` classes under ``@jaxtyped(typechecker=beartype)`` and ``@beartype``, with postponed annotations
resolved in this module; imported by ``test_dataclass_checkers`` where jaxtyping and beartype are installed."""

# ruff: noqa: F722  # jaxtyping's shape strings, such as "n m", are not forward references

from __future__ import annotations

import jax
from beartype import beartype
from jaxtyping import Array, Float, jaxtyped

import jaxstatic as js
from jaxstatic import Static


@jaxtyped(typechecker=beartype)
@js.dataclass
class Linear:
    w: Float[Array, "n m"]
    b: Float[Array, " n"]
    k: Static[int]


@beartype
@js.dataclass
class Scaled:
    w: jax.Array
    k: Static[int]


@beartype
@js.dataclass
class Custom:
    w: jax.Array
    k: Static[int]

    def __init__(self, w: jax.Array, k: int = 2) -> None:
        self.w = w
        self.k = k
