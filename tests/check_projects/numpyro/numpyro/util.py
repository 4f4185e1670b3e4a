from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="options")
def scan_body(x, options):
    return x * len(options)


def fori_collect(x):
    return scan_body(x, options={"weights": jnp.ones(3)})  # seeded: jaxstatic-unhashable
