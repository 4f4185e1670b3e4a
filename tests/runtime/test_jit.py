from __future__ import annotations

import functools
import gc
import inspect
import logging
import pydoc
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Annotated, Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from jax.flatten_util import ravel_pytree

import jaxstatic as js
from jaxstatic import Static

from ._devices import CPUS
from ._release import Token, held_until_cleared


def test_config_dict_with_functions_is_static() -> None:
    """The seed case: plain jax.jit rejects this dict; jaxstatic freezes it."""
    elements = {"A": jnp.arange(3.0), "B": jnp.arange(4.0)}
    vals, unravel = ravel_pytree(elements)
    seen: list[Any] = []

    @js.jit
    def f(vals: jax.Array, config: Static[dict[str, Any]]) -> jax.Array:
        seen.append(config)
        return config["fn"](vals)["B"].sum() * config["scale"]

    config = {"fn": unravel, "scale": 2.0}
    assert float(f(vals, config)) == 12.0
    assert seen[0] is config  # the function receives the caller's own object
    assert float(f(vals, {"fn": unravel, "scale": 2.0})) == 12.0  # an equal dict, in the same order
    assert f.trace_count == 1
    assert float(f(vals, {"fn": unravel, "scale": 3.0})) == 18.0
    assert f.trace_count == 2
    assert str(f.retraces[-1]) == "f was traced again (trace #2) because config['scale']: 2.0 -> 3.0"
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        jax.jit(f.__wrapped__, static_argnames=("config",))(vals, config)


def test_defaults_positional_and_keyword_share_one_trace() -> None:
    @js.jit
    def f(x: jax.Array, n: Static[int] = 2) -> jax.Array:
        return x * n

    x = jnp.ones(2)
    assert [f(x).tolist(), f(x, 2).tolist(), f(x, n=2).tolist()] == [[2.0, 2.0]] * 3
    assert f.trace_count == 1
    assert f.cache_info()[:2] == (2, 1)


@pytest.mark.parametrize("wrap", [lambda v: v, lambda v: {"k": [v]}, lambda v: (v, 2)])
def test_equal_values_of_other_types_never_share_a_trace(wrap: Callable[[Any], Any]) -> None:
    @js.jit
    def f(x: jax.Array, n: Static[Any]) -> jax.Array:
        return x + 1

    for v in (1, 1.0, True, 1):
        f(jnp.ones(1), wrap(v))
    assert f.trace_count == 3


def test_container_changed_in_place_is_refrozen() -> None:
    @js.jit
    def f(x: jax.Array, cfg: Static[dict[str, float]]) -> jax.Array:
        return x * cfg["lr"]

    cfg = {"lr": 1.0}
    assert f(jnp.ones(1), cfg).tolist() == [1.0]
    assert f(jnp.ones(1), cfg).tolist() == [1.0]  # remembered by identity
    cfg["lr"] = 5.0
    assert f(jnp.ones(1), cfg).tolist() == [5.0]
    cfg["lr"] = 5  # equal, but another type: another program
    assert f(jnp.ones(1), cfg).dtype == jnp.float32
    assert f.trace_count == 3
    assert str(f.retraces[-1]).endswith("cfg['lr']: 5.0 (float) -> 5 (int)")
    layers = [1, 2]
    g = js.jit(lambda x, sizes: x * sum(sizes), static_argnames=("sizes",))
    assert g(jnp.ones(1), layers).tolist() == [3.0]
    layers.append(3)
    assert g(jnp.ones(1), layers).tolist() == [6.0]


def test_long_tuple_static_and_its_identity_memo() -> None:
    @js.jit
    def f(x: jax.Array, sizes: Static[tuple[Any, ...]]) -> jax.Array:
        return x * len(sizes) + (sum(sizes[-1]) if isinstance(sizes[-1], list) else sizes[-1])

    sizes = tuple(range(1000))
    assert f(jnp.ones(1), sizes).tolist() == [1999.0]
    assert f(jnp.ones(1), sizes).tolist() == [1999.0]
    assert f(jnp.ones(1), tuple(range(1000))).tolist() == [1999.0]
    assert f.trace_count == 1
    with_list = (*range(20), [1])
    assert f(jnp.ones(1), with_list).tolist() == [22.0]
    with_list[-1].append(7)  # a tuple holding a list is never remembered by identity
    assert f(jnp.ones(1), with_list).tolist() == [29.0]


