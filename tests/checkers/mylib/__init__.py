"""A typed library built on jaxstatic, as its users write one: what tests/test_checkers.py checks under every
type checker, and run with its user's correct code."""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

import jaxstatic as js
from jaxstatic import NoDiff, Static


@js.jit
def scale(x: jax.Array, n: Static[int], *, mode: Static[str] = "train") -> jax.Array:
    return x * n if mode == "train" else x


@js.jit(max_traces=4)
def configured(x: jax.Array, cfg: Static[dict[str, float]]) -> jax.Array:
    return x * cfg["scale"]


@js.vmap(in_axes=(0, None))
def shift(x: jax.Array, by: Static[float]) -> jax.Array:
    return x + by


def loss(w: jax.Array, x: jax.Array, n: Static[int]) -> jax.Array:
    return jnp.sum((w * x) ** n)


# The gradient's type declared: to a checker without the mypy plugin it is Any (a Static first parameter would not
# be the one differentiated)
grad_loss: js.GradFunction[[jax.Array, jax.Array, int], jax.Array] = js.grad(loss)
value_and_grad_loss: js.ValueAndGradFunction[[jax.Array, jax.Array, int], tuple[jax.Array, jax.Array]] = (
    js.value_and_grad(loss)
)


@js.jit
def train_step(params: dict[str, jax.Array], x: jax.Array, lr: Static[float]) -> dict[str, jax.Array]:
    def objective(params: dict[str, jax.Array], x: jax.Array) -> tuple[jax.Array, jax.Array]:
        y = params["w"] * x
        return jnp.sum(y**2), y

    objective_grad: js.GradFunction[[dict[str, jax.Array], jax.Array], tuple[dict[str, jax.Array], jax.Array]] = (
        js.grad(objective, has_aux=True)
    )
    grads, _ = objective_grad(params, x)
    return {k: params[k] - lr * grads[k] for k in params}


@js.custom_vjp
def clip(x: jax.Array, limit: Static[float], w: NoDiff[jax.Array]) -> jax.Array:
    return jnp.clip(x, -limit, limit) * w


def _clip_fwd(x: jax.Array, limit: float, w: jax.Array) -> tuple[jax.Array, jax.Array]:
    return clip(x, limit, w), x


def _clip_bwd(limit: float, w: jax.Array, residuals: jax.Array, g: jax.Array) -> tuple[jax.Array]:
    return (jnp.where(jnp.abs(residuals) < limit, g * w, 0.0),)


clip.defvjp(_clip_fwd, _clip_bwd)


@js.pmap(axis_name="devices")
def replicate(x: jax.Array, n: Static[int]) -> jax.Array:
    return x * n


def make_scaler(factor: float) -> js.JitFunction[[jax.Array, int], jax.Array]:
    """A factory: its return type names the transform, and what it returns is a jitted inner function."""

    def inner(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n * factor

    return js.jit(inner)


def make_shifter(by: float) -> js.JitFunction[[jax.Array, int], jax.Array]:
    """The same with the inner function decorated."""

    @js.jit
    def inner(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n + by

    return inner


@js.custom_vjp
def straight_through(x: jax.Array, how: Static[str]) -> jax.Array:
    return jnp.round(x) if how == "round" else jnp.floor(x)


def _st_fwd(x: jax.Array, how: str) -> tuple[jax.Array, None]:
    return straight_through(x, how), None


# jaxstatic passes bwd its Static values by position: one it must take but does not use is named with a leading
# underscore, which basedpyright's reportUnusedParameter leaves alone


def _st_bwd(_name: str, _residuals: None, g: jax.Array) -> tuple[jax.Array]:
    return (g,)


straight_through.defvjp(_st_fwd, _st_bwd)


@js.dataclass
class Layer:
    w: jax.Array
    activation: Static[Callable[[jax.Array], jax.Array]]
    scale: Static[float] = 1.0


@js.dataclass
class Params:
    """A pytree of arrays: ``self`` is traced."""

    w: jax.Array

    @js.jit
    def apply(self, x: jax.Array, n: Static[int]) -> jax.Array:
        return self.w * x * n

    @js.vmap(in_axes=(None, 0))
    def rows(self, x: jax.Array) -> jax.Array:
        return jnp.dot(self.w, x)

    @js.jit
    def __call__(self, x: jax.Array, *, act: Static[str] = "id") -> jax.Array:
        return jnp.tanh(self.w * x) if act == "tanh" else self.w * x


@js.dataclass
class Model:
    """A hashable configuration: ``self`` is static."""

    depth: Static[int]

    @js.jit
    def apply(self: Static[Model], x: jax.Array) -> jax.Array:
        for _ in range(self.depth):
            x = jnp.sin(x)
        return x


@js.jit
def tagged(x: jax.Array, tag: Static[object]) -> jax.Array:
    return x if tag else -x


@js.dataclass
class Tagged:
    w: jax.Array
    tag: Static[object] = None
