from __future__ import annotations

import functools
import gc
import re
import weakref
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxstatic as js
from jaxstatic import Static

from ._devices import ACCELERATOR, CPUS, one_cpu

N = 8  # host devices, from tests/conftest.py
# Where an accelerator is the default device, the host's CPU devices are mapped over explicitly; elsewhere pmap's
# own default (JAX before 0.5 refuses fewer values than devices passed explicitly, as one test maps over 4 of 8)
DEVICES = CPUS[:N] if ACCELERATOR else None


def make_hypercube(a: jax.Array, b: jax.Array, c: float, c_func: Static[Callable[[float], float]]) -> jax.Array:
    arr = jnp.zeros((3, 3))
    arr += a
    arr *= b
    arr **= c_func(c)
    return arr


def _double(c: float) -> float:
    return c * 2


def test_eight_devices_are_available() -> None:
    assert len(CPUS[:N]) == N


def test_static_callable_needs_no_static_broadcasted_argnums() -> None:
    """The request that started jaxstatic: in_axes alone, the callable broadcast as a static value."""
    a, b = jnp.arange(N, dtype=jnp.float32), jnp.arange(N, dtype=jnp.float32) + 1
    mapped = js.pmap(make_hypercube, in_axes=(0, 0, None, None), devices=DEVICES)
    out = mapped(a, b, 1.0, _double)
    plain = jax.pmap(make_hypercube, in_axes=(0, 0, None, None), static_broadcasted_argnums=(3,),
                     devices=DEVICES)(a, b, 1.0, _double)
    np.testing.assert_array_equal(out, plain)
    np.testing.assert_array_equal(out[:, 0, 0], (np.arange(N) * (np.arange(N) + 1)) ** 2.0)
    assert mapped.trace_count == 1
    mapped(a, b, 1.0, _double)
    mapped(a, b, 1.0, c_func=_double)  # a Static value by keyword: the same static value, the same program
    assert mapped.trace_count == 1
    # the seed's own form
    cube = js.pmap(make_hypercube, in_axes=(0, 0, None, None), devices=DEVICES)(a, b, 1.0, lambda c: c * 3)
    np.testing.assert_array_equal(cube[:, 0, 0], (np.arange(N) * (np.arange(N) + 1)) ** 3.0)


