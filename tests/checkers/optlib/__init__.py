"""A second typed library built on jaxstatic, written as optimizer and model libraries are: a generic trainer with a
jitted method, an optimizer whose loss takes its ``Static`` config first, a model whose jitted ``__call__`` is passed
where a ``Protocol`` is expected, classmethods, staticmethods and properties over ``js.jit``, overloads, factories and
partials. tests/test_checkers.py checks it and its user (optlib_user.py) under every type checker."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Generic, Literal, Protocol, TypeVar, cast, overload

import jax
import jax.numpy as jnp

import jaxstatic as js
from jaxstatic import NoDiff, Static

Array = jax.Array
Params = dict[str, Array]
T = TypeVar("T")


class ArrayFn(Protocol):
    """What a layer takes: anything called with an array that returns one."""

    def __call__(self, x: Array, /) -> Array: ...


def apply_twice(fn: ArrayFn, x: Array) -> Array:
    return fn(fn(x))


def apply_callable(fn: Callable[[Array], Array], x: Array) -> Array:
    return fn(x)


# -- an optimizer whose loss takes its config first ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SGDConfig:
    lr: float
    decay: float = 0.0


def sgd_loss(cfg: Static[SGDConfig], params: Params, x: Array) -> Array:
    return jnp.sum((params["w"] * x) ** 2) * (1.0 + cfg.decay)


# The loss takes its config first: argnums=1 names the parameter differentiated, so that every checker types the
# gradient (Static[C] is C to them, and the first parameter's type is what js.grad(loss) says without options)
sgd_grad = js.grad(sgd_loss, argnums=1)
sgd_value_and_grad = js.value_and_grad(sgd_loss, argnums=1)


def weighted_loss(weights: NoDiff[Array], params: Params, x: Array) -> Array:
    return jnp.sum(weights * (params["w"] * x) ** 2)


weighted_grad = js.grad(weighted_loss, argnums=1)


def plain_loss(w: Array, x: Array) -> Array:
    return jnp.sum((w * x) ** 2)


plain_grad = js.grad(plain_loss)


class SGD:
    cfg: SGDConfig

    def __init__(self, cfg: SGDConfig) -> None:
        self.cfg = cfg

    def update(self, params: Params, x: Array) -> Params:
        grads = sgd_grad(self.cfg, params, x)
        return {k: params[k] - self.cfg.lr * grads[k] for k in params}

    def update_weighted(self, weights: Array, params: Params, x: Array) -> Params:
        grads = weighted_grad(weights, params, x)
        return {k: params[k] - self.cfg.lr * grads[k] for k in params}

    def loss_and_update(self, params: Params, x: Array) -> tuple[Array, Params]:
        loss, grads = sgd_value_and_grad(self.cfg, params, x)
        return loss, {k: params[k] - self.cfg.lr * grads[k] for k in params}


# -- a generic trainer with a jitted method ---------------------------------------------------------------------


@js.dataclass
class Trainer(Generic[T]):
    params: T
    lr: Static[float] = 0.1

    @js.jit
    def step(self, grads: T) -> T:
        return cast(T, jax.tree.map(functools.partial(_descend, lr=self.lr), self.params, grads))


def _descend(p: Array, g: Array, lr: float) -> Array:
    return p - lr * g


# -- a model: jitted __call__, classmethod, staticmethod and property over js.jit ---------------------------------


@js.dataclass
class MLP:
    w: Array
    b: Array

    @js.jit
    def __call__(self, x: Array) -> Array:
        return jnp.tanh(x * self.w + self.b)

    @classmethod
    @js.jit
    def init(cls: Static[type[MLP]], n: Static[int]) -> MLP:
        w = jax.random.normal(jax.random.key(n), (n,))
        return cls(w, w)

    @staticmethod
    @js.jit
    def activation(x: Array) -> Array:
        return jnp.tanh(x)

    @property
    def forward(self) -> js.JitFunction[[Array], Array]:
        return MLP.activation


def run_layer(layer: ArrayFn, x: Array) -> Array:
    return layer(x)


# -- overloads, factories and partials ----------------------------------------------------------------------------


def _moments_body(x: Array, with_var: Static[bool] = False) -> Array | tuple[Array, Array]:
    return (jnp.mean(x), jnp.var(x)) if with_var else jnp.mean(x)


@overload
def _moments(x: Array, with_var: Literal[False] = False) -> Array: ...
@overload
def _moments(x: Array, with_var: Literal[True]) -> tuple[Array, Array]: ...
def _moments(x: Array, with_var: Static[bool] = False) -> Array | tuple[Array, Array]:
    return _moments_body(x, with_var)


moments = js.jit(_moments)  # overloads kept by pyrefly; mypy and pyright keep the first, ty their union
moments_jitted = js.jit(_moments_body)


@overload
def moments_of(x: Array, with_var: Literal[False] = False) -> Array: ...
@overload
def moments_of(x: Array, with_var: Literal[True]) -> tuple[Array, Array]: ...
def moments_of(x: Array, with_var: bool = False) -> Array | tuple[Array, Array]:
    """The overloads on a plain function over the jitted one: kept under every checker."""
    return moments_jitted(x, with_var)


def make_decayed(rate: float) -> js.JitFunction[[Array, int], Array]:
    def decayed(x: Array, steps: Static[int]) -> Array:
        return x * rate**steps

    return js.jit(decayed, max_traces=8)


def make_step(cfg: SGDConfig) -> Callable[[Params, Array], Params]:
    def step(params: Params, x: Array) -> Params:
        grads = sgd_grad(cfg, params, x)
        return {k: params[k] - cfg.lr * grads[k] for k in params}

    return js.jit(step)


jit_twice = js.jit(max_traces=2)


@jit_twice
def cube(x: Array) -> Array:
    return x**3


@js.jit(donate_argnames="x", max_traces=4)
def power(x: Array, n: Static[int]) -> Array:
    return x**n