def test_a_config_changed_in_place_is_never_served_a_stale_program() -> None:
    """The same dict or list object, passed again after a change: equal values of other types (1, 1.0, True),
    -0.0 for 0.0, a renamed key and an appended item each get their own program; changing it back reuses one."""
    @js.jit
    def f(x: jax.Array, cfg: Static[dict[str, Any]], sizes: Static[list[Any]]) -> jax.Array:
        scale = next(iter(cfg.values()))
        kind = {int: 1.0, float: 2.0, bool: 3.0}[type(scale)]
        return x * jnp.copysign(1.0, scale) * kind + (10.0 if "b" in cfg else 0.0) + sum(sizes)

    cfg: dict[str, Any] = {"a": 1}
    sizes: list[Any] = [1]
    assert f(jnp.ones(1), cfg, sizes).tolist() == [2.0]
    cfg["a"] = 1.0
    assert f(jnp.ones(1), cfg, sizes).tolist() == [3.0]
    cfg["a"] = True
    assert f(jnp.ones(1), cfg, sizes).tolist() == [4.0]
    cfg["a"] = 0.0
    assert f(jnp.ones(1), cfg, sizes).tolist() == [3.0]
    cfg["a"] = -0.0
    assert f(jnp.ones(1), cfg, sizes).tolist() == [-1.0]
    del cfg["a"]
    cfg["b"] = -0.0  # the same value under another name
    assert f(jnp.ones(1), cfg, sizes).tolist() == [9.0]
    sizes.append(1.0)
    assert f(jnp.ones(1), cfg, sizes).tolist() == [10.0]
    sizes[1] = True  # == 1.0, another key
    assert f(jnp.ones(1), cfg, sizes).tolist() == [10.0]
    assert f.trace_count == 8
    cfg.clear()
    cfg["a"] = 1
    sizes[:] = [1]
    assert f(jnp.ones(1), cfg, sizes).tolist() == [2.0]  # as at first: that program again
    assert f.trace_count == 8


class Model:
    def __init__(self, k: int) -> None:
        self.k = k

    def __hash__(self) -> int:
        return hash(self.k)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Model) and other.k == self.k

    def __repr__(self) -> str:
        return f"Model({self.k})"

    @js.jit
    def apply(self: Static[Model], x: jax.Array, *, power: Static[int] = 1) -> jax.Array:
        return (x * self.k) ** power


def test_methods_bind_like_functions() -> None:
    assert Model(3).apply(jnp.ones(1)).tolist() == [3.0]
    assert Model(3).apply(jnp.ones(1), power=2).tolist() == [9.0]
    assert Model(4).apply(jnp.ones(1)).tolist() == [4.0]
    assert Model.apply.trace_count == 3
    assert str(Model.apply.retraces[-1]) == "Model.apply was traced again (trace #3) because self.k: 3 -> 4"


def test_variadic_static_parameters() -> None:
    @js.jit
    def f(x: jax.Array, *fns: Static[Callable[[Any], Any]], **opts: Static[float]) -> jax.Array:
        for fn in fns:
            x = fn(x)
        return x * opts.get("scale", 1.0)

    x = jnp.ones(2)
    assert f(x, jnp.sin, jnp.cos, scale=2.0).tolist() == pytest.approx([2 * np.cos(np.sin(1.0))] * 2)
    f(x, jnp.sin, jnp.cos, scale=2.0)
    assert f.trace_count == 1
    f(x, jnp.sin)
    assert f.trace_count == 2


