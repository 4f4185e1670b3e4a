"""``functools.wraps`` decorators whose wrapper takes other parameters than the function it wraps: calls bind by
the wrapper's real parameters, as Python (and ``jax.jit``) call it."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
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


def _positional_only_wrapper(fn: Callable[..., R]) -> Callable[..., R]:
    """Takes positional arguments only, yet reports ``fn``'s signature, keyword-only parameters included, and
    ``**kwargs`` that it refuses (as ``jax.shard_map``'s wrapper does over ``jnp.dot``)."""

    @functools.wraps(fn)
    def wrapped(*args: jax.Array, **kwargs: object) -> R:
        if kwargs:
            raise TypeError(f"wrapped() got an unexpected keyword argument {next(iter(kwargs))!r}")
        return fn(*args)

    return wrapped


def scaled_sum(x: jax.Array, y: jax.Array, *, scale: float = 2.0, offset: jax.Array | None = None) -> jax.Array:
    return scale * (x + y) + (0.0 if offset is None else offset)


@pytest.mark.parametrize("jit", [jax.jit, js.jit], ids=["jax.jit", "js.jit"])
def test_keyword_only_parameters_left_to_their_defaults_are_not_passed_to_a_wrapper(jit: Callable[..., Any]) -> None:
    f = jit(_positional_only_wrapper(scaled_sum))
    assert float(f(jnp.float32(1.0), jnp.float32(2.0))) == 6.0
    with pytest.raises(TypeError, match="unexpected keyword argument 'scale'"):
        f(jnp.float32(1.0), jnp.float32(2.0), scale=3.0)


@pytest.mark.skipif(not hasattr(jax, "shard_map"), reason="jax.shard_map is public from JAX 0.7")
def test_jit_of_shard_map_over_jnp_dot_runs_as_jax_jit_s_does() -> None:
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",))
    spec = jax.sharding.PartitionSpec
    f = jax.shard_map(jnp.dot, mesh=mesh, in_specs=(spec("x"), spec()), out_specs=spec("x"))
    a, b = jnp.ones((4, 3)), jnp.ones((3, 2))
    assert (js.jit(f)(a, b) == jax.jit(f)(a, b)).all()
