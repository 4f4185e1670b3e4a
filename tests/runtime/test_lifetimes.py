"""What a transformed function keeps, and for how long: generated source, wrappers rebuilt around long-lived
objects, and functions whose code is replaced while they live (a debugger, autoreload)."""

from __future__ import annotations

import gc
import linecache

import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static
from jaxstatic._traceback import GENERATED


def _generated() -> set[str]:
    return {name for name in linecache.cache if name.startswith(GENERATED)}


def _fresh() -> js.JitFunction[..., jax.Array]:
    def step(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    return js.jit(step)


def test_generated_source_goes_with_the_functions_made_once(hit_path: str) -> None:
    x = jnp.ones(2)
    _fresh()(x, 2)
    gc.collect()
    before = _generated()
    for _ in range(20):
        assert float(_fresh()(x, 3)[0]) == 3.0
        assert float(_fresh()(x, n=4)[0]) == 4.0  # another call shape: another dispatcher
    gc.collect()
    assert _generated() <= before


def test_clearing_the_cache_again_and_again_keeps_no_source_behind(hit_path: str) -> None:
    f = _fresh()
    x = jnp.ones(2)
    f(x, 2)
    gc.collect()
    before = len(_generated())
    for n in range(20):
        f.clear_cache()
        assert float(f(x, n)[0]) == n
    gc.collect()
    assert len(_generated()) <= before


def test_the_source_of_a_live_function_stays_readable(hit_path: str) -> None:
    @js.jit
    def f(x: jax.Array, scale: Static[float]) -> jax.Array:
        return x * scale

    f(jnp.ones(2), 2.5)  # a float static: the general path's dispatcher
    f(jnp.ones(2), 0.5)
    gc.collect()
    lines = [line for name in _generated() for line in linecache.getlines(name)]
    assert any("begin(key, args, kwargs)" in line for line in lines)
    assert f.trace_count == 2


@pytest.mark.parametrize(
    "spellings",
    [
        [{"static_argnums": 1}, {"static_argnums": (1,)}, {"static_argnums": [1]}],
        [{"static_argnames": "n"}, {"static_argnames": ("n",)}, {"static_argnames": ["n"]}],
        [{"static_argnames": "n", "keep_unused": True}, {"keep_unused": True, "static_argnames": ("n",)}],
        [{"donate_argnums": 0, "static_argnums": None}, {"donate_argnums": (0,)}],
    ],
)
def test_equal_options_spelled_differently_are_one_function(spellings: list[dict[str, object]]) -> None:
    traced = []

    def f(x: jax.Array, n: int) -> jax.Array:
        traced.append(n)
        return x * n

    made = [js.jit(f, **options) for options in spellings]
    for g in made:
        g(jnp.ones(2), 3)
    assert all(g is made[0] for g in made)
    assert len(traced) == 1


def test_options_that_differ_are_still_two_functions() -> None:
    def f(x: jax.Array, n: int) -> jax.Array:
        return x * n

    assert js.jit(f, static_argnums=1) is not js.jit(f, static_argnums=(0, 1))
    assert js.jit(f, static_argnums=1) is not js.jit(f, static_argnums=1, keep_unused=True)
    assert js.jit(f, static_argnums=1) is not js.jit(f, static_argnames="n")


@pytest.mark.parametrize("scale", [2, 2.5], ids=["exact-key lane", "general path"])
def test_calls_under_disable_jit_are_no_hits(hit_path: str, scale: float) -> None:
    @js.jit
    def f(x: jax.Array, s: Static[float]) -> jax.Array:
        return x * s

    x = jnp.ones(2)
    f(x, scale)
    f(x, scale)
    with jax.disable_jit():
        for _ in range(3):
            assert float(f(x, scale)[0]) == scale
        assert float(f(x, 7.5)[0]) == 7.5  # a key never traced: run as Python, nothing kept
    f(x, scale)
    info = f.cache_info()
    assert (info.hits, info.misses, info.currsize) == (2, 1, 1)


def test_a_function_whose_code_is_replaced_gets_its_new_signature(hit_path: str) -> None:
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    def edited(x: jax.Array, n: Static[int], m: Static[int]) -> jax.Array:
        return x * n + m

    x = jnp.ones(2)
    assert float(js.jit(f)(x, 2)[0]) == 2.0
    f.__code__ = edited.__code__  # what a debugger or autoreload does
    f.__annotations__ = edited.__annotations__
    assert float(js.jit(f)(x, 2, 3)[0]) == 5.0
    assert js.jit(f) is js.jit(f)  # made once again, then shared


def test_replaced_defaults_and_annotations_take_effect(hit_path: str) -> None:
    def f(x: jax.Array, n: Static[int] = 2) -> jax.Array:
        return x * n

    x = jnp.ones(2)
    assert float(js.jit(f)(x)[0]) == 2.0
    f.__defaults__ = (5,)
    assert float(js.jit(f)(x)[0]) == 5.0

    def g(x: jax.Array, n: int) -> jax.Array:
        return x[:n]

    with pytest.raises(IndexError):  # n traced: a dynamic parameter
        js.jit(g)(jnp.arange(4.0), 2)
    g.__annotations__ = {"n": Static[int]}
    assert js.jit(g)(jnp.arange(4.0), 2).shape == (2,)


def test_old_and_new_function_sharing_one_dict_trace_once_each(hit_path: str) -> None:
    traced: list[str] = []

    def old(x: jax.Array, n: Static[int]) -> jax.Array:
        traced.append("old")
        return x * n

    def new(x: jax.Array, n: Static[int]) -> jax.Array:
        traced.append("new")
        return x * n + 1

    js.jit(old)(jnp.ones(2), 2)
    # IPython's autoreload: the old function takes the new one's code and its very __dict__
    old.__code__ = new.__code__
    old.__dict__ = new.__dict__
    for _ in range(4):
        assert float(js.jit(old)(jnp.ones(2), 2)[0]) == 3.0
        assert float(js.jit(new)(jnp.ones(2), 2)[0]) == 3.0
    assert traced == ["old", "new", "new"]


def test_jit_rebuilt_over_one_custom_vjp_traces_once(hit_path: str) -> None:
    traced = []

    @js.custom_vjp
    def clip(x: jax.Array, bound: Static[float]) -> jax.Array:
        traced.append(bound)
        return jnp.clip(x, -bound, bound)

    clip.defvjp(lambda x, bound: (clip(x, bound), None), lambda bound, _, g: (g,))
    for _ in range(3):
        assert float(js.jit(clip)(jnp.full(2, 3.0), 1.5)[0]) == 1.5
    assert traced == [1.5]


class _Scale:
    def __init__(self, factor: float) -> None:
        self.factor = factor

    def __call__(self, x: jax.Array, n: Static[int]) -> jax.Array:
        return x * self.factor * n


def test_jit_rebuilt_over_a_callable_instance_traces_once(hit_path: str) -> None:
    scale = _Scale(2.0)
    for _ in range(3):
        assert float(js.jit(scale)(jnp.ones(2), 3)[0]) == 6.0
    assert js.jit(scale).trace_count == 1
    other = _Scale(5.0)  # its own programs
    assert float(js.jit(other)(jnp.ones(2), 3)[0]) == 15.0
    assert js.jit(other).trace_count == 1


def test_an_instance_jitted_once_is_released_with_its_function() -> None:
    import weakref

    scale = _Scale(2.0)
    js.jit(scale)(jnp.ones(2), 3)
    ref = weakref.ref(scale)
    del scale
    gc.collect()
    assert ref() is None


def test_a_pytree_module_is_left_as_it_was() -> None:
    import equinox as eqx

    class Model(eqx.Module):
        weight: jax.Array

        def __call__(self, x: jax.Array) -> jax.Array:
            return self.weight * x

    model = Model(jnp.ones(2))
    js.jit(model)(jnp.ones(2))
    assert list(vars(model)) == ["weight"]  # its library reads it attribute by attribute


class _Slotted:
    __slots__ = ("factor",)

    def __init__(self, factor: float) -> None:
        self.factor = factor

    def __call__(self, x: jax.Array) -> jax.Array:
        return x * self.factor

    def step(self, x: jax.Array) -> jax.Array:
        return x * self.factor


def test_what_is_made_anew_on_every_rebuild_leaves_nothing_behind(hit_path: str) -> None:
    """Documented: a bound method made per call, and an instance without a __dict__, give a new function each time
    (jit them once and keep it); what each leaves behind goes with it."""
    model = _Slotted(2.0)
    js.jit(model.step)(jnp.ones(2))
    gc.collect()
    before = _generated()
    made = [js.jit(model.step), js.jit(model.step), js.jit(model), js.jit(model)]
    assert made[0] is not made[1] and made[2] is not made[3]
    for f in made:
        assert float(f(jnp.ones(2))[0]) == 2.0
    del made, f
    gc.collect()
    assert _generated() <= before


def test_replaced_annotations_are_the_ones_values_are_checked_against() -> None:
    import warnings

    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * len(str(n))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        js.jit(f)(jnp.ones(2), 2)
    f.__annotations__ = {"x": jax.Array, "n": Static[str]}
    with pytest.warns(js.StaticTypeWarning, match=r"parameter 'n' is declared Static\[str\], but got 3"):
        js.jit(f)(jnp.ones(2), 3)


def test_an_instance_jitted_before_is_copied_and_pickled_without_its_programs() -> None:
    import copy
    import pickle

    scale = _Scale(2.0)
    f = js.jit(scale)
    f(jnp.ones(2), 3)
    for other in (copy.copy(scale), copy.deepcopy(scale), pickle.loads(pickle.dumps(scale))):
        g = js.jit(other)
        assert g is not f
        assert float(g(jnp.ones(2), 3)[0]) == 6.0
        assert g.trace_count == 1
    assert f.trace_count == 1
