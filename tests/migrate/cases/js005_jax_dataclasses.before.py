"""JS005: jax_dataclasses classes, static fields and jdc.jit."""

from collections.abc import Callable

import jax
import jax.numpy as jnp
import jax_dataclasses as jdc

TRACES: list[str] = []


@jdc.pytree_dataclass
class Linear:
    w: jax.Array
    activation: jdc.Static[Callable[[jax.Array], jax.Array]]
    depth: int = jdc.static_field(default=1)


@jdc.jit
def apply(model: Linear, x: jax.Array, n: jdc.Static[int]) -> jax.Array:
    TRACES.append("apply")
    for _ in range(model.depth * n):
        x = model.activation(x @ model.w)
    return x


@jdc.jit(donate_argnums=1)
def apply_twice(model: Linear, x: jax.Array, twice: jdc.Static[bool] = True) -> jax.Array:
    TRACES.append("apply_twice")
    y = model.activation(x @ model.w)
    return model.activation(y @ model.w) if twice else y


def run():
    model = Linear(jnp.eye(2), jnp.tanh, depth=2)
    return [apply(model, jnp.ones(2), 2), apply(model, jnp.ones(2), 2), apply(Linear(2 * jnp.eye(2), jnp.tanh), jnp.ones(2), 1),
            apply_twice(model, jnp.ones(2)), apply_twice(model, jnp.ones(2), twice=False)]
