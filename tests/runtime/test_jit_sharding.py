"""``js.jit`` with ``in_shardings``/``out_shardings`` on an 8-device mesh, with Static configs.

Static parameters come after the dynamic ones, or are keyword-only, so a tuple of ``in_shardings`` lists exactly the
dynamic positional parameters, as it does for ``jax.jit``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import jaxstatic as js
from jaxstatic import Static

from ._devices import CPUS, cpu_mesh, one_cpu


def _mesh(shape: tuple[int, ...], names: tuple[str, ...]) -> Mesh:
    return cpu_mesh(shape, names)


def _data() -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    params = {"w": rng.normal(size=(4, 2)).astype(np.float32), "b": np.zeros(2, np.float32)}
    x = rng.normal(size=(32, 4)).astype(np.float32)
    return params, x, (x @ np.ones((4, 2), np.float32)).astype(np.float32)


def _step(params: dict[str, jax.Array], x: jax.Array, y: jax.Array,
          cfg: Static[dict[str, Any]]) -> tuple[dict[str, jax.Array], jax.Array]:
    def loss_fn(p: dict[str, jax.Array]) -> jax.Array:
        return jnp.mean((cfg["activation"](x @ p["w"] + p["b"]) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    return jax.tree.map(lambda p, g: p - cfg["lr"] * g, params, grads), loss


def _one_device(cfg: dict[str, Any]) -> tuple[dict[str, jax.Array], jax.Array]:
    params, x, y = _data()
    with one_cpu():  # the mesh's devices are CPUs: the reference is computed as they compute
        return jax.jit(lambda p, x, y: _step(p, x, y, cfg))(params, x, y)  # type: ignore[no-any-return]


def test_data_parallel_step_matches_one_device_with_one_trace_per_config() -> None:
    mesh = _mesh((8,), ("data",))
    batch, replicated = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    step = js.jit(_step, in_shardings=(replicated, batch, batch), out_shardings=(replicated, replicated))
    params, x, y = _data()

    def run(lr: float, activation: Callable[[jax.Array], jax.Array]) -> None:
        cfg = {"lr": lr, "activation": activation}  # a new dict on every call
        new, loss = step(params, x, y, cfg)
        want_new, want_loss = _one_device(cfg)
        np.testing.assert_allclose(float(loss), float(want_loss), rtol=1e-6)
        for name in params:
            np.testing.assert_allclose(new[name], want_new[name], rtol=1e-5, atol=1e-7)
            assert new[name].sharding == replicated
        assert loss.sharding == replicated

    run(0.1, jnp.tanh)
    run(0.1, jnp.tanh)
    assert step.trace_count == 1
    run(0.5, jnp.tanh)
    run(0.1, jax.nn.relu)
    assert step.trace_count == 3
    run(0.1, jnp.tanh)  # back to the first config: its program is reused
    assert step.trace_count == 3
    assert str(step.retraces[0]) == "_step was traced again (trace #2) because cfg['lr']: 0.1 -> 0.5"


def test_inputs_are_laid_out_by_in_shardings_and_the_output_by_out_shardings() -> None:
    """A 4x2 mesh: rows over "data", columns over "model"; keyword-only statics leave the tuple to the arrays."""
    mesh = _mesh((4, 2), ("data", "model"))
    rows, cols = NamedSharding(mesh, P("data", None)), NamedSharding(mesh, P(None, "model"))
    tiles = NamedSharding(mesh, P("data", "model"))

    def layer(x: jax.Array, w: jax.Array, *, scale: Static[float], act: Static[str]) -> jax.Array:
        return getattr(jnp, act)(x @ w) * scale

    f = js.jit(layer, in_shardings=(rows, cols), out_shardings=tiles)
    x = np.arange(16 * 6, dtype=np.float32).reshape(16, 6) / 100
    w = np.linspace(-1, 1, 6 * 4, dtype=np.float32).reshape(6, 4)
    for scale in (2.0, 2.0, 3.0):
        out = f(jnp.asarray(x), jnp.asarray(w), scale=scale, act="tanh")
        np.testing.assert_allclose(out, np.tanh(x @ w) * scale, rtol=1e-5)
        assert out.sharding == tiles
        assert {s.data.shape for s in out.addressable_shards} == {(4, 2)}
        assert len({s.device for s in out.addressable_shards}) == 8
    assert f.trace_count == 2
    compiled = f.lower(jnp.asarray(x), jnp.asarray(w), scale=2.0, act="tanh").compile()
    assert compiled.input_shardings == ((rows, cols), {})  # the program's inputs: the two arrays, in order
    assert compiled.output_shardings == tiles
    np.testing.assert_allclose(compiled(jnp.asarray(x), jnp.asarray(w), scale=2.0, act="tanh"),
                               np.tanh(x @ w) * 2.0, rtol=1e-5)


def test_one_sharding_applies_to_every_dynamic_argument() -> None:
    mesh = _mesh((8,), ("data",))
    sharded = NamedSharding(mesh, P("data"))

    def f(x: jax.Array, y: jax.Array, cfg: Static[dict[str, float]]) -> jax.Array:
        return x * cfg["a"] + y

    g = js.jit(f, in_shardings=sharded, out_shardings=sharded)
    out = g(jnp.arange(16.0), jnp.ones(16), {"a": 3.0})
    assert out.tolist() == [3.0 * i + 1 for i in range(16)]
    assert out.sharding == sharded
    assert g(jnp.arange(16.0), jnp.ones(16), {"a": 3.0}).tolist() == out.tolist()
    assert g.trace_count == 1


def _reduced_spec_supported() -> bool:
    try:
        P("x", reduced={"y"})
    except TypeError:
        return False
    return hasattr(jax, "reshard") and hasattr(jax, "set_mesh")


@pytest.mark.skipif(not _reduced_spec_supported(), reason="reduced axes in a PartitionSpec need JAX 0.8")
def test_arguments_sharded_with_reduced_axes_run_as_with_jax_jit_and_a_retrace_names_the_spec() -> None:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2, devices=CPUS)
    reduced = P("x", None, reduced={"y"})
    x = jax.device_put(jnp.arange(16.0).reshape(4, 4), NamedSharding(mesh, P("x", None)))  # type: ignore[no-untyped-call]

    def to_reduced(x: jax.Array) -> jax.Array:
        return jax.reshard(x, reduced)

    def double(x: jax.Array, scale: Static[float] = 2.0) -> jax.Array:
        return x * scale

    with jax.set_mesh(mesh):
        want = jax.jit(double)(jax.jit(to_reduced)(x))
        g = js.jit(double)
        g(x)
        y = js.jit(to_reduced)(x)
        got = g(y)
    assert jax.typeof(got).sharding.spec == jax.typeof(want).sharding.spec
    np.testing.assert_array_equal(got, want)
    assert g.trace_count == 2
    text = repr(reduced)  # JAX 0.12 adds unreduced_kind: whatever the installed JAX writes
    assert g.retraces[-1].changes == (
        f"x: sharding P('x', None) over mesh x=2, y=4 (Explicit, Explicit) -> P{text[text.index('('):]} over mesh "
        "x=2, y=4 (Explicit, Explicit)",)


def _add(*xs: jax.Array) -> jax.Array:
    return sum(xs, jnp.zeros(()))


def _scaled_sum(scale: Static[float], *xs: jax.Array) -> jax.Array:
    return scale * sum(xs, jnp.zeros(()))


def test_a_tuple_of_in_shardings_gives_args_extras_their_entries_as_jax_jit_does() -> None:
    mesh = _mesh((8,), ("x",))
    rows, whole = NamedSharding(mesh, P("x")), NamedSharding(mesh, P())
    x = jnp.arange(16.0)
    ours, ref = js.jit(_add, in_shardings=(rows, whole)), jax.jit(_add, in_shardings=(rows, whole))
    assert ours(x, x).tolist() == ref(x, x).tolist() == (2 * x).tolist()
    assert ours.lower(x, x).compile().input_shardings == ref.lower(x, x).compile().input_shardings
    assert ours.lower(x, x).compile().input_shardings[0] == (rows, whole)
    # a Static parameter before *args has no entry, as a static argument has none in jax.jit's tuple
    scaled = js.jit(_scaled_sum, in_shardings=(rows, rows))
    assert scaled(0.5, x, x).tolist() == x.tolist()
    assert scaled.lower(0.5, x, x).compile().input_shardings[0] == (rows, rows)
    # another number of extras than entries: refused at the call, with jax.jit's error
    with pytest.raises(ValueError, match="pjit in_shardings is the wrong length: got a tuple or list of length 2 "
                                         "for an args tuple of length 3"):
        ref(x, x, x)
    with pytest.raises(ValueError, match="pjit in_shardings is the wrong length: got a tuple or list of length 2 "
                                         "for an args tuple of length 3"):
        ours(x, x, x)


def test_an_exported_call_jitted_with_in_shardings_over_its_args() -> None:
    export = pytest.importorskip("jax.export")  # before JAX 0.4.39, a module that needs absl
    mesh = _mesh((8,), ("x",))
    rows = NamedSharding(mesh, P("x"))
    x = jnp.arange(16.0)
    exported = export.export(jax.jit(_add, in_shardings=(rows,)), platforms=("cpu",))(x)  # the mesh's devices
    again = js.jit(exported.call, in_shardings=(rows,))
    assert again(x).tolist() == x.tolist() and again(x).sharding == rows


def test_eval_shape_keeps_out_shardings_through_the_jitted_function_not_through_jax_eval_shape() -> None:
    # Documented on the jit guide: jax.eval_shape wraps js.jit's function in a jax.jit of its own, whose result
    # carries no out_shardings; the function's own eval_shape gives jax.jit's.
    mesh = cpu_mesh((8,), ("x",))  # axes Auto: the sharding is not in the type
    rows = NamedSharding(mesh, P("x"))
    x = jnp.arange(16.0)
    ours, ref = js.jit(_add, out_shardings=rows), jax.jit(_add, out_shardings=rows)
    assert ours.eval_shape(x).sharding == ref.eval_shape(x).sharding == rows
    assert jax.eval_shape(ours, x).sharding is None  # jax.eval_shape(ref, x) has it from JAX 0.5
