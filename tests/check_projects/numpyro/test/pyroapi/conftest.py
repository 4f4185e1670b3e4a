import jax.numpy as jnp

from jaxstatic import Static, jit


@jit
def backend_step(x, names: Static[dict]):
    return x


def make(x):
    return backend_step(x, {"w": jnp.zeros(2)})  # seeded: jaxstatic-unhashable
