"""A transform's options are one frozen record, made when it is applied: an own option's mistake fails there, JAX
never sees one, and what was read at decoration cannot change afterwards."""

from __future__ import annotations

import ast
import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static
from jaxstatic._jit import JitOptions, _jax_jit_options
from jaxstatic._options import Options, own_options


def scaled(x: jax.Array, n: Static[float]) -> jax.Array:
    return x * n


def test_the_record_is_frozen() -> None:
    f = js.jit(scaled, max_traces=3, keep_unused=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        f._opts.max_traces = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        f._opts.jax["keep_unused"] = False  # type: ignore[index]
    assert (f._opts.max_traces, dict(f._opts.jax)) == (3, {"keep_unused": True})


@pytest.mark.parametrize(("make", "message"), [
    (lambda: js.jit(scaled, strict_donation="yes"),
     "jaxstatic: strict_donation of scaled is 'yes'. Give True (raise where a donated buffer is not usable), False "
     "or None."),
    (lambda: js.jit(scaled, max_traces=-1),
     "jaxstatic: max_traces of scaled is -1 (a int). Give None (no limit) or an int >= 0, the number of traces "
     "allowed."),
    (lambda: js.vmap(scaled, cache_size=1.5),
     "jaxstatic: cache_size of scaled is 1.5 (a float). Give an int >= 1, the number of compiled programs kept "
     "(default 8192)."),
    (lambda: js.pmap(scaled, cache_size=0),
     "jaxstatic: cache_size of scaled is 0 (a int). Give an int >= 1, the number of compiled programs kept "
     "(default 8192)."),
])
def test_a_bad_own_option_is_refused_when_the_transform_is_applied(make: Callable[[], Any], message: str) -> None:
    with pytest.raises(js.OptionError) as caught:
        make()
    assert str(caught.value) == message


def test_jax_never_sees_an_own_option(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    real = jax.jit

    @functools.wraps(real)  # its signature too: js.jit reads jax.jit's options from it
    def recording(fn: Callable[..., Any], **options: Any) -> Any:
        seen.append((getattr(fn, "__name__", ""), options))
        return real(fn, **options)

    monkeypatch.setattr(jax, "jit", recording)
    f = js.jit(scaled, max_traces=3, cache_size=4, strict_donation=False, keep_unused=True)
    assert f(jnp.ones(2), 2.0).tolist() == [2.0, 2.0]
    assert seen == [("scaled", {"keep_unused": True})]


def test_statistics_read_the_record() -> None:
    f = js.jit(scaled, max_traces=2, cache_size=4)
    assert f._core._stats.options is f._opts
    assert f.cache_info().maxsize == 4


def test_an_unknown_option_lists_the_own_options_of_the_transform() -> None:
    with pytest.raises(js.OptionError) as caught:
        js.jit(scaled, max_trace=3)
    text = str(caught.value)
    head = "jaxstatic.jit(scaled): unknown option(s) ['max_trace'] (did you mean 'max_traces' for 'max_trace'?); " \
           "it accepts "
    assert text.startswith(head) and text.endswith(".")
    accepted = set(ast.literal_eval(text[len(head):-1]))
    assert accepted == _jax_jit_options() | set(own_options(JitOptions))  # which they are: test_own_options.py


@pytest.mark.parametrize(("make", "record", "jax_options"), [
    (lambda: js.jit(scaled, cache_size=5, donate_argnums=0), "JitOptions", {}),
    (lambda: js.vmap(scaled, cache_size=5, out_axes=1), "VmapOptions",
     {"out_axes": 1, "axis_name": None, "axis_size": None, "spmd_axis_name": None}),
    (lambda: js.pmap(scaled, cache_size=5), "PmapOptions",
     {"axis_name": None, "out_axes": 0, "devices": None, "backend": None, "axis_size": None}),
    (lambda: js.grad(scaled, argnums=0, allow_int=True), "GradOptions", {"allow_int": True}),
    (lambda: js.checkpoint(scaled, static_argnums=1), "Options", {"prevent_cse": True, "policy": None}),
    (lambda: js.custom_vjp(scaled, nondiff_argnums=1), "CustomOptions", {}),
])
def test_each_transform_makes_its_own_record(make: Callable[[], Any], record: str,
                                             jax_options: dict[str, Any]) -> None:
    opts = make()._opts
    assert isinstance(opts, Options)
    assert (type(opts).__name__, opts.function, dict(opts.jax)) == (record, "scaled", jax_options)


def test_a_rebuild_with_equal_options_shares_the_record() -> None:
    def ident(x: jax.Array) -> jax.Array:
        return x

    assert js.jit(ident, max_traces=3)._opts is js.jit(ident, max_traces=3)._opts
    assert js.jit(ident, max_traces=4)._opts.max_traces == 4
