"""JS010: donate_argnums/donate_argnames of a js.jit decorator, the static conversion's companion."""

from functools import partial

import jax
import jax.numpy as jnp

import jaxstatic as js

TRACES: list[str] = []


@js.jit(donate_argnums=0)
def step(params, batch: jax.Array):
    TRACES.append("step")
    return params - 0.1 * batch


@js.jit(donate_argnames=("opt",), max_traces=2)
def update(params: jax.Array, opt: jax.Array, *, lr: float = 0.1) -> tuple[jax.Array, jax.Array]:
    TRACES.append("update")
    return params - lr * opt, opt * 0.9


@partial(js.jit, donate_argnums=(0, 1))
def both(a, b):
    TRACES.append("both")
    return a + b, a - b


def run():
    params = step(jnp.ones(3), jnp.ones(3))
    params = step(params, jnp.ones(3))
    params, opt = update(params, jnp.ones(3))
    a, b = both(jnp.ones(2), jnp.ones(2))
    return [params, opt, a, b]
