"""JS001: @partial(jax.jit, ...) and @functools.partial(jax.jit, ...) with static positions or names."""

import jax
import jax.numpy as jnp
import jaxstatic as js
from jaxstatic import Donate, Static
from typing import Any

TRACES: list[str] = []


@js.jit
def step(x, n: Static[Any], mode: Static[Any] = "train"):
    TRACES.append("step")
    return x * n if mode == "train" else x


@js.jit
def stack(x: jax.Array, depth: Static[int], y: Donate[jax.Array]) -> jax.Array:
    TRACES.append("stack")
    for _ in range(depth):
        x = jnp.tanh(x) + y
    return x


class Scaler:
    def __init__(self, factor: float) -> None:
        self.factor = factor

    def __hash__(self) -> int:
        return hash(self.factor)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scaler) and other.factor == self.factor

    @js.jit
    def __call__(self: Static[Any], x):
        TRACES.append("Scaler")
        return x * self.factor


def run():
    x = jnp.arange(3.0)
    return [step(x, 2), step(x, 2), step(x, 3, "eval"), stack(x, 2, jnp.ones(3)), stack(x, 2, jnp.ones(3)),
            Scaler(2.0)(x), Scaler(2.0)(x)]
