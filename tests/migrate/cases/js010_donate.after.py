"""JS010: donate_argnums/donate_argnames of a js.jit decorator, the static conversion's companion."""

import jax
import jax.numpy as jnp

import jaxstatic as js
from jaxstatic import Donate
from typing import Any

TRACES: list[str] = []


@js.jit
def step(params: Donate[Any], batch: jax.Array):
    TRACES.append("step")
    return params - 0.1 * batch


@js.jit(max_traces=2)
def update(params: jax.Array, opt: Donate[jax.Array], *, lr: float = 0.1) -> tuple[jax.Array, jax.Array]:
    TRACES.append("update")
    return params - lr * opt, opt * 0.9


@js.jit
def both(a: Donate[Any], b: Donate[Any]):
    TRACES.append("both")
    return a + b, a - b


def run():
    params = step(jnp.ones(3), jnp.ones(3))
    params = step(params, jnp.ones(3))
    params, opt = update(params, jnp.ones(3))
    a, b = both(jnp.ones(2), jnp.ones(2))
    return [params, opt, a, b]
