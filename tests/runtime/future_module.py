"""A module with postponed annotations and a forward reference, decorated before the class exists."""

from __future__ import annotations

import jax.numpy as jnp

import jaxstatic as js
from jaxstatic import Static


@js.jit
def scale(x: jnp.ndarray, cfg: Static[Config]) -> jnp.ndarray:
    return x * cfg.factor


class Config:
    def __init__(self, factor: float) -> None:
        self.factor = factor

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and other.factor == self.factor

    def __hash__(self) -> int:
        return hash(self.factor)
