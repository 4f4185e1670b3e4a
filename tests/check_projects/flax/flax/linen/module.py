from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="features")
def dense(x, features):
    return x[:features]


def apply(x):
    return dense(x, features=[jnp.zeros(2)])  # seeded: jaxstatic-unhashable
