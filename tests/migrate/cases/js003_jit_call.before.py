"""JS003: jax.jit(f, static_argnums/static_argnames=...) where f is defined in the same file."""

import jax
import jax.numpy as jnp

TRACES: list[str] = []


def norm(x, order, eps=1e-6):
    TRACES.append("norm")
    return jnp.sum(jnp.abs(x) ** order) ** (1 / order) + eps


fast_norm = jax.jit(norm, static_argnums=(1,))
same_norm = jax.jit(norm, static_argnames="order")


def make():
    def shift(x, by: int, *, times: int):
        TRACES.append("shift")
        return x + by * times

    return jax.jit(
        shift,
        static_argnames=["by", "times"],  # both are loop bounds in the real code
    )


def run():
    x = jnp.arange(3.0)
    shift = make()
    return [fast_norm(x, 2), fast_norm(x, 2), same_norm(x, order=1), shift(x, 1, times=2), shift(x, 1, times=2)]
