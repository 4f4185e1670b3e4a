"""The shared core: faults that leave nothing behind, jax.disable_jit, tracing without a function-wide lock,
recursion, the bounded cache, and what failed calls keep alive."""

from __future__ import annotations

import collections
import gc
import threading
import time
import weakref
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static

from ._release import Token, held_until_cleared


def test_a_trace_that_raises_leaves_nothing_behind() -> None:
    fail = [True]

    @js.jit
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        if fail[0]:
            raise ValueError("boom")
        return x * n

    with pytest.raises(ValueError, match="boom"):
        f(jnp.ones(2), 2)
    assert f.trace_count == 0
    assert f.cache_info() == js.CacheInfo(hits=0, misses=0, maxsize=8192, currsize=0, evictions=0)
    assert f.retraces == ()
    fail[0] = False
    assert f(jnp.ones(2), 2).tolist() == [2.0, 2.0]
    assert f.trace_count == 1
    assert f.retraces == ()  # the failed trace is no earlier trace to explain against
    assert f.cache_info()[:2] == (0, 1)


def test_failed_traces_do_not_count_toward_max_traces_and_refusals_are_not_hits() -> None:
    @js.jit(max_traces=1)
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        if n < 0:
            raise ValueError("negative")
        return x * n

    with pytest.raises(ValueError):
        f(jnp.ones(1), -1)
    f(jnp.ones(1), 1)  # allowed: the failed trace did not count
    with pytest.raises(js.RetraceError):
        f(jnp.ones(1), 2)
    with pytest.raises(js.RetraceError):  # refused again, and not cached
        f(jnp.ones(1), 2)
    assert f.trace_count == 1
    assert f.cache_info()[:4] == (0, 1, 8192, 1)


def test_a_failing_call_on_the_hit_path_is_no_hit() -> None:
    @js.jit
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    f(jnp.ones(2), 2)
    f(jnp.ones(2), 2)
    with pytest.raises(TypeError):
        f(jnp.ones(2), 2, 3)  # type: ignore[call-arg]
    with pytest.raises(js.NonArrayArgumentError):
        f("not an array", 2)  # type: ignore[arg-type]
    assert f.cache_info()[:2] == (1, 1)


def test_disable_jit_runs_eagerly_without_counting_traces() -> None:
    seen: list[Any] = []

    @js.jit(max_traces=1)
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        seen.append(type(x))
        return x * n

    f(jnp.ones(1), 1)
    with jax.disable_jit():
        for n in (1, 2, 3):
            assert f(jnp.ones(1), n).tolist() == [float(n)]
    assert f.trace_count == 1
    assert all(not isinstance(t, type) or not issubclass(t, jax.core.Tracer) for t in seen[1:])


