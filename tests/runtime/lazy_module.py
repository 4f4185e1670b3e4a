"""A module written for Python 3.14's lazy annotations (PEP 649/749): no ``from __future__ import annotations``, no
quotes, yet its annotations name classes defined further down and names imported only for type checkers. Imported by
``test_lazy_annotations`` on Python 3.14 alone: on earlier Pythons its definitions raise ``NameError``."""

import dataclasses
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp

import jaxstatic as js
from jaxstatic import Donate, NoDiff, Static

if TYPE_CHECKING:
    from decimal import Decimal  # a name type checkers see and the running program never does

    from .aliases_extensions import Widths as CheckedWidths


@js.jit
def step(x: jax.Array, cfg: Static[Decimal]) -> jax.Array:
    return x * cfg.scale


@js.jit
def plain(x: Decimal, scale: float) -> jax.Array:  # a bare name no one defines: an ordinary, traced parameter
    return x * scale


@js.jit
def later(x: jax.Array, cfg: Static[LaterCfg]) -> jax.Array:
    return x * cfg.scale


@js.jit
def update(state: Donate[Decimal], lr: float) -> jax.Array:
    return state * lr


def loss(w: jax.Array, cfg: Static[LaterCfg], key: NoDiff[Decimal]) -> jax.Array:
    return jnp.sum(w * cfg.scale) + 0.0 * jnp.sum(key)


grad_loss = js.grad(loss)


def logged[**P, R](fn: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        return fn(*args, **kwargs)

    return wrapper


@js.jit
@logged
def wrapped(x: jax.Array, cfg: Static[LaterCfg], mode: Static[CheckedWidths]) -> jax.Array:
    return x * cfg.scale * mode["w"]


@js.dataclass
class Model:
    w: jax.Array
    cfg: Static[LaterCfg]
    names: Static[CheckedWidths]
    plain: Decimal  # not static: a child


@dataclasses.dataclass(frozen=True)
class LaterCfg:
    scale: float


def jax_static_argnames(f: Any) -> Any:
    return jax.jit(f, static_argnames="cfg")
