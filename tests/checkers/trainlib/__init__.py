"""A third typed library built on jaxstatic, written independently in the style of training libraries: an optimizer,
models with a jitted ``__call__`` that satisfy a ``Model`` protocol, a generic ``Trainer`` bound to that protocol,
config-driven training whose gradient function is called by keyword, overloaded learning-rate schedules, and steps
jitted through ``functools.partial``. tests/test_checkers.py checks it and its user (trainlib_user.py) under every type
checker."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Generic, Literal, Protocol, TypeVar, overload

import jax
import jax.numpy as jnp

import jaxstatic as js
from jaxstatic import Static

Array = jax.Array
Params = dict[str, Array]


class Model(Protocol):
    """Anything called with a batch that returns predictions."""

    def __call__(self, x: Array, /) -> Array: ...


M = TypeVar("M", bound=Model)


@js.dataclass
class Linear:
    w: Array
    b: Array

    @js.jit
    def __call__(self, x: Array, *, train: Static[bool] = False) -> Array:
        return x * self.w + self.b if train else jnp.tanh(x * self.w + self.b)


@js.dataclass
class MLP:
    first: Linear
    second: Linear

    @js.jit
    def __call__(self, x: Array, *, train: Static[bool] = False) -> Array:
        return self.second(self.first(x, train=train), train=train)


def predict(model: Model, x: Array) -> Array:
    return model(x)


def predict_fn(fn: Callable[[Array], Array], x: Array) -> Array:
    return fn(x)


# -- config-driven training: the gradient function is called by keyword ------------------------------------------


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    lr: float = 0.1
    weight_decay: float = 0.0
    steps: int = 2


def loss_fn(params: Params, x: Array, y: Array, cfg: Static[TrainConfig]) -> Array:
    pred = jnp.tanh(x * params["w"] + params["b"])
    return jnp.mean((pred - y) ** 2) + cfg.weight_decay * jnp.sum(params["w"] ** 2)


grad_fn = js.grad(loss_fn)
value_and_grad_fn = js.value_and_grad(loss_fn)


def loss_with_aux(params: Params, x: Array, y: Array) -> tuple[Array, Array]:
    pred = x * params["w"]
    return jnp.mean((pred - y) ** 2), pred


aux_grad_fn = js.grad(loss_with_aux, has_aux=True)


def sgd(params: Params, grads: Params, lr: float) -> Params:
    return {k: params[k] - lr * grads[k] for k in params}


@js.jit
def train_step(params: Params, x: Array, y: Array, cfg: Static[TrainConfig]) -> Params:
    grads = grad_fn(params=params, x=x, y=y, cfg=cfg)
    return sgd(params, grads, cfg.lr)


def train(params: Params, x: Array, y: Array, cfg: TrainConfig) -> tuple[Params, Array]:
    loss = loss_fn(params, x, y, cfg)
    for _ in range(cfg.steps):
        loss, grads = value_and_grad_fn(params, x, y, cfg)
        params = sgd(params, grads, cfg.lr)
    return params, loss


# -- a generic trainer over any Model ------------------------------------------------------------------------------


class Trainer(Generic[M]):
    model: M
    cfg: TrainConfig

    def __init__(self, model: M, cfg: TrainConfig) -> None:
        self.model = model
        self.cfg = cfg

    def evaluate(self, x: Array, y: Array) -> Array:
        return jnp.mean((self.model(x) - y) ** 2)


# -- overloaded schedules ----------------------------------------------------------------------------------------


@overload
def learning_rate(step: Array, warmup: Static[None] = None) -> Array: ...
@overload
def learning_rate(step: Array, warmup: Static[int]) -> tuple[Array, Array]: ...
def learning_rate(step: Array, warmup: Static[int | None] = None) -> Array | tuple[Array, Array]:
    if warmup is None:
        return 0.1 / jnp.sqrt(step + 1.0)
    return jnp.minimum(step / warmup, 1.0) * 0.1, step / warmup


learning_rate_jit = js.jit(learning_rate)


# -- steps jitted through functools.partial ----------------------------------------------------------------------


@functools.partial(js.jit, max_traces=4)
def scale_step(x: Array, factor: Static[float], mode: Static[Literal["up", "down"]] = "up") -> Array:
    return x * factor if mode == "up" else x / factor


@functools.partial(js.vmap, in_axes=0)
def batched_norm(x: Array, eps: Static[float] = 1e-6) -> Array:
    return x / (jnp.sqrt(jnp.sum(x * x)) + eps)


# -- the spellings every checker types (docs/type-checking/checkers.md) --------------------------------------------


@js.dataclass
class Classifier:
    """A model whose ``__call__`` is a plain method over a jitted one: a ``Model`` and a ``Callable`` to every
    checker, where a jitted ``__call__`` is not to pyright and (after a protocol-bound type argument) mypy."""

    w: Array

    @js.jit
    def logits(self, x: Array, *, train: Static[bool] = False) -> Array:
        return x * self.w if train else jnp.tanh(x * self.w)

    def __call__(self, x: Array, *, train: bool = False) -> Array:
        return self.logits(x, train=train)


@js.dataclass
class Scaled:
    """A model whose ``__call__`` is jitted under overload stubs: to every checker an overloaded method (a ``Model``
    and a ``Callable``), at run time the jitted function."""

    w: Array

    @overload
    def __call__(self, x: Array, /) -> Array: ...
    @overload
    def __call__(self, x: Array, /, *, train: Static[bool]) -> Array: ...
    @js.jit
    def __call__(self, x: Array, /, *, train: Static[bool] = False) -> Array:
        return x * self.w if train else jnp.tanh(x * self.w)


@js.jit
def _learning_rate(step: Array, warmup: Static[int | None] = None) -> Array | tuple[Array, Array]:
    return learning_rate(step, warmup)


@overload
def learning_rate_of(step: Array, warmup: None = None) -> Array: ...
@overload
def learning_rate_of(step: Array, warmup: int) -> tuple[Array, Array]: ...
def learning_rate_of(step: Array, warmup: int | None = None) -> Array | tuple[Array, Array]:
    """The overloads on a plain function over the jitted one: kept under every checker."""
    return _learning_rate(step, warmup)


@overload
def warmup_rate(step: Array, warmup: Static[None] = None) -> Array: ...
@overload
def warmup_rate(step: Array, warmup: Static[int]) -> tuple[Array, Array]: ...
@js.jit
def warmup_rate(step: Array, warmup: Static[int | None] = None) -> Array | tuple[Array, Array]:
    """The overloads above a jitted implementation: the name holds the jitted function, typed by its overloads."""
    return learning_rate(step, warmup)


jit_bounded = js.jit(max_traces=4)  # options only, instead of functools.partial(js.jit, max_traces=4)
vmap_rows = js.vmap(in_axes=0)


@jit_bounded
def scale_step_typed(x: Array, factor: Static[float], mode: Static[Literal["up", "down"]] = "up") -> Array:
    return x * factor if mode == "up" else x / factor


@vmap_rows
def batched_norm_typed(x: Array, eps: Static[float] = 1e-6) -> Array:
    return x / (jnp.sqrt(jnp.sum(x * x)) + eps)
