from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
from jax.stages import Lowered, Traced, Wrapped
from typing_extensions import ParamSpec, assert_type

_P = ParamSpec("_P")
_R = TypeVar("_R")

x = jnp.ones(3)


def scale(x: jax.Array, n: int) -> jax.Array:
    return x * n


# Bare, with options, and as a decorator factory: calls are checked against `scale`.
bare = jax.jit(scale)
assert_type(bare(x, 2), jax.Array)
assert_type(bare(x, n=2), jax.Array)
bare(x, "2")  # type: ignore
bare(x)  # type: ignore
bare(x, 2, 3)  # type: ignore

with_options = jax.jit(scale, static_argnames="n", donate_argnums=0)
assert_type(with_options(x, 2), jax.Array)
with_options(x, m=2)  # type: ignore


@jax.jit(static_argnames="n")
def factory(x: jax.Array, n: int) -> jax.Array:
    return x * n


assert_type(factory(x, 2), jax.Array)
factory(x, "2")  # type: ignore


@partial(jax.jit, static_argnames="n")
def partial_jit(x: jax.Array, n: int) -> jax.Array:
    return x * n


assert_type(partial_jit(x, 2), jax.Array)
partial_jit(x, "2")  # type: ignore


@partial(jax.jit, static_argnums=(1,), donate_argnums=0)
def partial_argnums(x: jax.Array, n: int) -> tuple[jax.Array, int]:
    return x, n


assert_type(partial_argnums(x, 2), tuple[jax.Array, int])
partial_argnums(x)  # type: ignore

# The staging methods are still there; they accept abstract values, so they are not checked.
assert_type(bare.lower(x, 2), Lowered)
assert_type(bare.trace(jax.ShapeDtypeStruct((3,), jnp.float32), 2), Traced)
assert_type(bare.eval_shape(x, 2), Any)
assert_type(bare.clear_cache(), None)
assert_type(partial_jit.lower(x, 2).compile(), jax.stages.Compiled)

# The result is still a callable with the same parameters, and still a jax.stages.Wrapped.
as_callable: Callable[[jax.Array, int], jax.Array] = bare
as_wrapped: Wrapped = bare
wrong_callable: Callable[[jax.Array, str], jax.Array] = bare  # type: ignore


# Methods: access through an instance binds `self`.
class Model:
    def __init__(self, w: jax.Array) -> None:
        self.w = w

    @jax.jit
    def apply(self, x: jax.Array) -> jax.Array:
        return self.w * x

    @partial(jax.jit, static_argnames="k")
    def power(self, x: jax.Array, k: int) -> jax.Array:
        return x**k


model = Model(x)
assert_type(model.apply(x), jax.Array)
assert_type(model.power(x, 2), jax.Array)
assert_type(Model.apply(model, x), jax.Array)
model.apply(x, x)  # type: ignore
model.power(x, "2")  # type: ignore


# @staticmethod over jax.jit: the function itself (through the class; through an instance, see stubs.md). An
# object whose `__call__` is jitted is called as the method is; its bound `__call__` is a Callable (the object itself
# too, but for pyright: see stubs.md).
class Layer:
    def __init__(self, w: jax.Array) -> None:
        self.w = w

    @jax.jit
    def __call__(self, x: jax.Array) -> jax.Array:
        return self.w * x

    @staticmethod
    @jax.jit
    def act(x: jax.Array) -> jax.Array:
        return jnp.tanh(x)


layer = Layer(x)
assert_type(Layer.act(x), jax.Array)
assert_type(layer(x), jax.Array)
layer_call: Callable[[jax.Array], jax.Array] = layer.__call__
Layer.act(x, x)  # type: ignore
layer("x")  # type: ignore


# A signature-preserving decorator stacked on a jitted function keeps the parameters too.
def logged(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    return fn


@logged
@partial(jax.jit, static_argnames="n")
def stacked(x: jax.Array, n: int) -> jax.Array:
    return x * n


assert_type(stacked(x, 2), jax.Array)
stacked(x, "2")  # type: ignore