def test_dynamic_variadics_and_keyword_only() -> None:
    @js.jit
    def f(x: jax.Array, *rest: jax.Array, scale: Static[float] = 1.0, **named: jax.Array) -> jax.Array:
        return (x + sum(rest) + sum(named.values())) * scale

    x = jnp.ones(1)
    assert f(x, x, x, scale=2.0, a=x).tolist() == [8.0]
    assert f(x).tolist() == [1.0]


def test_array_given_to_static_parameter() -> None:
    @js.jit
    def step(params: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        return params

    with pytest.raises(js.NonStaticValueError, match=r"^step\(\): parameter 'cfg' is Static, but cfg\['weights'\] "
                                                      r"is a jax\.Array \(float32\[3\]\)"):
        step(jnp.ones(1), {"weights": jnp.zeros(3), "lr": 0.1})


def _relu(x: jax.Array) -> jax.Array:
    return jnp.maximum(x, 0)


def test_non_array_given_to_dynamic_parameter_suggests_static() -> None:
    @js.jit
    def step(x: jax.Array, activation: Callable[[Any], Any]) -> jax.Array:
        return activation(x)

    with pytest.raises(js.NonArrayArgumentError) as info:
        step(jnp.ones(1), _relu)
    assert str(info.value) == (
        "step(): parameter 'activation' is not Static, so its value is traced as an array, but activation is a "
        "function. Mark it static where it is declared (activation: Static[...]), or pass an array."
    )
    with pytest.raises(js.NonArrayArgumentError, match=r"but activation\['mode'\] is a str\. "):
        step(jnp.ones(1), {"mode": "x"})  # type: ignore[arg-type]


@pytest.mark.parametrize(("fn", "found"), [(jnp.tanh, "a function (tanh, a "), (len, "a function (len, a "),
                                           (np.sin, "a function (sin, a numpy.ufunc)")])
def test_a_library_function_given_to_dynamic_parameter_is_named_as_a_function(fn: Any, found: str) -> None:
    @js.jit
    def step(x: jax.Array, activation: Callable[[Any], Any]) -> jax.Array:
        return activation(x)

    with pytest.raises(js.NonArrayArgumentError) as info:
        step(jnp.ones(1), fn)
    assert f"but activation is {found}" in str(info.value)
    assert str(info.value).endswith("Mark it static where it is declared (activation: Static[...]), or pass an array.")


@pytest.mark.parametrize(("dtype", "name"), [(jnp.int32, "jax.numpy.int32"), (np.float32, "numpy.float32")])
def test_dtype_class_given_to_dynamic_parameter_suggests_static(dtype: Any, name: str) -> None:
    @js.jit
    def cast(x: jax.Array, dtype: Any) -> jax.Array:
        return x * dtype  # meant as x.astype(dtype), which needs dtype: Static[Any]

    expected = (f"cast(): parameter 'dtype' is not Static, so its value is traced as an array, but dtype is the "
                f"class {name}. Mark it static where it is declared (dtype: Static[...]), or pass an array.")
    with pytest.raises(js.NonArrayArgumentError) as info:
        cast(jnp.ones(2), dtype)  # on the first call
    assert str(info.value) == expected
    assert cast(jnp.ones(2), 2.0).tolist() == [2.0, 2.0]
    with pytest.raises(js.NonArrayArgumentError) as info:
        cast(jnp.ones(2), dtype)  # and once a program is cached for the call shape
    assert str(info.value) == expected


def test_wrong_call_gets_pythons_own_binding_error() -> None:
    def step(x: jax.Array, n: Static[int], *, mode: str = "a") -> jax.Array:
        return x

    jitted = js.jit(step)
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [((1,), {}), ((1, 2, 3), {}), ((1, 2), {"nope": 1}),
                                                           ((1,), {"x": 1, "n": 2})]
    for args, kwargs in calls:
        with pytest.raises(TypeError) as plain:
            step(*args, **kwargs)
        with pytest.raises(TypeError) as ours:
            jitted(*args, **kwargs)
        assert str(ours.value) == str(plain.value).replace("test_wrong_call_gets_pythons_own_binding_error.<locals>.", "")


def test_retrace_is_blamed_on_the_parameter_that_changed() -> None:
    @js.jit
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    f(jnp.ones(3), 1)
    f(jnp.ones(3), 2)
    f(jnp.ones(5), 2)  # most similar to the previous call: only x changed
    f(jnp.ones(5, jnp.int32), 2)
    assert [str(r) for r in f.retraces] == [
        "f was traced again (trace #2) because n: 1 -> 2",
        "f was traced again (trace #3) because x: float32[3] -> float32[5]",
        "f was traced again (trace #4) because x: float32[5] -> int32[5]",
    ]


def test_pytree_and_weak_type_changes_are_explained() -> None:
    @js.jit
    def f(params: dict[str, Any]) -> Any:
        return params["w"] * 2

    f({"w": jnp.ones(2)})
    f({"w": jnp.ones(3)})
    f({"w": jnp.ones(3), "b": 1.0})
    f({"w": 2.0})
    changes = [r.changes for r in f.retraces]
    assert changes[0] == ("params['w']: float32[2] -> float32[3]",)
    assert changes[1] == ("params['b']: added (float32[] (weak type))",)
    assert changes[2] == ("params['w']: float32[3] -> float32[] (weak type)",)


def test_max_traces_raises_with_the_explanation() -> None:
    @functools.partial(js.jit, max_traces=2)
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    f(jnp.ones(1), 1)
    f(jnp.ones(1), 2)
    with pytest.raises(js.RetraceError, match=r"^f needs trace #3, because n: 2 -> 3, but max_traces=2 allows at most "
                                                r"2 traces\. Mark a parameter Static only if it takes few values"):
        f(jnp.ones(1), 3)
    assert f.trace_count == 2
    assert f(jnp.ones(1), 1).tolist() == [1.0]


def test_retraces_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    @js.jit
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    with caplog.at_level(logging.INFO, logger="jaxstatic"):
        f(jnp.ones(1), 1)
        f(jnp.ones(1), 2)
    assert [r.getMessage() for r in caplog.records] == ["f was traced again (trace #2) because n: 1 -> 2"]


def test_counts_are_exact_under_threads() -> None:
    @js.jit
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    x = jnp.ones(4)
    barrier = threading.Barrier(8)

    def worker(i: int) -> None:
        barrier.wait()
        for k in range(50):
            f(x, (i + k) % 4)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    info = f.cache_info()
    assert f.trace_count == 4
    assert (info.hits, info.misses, info.currsize) == (396, 4, 4)


def test_clear_cache_and_dropping_release_static_values() -> None:
    @js.jit
    def f(x: jax.Array, token: Static[Any]) -> jax.Array:
        return x + 1

    held_until_cleared(f, Token, lambda g, token: g(jnp.ones(1), {"t": token}))
    assert f.cache_info().currsize == 0
    token2 = Token()
    ref2 = weakref.ref(token2)
    f(jnp.ones(1), token2)
    del token2, f
    gc.collect()
    assert ref2() is None


def test_clear_cache_then_same_call_traces_again_and_says_why() -> None:
    @js.jit
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    f(jnp.ones(1), 1)
    f.clear_cache()
    f(jnp.ones(1), 1)
    assert f.trace_count == 2
    assert str(f.retraces[-1]) == (
        "f was traced again (trace #2) after clear_cache(), which released the earlier programs and the values "
        "they were traced with: nothing is left to compare this call with.")
    f(jnp.ones(1), 2)  # compared with the trace after the clear
    assert str(f.retraces[-1]) == "f was traced again (trace #3) because n: 1 -> 2"


def test_clear_cache_then_new_value_does_not_claim_equal_arguments() -> None:
    @js.jit
    def f(x: jax.Array, cfg: Static[dict[str, float]]) -> jax.Array:
        return x * cfg["lr"]

    f(jnp.ones(1), {"lr": 0.1})
    f.clear_cache()
    f(jnp.ones(1), {"lr": 0.7, "new": 3.0})
    assert "equal to an earlier trace" not in str(f.retraces[-1])
    assert "after clear_cache()" in str(f.retraces[-1])


def test_wraps_metadata_and_signature() -> None:
    def step(x: jax.Array, n: Static[int] = 1) -> jax.Array:
        """Doc."""
        return x

    jitted = js.jit(step)
    assert jitted.__wrapped__ is step
    assert (jitted.__name__, jitted.__doc__) == ("step", "Doc.")
    assert inspect.signature(jitted) == inspect.signature(step)


def test_jax_options_pass_through_and_merge() -> None:
    def f(x: jax.Array, y: jax.Array, n: int) -> jax.Array:
        return (x + y) * n

    g = js.jit(f, static_argnums=(2,), donate_argnames=("y",), keep_unused=True)
    assert g(jnp.ones(1), jnp.ones(1), 3).tolist() == [6.0]
    assert g(jnp.ones(1), jnp.ones(1), n=3).tolist() == [6.0]
    assert g.trace_count == 1
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['static_argnumz'\]"):
        js.jit(f, static_argnumz=(1,))


def test_jit_results_are_not_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dispatch stays asynchronous: jaxstatic never blocks on a result."""
    calls: list[Any] = []
    monkeypatch.setattr(jax, "block_until_ready", lambda x: calls.append(x) or x)
    monkeypatch.setattr(jax.Array, "block_until_ready", lambda self: calls.append(self) or self, raising=False)

    @js.jit
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x @ x.T * n

    f(jnp.ones((8, 8)), 2)
    f(jnp.ones((8, 8)), 2)
    assert calls == []


def test_trace_report_lists_functions() -> None:
    @js.jit
    def reported_fn(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    reported_fn(jnp.ones(1), 1)
    reported_fn(jnp.ones(1), 2)
    reported_fn(jnp.ones(1), 2)
    line = next(ln for ln in js.trace_report().splitlines() if "reported_fn" in ln)
    assert line.split()[:4] == ["jit(reported_fn)", "2", "1", "2"]
    assert line.endswith("n: 1 -> 2")


def test_trace_report_names_the_transform_stack() -> None:
    def reported_loss(x: jax.Array, n: Static[int]) -> jax.Array:
        return jnp.sum(x**n)

    fns = [js.jit(reported_loss), js.grad(reported_loss), js.jit(js.grad(reported_loss))]
    for f in fns:
        f(jnp.ones(2), 2)
    rows = [ln.split()[:4] for ln in js.trace_report().splitlines() if "reported_loss" in ln]
    # js.grad(reported_loss) made twice is one function: called alone (its program built, counted as its trace), then
    # by the jit's trace
    assert rows == [["grad(reported_loss)", "1", "1", "1"],
                    ["jit(grad(reported_loss))", "1", "0", "1"],
                    ["jit(reported_loss)", "1", "0", "1"]]


@pytest.mark.parametrize("method", ["lower", "trace", "eval_shape"])
def test_hits_count_the_first_hit_after_ahead_of_time_and_clear_cache(method: str) -> None:
    @js.jit
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    getattr(f, method)(jnp.ones(2), 3)
    assert f.cache_info()[:2] == (0, 1)
    f.clear_cache()
    f(jnp.ones(2), 3)
    f(jnp.ones(2), 3)
    assert f.cache_info()[:2] == (1, 2)
    getattr(f, method)(jnp.ones(2), 3)  # the kept program: a hit
    assert f.cache_info()[:2] == (2, 2)


def test_keyword_names_reused_with_other_positionals() -> None:
    @js.jit
    def f(x: jax.Array, y: jax.Array | None = None, *, n: Static[int] = 1) -> jax.Array:
        return x * n if y is None else (x + y) * n

    x = jnp.ones(1)
    assert f(x, n=2).tolist() == [2.0]
    assert f(x, x, n=2).tolist() == [4.0]
    assert f(x, n=2).tolist() == [2.0]
    assert f.trace_count == 2


def test_calls_that_fail_are_not_counted_as_hits() -> None:
    @js.jit
    def f(x: jax.Array, cfg: Static[Any]) -> jax.Array:
        return x

    f(jnp.ones(1), 1)
    with pytest.raises(js.NonStaticValueError):
        f(jnp.ones(1), [jnp.ones(1)])
    assert f.cache_info()[:2] == (0, 1)


def test_in_shardings_tuple_skips_static_parameters_as_in_jax_jit() -> None:
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(CPUS[:4]), ("d",))
    sharded = NamedSharding(mesh, PartitionSpec("d"))

    def f(x: jax.Array, n: Static[int], y: jax.Array) -> jax.Array:
        return x * n + y

    g = js.jit(f, in_shardings=(sharded, sharded), out_shardings=sharded)
    out = g(jnp.arange(8.0), 2, jnp.ones(8))
    assert out.tolist() == [2 * i + 1.0 for i in range(8)]
    assert out.sharding == sharded
    assert len(CPUS) >= 4


def test_new_leaf_types_inside_containers_never_cause_a_second_trace() -> None:
    class Token:  # a class never seen before: its instances are learnt as identity-hashed leaves on first sight
        pass

    @js.jit
    def f(x: jax.Array, cfg: Static[Any]) -> jax.Array:
        return x + 1

    tok = Token()
    for cfg in ((tok, 1), (tok, 1), [tok], [tok], {"t": tok}, {"t": tok}):
        f(jnp.ones(1), cfg)
    assert f.trace_count == 3


_atoms = st.one_of(st.integers(-2, 2), st.sampled_from([0.0, 1.0, 2.0]), st.booleans(), st.sampled_from(["a", "b"]))
_values = st.recursive(
    _atoms,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
                            st.dictionaries(st.sampled_from(["x", "y"]), inner, max_size=2)),
    max_leaves=6,
)


def _typed(v: Any) -> Any:
    """A value with every leaf tagged by its type, so ``==`` on it is equality with strict types."""
    if isinstance(v, dict):
        return ("dict", tuple((k, _typed(x)) for k, x in v.items()))  # in insertion order
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(_typed(x) for x in v))
    return (type(v).__name__, v)


@settings(max_examples=40, deadline=None)
@given(_values, _values)
def test_one_trace_exactly_when_values_are_equal_with_the_same_types(a: Any, b: Any) -> None:
    @js.jit
    def f(x: jax.Array, cfg: Static[Any]) -> jax.Array:
        return x + 1

    f(jnp.ones(1), a)
    f(jnp.ones(1), b)
    assert f.trace_count == (1 if _typed(a) == _typed(b) else 2)


# -- what jax.jit's objects offer ------------------------------------------------------------------------------


@js.jit
def scaled(x: jax.Array, n: Static[int]) -> jax.Array:
    return x * n


def test_trace_and_eval_shape_take_static_values_as_plain_python_values() -> None:
    x = jnp.ones(3)
    plain = jax.jit(scaled.__wrapped__, static_argnums=1)
    traced = scaled.trace(x, 2)
    assert str(traced.jaxpr) == str(plain.trace(x, 2).jaxpr)
    assert scaled.eval_shape(x, 2) == plain.eval_shape(x, 2) == jax.ShapeDtypeStruct((3,), jnp.float32)


def test_methods_bind_self_for_lower_trace_and_eval_shape() -> None:
    class Model:
        def __init__(self, k: float) -> None:
            self.k = k

        def __hash__(self) -> int:
            return hash(self.k)

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Model) and other.k == self.k

        @js.jit
        def apply(self: Static[Model], x: jax.Array) -> jax.Array:
            return x * self.k

    m = Model(2.0)
    x = jnp.ones(2)
    assert m.apply.lower(x).compile()(x).tolist() == [2.0, 2.0]  # bound, as the method is
    assert m.apply.eval_shape(x) == jax.ShapeDtypeStruct((2,), jnp.float32)
    assert "mul" in str(m.apply.trace(x).jaxpr)
    assert m.apply(x).tolist() == [2.0, 2.0]
    assert m.apply.trace_count == 1
    assert Model.apply.trace_count == 1


def test_deepcopy_and_pickle_give_the_function_itself() -> None:
    import copy
    import pickle

    assert copy.deepcopy(scaled) is scaled
    assert copy.copy(scaled) is scaled
    scaled(jnp.ones(1), 1)  # also once its class is specialised for the first call shape
    assert copy.deepcopy({"f": scaled})["f"] is scaled
    assert pickle.loads(pickle.dumps(scaled)) is scaled


def test_help_lists_what_the_jitted_object_offers() -> None:
    text = pydoc.render_doc(js.jit, renderer=pydoc.plaintext)
    for name in ("trace_count", "retraces", "cache_info", "clear_cache", "lower", "trace", "eval_shape"):
        assert name in text, name
    doc = pydoc.render_doc(js.Static, renderer=pydoc.plaintext)
    assert "a parameter of type ``T`` that jaxstatic's transforms treat as static" in doc
    assert js.Static[int] == Annotated[int, js.STATIC]


def test_jax_errors_inside_the_body_point_at_the_users_function_and_parameters() -> None:
    @js.jit
    def branchy(weights: jax.Array, n: Static[int], bias: jax.Array) -> jax.Array:
        if weights.sum() > 0:
            return weights * n
        return bias

    with pytest.raises(jax.errors.TracerBoolConversionError) as info:
        branchy(jnp.ones(2), 2, jnp.ones(2))
    text = str(info.value)
    assert f"branchy at {__file__}:" in text
    assert "weights" in text
    assert "_transform.py" not in text and "dyn[0]" not in text


class _Scale:
    def __call__(self, x: jax.Array) -> jax.Array:
        return x * 2


def _scaled(x: jax.Array, n: Static[int]) -> jax.Array:
    return x * n


@pytest.mark.parametrize("fn", [functools.partial(_scaled, n=2), _Scale(), _scaled], ids=["partial", "instance",
                                                                                            "function"])
def test_programs_are_named_as_jax_jit_names_them(fn: Any) -> None:
    args = (jnp.ones(2), 3) if fn is _scaled else (jnp.ones(2),)

    def name(lowered: Any) -> str:  # each JAX release mangles "<unnamed function>" its own way at the end
        return str(lowered.as_text().split()[1]).rstrip("_")

    theirs = name(jax.jit(fn, static_argnums=1 if fn is _scaled else None).lower(*args))
    if theirs == "@jit__unnamed_wrapped_function":  # JAX before 0.5 named every partial and instance so:
        theirs = "@jit__scaled" if isinstance(fn, functools.partial) else "@jit__unnamed_function"  # as later ones
    assert name(js.jit(fn).lower(*args)) == theirs
    assert name(js.jit(fn, cache_size=4).lower(*args)) == theirs  # the general path's program too
    assert theirs in ("@jit__scaled", "@jit__unnamed_function")


def _jaxstatic_frames_above(caller: str) -> list[str]:
    """The jaxstatic frames between the function ``caller`` and the function that calls this one."""
    package = str(__import__("pathlib").Path(js.__file__).parent)
    frame, found = sys._getframe(2), []
    while frame.f_code.co_name != caller:
        if frame.f_code.co_filename.startswith((package, "<jaxstatic>")):
            found.append(frame.f_code.co_name)
        frame = frame.f_back  # type: ignore[assignment]
    return found


@pytest.mark.parametrize("static", [pytest.param(3, id="the lane"), pytest.param({"n": 3}, id="the general path")])
def test_few_frames_lie_between_a_first_call_and_the_body_so_nested_functions_recurse_deep(
        hit_path: str, static: Any) -> None:
    """Each frame between a call and the traced body is one level less that nested jitted functions can recurse
    (``jax.jit`` puts five of its own there); jaxstatic adds its entry, the shape's dispatcher, the miss and the
    body that hands over the static values."""
    seen: list[list[str]] = []

    @js.jit
    def f(x: jax.Array, n: Static[Any]) -> jax.Array:
        seen.append(_jaxstatic_frames_above("caller"))
        return x

    def caller() -> None:
        f(jnp.ones(2), static)

    caller()
    assert len(seen) == 1 and len(seen[0]) <= 4, seen[0]
