from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, PartitionSpec as P

import jaxstatic as js
from jaxstatic import Static
from jaxstatic._compat import shard_map

from ._devices import CPUS, one_cpu
from ._fresh import fresh

N = 8  # host devices, from tests/conftest.py


@pytest.fixture(scope="module")
def mesh() -> Mesh:
    return Mesh(np.array(CPUS[:N]), ("batch",))


def step(x: jax.Array, w: jax.Array, cfg: Static[dict[str, Any]]) -> tuple[jax.Array, jax.Array]:
    """One layer on a shard of the batch; the loss is summed over every device."""
    y = cfg["act"](x @ w) * cfg["scale"]
    return jax.lax.psum((y**2).sum(), "batch"), y


def _on_one_device(x: jax.Array, w: jax.Array, cfg: dict[str, Any]) -> tuple[jax.Array, jax.Array]:
    with one_cpu():  # the mesh's devices are CPUs: the reference is computed as they compute
        y = cfg["act"](x @ w) * cfg["scale"]
        return (y**2).sum(), y


def _data() -> tuple[jax.Array, jax.Array]:
    x = np.linspace(-1.0, 1.0, N * 4 * 3, dtype=np.float32).reshape(N * 4, 3)
    return jnp.asarray(x), jnp.arange(6.0).reshape(3, 2) / 6


def test_static_config_gives_the_values_of_one_device_and_one_trace_per_value(mesh: Mesh) -> None:
    sharded = js.shard_map(step, mesh=mesh, in_specs=(P("batch"), P()), out_specs=(P(), P("batch")))
    jitted = js.jit(sharded)
    x, w = _data()
    for scale, traces in [(2.0, 1), (2.0, 1), (3.0, 2), (2.0, 2), (3.0, 2)]:
        cfg = {"act": jnp.tanh, "scale": scale}  # a new dict each time: equal values, one program
        for run in (sharded, jitted):  # eager, as jax.shard_map; compiled
            loss, y = run(x, w, cfg)
            want_loss, want_y = _on_one_device(x, w, cfg)
            np.testing.assert_allclose(y, want_y, rtol=1e-6)
            np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
            assert y.sharding.spec == P("batch")
        assert sharded.trace_count == traces
    assert sharded.cache_info()[:4] == (0, 2, 8192, 2)  # the eager calls are neither hits nor misses
    assert str(sharded.retraces[-1]) == "step was traced again (trace #2) because cfg['scale']: 2.0 -> 3.0"


def test_outside_a_jit_it_runs_eagerly_as_jax_shard_map_does(mesh: Mesh, capsys: pytest.CaptureFixture[str],
                                                              hit_path: str) -> None:
    """Outside any trace the body runs on every call over the shards' values: Python control flow on them, printing
    a shard, JAX's eager errors. Those runs are no traces; the program per static key is kept, not compiled."""
    bodies: list[int] = []

    def body(x: jax.Array, n: Static[int]) -> jax.Array:
        bodies.append(n)
        if jax.lax.psum(x.sum(), "batch") > 0:  # a concrete value: eager
            print(x)
            return x * n
        return -x

    x = jnp.arange(float(N))
    plain = shard_map(lambda x: body(x, 2), mesh=mesh, in_specs=P("batch"), out_specs=P("batch"),
                      axis_names=frozenset(), check_vma=True)
    np.testing.assert_array_equal(plain(x), x * 2)
    ours = js.shard_map(body, mesh=mesh, in_specs=P("batch"), out_specs=P("batch"))
    np.testing.assert_array_equal(ours(x, 2), x * 2)
    np.testing.assert_array_equal(ours(-x, 2), x)
    assert len(bodies) == 3 and ours.trace_count == 0
    assert ours.cache_info()[:4] == (0, 0, 8192, 1)
    # the device as JAX names it: cpu:7, TFRT_CPU_7 before JAX 0.5
    assert capsys.readouterr().out.count(" at mesh coordinates (batch,) = (7,):\n[7.]") == 2
    jaxpr = jax.make_jaxpr(js.shard_map(jnp.sin, mesh=mesh, in_specs=P("batch"), out_specs=P("batch")))(x)
    assert [e.primitive.name for e in jaxpr.eqns] == ["shard_map"]  # no jit around it


