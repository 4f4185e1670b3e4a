from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="options")
def scan_body(x, options):
    return x * len(options)


def fori_collect(x):
    return scan_body(x, options={"weights": jnp.ones(3)})  # seeded: jaxstatic-unhashable


def _run_donated(update_fn, state, num_steps):
    update = jax.jit(update_fn, donate_argnums=0)
    for _ in range(num_steps):
        new_state = update(state)  # seeded: jaxstatic-donated
    return new_state


def _collect_donated(body_fn, collection, val):
    body = jax.jit(body_fn, donate_argnums=(0,))
    new_collection = body(collection, val)
    sums = jax.tree.map(jnp.sum, collection)  # seeded: jaxstatic-donated
    return new_collection, sums
