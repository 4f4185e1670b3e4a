"""JS003: jax.jit(f, static_argnums/static_argnames=...) where f is defined in the same file."""

import jax.numpy as jnp
import jaxstatic as js
from jaxstatic import Static
from typing import Any

TRACES: list[str] = []


def norm(x, order: Static[Any], eps=1e-6):
    TRACES.append("norm")
    return jnp.sum(jnp.abs(x) ** order) ** (1 / order) + eps


fast_norm = js.jit(norm)
same_norm = js.jit(norm)


def make():
    def shift(x, by: Static[int], *, times: Static[int]):
        TRACES.append("shift")
        return x + by * times

    return js.jit(
        shift,  # both are loop bounds in the real code
    )


def run():
    x = jnp.arange(3.0)
    shift = make()
    return [fast_norm(x, 2), fast_norm(x, 2), same_norm(x, order=1), shift(x, 1, times=2), shift(x, 1, times=2)]