def test_a_none_spec_hands_the_body_the_object_itself(mesh: Mesh) -> None:
    """As ``jax.shard_map``'s: an input whose spec is None is static, passed as it is (not hashed, not traced)."""
    unhashable = type("Unhashable", (), {"__hash__": None})()
    seen: list[Any] = []

    def body(o: Any, x: jax.Array, shape: tuple[int, ...]) -> jax.Array:
        seen.append((o, shape))
        return x + jnp.ones(shape)

    sharded = js.shard_map(body, mesh=mesh, in_specs=(None, P("batch"), None), out_specs=P("batch"))
    x = jnp.arange(float(N))
    np.testing.assert_array_equal(sharded(unhashable, x, (1,)), x + 1)
    np.testing.assert_array_equal(js.jit(lambda x, shape: sharded(unhashable, x, shape), static_argnums=1)(x, (1,)),
                                  x + 1)
    assert seen == [(unhashable, (1,))] * 2


def test_a_tuple_over_args_gives_entry_i_to_argument_i(mesh: Mesh) -> None:
    def scaled(x: jax.Array, k: Static[float], *rest: jax.Array) -> jax.Array:
        return (x + rest[0].sum()) * k

    x = jnp.arange(float(N))
    sharded = js.shard_map(scaled, mesh=mesh, in_specs=(P("batch"), None, P()), out_specs=P("batch"))
    np.testing.assert_array_equal(sharded(x, 2.0, x), (x + x.sum()) * 2.0)  # as JAX counts: None at the Static k
    dynamic_only = js.shard_map(scaled, mesh=mesh, in_specs=(P("batch"), P(), P("batch")), out_specs=P("batch"))
    np.testing.assert_array_equal(dynamic_only(x, 2.0, x, x), (x + x.sum()) * 2.0)  # over x and the extras


