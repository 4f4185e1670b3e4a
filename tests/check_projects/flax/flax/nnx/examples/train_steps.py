from functools import partial

import jax
import jax.numpy as jnp

import jaxstatic as js
from jaxstatic import Donate


def dataset(x, y, batch_size):
    while True:
        yield x[:batch_size], y[:batch_size]


def train_jax(state, x, y, batch_size, total_steps):
    @partial(jax.jit, donate_argnums=0)
    def train_step_jax(state, batch):
        inputs, labels = batch
        return jax.tree.map(lambda p: p - jnp.mean((inputs - labels) ** 2), state)

    @partial(jax.jit, donate_argnums=0)
    def test_step_jax(state, batch):
        inputs, labels = batch
        return state, {"loss": jnp.mean((inputs - labels) ** 2)}

    for step, batch in enumerate(dataset(x, y, batch_size)):
        state = train_step_jax(state, batch)  # seeded: jaxstatic-donated

        if step % 1000 == 0:
            test_step_jax(state, (x, y))

        if step >= total_steps - 1:
            break

    return state


def train_js(state, x, y, batch_size, total_steps):
    @js.jit
    def train_step(state: Donate[dict[str, jax.Array]], batch):
        inputs, labels = batch
        return jax.tree.map(lambda p: p - jnp.mean((inputs - labels) ** 2), state)

    @js.jit
    def test_step(state: Donate[dict[str, jax.Array]], batch):
        inputs, labels = batch
        return state, {"loss": jnp.mean((inputs - labels) ** 2)}

    for step, batch in enumerate(dataset(x, y, batch_size)):
        state = train_step(state, batch)  # seeded: jaxstatic-donated

        if step % 1000 == 0:
            state, _logs = test_step(state, (x, y))

        if step % 5000 == 0:
            test_step(state, (x, y))

        if step >= total_steps - 1:
            break

    return state
