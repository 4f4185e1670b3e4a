"""JS006: flax.struct dataclasses and struct.field(pytree_node=False)."""

from collections.abc import Callable

import flax.struct
import jax
import jax.numpy as jnp
from flax import struct

TRACES: list[str] = []


@struct.dataclass
class Layer:
    w: jax.Array
    activation: Callable[[jax.Array], jax.Array] = struct.field(pytree_node=False)
    scale: float = struct.field(pytree_node=False, default=2.0)
    bias: jax.Array = struct.field(default_factory=lambda: jnp.zeros(2), repr=False)

    def __call__(self, x):
        return self.activation(x @ self.w) * self.scale + self.bias


@flax.struct.dataclass
class Stack:
    layers: tuple[Layer, ...]
    names: tuple[str, ...] = struct.field(False, default=("a", "b"))  # pytree_node given by position


@jax.jit
def forward(model: Stack, x: jax.Array) -> jax.Array:
    TRACES.append("forward")
    for layer in model.layers:
        x = layer(x)
    return x


def run():
    layer = Layer(jnp.eye(2), jnp.tanh)
    model = Stack((layer, layer.replace(scale=0.5)))
    return [forward(model, jnp.ones(2)), forward(model.replace(layers=(layer,)), jnp.ones(2)),
            forward(Stack((Layer(jnp.eye(2), jnp.tanh),) * 2, names=("a", "b")), jnp.ones(2)),
            jax.tree_util.tree_leaves(model), model.names]
