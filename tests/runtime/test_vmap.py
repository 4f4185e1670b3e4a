"""js.vmap: Static parameters are never mapped and may hold any static value; in_axes by parameter; compositions
with js.jit in any order trace once per distinct static value."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxstatic as js
from jaxstatic import Static

from ._fresh import fresh

XS = jnp.arange(12.0).reshape(4, 3)


def _close(a: Any, b: Any) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def scaled(x: jax.Array, n: Static[int]) -> jax.Array:
    return x.sum() * n


def activated(x: jax.Array, act: Static[Callable[[jax.Array], jax.Array]]) -> jax.Array:
    return act(x).sum()


def configured(x: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
    return cfg["act"](x).sum() * cfg["scale"]


def test_static_int_is_not_mapped() -> None:
    ours = js.vmap(scaled)
    _close(ours(XS, 3), jax.vmap(functools.partial(scaled, n=3))(XS))
    _close(ours(XS, n=3), jax.vmap(scaled, in_axes=(0, None))(XS, 3))


def test_static_callable_is_not_mapped() -> None:
    ours = js.vmap(activated)
    _close(ours(XS, jnp.tanh), jax.vmap(functools.partial(activated, act=jnp.tanh))(XS))
    _close(ours(XS, jnp.sin), jax.vmap(functools.partial(activated, act=jnp.sin))(XS))
    assert ours.cache_info().misses == 2


def test_static_dict_config_with_a_function_inside() -> None:
    ours = js.vmap(configured)
    cfg = {"act": jnp.sin, "scale": 2.0}
    _close(ours(XS, cfg), jax.vmap(functools.partial(configured, cfg=cfg))(XS))
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        jax.jit(jax.vmap(configured, in_axes=(0, None)), static_argnames=("cfg",))(XS, cfg)


def test_equal_static_values_reuse_the_program_outside_a_jit(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[Any] = []
    real = jax.vmap
    monkeypatch.setattr(jax, "vmap", lambda *a, **k: built.append(a) or real(*a, **k))
    ours = js.vmap(fresh(configured))
    for cfg in ({"act": jnp.sin, "scale": 2.0}, dict(act=jnp.sin, scale=2.0), {"act": jnp.sin, "scale": 2.0}):
        ours(XS, cfg)
    assert len(built) == 1
    ours(XS, {"act": jnp.sin, "scale": 3.0})
    assert len(built) == 2
    assert ours.cache_info() == js.CacheInfo(hits=2, misses=2, maxsize=8192, currsize=2)
    assert ours.trace_count == 0  # counted by a jit in the stack, none here


def test_array_given_to_static_parameter() -> None:
    ours = js.vmap(configured)
    with pytest.raises(js.NonStaticValueError, match=r"^configured\(\): parameter 'cfg' is Static, but "
                                                      r"cfg\['weights'\] is a jax\.Array \(float32\[3\]\)"):
        ours(XS, {"weights": jnp.zeros(3)})


def test_string_given_to_mapped_parameter() -> None:
    with pytest.raises(js.NonArrayArgumentError) as info:
        js.vmap(scaled)("abc", 2)  # type: ignore[arg-type]
    assert str(info.value) == (
        "scaled(): parameter 'x' is not Static, so its value is traced as an array, but x is a str. Mark it "
        "static where it is declared (x: Static[...]), or pass an array."
    )


def mixed(x: jax.Array, n: Static[int], y: jax.Array, *, z: jax.Array) -> jax.Array:
    return x * n + y.sum() + z


def _batch(shape: tuple[int, ...], axis: int | None) -> jax.Array:
    """Four distinct examples of ``shape`` stacked along ``axis``; one example for ``None``."""
    if axis is None:
        return jnp.arange(float(np.prod(shape))).reshape(shape)
    return jnp.moveaxis(jnp.arange(4.0 * np.prod(shape)).reshape(4, *shape), 0, axis)


@pytest.mark.parametrize(("in_axes", "x_axis", "y_axis", "z_axis"), [
    (0, 0, 0, 0),
    (1, 1, 1, 0),  # the int applies to the positional arguments; z, keyword-only, maps over 0, as in jax.vmap
    ((1, None, None), 1, None, 0),  # over all positional parameters, None at the Static one
    ((1, None), 1, None, 0),  # over the dynamic positional parameters only
    ([1, None], 1, None, 0),  # a list, as jax.vmap takes it
    ({"y": None}, 0, None, 0),  # by name; left-out parameters get axis 0
    ({"x": 1, "z": 1, "n": None}, 1, 0, 1),
])
def test_every_in_axes_form(in_axes: Any, x_axis: int, y_axis: int | None, z_axis: int) -> None:
    x, y, z = _batch((3,), x_axis), _batch((6,), y_axis), _batch((3,), z_axis)
    # by hand: z is keyword-only, and jax.vmap maps keyword arguments over axis 0 only, so it is moved there first
    by_hand = jax.vmap(lambda x, y, *, z: mixed(x, 2, y, z=z), in_axes=(x_axis, y_axis))
    expected = by_hand(x, y, z=jnp.moveaxis(z, z_axis, 0))
    ours = js.vmap(mixed, in_axes=in_axes)
    _close(ours(x, 2, y, z=z), expected)
    if isinstance(in_axes, dict):  # a dict names parameters: it holds however they are passed
        _close(ours(x, n=2, y=y, z=z), expected)
    elif not isinstance(in_axes, int):  # a tuple is for the positional arguments, as in jax.vmap
        with pytest.raises(js.OptionError, match="each argument passed by keyword is mapped over its leading axis"):
            ours(x, n=2, y=y, z=z)


def test_a_keyword_argument_maps_over_axis_0_as_in_jax_vmap(hit_path: str) -> None:
    """``jax.vmap``'s ``in_axes`` (an int, ``None`` or a tuple) is for the positional arguments: one passed by keyword
    maps over axis 0, whatever the parameter's entry (``None`` included)."""
    y, z = _batch((6,), 0), _batch((3,), 0)

    def by_hand(x: jax.Array, y: jax.Array, *, z: jax.Array) -> jax.Array:
        return mixed(x, 2, y, z=z)

    for in_axes in (None, 1):
        x = _batch((3,), in_axes)
        ours, plain = js.vmap(mixed, in_axes=in_axes), jax.vmap(by_hand, in_axes=in_axes)
        _close(ours(x, 2, y=y, z=z), plain(x, y=y, z=z))  # y by keyword over axis 0, whatever in_axes says
    x = _batch((3,), None)
    broadcast = js.vmap(mixed, in_axes=(None, None, None))
    _close(broadcast(x, 2, x, z=z), jax.vmap(by_hand, in_axes=(None, None))(x, x, z=z))
    with pytest.raises(ValueError, match="tuple of entries corresponding to the positional arguments"):
        jax.vmap(by_hand, in_axes=(None, None))(x, y=x, z=z)
    with pytest.raises(js.OptionError, match="^" + re.escape(
            "jaxstatic: in_axes of mixed gives 'y' the entry None by position, but this call passes 'y' by keyword. "
            "As in jax.vmap, a tuple in_axes is for the arguments passed positionally, and each argument passed by "
            "keyword is mapped over its leading axis. Pass 'y' positionally, or give in_axes as a dict by parameter "
            "name, which holds however an argument is passed.") + "$"):
        broadcast(x, 2, y=x, z=z)


