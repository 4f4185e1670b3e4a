"""Transformed functions shared across rebuilds, as ``jax.jit`` shares its programs: ``js.jit(f)`` made again with
the same function and equal options is the function made before, with its programs, statistics and budgets."""

from __future__ import annotations

import functools
import gc
import weakref
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax._src import util as jax_util

import jaxstatic as js
from jaxstatic import Static, _shared

from ._fresh import fresh
from ._release import Token
from ._threads import run_together

X = jnp.arange(3.0)


def _power(x: jax.Array, n: Static[int]) -> jax.Array:
    return jnp.sum(x**n)


def power(x: jax.Array, n: Static[int]) -> jax.Array:
    return jnp.sum(x**n)


def _fresh() -> Any:
    """A function of its own per test: nothing shared with another test (a function of the same code would be)."""
    return fresh(power)


def test_a_function_jitted_inside_each_call_traces_once() -> None:
    f = _fresh()

    def apply(x: jax.Array, n: int) -> jax.Array:
        return js.jit(f)(x, n)

    with js.testing.expect_traces(n=2) as log:  # the budget sees every trace of the shared function
        for n in (2, 2, 3, 2, 3):
            assert float(apply(X, n)) == float(jnp.sum(X**n))
    assert [event.number for event in log] == [1, 2]
    rebuilt = js.jit(f)
    assert rebuilt is js.jit(f)
    assert rebuilt.trace_count == 2
    assert rebuilt.cache_info()[:4] == (3, 2, 8192, 2)
    assert [str(r) for r in rebuilt.retraces] == ["power was traced again (trace #2) because n: 2 -> 3"]


@pytest.mark.parametrize("inner", [js.grad, js.vmap, js.value_and_grad, functools.partial(js.grad, argnums=0)],
                         ids=["grad", "vmap", "value_and_grad", "grad(argnums=0)"])
def test_equal_stacks_rebuilt_share_one_program(inner: Any) -> None:
    f = _fresh()
    xs = X if inner is not js.vmap else X[:, None]
    first = js.jit(inner(f))
    for _ in range(3):
        js.jit(inner(f))(xs, 2)
    assert js.jit(inner(f)) is first
    assert first.trace_count == 1


def test_other_options_or_functions_do_not_share() -> None:
    f = _fresh()
    made = [js.jit(f), js.jit(f, max_traces=3), js.jit(f, cache_size=4), js.jit(f, static_argnames="x"),
            js.jit(f, donate_argnums=0), js.jit(_fresh()), js.jit(js.grad(f)), js.jit(js.grad(f, argnums=0)),
            js.vmap(f), js.vmap(f, in_axes=1)]
    assert len({id(m) for m in made}) == len(made)
    assert js.grad(f, has_aux=0) is not js.grad(f, has_aux=False)  # options keyed as static values are
    assert js.grad(f, has_aux=False) is js.grad(f)
    partial = functools.partial(f, n=2)  # a partial is shared too, by identity or by equal parts
    assert js.jit(partial) is js.jit(partial)
    assert js.jit(partial) is not js.jit(functools.partial(f, n=3))
    assert js.custom_vjp(f) is not js.custom_vjp(f)  # rules defined after it is made
    assert js.pmap(f) is not js.pmap(f)  # JAX keeps its traced body: it would keep the static values


def test_max_traces_bounds_every_rebuild_together() -> None:
    f = _fresh()
    js.jit(f, max_traces=1)(X, 2)
    js.jit(f, max_traces=1)(X, 2)
    with pytest.raises(js.RetraceError, match="power"):
        js.jit(f, max_traces=1)(X, 3)


def test_clear_cache_of_a_rebuild_clears_the_shared_programs() -> None:
    f = _fresh()
    js.jit(f)(X, 2)
    js.jit(f).clear_cache()
    assert js.jit(f).cache_info().currsize == 0
    js.jit(f)(X, 2)
    assert js.jit(f).trace_count == 2


def test_static_values_are_released_with_the_function() -> None:
    def run() -> weakref.ref[Token]:
        f = _fresh()
        token = Token()
        js.jit(f)(X, 1)
        js.jit(js.vmap(f))(X[:, None], 1)

        def g(x: jax.Array, act: Static[Any]) -> jax.Array:
            return act(x)

        js.jit(g)(X, token)
        js.jit(g)(X, token)
        assert js.jit(g).trace_count == 1
        return weakref.ref(token)

    ref = run()
    gc.collect()
    assert ref() is None


@pytest.mark.skipif(not hasattr(jax_util, "register_cache"), reason="this JAX has no registry of caches")
def test_jax_clear_caches_releases_the_shared_static_values() -> None:
    def g(x: jax.Array, act: Static[Any]) -> jax.Array:
        return act(x)

    token = Token()
    ref = weakref.ref(token)
    js.jit(g)(X, token)
    kept = js.jit(g)
    del token
    gc.collect()
    assert ref() is not None
    jax.clear_caches()
    gc.collect()
    assert ref() is None
    assert kept.cache_info().currsize == 0
    assert js.jit(g) is not kept  # forgotten: a rebuild starts again


def test_option_sets_kept_per_function_are_bounded() -> None:
    f = _fresh()
    made = [js.jit(f, max_traces=i) for i in range(_shared.LIMIT + 5)]
    holder = f.__dict__[_shared.ATTRIBUTE]
    assert len(holder) == _shared.LIMIT
    # the oldest forgotten by the function; found again while a handle holds it, as the function made again of the
    # same code closing over the same values would find it
    assert all(kept._core is not made[0]._core for kept in holder.values())
    assert js.jit(f, max_traces=_shared.LIMIT + 4) is made[-1]


def test_a_holder_copied_by_functools_wraps_is_not_taken_for_the_wrappers_own() -> None:
    f = _fresh()
    jitted = js.jit(f)

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return f(*args, **kwargs) + 1

    assert wrapper.__dict__[_shared.ATTRIBUTE] is f.__dict__[_shared.ATTRIBUTE]  # copied by functools.wraps
    assert js.jit(wrapper) is not jitted
    assert js.jit(wrapper) is js.jit(wrapper)
    assert float(js.jit(wrapper)(X, 1)) == 4.0
    assert js.jit(f) is jitted


def test_rebuilds_in_several_threads_trace_once() -> None:
    f = _fresh()
    results: list[float] = []

    def body() -> None:
        for _ in range(5):
            results.append(float(js.jit(js.grad(f))(X, 2).sum()))

    run_together(body, threads=6)
    assert results == [6.0] * 30
    assert js.jit(js.grad(f)).trace_count == 1
    assert js.jit(js.grad(f)).cache_info()[:2] == (29, 1)


def test_own_options_spelled_at_their_defaults_share_the_function_made_without_them() -> None:
    def ident(x: jax.Array) -> jax.Array:
        return x

    plain = js.jit(ident)
    assert js.jit(ident, max_traces=None) is plain
    assert js.jit(ident, cache_size=8192, strict_donation=None) is plain
    assert js.jit(ident, max_traces=3) is not plain
