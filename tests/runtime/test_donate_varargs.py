"""Donation over ``*args``: positions count every positional argument, static ones included, as ``jax.jit`` counts
them; errors name an extra by the index the caller wrote; a call refused after its trace is not traced again."""

from __future__ import annotations

import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxstatic as js


def _f(x: jax.Array, *args: Any) -> tuple[jax.Array, ...]:
    return x * 2, args[1] * 2, args[2] * 2


@pytest.mark.parametrize("make", [js.jit, jax.jit], ids=["js.jit", "jax.jit"])
def test_a_donated_extra_after_a_static_one_is_the_one_deleted(hit_path: str, make: Any) -> None:
    g = make(_f, static_argnums=(1,), donate_argnums=(2,))  # args[0] static, args[1] donated
    for _ in range(2):
        a, b, c = jnp.ones(3), jnp.ones(3), jnp.ones(3)
        out = g(a, "s", b, c)
        assert (a.is_deleted(), b.is_deleted(), c.is_deleted()) == (False, True, False)
        np.testing.assert_array_equal(out[2], 2 * np.ones(3))


@pytest.mark.parametrize("make", [js.jit, jax.jit], ids=["js.jit", "jax.jit"])
def test_one_program_donates_the_extra_in_calls_of_every_length(hit_path: str, make: Any) -> None:
    g = make(lambda n, *args: [a * n for a in args], static_argnums=0, donate_argnums=2)  # args[1] donated
    for count in (1, 2, 3, 1, 3):  # one static key: calls of several lengths share a program
        xs = [jnp.ones(2) for _ in range(count)]
        g(2, *xs)
        assert [x.is_deleted() for x in xs] == [k == 1 for k in range(count)]


def test_a_donated_extra_passed_again_is_named_at_the_index_the_caller_wrote(hit_path: str) -> None:
    g = js.jit(_f, static_argnums=(1,), donate_argnums=(2,))
    b = jnp.ones(3)
    g(jnp.ones(3), "s", b, jnp.ones(3))
    with pytest.raises(js.DeletedArrayError, match=re.escape(
            "_f: parameter 'args' got a deleted array at args[1] (float32[3]): it was donated to _f at ")):
        g(jnp.ones(3), "s", b, jnp.ones(3))


def test_an_unusable_donated_extra_is_named_at_its_index() -> None:
    g = js.jit(lambda x, *args: x + args[1].sum(), static_argnums=1, donate_argnums=2, strict_donation=True)
    with pytest.raises(js.UnusableDonationError, match=re.escape(
            "<lambda>: donated buffers could not be reused, so donating them saves no memory: args[1] (float32[4])")):
        g(jnp.ones(3), "s", jnp.ones(4))


def test_the_same_array_twice_with_a_donated_extra_names_both_paths(hit_path: str) -> None:
    a = jnp.ones(3)
    g = js.jit(lambda *xs: xs, donate_argnums=(0,))
    for _ in range(2):
        with pytest.raises(RuntimeError, match=re.escape(
                "<lambda>: the same array is passed at xs[0] and at xs[1], and the one at xs[0] is donated: a donated "
                "buffer is consumed by the call, so it cannot also be read in the same call. Pass a copy at one of "
                "them (jnp.copy(x)), or donate neither.")) as info:
            g(a, a)
        assert isinstance(info.value, js.DeletedArrayError) and not a.is_deleted()


@pytest.mark.parametrize("make", [js.jit, jax.jit], ids=["js.jit", "jax.jit"])
def test_a_call_refused_after_its_trace_is_not_traced_again(hit_path: str, make: Any) -> None:
    traces = []

    def h(x: jax.Array, y: jax.Array, k: int) -> jax.Array:
        traces.append(k)
        return x + y + k

    g = make(h, donate_argnums=(0, 1))
    x = jnp.ones(3)
    for _ in range(3):
        with pytest.raises(RuntimeError):
            g(x, x, 1)
    assert len(traces) == 1 and not x.is_deleted()
    np.testing.assert_array_equal(g(jnp.ones(3), jnp.ones(3), 1), 3 * np.ones(3))  # the program kept is right
    assert len(traces) == 1


def test_a_body_that_raises_is_traced_again(hit_path: str) -> None:
    traces = []

    @js.jit
    def h(x: jax.Array) -> jax.Array:
        traces.append(1)
        if len(traces) < 3:
            raise ValueError("not yet")
        return x + 1

    for _ in range(2):
        with pytest.raises(ValueError, match="not yet"):
            h(jnp.ones(3))
    np.testing.assert_array_equal(h(jnp.ones(3)), 2 * np.ones(3))  # nothing of the failed traces was kept
    assert len(traces) == 3 and h.trace_count == 1


def test_pmap_refuses_donating_an_extra_it_cannot_donate() -> None:
    with pytest.raises(js.OptionError, match=re.escape("donate_argnums of f reaches into *args")):
        js.pmap(_named_f, donate_argnums=2)(jnp.ones((1, 2)), jnp.ones((1, 2)), jnp.ones((1, 2)))


def _named_f(x: jax.Array, *args: jax.Array) -> jax.Array:
    return x


_named_f.__name__ = _named_f.__qualname__ = "f"
