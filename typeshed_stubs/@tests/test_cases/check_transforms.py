from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
from typing_extensions import assert_type

x = jnp.ones(3)


def loss(params: jax.Array, batch: jax.Array, scale: float = 1.0) -> jax.Array:
    return jnp.sum((params - batch) ** 2) * scale


def loss_aux(params: jax.Array, batch: jax.Array) -> tuple[jax.Array, dict[str, jax.Array]]:
    return jnp.sum(params * batch), {"mean": jnp.mean(batch)}


# grad / value_and_grad keep the parameters; the gradient's structure is not expressible.
g = jax.grad(loss)
assert_type(g(x, x), Any)
g(x, x, scale=2.0)
g(x)  # type: ignore
g(x, x, scale="2")  # type: ignore
grad_argnums: Callable[[jax.Array, jax.Array, float], Any] = jax.grad(loss, argnums=(0, 1))

vg = jax.value_and_grad(loss)
assert_type(vg(x, x), tuple[jax.Array, Any])
vg(x, "x")  # type: ignore
vg_aux = jax.value_and_grad(loss_aux, has_aux=True)
assert_type(vg_aux(x, x), tuple[tuple[jax.Array, dict[str, jax.Array]], Any])

# vmap and named_call return the function's own type (jax's own typing, re-exported).
batched = jax.vmap(loss, in_axes=(None, 0))
assert_type(batched(x, x), jax.Array)
batched(x, x, scale="2")  # type: ignore
named = jax.named_call(loss, name="loss")
assert_type(named(x, x), jax.Array)
named(x)  # type: ignore

# pmap keeps the parameters and offers lower.
mapped = jax.pmap(loss, axis_name="devices")
assert_type(mapped(x, x), jax.Array)
assert_type(mapped.lower(x, x), jax.stages.Lowered)
mapped(x)  # type: ignore

# checkpoint / remat, bare and through functools.partial.
ck = jax.checkpoint(loss)
assert_type(ck(x, x), jax.Array)
ck(x, "x")  # type: ignore
rm = jax.remat(loss, prevent_cse=False)
assert_type(rm(x, x, 2.0), jax.Array)
rm(x)  # type: ignore


@partial(jax.checkpoint, static_argnums=(1,))
def layer(x: jax.Array, depth: int) -> jax.Array:
    return x * depth


assert_type(layer(x, 2), jax.Array)
layer(x, "2")  # type: ignore

# Transforms compose without losing the parameters.
composed = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0)))
assert_type(composed(x, x), Any)
composed(x)  # type: ignore
train = jax.jit(jax.value_and_grad(jax.checkpoint(loss)))
assert_type(train(x, x), tuple[jax.Array, Any])
train(x, x, scale="2")  # type: ignore