def test_misses_for_different_keys_trace_in_parallel() -> None:
    """Two threads tracing different static values overlap in time: no function-wide lock is held."""
    inside = threading.Barrier(2, timeout=20)

    @js.jit
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        inside.wait()  # both traces must be running at once to get past this
        return x * n

    results: dict[int, Any] = {}
    threads = [threading.Thread(target=lambda n=n: results.__setitem__(n, f(jnp.ones(1), n))) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert {n: r.tolist() for n, r in results.items()} == {1: [1.0], 2: [2.0]}
    assert f.trace_count == 2


def test_equal_keys_trace_once_under_threads() -> None:
    started = threading.Event()

    @js.jit
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        started.set()
        time.sleep(0.2)  # the other threads arrive while this trace runs
        return x * n

    out: list[Any] = []
    threads = [threading.Thread(target=lambda: out.append(f(jnp.ones(1), 3))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert [o.tolist() for o in out] == [[3.0]] * 4
    assert f.trace_count == 1


def test_a_helper_thread_calling_the_function_during_a_trace_does_not_deadlock() -> None:
    @js.jit
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        if n == 1:
            box: list[Any] = []
            t = threading.Thread(target=lambda: box.append(f(jnp.ones(1), 2)))
            t.start()
            t.join(20)
            assert not t.is_alive(), "deadlock"
            return x * box[0]
        return x * n

    assert f(jnp.ones(1), 1).tolist() == [2.0]


def test_recursion_with_the_same_key_compiles_each_shape_once() -> None:
    @js.jit
    def total(x: jax.Array, op: Static[str]) -> jax.Array:
        if x.shape[0] == 1:
            return x[0]
        half = x.shape[0] // 2
        return total(x[:half], op) + total(x[half:], op)

    assert float(total(jnp.arange(8.0), "sum")) == 28.0
    assert total.trace_count == 4  # 8, 4, 2, 1 elements
    assert float(total(jnp.arange(4.0), "sum")) == 6.0
    assert total.trace_count == 4


def test_the_cache_is_bounded_least_recently_used_first() -> None:
    @js.jit(cache_size=2)
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    x = jnp.ones(1)
    f(x, 1)
    f(x, 2)
    f(x, 1)  # 1 is now the most recently used
    f(x, 3)  # evicts 2
    assert f.cache_info() == js.CacheInfo(hits=1, misses=3, maxsize=2, currsize=2, evictions=1)
    f(x, 1)
    assert f.trace_count == 3
    f(x, 2)
    assert f.trace_count == 4
    assert str(f.retraces[-1]) == ("f was traced again (trace #4) with arguments equal to an earlier trace: its "
                                   "compiled program had been evicted to keep at most cache_size=2 programs.")
    assert f.cache_info().evictions == 2


def test_a_call_shape_first_met_with_a_cached_key_marks_it_used() -> None:
    @js.jit(cache_size=2)
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    x = jnp.ones(1)
    f(x, 1)
    f(x, 2)
    f(x, n=1)  # a new call shape, whose first call finds 1 cached: now the most recently used
    f(x, 3)  # evicts 2
    f(x, 1)
    assert f.trace_count == 3
    assert f.cache_info() == js.CacheInfo(hits=2, misses=3, maxsize=2, currsize=2, evictions=1)


def test_failed_calls_keep_no_static_value_alive() -> None:
    class Cfg:
        pass

    @js.jit
    def f(x: jax.Array, cfg: Static[Any]) -> jax.Array:
        raise ValueError("boom")

    cfg = [Cfg()]
    ref = weakref.ref(cfg[0])
    with pytest.raises(ValueError):
        f(jnp.ones(1), cfg)
    del cfg
    gc.collect()
    assert ref() is None


def test_tracebacks_through_the_dispatcher_show_its_source() -> None:
    import traceback

    @js.jit
    def f(x: jax.Array, cfg: Static[dict[str, int]]) -> jax.Array:
        if cfg["n"] == 2:
            raise ValueError("boom")
        return x

    f(jnp.ones(1), {"n": 1})  # the first call runs in the call itself,
    f(jnp.ones(1), {"n": 3})  # the first the lane does not take, in the lane's; later misses, in the dispatcher
    jax.config.update("jax_traceback_filtering", "off")  # jaxstatic's frames are hidden by default
    try:
        with pytest.raises(ValueError) as info:
            f(jnp.ones(1), {"n": 2})
    finally:
        jax.config.update("jax_traceback_filtering", "auto")
    text = "".join(traceback.format_exception(info.value))
    assert 'File "<jaxstatic>/dispatch of f(2 positional) #' in text
    assert "result = miss.program(*miss.pos, **miss.kw)" in text  # the generated line itself, read from linecache


def test_the_key_function_and_the_dispatcher_agree() -> None:
    @js.jit
    def f(x: jax.Array, cfg: Static[dict[str, Any]], *, n: Static[int] = 2) -> jax.Array:
        return x * n

    x = jnp.ones(1)
    f(x, {"a": 1}, n=3)
    key = f._core._key((x, {"a": 1}), {"n": 3})
    assert list(f._core._programs.cache) == [key]


def test_a_retrace_for_new_shapes_sees_the_callers_values_in_their_order_and_types() -> None:
    seen: list[Any] = []

    @js.jit
    def f(x: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        seen.append(cfg)
        for w in cfg.values():
            if not isinstance(w, dict):
                x = x * w + 1
        return x

    cfg = {"l2": 3.0, "l1": 2, "opts": collections.OrderedDict(b=-0.0, a=(1, 2.5))}
    assert f(jnp.ones(1), cfg).tolist() == [9.0]
    assert seen[0] is cfg  # the first trace: the caller's own object
    assert f(jnp.ones(2), cfg).tolist() == [9.0, 9.0]  # new shapes: the same program traced again
    assert f.trace_count == 2
    again = seen[1]
    assert again == cfg and again is not cfg
    assert list(again) == ["l2", "l1", "opts"] and type(again["l1"]) is int
    assert type(again["opts"]) is collections.OrderedDict and list(again["opts"]) == ["b", "a"]
    assert str(again["opts"]["b"]) == "-0.0"


def test_a_string_inside_dynamic_kwargs_suggests_a_parameter_of_its_own() -> None:
    @js.jit
    def f(x: jax.Array, **extra: jax.Array) -> jax.Array:
        return x

    with pytest.raises(js.NonArrayArgumentError, match=r"Declare mode as a parameter of its own, marked Static "
                                                       r"\(mode: Static\[\.\.\.\]\), rather than marking \*\*extra"):
        f(jnp.ones(1), scale=jnp.ones(1), mode="train")


def test_float_statics_are_keyed_by_their_bits_on_the_hit_path() -> None:
    @js.jit
    def f(x: jax.Array, s: Static[float]) -> jax.Array:
        return x * jnp.copysign(1.0, s)

    for s in (0.5, 0.5, 0.0, -0.0, float("nan"), float("nan"), float("inf"), float("inf")):
        f(jnp.ones(1), s)
    assert f.trace_count == 5
    assert f(jnp.ones(1), -0.0).tolist() == [-1.0]
    assert f.trace_count == 5


def _scaled(x: jax.Array, act: Static[Any]) -> jax.Array:
    return jnp.sum(act(x))


STACKS = {
    "jit(vmap)": lambda f: js.jit(js.vmap(f)),
    "vmap(jit)": lambda f: js.vmap(js.jit(f)),
    "jit(grad)": lambda f: js.jit(js.grad(f)),
    "grad(jit)": lambda f: js.grad(js.jit(f)),
    "jit(grad(checkpoint))": lambda f: js.jit(js.grad(js.checkpoint(f))),
}


@pytest.mark.parametrize("stack", list(STACKS), ids=list(STACKS))
def test_clear_cache_on_a_stack_releases_the_static_values_of_every_transform_in_it(stack: str) -> None:
    f = STACKS[stack](_scaled)
    held_until_cleared(f, Token, lambda g, token: g(jnp.ones(3), token))
