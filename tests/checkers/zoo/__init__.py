"""A fourth typed library built on jaxstatic, a model zoo in the style of Equinox: modules are ``js.dataclass``es
whose methods are jitted, generic over the dtype of their weights, composed into a ``Sequential`` over a ``Layer``
protocol, with gradient helpers over the modules and a registry of factories. tests/test_checkers.py checks it and
its user (zoo_user.py) under every type checker."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, Protocol, TypeVar

import jax
import jax.numpy as jnp

import jaxstatic as js
from jaxstatic import NoDiff, Static

Array = jax.Array


class Float32:
    name: str = "float32"


class BFloat16:
    name: str = "bfloat16"


D = TypeVar("D", Float32, BFloat16)


class Layer(Protocol):
    def __call__(self, x: Array, /) -> Array: ...


@js.dataclass
class Dense(Generic[D]):
    weight: Array
    bias: Array
    dtype: Static[type[D]]

    @js.jit
    def __call__(self, x: Array) -> Array:
        return (x @ self.weight + self.bias).astype(self.dtype.name)

    @js.jit
    def scaled(self, x: Array, factor: Static[float]) -> Array:
        return self(x) * factor

    def params(self) -> tuple[Array, Array]:
        return self.weight, self.bias


@js.dataclass
class Activation:
    kind: Static[str] = "tanh"

    @js.jit
    def __call__(self, x: Array) -> Array:
        return jnp.tanh(x) if self.kind == "tanh" else jax.nn.relu(x)


@js.dataclass
class Sequential:
    layers: tuple[Layer, ...]

    def __call__(self, x: Array) -> Array:
        for layer in self.layers:
            x = layer(x)
        return x


def dense(n_in: int, n_out: int, dtype: type[D], seed: int = 0) -> Dense[D]:
    key = jax.random.key(seed)
    return Dense(jax.random.normal(key, (n_in, n_out)), jax.random.normal(key, (n_out,)), dtype)


def mse(model: Dense[Float32], x: Array, y: NoDiff[Array]) -> Array:
    return jnp.mean((model(x) - y) ** 2)


mse_grad = js.grad(mse)
mse_value_and_grad = js.value_and_grad(mse)


def fit(model: Dense[Float32], x: Array, y: Array, lr: float = 0.1) -> Dense[Float32]:
    g = mse_grad(model, x, y=y)
    return Dense(model.weight - lr * g.weight, model.bias - lr * g.bias, model.dtype)


def compose(layers: Sequence[Layer]) -> Sequential:
    return Sequential(tuple(layers))


FACTORIES: dict[str, Callable[[int, int], Dense[Float32]]] = {
    "dense": lambda n_in, n_out: dense(n_in, n_out, Float32),
}
