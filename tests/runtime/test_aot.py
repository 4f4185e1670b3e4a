from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static


@js.jit
def step(x: jax.Array, cfg: Static[dict[str, float]], *, mode: Static[str] = "train") -> jax.Array:
    return x * cfg["lr"] if mode == "train" else x


def test_compiled_keeps_the_signature_and_checks_statics() -> None:
    cfg = {"lr": 0.5}
    compiled = step.lower(jnp.ones(2), cfg).compile()
    assert compiled(jnp.ones(2), {"lr": 0.5}).tolist() == [0.5, 0.5]
    assert compiled(jnp.ones(2), cfg, mode="train").tolist() == [0.5, 0.5]
    assert "mul" in step.lower(jnp.ones(2), cfg).as_text()
    with pytest.raises(js.StaticMismatchError, match=r"^step\(\) was compiled ahead of time for other static "
                                                       r"arguments: cfg\['lr'\]: 0\.5 -> 0\.25\. Lower and compile"):
        compiled(jnp.ones(2), {"lr": 0.25})
    with pytest.raises(js.StaticMismatchError, match=r"mode: 'train' -> 'eval'"):
        compiled(jnp.ones(2), cfg, mode="eval")
    cfg["lr"] = 2.0  # changed in place: never the stale program
    with pytest.raises(js.StaticMismatchError):
        compiled(jnp.ones(2), cfg)


class Scaler:
    def __init__(self, k: float) -> None:
        self.k = k

    @js.jit
    def apply(self: Static[Scaler], x: jax.Array, n: Static[int]) -> jax.Array:
        return x * self.k * n


def test_compiled_method_is_bound_like_the_method() -> None:
    m = Scaler(2.0)
    compiled = m.apply.lower(jnp.ones(2), 3).compile()
    assert compiled(jnp.ones(2), 3).tolist() == [6.0, 6.0]
    assert compiled(jnp.ones(2), n=3).tolist() == [6.0, 6.0]
    with pytest.raises(js.StaticMismatchError, match=r"n: 3 -> 4"):
        compiled(jnp.ones(2), 4)
    unbound = Scaler.apply.lower(m, jnp.ones(2), 3).compile()  # through the class: self given, as for the function
    assert unbound(m, jnp.ones(2), 3).tolist() == [6.0, 6.0]


def test_the_stages_are_jax_stages_instances_and_still_check_statics() -> None:
    x = jnp.ones(2)
    traced, lowered = step.trace(x, {"lr": 0.5}), step.lower(x, {"lr": 0.5})
    compiled = lowered.compile()
    assert isinstance(traced, jax.stages.Traced)
    assert isinstance(lowered, jax.stages.Lowered)
    assert isinstance(compiled, jax.stages.Compiled)
    # jax.jit's tree: the dynamic arguments alone, as the call gave them
    assert lowered.in_tree == compiled.in_tree == traced.in_tree == jax.tree.structure(((x,), {}))
    # JAX's analysis, whatever the backend gives (a TPU gives none before compiling)
    reference = jax.jit(lambda x: x * 0.5).lower(x)
    assert type(lowered.cost_analysis()) is type(reference.cost_analysis())
    assert compiled.input_shardings[0][0].device_set == {jax.devices()[0]}
    assert compiled(x, {"lr": 0.5}).tolist() == [0.5, 0.5]
    with pytest.raises(js.StaticMismatchError, match=r"cfg\['lr'\]: 0\.5 -> 0\.25"):
        compiled(x, {"lr": 0.25})


def _keywords(a: jax.Array, n: Static[float], c: jax.Array, b: jax.Array, *, z: jax.Array) -> jax.Array:
    return a + 2 * c + 3 * b * n + 5 * z


@pytest.mark.parametrize("n", [2, 2.0], ids=["int static (the lane)", "float static"])
def test_export_records_keyword_arguments_as_jax_jit_does(n: float) -> None:
    export = pytest.importorskip("jax.export")  # before JAX 0.4.39, a module that needs absl
    x = jnp.arange(3.0)
    dynamic = {"c": x, "b": x + 1, "z": x + 2}  # positional-or-keyword and keyword-only, not in sorted order
    ref = export.export(jax.jit(_keywords, static_argnames="n"))(x, n=n, **dynamic)
    exp = export.export(js.jit(_keywords))(x, n=n, **dynamic)
    assert exp.in_tree == ref.in_tree == jax.tree.structure(((x,), dynamic))
    assert exp.call(x, **dynamic).tolist() == ref.call(x, **dynamic).tolist() == [16.0, 30.0, 44.0]
    traced = js.jit(_keywords).trace(x, n=n, **dynamic)
    assert traced.in_tree == ref.in_tree
    if "__call__" in vars(jax.stages.Traced):  # a Traced runs its jaxpr from JAX 0.5
        assert traced(x, **dynamic).tolist() == [16.0, 30.0, 44.0]
    compiled = traced.lower().compile()  # JAX's own, called as jax.jit's is: dynamic arguments alone
    assert compiled(x, **dynamic).tolist() == [16.0, 30.0, 44.0]


