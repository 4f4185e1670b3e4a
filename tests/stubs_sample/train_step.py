"""A small regression model and its training step, written the way a typed library would.

tests/test_stubs.py type-checks this file with and without the stubs. Every line marked
``# error-with-stubs`` is a wrong call of a transformed function: with the stubs both checkers
report it, without them neither does. No other line may report anything new with the stubs.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax


class Params(NamedTuple):
    w1: jax.Array
    b1: jax.Array
    w2: jax.Array
    b2: jax.Array


def init_params(key: jax.Array, n_in: int, n_hidden: int, n_out: int) -> Params:
    k1, k2 = jax.random.split(key)
    return Params(
        w1=jax.random.normal(k1, (n_in, n_hidden)) / jnp.sqrt(n_in),
        b1=jnp.zeros(n_hidden),
        w2=jax.random.normal(k2, (n_hidden, n_out)) / jnp.sqrt(n_hidden),
        b2=jnp.zeros(n_out),
    )


@jax.checkpoint
def mlp(params: Params, x: jax.Array) -> jax.Array:
    hidden = jax.nn.relu(x @ params.w1 + params.b1)
    return hidden @ params.w2 + params.b2


def loss_fn(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    pred = jax.vmap(mlp, in_axes=(None, 0))(params, x)
    return jnp.mean((pred - lax.stop_gradient(y)) ** 2)


@partial(jax.jit, static_argnames="lr", donate_argnums=0)
def train_step(params: Params, x: jax.Array, y: jax.Array, lr: float) -> tuple[Params, jax.Array]:
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    new_params = Params(*(p - lr * g for p, g in zip(params, grads)))
    return new_params, loss


@jax.jit
def evaluate(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    return loss_fn(params, x, y)


def fit(key: jax.Array, steps: int) -> tuple[Params, jax.Array]:
    data_key, init_key = jax.random.split(key)
    x = jax.random.normal(data_key, (64, 4))
    y = jnp.sum(x, axis=1, keepdims=True)
    params = init_params(init_key, 4, 16, 1)

    def body(_: int, params: Params) -> Params:
        return train_step(params, x, y, lr=0.05)[0]

    params = lax.fori_loop(0, steps, body, params)
    return params, evaluate(params, x, y)


def mistakes(params: Params, x: jax.Array, y: jax.Array) -> None:
    train_step(params, x, lr=0.05)  # error-with-stubs
    train_step(params, x, y, lr="fast")  # error-with-stubs
    evaluate(x, params, y)  # error-with-stubs
    evaluate(params, x, y, 0.1)  # error-with-stubs
    jax.jit(loss_fn)(params, x)  # error-with-stubs


if __name__ == "__main__":
    final, loss = fit(jax.random.key(0), steps=50)
    print(f"loss after training: {float(loss):.4f}")
