"""JS005: jax_dataclasses classes, static fields and jdc.jit."""

from collections.abc import Callable

import jax
import jax.numpy as jnp
import jaxstatic as js
from jaxstatic import Donate, Static

TRACES: list[str] = []


@js.dataclass
class Linear:
    w: jax.Array
    activation: Static[Callable[[jax.Array], jax.Array]]
    depth: Static[int] = 1


@js.jit
def apply(model: Linear, x: jax.Array, n: Static[int]) -> jax.Array:
    TRACES.append("apply")
    for _ in range(model.depth * n):
        x = model.activation(x @ model.w)
    return x


@js.jit
def apply_twice(model: Linear, x: Donate[jax.Array], twice: Static[bool] = True) -> jax.Array:
    TRACES.append("apply_twice")
    y = model.activation(x @ model.w)
    return model.activation(y @ model.w) if twice else y


def run():
    model = Linear(jnp.eye(2), jnp.tanh, depth=2)
    return [apply(model, jnp.ones(2), 2), apply(model, jnp.ones(2), 2), apply(Linear(2 * jnp.eye(2), jnp.tanh), jnp.ones(2), 1),
            apply_twice(model, jnp.ones(2)), apply_twice(model, jnp.ones(2), twice=False)]
