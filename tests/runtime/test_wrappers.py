"""Transforms over other libraries' wrappers: the wrapper's attributes never replace the transform's own state or
methods, whatever names they use."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest
from beartype import beartype
from jaxtyping import Array, Float, jaxtyped

import jaxstatic as js
from jaxstatic import Static


def loss(x: Float[Array, " size"], n: Static[int] = 2) -> Float[Array, ""]:  # noqa: F722 (jaxtyping shapes)
    return (x * n).sum()


def _wraps(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    # names a transform uses for its own state and methods
    for name in ("_signature", "_cache", "_stats", "_fn", "_options", "_lock", "_shape", "_layout", "_miss", "_core",
                 "_opts", "_params", "_transform_name", "_build", "_closes_over",
                 "trace_count", "clear_cache", "cache_info", "lower"):
        setattr(wrapper, name, f"the wrapper's {name}")
    wrapper.tag = "kept"  # type: ignore[attr-defined]
    return wrapper


WRAPPERS: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    "eqx.filter_jit": eqx.filter_jit,
    "jax.jit": functools.partial(jax.jit, static_argnames="n"),
    "jaxtyped": jaxtyped(typechecker=beartype),
    "beartype": beartype,
    "functools.wraps": _wraps,
}


@pytest.mark.parametrize("wrap", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_jit_over_a_wrapper_keeps_its_own_state(wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    f = js.jit(wrap(loss))
    x = jnp.arange(3.0)
    assert float(f(x, 3)) == 9.0
    assert float(f(x + 1, 3)) == 18.0
    assert float(f(x, 4)) == 12.0
    assert f.trace_count == 2
    assert f.cache_info()[:2] == (1, 2)
    f.clear_cache()
    assert f.cache_info().currsize == 0


@pytest.mark.parametrize("wrap", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_grad_over_a_wrapper_keeps_its_own_state(wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    g = js.grad(wrap(loss))
    assert g(jnp.arange(3.0), 3).tolist() == [3.0, 3.0, 3.0]
    assert js.jit(g)(jnp.arange(3.0), 5).tolist() == [5.0, 5.0, 5.0]
    assert js.value_and_grad(wrap(loss))(jnp.ones(2), 2)[0] == 4.0


@pytest.mark.parametrize("wrap", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_vmap_over_a_wrapper_keeps_its_own_state(wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    v = js.vmap(wrap(loss))
    assert v(jnp.ones((2, 3)), 3).tolist() == [9.0, 9.0]
    assert js.jit(v)(jnp.ones((4, 1)), 2).tolist() == [2.0] * 4


def test_a_wrappers_public_attributes_are_copied_and_its_names_for_ours_are_not() -> None:
    f = js.jit(_wraps(loss))
    assert f.tag == "kept"  # type: ignore[attr-defined]
    assert f.__wrapped__.__wrapped__ is loss  # type: ignore[attr-defined]
    assert f.trace_count == 0
    assert callable(f.clear_cache) and callable(f.lower)
    assert float(f.lower(jnp.ones(2), 3).compile()(jnp.ones(2), 3)) == 6.0
