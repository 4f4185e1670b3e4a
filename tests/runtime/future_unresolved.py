"""Postponed annotations naming types imported only under ``if TYPE_CHECKING:`` (the usual way to avoid import
cycles), and aliases of ``Static[...]`` spelled every way a user writes them: what is written ``Static`` stays static
whether or not its inner type resolves at run time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, TypeVar

import jax
import jax.numpy as jnp

import jaxstatic
import jaxstatic as js
from jaxstatic import STATIC, NoDiff, Static

if TYPE_CHECKING:
    from decimal import Decimal
    from numbers import Real

    from jaxtyping import Array, Float

    import jaxstatic as jst  # Static imported only for the type checker: still read as Static

_T = TypeVar("_T")
StaticInt = Static[int]
StaticOf = Static[_T]  # a generic alias: StaticOf[Real] is Static[Real]


@js.dataclass
class Model:
    w: jax.Array
    temperature: Static[Real] = 2.0


@js.dataclass
class Spelled:
    w: Float[Array, "n"]  # noqa: F821, UP037  # a child: ``Float`` is not defined at run time
    aux: Decimal  # a child too
    a: js.Static[Real]
    b: jaxstatic.Static[Real]
    c: Annotated[Real, STATIC]
    d: StaticInt
    e: Later  # an alias defined further down, found by the first instance
    f: jst.Static[Real]
    g: StaticOf[Real] = 1.0


Later = Static[tuple[str, ...]]


@js.jit
def scale(x: jax.Array, temperature: Static[Real]) -> jax.Array:
    return x / temperature


@js.jit
def passthrough(x: jax.Array, aux: Decimal) -> jax.Array:  # ``jax.jit`` never reads annotations: neither does this
    return x + aux


@js.jit(donate_argnames="x")  # read at decoration (an option naming a parameter), when ``Later`` is not defined yet
def tagged(x: jax.Array, tags: LaterToo, n: Static[Real]) -> jax.Array:
    return x * len(tags) * n


LaterToo = Static[tuple[str, ...]]


@js.vmap
def mapped(x: jax.Array, aux: Decimal, n: Static[Real]) -> jax.Array:
    return x * aux * n


@js.grad
def loss(x: jax.Array, aux: Decimal, n: Static[Real], y: NoDiff[Float[Array, "n"]]) -> jax.Array:  # noqa: F821, UP037
    return jnp.sum(x * aux * y) * n


def checked(x: jax.Array, k: Static[Real], n: Static[int]) -> jax.Array:
    return x * n if k else x


def local_forward_reference() -> object:
    """A class whose ``Static[...]`` names a class defined after it in the same function."""

    @js.dataclass
    class Flagged:
        w: jax.Array
        flags: js.Static[Container[bool]]

    class Container(tuple):  # type: ignore[type-arg]
        pass

    return Flagged(jnp.ones(2), Container((True, False)))