def test_an_export_of_js_jit_serializes_as_one_of_jax_jit() -> None:
    export = pytest.importorskip("jax.export")  # before JAX 0.4.39, a module that needs absl
    pytest.importorskip("flatbuffers")  # jax.export's serialization needs it
    x = jnp.arange(3.0)
    exp = export.export(js.jit(_keywords))(x, n=2.0, c=x, b=x, z=x)
    ref = export.export(jax.jit(_keywords, static_argnames="n"))(x, n=2.0, c=x, b=x, z=x)
    back = export.deserialize(exp.serialize())
    assert back.in_tree == ref.in_tree and back.in_avals == ref.in_avals
    assert back.call(x, c=x, b=x, z=x).tolist() == export.deserialize(ref.serialize()).call(
        x, c=x, b=x, z=x).tolist() == [0.0, 14.0, 28.0]


def _star(a: jax.Array, *xs: jax.Array, c: jax.Array) -> jax.Array:
    return a + sum(xs) + 5 * c


def test_keyword_only_after_args_extras_keeps_the_programs_layout() -> None:
    export = pytest.importorskip("jax.export")  # before JAX 0.4.39, a module that needs absl
    # The program takes c before the extras, jax.jit's tree puts it after: the tree stays the program's, (a, c,
    # *xs), so that the flat arguments and the tree agree (documented on the jit guide).
    x = jnp.arange(3.0)
    exp = export.export(js.jit(_star))(x, x, c=x)
    assert exp.in_tree == jax.tree.structure(((x, x, x), {}))
    assert exp.call(x, 10 * x, 100 * x).tolist() == [0.0, 151.0, 302.0]  # a=x, c=10x, xs=(100x,)


def _entries(a: jax.Array, *, b: jax.Array, **kw: jax.Array) -> jax.Array:
    return a + 2 * b + 3 * kw["c"] + 4 * kw.get("a0", jnp.zeros(()))


def test_keywords_beside_kwargs_entries_are_laid_out_as_jax_jit_where_their_order_allows() -> None:
    export = pytest.importorskip("jax.export")  # before JAX 0.4.39, a module that needs absl
    x = jnp.arange(3.0)
    ours = export.export(js.jit(_entries))(x, b=x, c=x)  # b sorts before c: jax.jit's tree
    assert ours.in_tree == export.export(jax.jit(_entries))(x, b=x, c=x).in_tree
    # a0 sorts before b, which the program takes by position: the program's tree (documented on the jit guide)
    ours = export.export(js.jit(_entries))(x, b=x, a0=x, c=x)
    assert ours.in_tree == jax.tree.structure(((x, x), {"a0": x, "c": x}))
    assert ours.call(x, 10 * x, a0=x, c=x).tolist() == [0.0, 28.0, 56.0]  # b=10x


def test_lower_while_another_thread_traces_the_key_waits_for_its_program() -> None:
    """``lower`` of a key another thread is tracing waits for that trace and lowers the program it cached, as a
    call would: one trace, not two."""
    import threading
    import time

    started, release = threading.Event(), threading.Event()

    @js.jit
    def step(x: jax.Array, cfg: Static[dict[str, float]]) -> jax.Array:
        started.set()
        release.wait(10)
        return x * cfg["scale"]

    caller = threading.Thread(target=step, args=(jnp.ones(3), {"scale": 2.0}))
    caller.start()
    started.wait(10)
    seen: list[Any] = []
    lowering = threading.Thread(target=lambda: seen.append(step.lower(jnp.ones(3), {"scale": 2.0})))
    lowering.start()
    time.sleep(0.2)  # lower() now waits on the key the caller claimed
    release.set()
    caller.join(10)
    lowering.join(10)
    assert step.trace_count == 1
    assert step.cache_info().currsize == 1
    compiled = seen[0].compile()
    assert compiled(jnp.ones(3), {"scale": 2.0}).tolist() == [2.0] * 3


def test_lower_of_a_value_jax_cannot_trace_names_the_parameter_as_a_call_does() -> None:
    @js.jit
    def step(x: jax.Array, cfg: Static[dict[str, float]]) -> jax.Array:
        return x * cfg["scale"]

    with pytest.raises(js.NonArrayArgumentError) as lowered:
        step.lower("ones", {"scale": 2.0})
    with pytest.raises(js.NonArrayArgumentError) as called:
        step("ones", {"scale": 2.0})
    assert str(lowered.value) == str(called.value) == (
        "step(): parameter 'x' is not Static, so its value is traced as an array, but x is a str. Mark it static "
        "where it is declared (x: Static[...]), or pass an array.")
    assert step.trace_count == 0


def test_lower_of_a_key_the_lane_took_before_it_handed_calls_on() -> None:
    """A function on the exact-key lane with a keyword-only array, given a static value the lane does not take, hands
    its calls to the general path, which keeps the lane's program for the keys the lane took. ``lower`` of one of
    those keys gives a program that runs as the call does."""
    @js.jit
    def scale(n: Static[Any], *, x: jax.Array) -> jax.Array:
        return x * (n if isinstance(n, int) else 2)

    assert scale(3, x=jnp.ones(2)).tolist() == [3.0, 3.0]
    assert scale((1, [2]), x=jnp.ones(2)).tolist() == [2.0, 2.0]  # a list inside: not the lane's
    assert scale(3, x=jnp.ones(2)).tolist() == [3.0, 3.0]
    compiled = scale.lower(3, x=jnp.ones(2)).compile()
    assert compiled(3, x=jnp.arange(2.0)).tolist() == [0.0, 3.0]
