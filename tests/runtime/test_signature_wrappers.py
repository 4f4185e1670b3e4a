"""``functools.wraps`` decorators whose wrapper takes other parameters than the function it wraps: calls bind by
the wrapper's real parameters, as Python (and ``jax.jit``) call it."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static

P = ParamSpec("P")
R = TypeVar("R")


def with_scale(fn: Callable[P, jax.Array]) -> Callable[Concatenate[float, P], jax.Array]:
    @functools.wraps(fn)
    def wrapper(scale: float, *args: P.args, **kwargs: P.kwargs) -> jax.Array:
        return scale * fn(*args, **kwargs)

    return wrapper


def fixed_n(fn: Callable[..., R]) -> Callable[[jax.Array], R]:
    @functools.wraps(fn)
    def wrapper(x: jax.Array) -> R:
        return fn(x, 2)

    return wrapper


def logged(fn: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        return fn(*args, **kwargs)

    return wrapper


def _head(x: jax.Array, n: Static[int]) -> jax.Array:
    return x[:n]  # n must be static: a traced n cannot slice


@pytest.mark.parametrize("call", [
    lambda f, x: f(2.0, x, 3), lambda f, x: f(2.0, x, n=3), lambda f, x: f(2.0, x=x, n=3),
], ids=["positional", "n by keyword", "x and n by keyword"])
def test_a_parameter_added_in_front_is_passed_to_the_wrapper(hit_path: str, call: Callable[..., jax.Array]) -> None:
    f = js.jit(with_scale(_head))
    for _ in range(2):
        assert call(f, jnp.arange(5.0)).tolist() == [0.0, 2.0, 4.0]
    assert f.trace_count == 1
    assert list(inspect.signature(f).parameters) == ["scale", "x", "n"]


def test_a_wrapper_without_args_and_kwargs_binds_by_its_own_signature(hit_path: str) -> None:
    f = js.jit(fixed_n(_head))
    assert f(jnp.arange(5.0)).tolist() == [0.0, 1.0]
    assert jax.jit(fixed_n(_head))(jnp.arange(5.0)).tolist() == [0.0, 1.0]


def test_a_plain_wrapper_still_binds_by_the_wrapped_function(hit_path: str) -> None:
    f = js.jit(logged(_head))
    assert f(jnp.arange(5.0), 2).tolist() == [0.0, 1.0]
    assert list(inspect.signature(f).parameters) == ["x", "n"]
