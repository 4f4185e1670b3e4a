"""JS006: flax.struct dataclasses and struct.field(pytree_node=False)."""

from collections.abc import Callable

import jax
import jax.numpy as jnp
import dataclasses
import jaxstatic as js
from jaxstatic import Static

TRACES: list[str] = []


@js.dataclass
class Layer:
    w: jax.Array
    activation: Static[Callable[[jax.Array], jax.Array]]
    scale: Static[float] = 2.0
    bias: jax.Array = js.field(default_factory=lambda: jnp.zeros(2), repr=False)

    def __call__(self, x):
        return self.activation(x @ self.w) * self.scale + self.bias

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)


@js.dataclass
class Stack:
    layers: tuple[Layer, ...]
    names: Static[tuple[str, ...]] = ("a", "b")  # pytree_node given by position

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)


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
