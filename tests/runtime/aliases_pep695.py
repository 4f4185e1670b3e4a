"""Type aliases of Static and Donate made by ``type`` statements (PEP 695, Python 3.12+): their values are evaluated
when first read, so one may name a class defined further down."""

import dataclasses

import jax

import jaxstatic as js
from jaxstatic import Donate, Static

type StaticInt = Static[int]
type StaticCfg = Static[LaterCfg]  # a class defined below: read when the function is first called
type StaticList[T] = Static[list[T]]
type Donated = Donate[jax.Array]
type Broken = Static[NotDefinedAnywhere]  # noqa: F821 -- what a user's typo looks like


@js.jit
def scale(x: jax.Array, n: StaticInt) -> jax.Array:
    assert isinstance(n, int)
    return x * n


@js.jit
def configured(x: jax.Array, cfg: StaticCfg) -> jax.Array:
    return x * cfg.scale


@js.jit
def total(x: jax.Array, sizes: StaticList[int]) -> jax.Array:
    return x * sum(sizes)


@js.jit
def nested(x: jax.Array, ns: list[StaticInt]) -> jax.Array:
    return x * ns[0]


@js.jit
def step(state: Donated, lr: float) -> jax.Array:
    return state * lr


@js.jit
def broken(x: jax.Array, n: Broken) -> jax.Array:
    return x * n


@js.dataclass
class Layer:
    w: jax.Array
    width: StaticInt


@dataclasses.dataclass(frozen=True)
class LaterCfg:
    scale: float