def test_composes_under_jit_with_one_trace_per_static_value(mesh: Mesh) -> None:
    sharded = js.shard_map(step, mesh=mesh, in_specs={"x": P("batch"), "w": P()}, out_specs=(P(), P("batch")))

    @js.jit
    def loss(x: jax.Array, w: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        return sharded(x, w, cfg)[0]

    x, w = _data()
    for scale, traces in [(2.0, 1), (2.0, 1), (0.5, 2), (2.0, 2)]:
        cfg = {"act": jnp.sin, "scale": scale}
        np.testing.assert_allclose(loss(x, w, cfg), _on_one_device(x, w, cfg)[0], rtol=1e-5)
        assert loss.trace_count == traces
        assert sharded.trace_count == traces
    grads = jax.grad(lambda w: loss(x, w, {"act": jnp.sin, "scale": 2.0}))(w)
    want = jax.grad(lambda w: _on_one_device(x, w, {"act": jnp.sin, "scale": 2.0})[0])(w)
    np.testing.assert_allclose(grads, want, rtol=1e-5)


def test_in_specs_by_name_follow_keywords_and_variadic_extras(mesh: Mesh) -> None:
    def total(x: jax.Array, *rest: jax.Array, k: Static[int], **extra: jax.Array) -> jax.Array:
        return (x + sum(rest) + sum(extra.values())) * k

    x = jnp.arange(float(N * 2))
    by_name = js.shard_map(total, mesh=mesh, in_specs={"x": P("batch"), "rest": P("batch"), "extra": P("batch")},
                           out_specs=P("batch"))
    np.testing.assert_array_equal(by_name(x, x, x, k=2, y=x), x * 4 * 2)
    np.testing.assert_array_equal(by_name(x, x, k=2, y=x, z=x), x * 4 * 2)  # other extras: the same program
    assert by_name.cache_info().currsize == 1
    one_spec = js.shard_map(total, mesh=mesh, in_specs=P("batch"), out_specs=P("batch"))
    np.testing.assert_array_equal(one_spec(k=3, x=x, y=x), x * 2 * 3)


def _summed(x: jax.Array, *rest: jax.Array, k: float) -> jax.Array:
    return (x + sum(rest)) * k


def test_a_partial_over_a_function_with_args_is_mapped(mesh: Mesh) -> None:
    x = jnp.arange(float(N * 2))
    summed = js.shard_map(functools.partial(_summed, k=2.0), mesh=mesh, in_specs=P("batch"), out_specs=P("batch"))
    np.testing.assert_array_equal(summed(x, x, x), x * 3 * 2.0)


def test_in_specs_name_the_dynamic_parameters_only(mesh: Mesh) -> None:
    with pytest.raises(js.OptionError) as info:
        js.shard_map(step, mesh=mesh, in_specs=(P("batch"), P(), P("batch"), P()), out_specs=P())
    assert str(info.value) == (
        "jaxstatic: in_specs of step has 4 entries, but step has 2 non-static positional parameter(s) ['x', 'w']. "
        "Give one entry per parameter in ['x', 'w'], or a dict by name."
    )
    with pytest.raises(js.OptionError) as static:
        js.shard_map(step, mesh=mesh, in_specs=(P("batch"), P(), P()), out_specs=P())
    assert str(static.value) == (
        "jaxstatic: in_specs of step gives 'cfg' the spec P(), but 'cfg' is Static, so it is never "
        "sharded. Give 'cfg' None (or leave it out), or make it dynamic.")
    with pytest.raises(js.OptionError, match=r"^jaxstatic: in_specs of step names 'cfg', which is Static\. A Static "
                                             r"value is not an array; drop 'cfg' from in_specs, or make it dynamic\."):
        js.shard_map(step, mesh=mesh, in_specs={"x": P("batch"), "w": P(), "cfg": P()}, out_specs=P())
    with pytest.raises(js.OptionError) as missing:
        js.shard_map(step, mesh=mesh, in_specs={"x": P("batch")}, out_specs=P())
    assert str(missing.value) == (
        "jaxstatic: in_specs of step gives no spec for the dynamic parameter 'w' (it gives ['x']). Add an entry for "
        "'w'; in_specs names the dynamic parameters only (by position among them, or as a dict by name)."
    )


def test_max_traces_and_bad_static_values(mesh: Mesh) -> None:
    sharded = js.shard_map(step, mesh=mesh, in_specs=(P("batch"), P()), out_specs=(P(), P("batch")), max_traces=1)
    jitted = js.jit(sharded)
    x, w = _data()
    jitted(x, w, {"act": jnp.tanh, "scale": 1.0})
    with pytest.raises(js.RetraceError, match=r"^step needs trace #2, because cfg\['scale'\]: 1\.0 -> 2\.0"):
        jitted(x, w, {"act": jnp.tanh, "scale": 2.0})
    with pytest.raises(js.NonStaticValueError, match=r"^step\(\): parameter 'cfg' is Static, but cfg\['scale'\] is "
                                                      r"a jax\.Array"):
        sharded(x, w, {"act": jnp.tanh, "scale": jnp.ones(())})
    assert sharded.trace_count == 1


@pytest.mark.skipif(not hasattr(jax, "set_mesh"), reason="jax.set_mesh arrived in JAX 0.7")
def test_mesh_from_the_context_and_decorator_form() -> None:
    mesh = jax.make_mesh((N,), ("batch",), axis_types=(jax.sharding.AxisType.Explicit,), devices=CPUS[:N])

    @js.shard_map(out_specs=P("batch"))
    def scaled(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    assert isinstance(scaled, js.ShardMapFunction)
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.arange(float(N)), P("batch"))
        np.testing.assert_array_equal(scaled(x, 3), np.arange(N) * 3.0)  # in_specs inferred from x's sharding
    assert scaled.cache_info().currsize == 1


def test_disable_jit_keeps_sharding_as_jax_shard_map_does(mesh: Mesh) -> None:
    """jax.disable_jit() turns off compilation, not the mapping: each shard sees its block, and psum its axis."""
    sharded = js.shard_map(fresh(step), mesh=mesh, in_specs=(P("batch"), P()), out_specs=(P(), P("batch")))
    x, w = _data()
    cfg = {"act": jnp.tanh, "scale": 2.0}
    want_loss, want_y = _on_one_device(x, w, cfg)
    with jax.disable_jit():
        loss, y = sharded(x, w, cfg)
    assert y.shape == want_y.shape == (N * 4, 2)
    np.testing.assert_allclose(y, want_y, rtol=1e-6)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
    loss, y = js.jit(sharded)(x, w, cfg)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
    assert sharded.trace_count == 1


@pytest.mark.skipif(hasattr(jax, "shard_map"), reason="this JAX has jax.shard_map, which infers mesh and specs")
def test_without_jax_shard_map_mesh_and_in_specs_are_required(mesh: Mesh) -> None:
    with pytest.raises(js.OptionError) as no_mesh:
        js.shard_map(step, in_specs=(P("batch"), P()), out_specs=(P(), P("batch")))
    assert str(no_mesh.value) == (
        "jaxstatic: shard_map of step is given no mesh (to be read from the surrounding mesh context), which needs "
        f"JAX 0.6.1 or later (this is JAX {jax.__version__}). Pass mesh= and in_specs= explicitly, or upgrade JAX.")
    with pytest.raises(js.OptionError, match=r"is given no in_specs \(to be inferred from the arguments' shardings\), "
                                             r"which needs JAX 0\.6\.1 or later"):
        js.shard_map(step, mesh=mesh, out_specs=(P(), P("batch")))