def test_under_jit_a_keyword_argument_maps_as_it_does_alone(hit_path: str) -> None:
    """``js.jit(js.vmap(f))`` passes a keyword argument on by keyword, as ``jax.jit(jax.vmap(f))`` does: its axis is
    the one ``js.vmap`` gives it alone, and the keyword call is a program of its own."""

    def shift(x: jax.Array, y: jax.Array) -> jax.Array:
        return x + y

    x, y = jnp.arange(8.0).reshape(2, 4), jnp.arange(8.0).reshape(4, 2)
    ours, plain = js.jit(js.vmap(shift, in_axes=1)), jax.jit(jax.vmap(shift, in_axes=1))
    _close(ours(x, x), plain(x, x))
    _close(ours(x, y=y), plain(x, y=y))  # y by keyword: over axis 0
    _close(ours(x, y=y), js.vmap(shift, in_axes=1)(x, y=y))
    assert ours.trace_count == 2
    assert str(ours.retraces[0]) == ("shift was traced again (trace #2) because y: float32[2,4] -> float32[4,2]; y, "
                                     "passed by: 'position' -> 'keyword'")
    with pytest.raises(js.OptionError, match="each argument passed by keyword is mapped over its leading axis"):
        js.jit(js.vmap(shift, in_axes=(1, 0)))(x, y=y)

    def scaled(x: jax.Array, y: jax.Array, n: Static[int], z: float = 1.0) -> jax.Array:
        return (x + y) * n + z

    def by_hand(x: jax.Array, y: jax.Array, z: float = 1.0) -> jax.Array:
        return scaled(x, y, 2, z)

    ours, plain = js.jit(js.vmap(scaled, in_axes=1)), jax.jit(jax.vmap(by_hand, in_axes=1))
    _close(ours(x, x, 2), plain(x, x))  # z left out, as the call left it: not mapped
    _close(ours(x, y=y, n=2), plain(x, y=y))
    _close(ours(x, n=2, y=y, z=jnp.ones(4)), plain(x, y=y, z=jnp.ones(4)))