def test_static_dict_config_equal_dicts_share_one_program() -> None:
    def step(x: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        return cfg["act"](x) * cfg["scale"]

    mapped = js.pmap(step, axis_name="devices", devices=DEVICES)
    x = np.linspace(-1.0, 1.0, N * 2, dtype=np.float32).reshape(N, 2)
    out = mapped(x, {"act": jnp.tanh, "scale": 2.0})
    with one_cpu():
        np.testing.assert_allclose(out, jnp.tanh(x) * 2.0, rtol=1e-6)
    mapped(x, {"act": jnp.tanh, "scale": 2.0})  # equal, another object
    assert mapped.trace_count == 1
    assert mapped.cache_info()[:2] == (1, 1)
    out = mapped(x, {"act": jnp.tanh, "scale": 3.0})
    with one_cpu():
        np.testing.assert_allclose(out, jnp.tanh(x) * 3.0, rtol=1e-6)
    assert mapped.trace_count == 2
    assert str(mapped.retraces[-1]) == "step was traced again (trace #2) because cfg['scale']: 2.0 -> 3.0"
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        jax.pmap(step, static_broadcasted_argnums=(1,), devices=DEVICES)(x, {"act": jnp.tanh, "scale": 2.0})


def test_array_given_to_static_parameter() -> None:
    def step(x: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        return x

    mapped = js.pmap(step, devices=DEVICES)
    with pytest.raises(js.NonStaticValueError, match=r"^step\(\): parameter 'cfg' is Static, but cfg\['weights'\] "
                                                      r"is a jax\.Array \(float32\[3\]\)"):
        mapped(jnp.ones(N), {"weights": jnp.zeros(3), "lr": 0.1})
    assert mapped.trace_count == 0
    assert mapped.cache_info()[:2] == (0, 0)


def test_non_array_given_to_dynamic_parameter_suggests_static() -> None:
    def step(x: jax.Array, activation: Callable[[Any], Any]) -> jax.Array:
        return activation(x)

    with pytest.raises(js.NonArrayArgumentError, match=r"^step\(\): parameter 'activation' is not Static, so its "
                                                         r"value is traced as an array, but activation is a function"):
        js.pmap(step, in_axes=(0, None), devices=DEVICES)(jnp.ones(N), _double)


@pytest.mark.parametrize("in_axes, problem", [
    ((0, 0, None, 0), "maps 'c_func' over axis 0"),
    ({"a": 0, "c_func": 1}, "maps 'c_func' over axis 1"),
])
def test_axis_for_a_static_parameter_is_an_error_at_decoration(in_axes: Any, problem: str) -> None:
    with pytest.raises(js.OptionError) as info:
        js.pmap(make_hypercube, in_axes=in_axes, devices=DEVICES)
    assert str(info.value) == (
        f"jaxstatic: in_axes of make_hypercube {problem}, but 'c_func' is Static, so it is never mapped. Give 'c_func' None (or leave it out of a dict), or make it dynamic."
    )


def test_in_axes_of_the_wrong_length_or_naming_no_parameter() -> None:
    with pytest.raises(js.OptionError, match=r"^jaxstatic: in_axes of make_hypercube has 2 entries, but "
                                             r"make_hypercube has 3 non-static positional parameter\(s\) "
                                             r"\['a', 'b', 'c'\]\. Give one entry per parameter"):
        js.pmap(make_hypercube, in_axes=(0, 0), devices=DEVICES)
    with pytest.raises(js.OptionError, match=r"names 'bb', which is not a parameter of make_hypercube\(a, b, c, "
                                             r"c_func\) \(did you mean 'b'\?\)"):
        js.pmap(make_hypercube, in_axes={"a": 0, "bb": 0}, devices=DEVICES)
    with pytest.raises(js.OptionError, match=r"^jaxstatic: in_axes of make_hypercube is 'x' \(a str\)\. Give an int"):
        js.pmap(make_hypercube, in_axes="x", devices=DEVICES)
    with pytest.raises(js.OptionError, match=r"^jaxstatic: donate_argnums of make_hypercube names 'c_func', which "
                                             r"is Static\."):
        js.pmap(make_hypercube, donate_argnums=3, devices=DEVICES)


def test_in_axes_forms_agree_with_jax_pmap() -> None:
    a, b = jnp.arange(N, dtype=jnp.float32), jnp.arange(N, dtype=jnp.float32) + 1
    expected = jax.pmap(make_hypercube, in_axes=(0, 0, None, None), static_broadcasted_argnums=(3,),
                        devices=DEVICES)(a, b, 2.0, _double)
    for in_axes in [(0, 0, None), {"a": 0, "b": 0, "c": None}, [0, 0, None, None]]:
        mapped = js.pmap(make_hypercube, in_axes=in_axes, devices=DEVICES)
        np.testing.assert_array_equal(mapped(a, b, 2.0, _double), expected)
    by_name = js.pmap(make_hypercube, in_axes={"a": 0, "b": 0, "c": None}, devices=DEVICES)
    np.testing.assert_array_equal(by_name(a, b=b, c=2.0, c_func=_double), expected)  # a dict holds for keywords
    flipped = js.pmap(make_hypercube, in_axes={"a": 1, "c": None}, devices=DEVICES)  # b gets axis 0, the default
    np.testing.assert_array_equal(flipped(a[None, :], b, 2.0, _double), expected)


def test_a_keyword_argument_maps_over_axis_0_as_in_jax_pmap(hit_path: str) -> None:
    """``jax.pmap``'s ``in_axes`` (an int, ``None`` or a tuple) is for the positional arguments: one passed by keyword
    maps over axis 0, whatever the parameter's entry; a tuple entry for it is JAX's ``ValueError``."""

    def add(x: jax.Array, y: jax.Array, k: Static[int] = 1) -> jax.Array:
        return (x + y) * k

    x, y = jnp.arange(N, dtype=jnp.float32), jnp.arange(N * N, dtype=jnp.float32).reshape(N, N)
    ours, plain = js.pmap(add, in_axes=None, devices=DEVICES), jax.pmap(add, in_axes=None, devices=DEVICES)
    np.testing.assert_array_equal(ours(x, y=y), plain(x, y=y))  # y over axis 0, though in_axes is None
    np.testing.assert_array_equal(ours(x, y=y), x + y)
    across = js.pmap(add, in_axes=1, devices=DEVICES)
    np.testing.assert_array_equal(across(y, y), jax.pmap(add, in_axes=1, devices=DEVICES)(y, y))
    np.testing.assert_array_equal(across(y, y=y), jax.pmap(add, in_axes=1, devices=DEVICES)(y, y=y))
    np.testing.assert_array_equal(across(y, y=y), y.T + y)  # y by keyword: over axis 0, not 1
    assert across.trace_count == 2  # a program of its own, as in jax.pmap
    assert str(across.retraces[0]) == "add was traced again (trace #2) because y, passed by: 'position' -> 'keyword'"
    with pytest.raises(ValueError, match="each argument passed by keyword is mapped"):
        jax.pmap(add, in_axes=(None, 0), devices=DEVICES)(x, y=y)
    with pytest.raises(js.OptionError, match="^" + re.escape(
            "jaxstatic: in_axes of add gives 'y' the entry 0 by position, but this call passes 'y' by keyword. As in "
            "jax.pmap, a tuple in_axes is for the arguments passed positionally, and each argument passed by keyword "
            "is mapped over its leading axis. Pass 'y' positionally, or give in_axes as a dict by parameter name, "
            "which holds however an argument is passed.") + "$"):
        js.pmap(add, in_axes=(None, 0), devices=DEVICES)(x, y=y)
    tupled = js.pmap(add, in_axes=(None, 0, None), devices=DEVICES)
    np.testing.assert_array_equal(tupled(x, y, k=2), (x + y) * 2)  # a Static parameter by keyword: no axis to lose
    by_name = js.pmap(add, in_axes={"x": None}, devices=DEVICES)
    np.testing.assert_array_equal(by_name(x, y=y), by_name(x, y))


def test_keyword_only_and_variadic_parameters_get_their_axes() -> None:
    def total(x: jax.Array, *rest: jax.Array, scale: jax.Array, k: Static[int], **extra: jax.Array) -> jax.Array:
        return (x + sum(rest) + sum(extra.values())) * scale * k

    x = jnp.arange(N, dtype=jnp.float32)
    mapped = js.pmap(total, in_axes={"x": 0, "rest": 0, "scale": None, "extra": 1}, devices=DEVICES)
    out = mapped(x, x, x, scale=jnp.float32(2.0), k=3, y=x[None, :], z=x[None, :])
    np.testing.assert_array_equal(out[:, 0], x * 5 * 2.0 * 3)  # each device got y[:, i], of shape (1,)
    assert mapped.trace_count == 1
    out = mapped(x, x, scale=jnp.float32(1.0), k=3, w=x[None, :])
    np.testing.assert_array_equal(out[:, 0], x * 3 * 3)
    assert mapped.trace_count == 2  # other extras: a new trace of the same program
    assert mapped.cache_info().currsize == 1


def test_a_tuple_over_args_gives_entry_i_to_argument_i() -> None:
    """As ``jax.pmap``: a tuple ``in_axes`` counts every positional argument, ``*args`` extras included."""
    x, y = jnp.arange(N, dtype=jnp.float32), jnp.float32(2.0)
    ours = js.pmap(lambda *xs: sum(xs), in_axes=(0, None), devices=DEVICES)
    np.testing.assert_array_equal(ours(x, y), jax.pmap(lambda *xs: sum(xs), in_axes=(0, None), devices=DEVICES)(x, y))

    def scaled(x: jax.Array, k: Static[int], *rest: jax.Array) -> jax.Array:
        return (x + sum(rest)) * k

    over_all = js.pmap(scaled, in_axes=(0, None, None, 0), devices=DEVICES)  # None at the Static k, as JAX counts
    np.testing.assert_array_equal(over_all(x, 3, y, x), (x + y + x) * 3)
    dynamic_only = js.pmap(scaled, in_axes=(0, 0, 0), devices=DEVICES)  # not None at k: over x and the extras
    np.testing.assert_array_equal(dynamic_only(x, 3, x, x), (x + x + x) * 3)


def test_a_tuple_over_args_skips_the_extras_made_static_by_position() -> None:
    """As ``jax.pmap``: ``static_broadcasted_argnums`` into ``*args`` and a tuple ``in_axes`` count the same
    positions, so an extra made static takes its entry (None) and the extras after it keep theirs."""

    def f(x: jax.Array, *args: Any) -> jax.Array:
        return x + args[0] * args[2] + (1 if args[1] == "s" else 0)

    x, a = jnp.ones((N, 3)), jnp.arange(N * 3, dtype=jnp.float32).reshape(N, 3)
    for axes, c in [((0, 0, None, None), jnp.full((3,), 2.0)), ((0, 0, None, 0), jnp.full((N, 3), 2.0))]:
        ours = js.pmap(f, static_broadcasted_argnums=(2,), in_axes=axes, devices=DEVICES)
        theirs = jax.pmap(f, static_broadcasted_argnums=(2,), in_axes=axes, devices=DEVICES)
        np.testing.assert_array_equal(ours(x, a, "s", c), theirs(x, a, "s", c))
        np.testing.assert_array_equal(ours(x, a, "s", c), x + a * 2.0 + 1)


def test_no_devices_is_jax_pmap_s_error_when_applied() -> None:
    with pytest.raises(ValueError, match="'devices' argument to pmap must be non-empty, or None"):
        js.pmap(lambda x: x, devices=[])


def test_trace_count_across_repeated_equal_and_unequal_statics() -> None:
    def scale(x: jax.Array, n: Static[int], mode: Static[str] = "mul") -> jax.Array:
        return x * n if mode == "mul" else x + n

    mapped = js.pmap(scale, devices=DEVICES)
    x = jnp.arange(N, dtype=jnp.float32)
    for n, mode, count in [(2, "mul", 1), (2, "mul", 1), (3, "mul", 2), (2, "mul", 2), (2, "add", 3), (3, "mul", 3),
                           (2, "add", 3)]:
        out = mapped(x, n, mode)
        np.testing.assert_array_equal(out, x * n if mode == "mul" else x + n)
        assert mapped.trace_count == count
    mapped(x[:4], 2)  # another number of devices: a new shape, the same program
    assert mapped.trace_count == 4
    assert mapped.cache_info()[:4] == (4, 4, 8192, 3)
    assert str(mapped.retraces[0]) == "scale was traced again (trace #2) because n: 2 -> 3"


def test_max_traces_raises_with_the_explanation() -> None:
    def scale(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    mapped = js.pmap(scale, max_traces=1, devices=DEVICES)
    mapped(jnp.ones(N), 2)
    with pytest.raises(js.RetraceError, match=r"^scale needs trace #2, because n: 2 -> 3, but max_traces=1 allows at "
                                              r"most 1 trace\."):
        mapped(jnp.ones(N), 3)
    assert mapped.trace_count == 1


def test_collectives_see_the_axis_name() -> None:
    def normalize(x: jax.Array, eps: Static[float]) -> jax.Array:
        return x / (jax.lax.psum(x, "i") + eps)

    x = jnp.arange(N, dtype=jnp.float32)
    out = js.pmap(normalize, "i", devices=DEVICES)(x, 1.0)
    np.testing.assert_allclose(out, x / (x.sum() + 1.0), rtol=1e-6)


def test_jax_options_pass_through() -> None:
    def add(x: jax.Array, y: jax.Array, n: int) -> jax.Array:
        return x + y * n

    x = jnp.arange(N, dtype=jnp.float32).reshape(N, 1)
    mapped = js.pmap(add, static_broadcasted_argnums=2, out_axes=1, devices=CPUS[:N], donate_argnums=0)
    out = mapped(x, x + 1, 2)
    assert out.shape == (1, N)
    np.testing.assert_array_equal(out[0], np.arange(N) * 3 + 2)
    assert mapped.trace_count == 1
    half = js.pmap(add, axis_size=N // 2, devices=CPUS[: N // 2], static_broadcasted_argnums=range(2, 3))
    assert half(x[: N // 2], x[: N // 2], 1).shape == (N // 2, 1)


def test_bare_decorator_form_wraps_and_keeps_the_signature() -> None:
    @js.pmap(axis_name="i", devices=DEVICES)
    def step(x: jax.Array, n: Static[int] = 2) -> jax.Array:
        """Scale x."""
        return jax.lax.psum(x, "i") * n

    assert isinstance(step, js.PmapFunction)
    assert step.__doc__ == "Scale x." and step.__name__ == "step"
    assert str(step.__signature__) == "(x: 'jax.Array', n: 'Static[int]' = 2) -> 'jax.Array'"
    assert repr(step) == "<jaxstatic.pmap of step>"
    np.testing.assert_array_equal(step(jnp.ones(N)), np.full(N, 2.0 * N))


def test_disable_jit_keeps_mapping_over_devices_as_jax_pmap_does() -> None:
    """jax.disable_jit() turns off compilation, not the mapping: shapes and collectives stay those of jax.pmap."""

    def share(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n / jax.lax.psum(x.sum(), "i")

    x = jnp.arange(N * 2, dtype=jnp.float32).reshape(N, 2) + 1
    mapped = js.pmap(share, "i", devices=DEVICES)
    want = jax.pmap(share, "i", static_broadcasted_argnums=1, devices=DEVICES)(x, 2)
    with jax.disable_jit():
        assert jax.pmap(share, "i", static_broadcasted_argnums=1, devices=DEVICES)(x, 2).shape == (N, 2)
        out = mapped(x, 2)
    assert out.shape == (N, 2)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    np.testing.assert_allclose(mapped(x, 2), want, rtol=1e-6)


class _Token:
    def __call__(self, x: jax.Array) -> jax.Array:
        return x * 2.0


def _applied(x: jax.Array, act: Static[Any]) -> jax.Array:
    return act(x)


@pytest.mark.parametrize("release", ["clear_cache", "del"])
def test_clear_cache_and_dropping_release_static_values(release: str) -> None:
    """JAX's own pmap caches never hold a static value: jaxstatic's cache alone keeps it, and lets it go."""
    mapped = js.pmap(_applied, devices=DEVICES)
    token = _Token()
    ref = weakref.ref(token)
    x = jnp.arange(N, dtype=jnp.float32)
    np.testing.assert_array_equal(mapped(x, token), x * 2.0)
    np.testing.assert_array_equal(mapped(x, _Token()), x * 2.0)  # an unequal token: a second program
    del token
    gc.collect()
    assert ref() is not None  # held while its program is cached
    if release == "clear_cache":
        mapped.clear_cache()
        assert mapped.cache_info().currsize == 0
    else:
        del mapped
    gc.collect()
    assert ref() is None


def _scaled(x: jax.Array, k: float) -> jax.Array:
    return x * k


def test_a_partial_maps_as_with_jax_pmap() -> None:
    x = jnp.arange(N * 3, dtype=jnp.float32).reshape(N, 3)
    scaled = functools.partial(_scaled, k=2.0)
    np.testing.assert_array_equal(js.pmap(scaled, devices=DEVICES)(x), jax.pmap(scaled, devices=DEVICES)(x))


def test_lower_compiles_the_program_calls_use_and_refuses_other_statics() -> None:
    x = jnp.arange(N * 3, dtype=jnp.float32).reshape(N, 3)
    mapped = js.pmap(_scaled, static_broadcasted_argnums=1, devices=DEVICES)
    want = jax.pmap(_scaled, static_broadcasted_argnums=1, devices=DEVICES).lower(x, 3.0).compile()(x)
    compiled = mapped.lower(x, 3.0).compile()
    np.testing.assert_array_equal(compiled(x, 3.0), want)
    np.testing.assert_array_equal(mapped(x, 3.0), want)
    traces: list[None] = []

    def counting(x: jax.Array, k: float) -> jax.Array:
        traces.append(None)
        return _scaled(x, k)

    plain = jax.pmap(counting, static_broadcasted_argnums=1, devices=DEVICES)
    plain.lower(x, 3.0).compile()
    plain(x, 3.0)
    assert mapped.trace_count == len(traces)  # the call uses lower()'s program, tracing again where jax.pmap does
    with pytest.raises(js.StaticMismatchError, match=r"^_scaled\(\) was compiled ahead of time for other static "
                                                     r"arguments: k: 3\.0 -> 4\.0\. "):
        compiled(x, 4.0)


def test_lower_of_a_function_taking_args_calls_the_compiled_program_with_them_unpacked() -> None:
    def total(x: jax.Array, *rest: jax.Array, scale: Static[float]) -> jax.Array:
        return (x + sum(rest)) * scale

    x = jnp.ones((N, 3))
    compiled = js.pmap(total, devices=DEVICES).lower(x, x, x, scale=2.0).compile()
    np.testing.assert_array_equal(compiled(x, x, x, scale=2.0), np.full((N, 3), 6.0))
