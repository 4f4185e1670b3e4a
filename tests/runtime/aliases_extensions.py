"""Type aliases of Static and Donate made with ``typing_extensions.TypeAliasType`` (every Python), used as the
annotations of jitted functions and dataclass fields; the string annotations of the future import are evaluated
to these aliases, which jaxstatic reads through."""

from __future__ import annotations

from typing import Any, TypeVar

import jax
from typing_extensions import TypeAliasType

import jaxstatic as js
from jaxstatic import Donate, Static

T = TypeVar("T")

StaticInt = TypeAliasType("StaticInt", Static[int])
StaticAgain = TypeAliasType("StaticAgain", StaticInt)  # an alias of an alias
StaticList = TypeAliasType("StaticList", Static[list[T]], type_params=(T,))  # generic
Donated = TypeAliasType("Donated", Donate[jax.Array])
Widths = TypeAliasType("Widths", dict[str, int])  # not static itself: Static[Widths] is


@js.jit
def scale(x: jax.Array, n: StaticInt) -> jax.Array:
    assert isinstance(n, int)  # a Python int, never a tracer
    return x * n


@js.jit
def scale_again(x: jax.Array, n: StaticAgain) -> jax.Array:
    assert isinstance(n, int)
    return x * n


@js.jit
def total(x: jax.Array, sizes: StaticList[int]) -> jax.Array:
    assert isinstance(sizes, (list, tuple))  # js.jit's frozen list
    return x * sum(sizes)


@js.jit
def nested(x: jax.Array, ns: list[StaticInt]) -> jax.Array:
    return x * ns[0]  # a list of traced values: only the top of an annotation marks


@js.jit
def widen(x: jax.Array, widths: Static[Widths]) -> jax.Array:
    return x * widths["w"]


@js.jit
def step(state: Donated, lr: float) -> jax.Array:
    return state * lr


@js.dataclass
class Layer:
    w: jax.Array
    width: StaticInt


def widths_type() -> Any:
    return Widths