def test_pytree_entries_are_prefixes_passed_to_jax() -> None:
    def f(p: dict[str, jax.Array], act: Static[Callable[[jax.Array], jax.Array]]) -> jax.Array:
        return act(p["w"]).sum() + p["b"]

    p = {"w": XS, "b": jnp.float32(1.0)}
    expected = jax.vmap(functools.partial(f, act=jnp.sin), in_axes=({"w": 0, "b": None},))(p)
    _close(js.vmap(f, in_axes=({"w": 0, "b": None}, None))(p, jnp.sin), expected)
    _close(js.vmap(f, in_axes={"p": {"w": 0, "b": None}})(p, jnp.sin), expected)


def test_variadic_extras_by_name() -> None:
    def f(x: jax.Array, *rest: jax.Array, k: Static[int] = 1, **named: jax.Array) -> jax.Array:
        return (x + sum(r.sum() for r in rest) + sum(v.sum() for v in named.values())) * k

    x, a, b = jnp.arange(4.0), jnp.ones((3, 4)), jnp.ones(3)

    def plain(x: jax.Array, a: jax.Array, b: jax.Array, c: jax.Array) -> jax.Array:
        return f(x, a, b, k=2, c=c)

    expected = jax.vmap(plain, in_axes=(0, 1, None, 1))(x, a, b, a)
    ours = js.vmap(f, in_axes={"rest": (1, None), "named": {"c": 1}})
    _close(ours(x, a, b, k=2, c=a), expected)
    # an int is for the positional arguments: the **named extra c maps over axis 0, as in jax.vmap
    _close(js.vmap(f, in_axes=1)(a, a, k=2, c=a.T), jax.vmap(functools.partial(f, k=2), in_axes=1)(a, a, c=a.T))
    with pytest.raises(js.OptionError, match=r"^jaxstatic: in_axes of f gives \*rest 2 axes, but this call passes 1 "
                                             r"extra positional argument\(s\)\. Give \*rest one axis per extra"):
        ours(x, a, k=2)


def _misuse_cases() -> list[tuple[Any, str]]:
    return [
        ((0, 0, 0), r"^jaxstatic: in_axes of mixed maps 'n' over axis 0, but 'n' is Static, so it is never mapped\. "
                    r"Give 'n' None \(or leave it out of a dict\), or make it dynamic\.$"),
        ({"n": 1}, r"in_axes of mixed maps 'n' over axis 1, but 'n' is Static"),
        ((0,), r"^jaxstatic: in_axes of mixed has 1 entries, but mixed has 2 non-static positional parameter\(s\) "
               r"\['x', 'y'\]\. Give one entry per parameter in \['x', 'y'\], or a dict by name\.$"),
        ({"w": 0}, r"in_axes of mixed names 'w', which is not a parameter of mixed\(x, n, y, \*, z\)"),
        ({"yy": 0}, r"names 'yy', .* \(did you mean 'y'\?\)"),
        ("0", r"^jaxstatic: in_axes of mixed is '0' \(a str\)\. Give an int, None, a tuple"),
        ((0, None, "1"), r"^jaxstatic: in_axes of mixed gives 'y' the axes '1', and '1' \(a str\) is not an axis\. "),
        ({"x": {"a": 1.0}}, r"gives 'x' the axes \{'a': 1\.0\}, and 1\.0 \(a float\) is not an axis"),
    ]


@pytest.mark.parametrize(("in_axes", "message"), _misuse_cases())
def test_in_axes_misuse_fails_at_decoration(in_axes: Any, message: str) -> None:
    with pytest.raises(js.OptionError, match=message):
        js.vmap(mixed, in_axes=in_axes)


def test_jit_of_vmap_traces_once_per_static_value() -> None:
    cfg = {"act": jnp.sin, "scale": 2.0}
    ours = js.jit(js.vmap(configured))
    for c in (cfg, {"act": jnp.sin, "scale": 2.0}, cfg):
        _close(ours(XS, c), jax.vmap(functools.partial(configured, cfg=cfg))(XS))
    assert ours.trace_count == 1
    ours(XS, {"act": jnp.sin, "scale": 3.0})
    assert ours.trace_count == 2
    assert str(ours.retraces[-1]) == "configured was traced again (trace #2) because cfg['scale']: 2.0 -> 3.0"
    plain = jax.jit(jax.vmap(scaled, in_axes=(0, None)), static_argnames=("n",))
    _close(js.jit(js.vmap(scaled))(XS, 3), plain(XS, 3))


