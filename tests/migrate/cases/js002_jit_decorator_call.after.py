"""JS002: @jax.jit(static_argnames=...), the decorator form of JAX 0.8.1 and later."""

import jax
import jax.numpy as jnp
import jaxstatic as js
from jaxstatic import Donate, Static

TRACES: list[str] = []


@js.jit
def power(x, *, k: Static[int] = 2):
    TRACES.append("power")
    return x**k


@js.jit
def blend(x: jax.Array, a: Static[float], b: Static[float], y: Donate[jax.Array]) -> jax.Array:
    TRACES.append("blend")
    return a * x + b * y


def run():
    x = jnp.arange(3.0)
    return [power(x), power(x, k=3), power(x, k=3), blend(x, 0.5, 2.0, jnp.ones(3)), blend(x, 0.5, 2.0, jnp.ones(3))]