def test_vmap_of_jit_traces_once_per_static_value() -> None:
    inner = js.jit(configured)
    ours = js.vmap(inner)
    cfg = {"act": jnp.tanh, "scale": 0.5}
    for _ in range(3):
        _close(ours(XS, dict(cfg)), jax.vmap(functools.partial(configured, cfg=cfg))(XS))
    assert inner.trace_count == 1
    ours(XS, {"act": jnp.tanh, "scale": 1.5})
    assert inner.trace_count == 2


def test_vmap_of_vmap_keeps_statics_static_all_the_way_down() -> None:
    def pair(x: jax.Array, y: jax.Array, op: Static[str]) -> jax.Array:
        return {"add": jnp.add, "mul": jnp.multiply}[op](x, y)

    outer = js.vmap(js.vmap(pair, in_axes=(None, 0)), in_axes=(0, None))
    x, y = jnp.arange(3.0), jnp.arange(4.0)
    _close(outer(x, y, "mul"), jnp.outer(x, y))
    jitted = js.jit(outer)
    for op in ("add", "add", "mul", "add"):
        jitted(x, y, op)
    assert jitted.trace_count == 2
    _close(jitted(x, y, "add"), x[:, None] + y[None, :])


def test_keeps_the_signature_and_wrapped_function() -> None:
    ours = js.vmap(configured)
    assert ours.__wrapped__ is configured
    assert inspect.signature(ours) == inspect.signature(configured)
    assert ours.__name__ == "configured"
    assert repr(ours) == "<jaxstatic.vmap of configured>"
    assert js.static_argnames(ours) == ("cfg",)


def test_bare_decorator_with_options_and_axis_name() -> None:
    @js.vmap(in_axes=(0, None), axis_name="batch")
    def centred(x: jax.Array, how: Static[str]) -> jax.Array:
        assert how == "mean"
        return x - jax.lax.pmean(x, "batch")

    _close(centred(XS, "mean"), XS - XS.mean(axis=0))


class Scale:
    def __init__(self, k: float) -> None:
        self.k = k

    @js.vmap
    def apply(self: Static[Scale], x: jax.Array) -> jax.Array:
        return x * self.k


def test_static_self_in_a_method() -> None:
    _close(Scale(2.0).apply(XS), XS * 2.0)
    _close(js.jit(Scale.apply)(Scale(3.0), XS), XS * 3.0)


def test_disable_jit_still_maps() -> None:
    ours = js.vmap(scaled)
    with jax.disable_jit():
        _close(ours(XS, 2), XS.sum(axis=1) * 2)
        _close(js.jit(ours)(XS, 2), XS.sum(axis=1) * 2)


def test_out_axes_and_axis_size_pass_through() -> None:
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return jnp.full(2, n, dtype=jnp.float32)

    assert js.vmap(f, in_axes=None, axis_size=3, out_axes=1)(jnp.ones(1), 5).shape == (2, 3)


@pytest.mark.parametrize(("out_axes", "bad"), [("a", "'a' (a str)"), ((0, 1.5), "1.5 (a float)")])
def test_out_axes_that_is_no_axis_is_refused_when_applied_as_jax_vmap_does(out_axes: Any, bad: str) -> None:
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    with pytest.raises(TypeError):
        jax.vmap(f, out_axes=out_axes)
    with pytest.raises(js.OptionError, match=re.escape(
            f"jaxstatic: out_axes of f is {out_axes!r}, and {bad} is not an axis. Give an int, None, or a tree of "
            "those matching the output.")):
        js.vmap(f, out_axes=out_axes)
    assert js.vmap(f, out_axes=(0, None, {"a": 1}))  # ints, None and trees of them are axes


def test_a_tuple_over_args_gives_entry_i_to_argument_i() -> None:
    """As ``jax.vmap``: a tuple ``in_axes`` counts every positional argument, ``*args`` extras included."""
    xs, y = jnp.arange(6.0).reshape(3, 2), jnp.ones(2)
    ours = js.vmap(lambda *a: sum(a), in_axes=(0, None))
    np.testing.assert_array_equal(ours(xs, y), jax.vmap(lambda *a: sum(a), in_axes=(0, None))(xs, y))
    with pytest.raises(js.OptionError, match=r"gives \*a 2 axes, but this call passes 3 extra positional"):
        ours(xs, y, y)
