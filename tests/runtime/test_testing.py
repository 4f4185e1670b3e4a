"""jaxstatic.testing: no_retrace, expect_traces and trace_log, for every transform, nested and across threads."""

from __future__ import annotations

import contextlib
import functools
import sys
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, PartitionSpec as P

import jaxstatic as js
from jaxstatic import Static, _stats

from ._devices import CPUS
from ._fresh import fresh


def make_step() -> js.JitFunction[..., jax.Array]:
    @js.jit
    def step(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    return step


@pytest.fixture
def step() -> js.JitFunction[..., jax.Array]:
    fn = make_step()
    fn(jnp.ones(3), 2)  # warmed up: one trace, before any block
    return fn


@pytest.fixture(autouse=True)
def no_block_left_behind() -> object:
    before = _stats._LISTENERS  # the pytest plugin's own, with --jaxstatic-report
    yield
    assert before == _stats._LISTENERS


# -- no_retrace ----------------------------------------------------------------------------------------------


def test_no_retrace_lets_cache_hits_through(step: js.JitFunction[..., jax.Array]) -> None:
    with js.testing.no_retrace(step):
        out = step(jnp.ones(3), 2)
    assert np.array_equal(out, [2.0, 2.0, 2.0]) and step.trace_count == 1


def test_no_retrace_names_the_static_parameter_that_changed(step: js.JitFunction[..., jax.Array]) -> None:
    with pytest.raises(js.RetraceError) as err, js.testing.no_retrace(step):
        step(jnp.ones(3), 3)
    assert str(err.value) == (
        "step was traced (trace #2) inside no_retrace(jit(step)), because n: 2 -> 3. Keep the arguments' shapes, dtypes "
        "and Static values as they were before the block, or mark Static only parameters that take few values.")


def test_no_retrace_names_a_changed_shape_and_leaves_no_trace_behind(step: js.JitFunction[..., jax.Array]) -> None:
    with pytest.raises(js.RetraceError, match=r"because x: float32\[3\] -> float32\[4\]\."), \
            js.testing.no_retrace(step):
        step(jnp.ones(4), 2)
    assert step.trace_count == 1  # the refused trace is not counted, and the shape compiles once the block is over
    assert np.array_equal(step(jnp.ones(4), 2), [2.0] * 4) and step.trace_count == 2


def test_no_retrace_refuses_a_first_trace_and_says_to_warm_up() -> None:
    fresh = make_step()
    with pytest.raises(js.RetraceError) as err, js.testing.no_retrace(fresh):
        fresh(jnp.ones(3), 2)
    assert str(err.value) == ("step was traced (trace #1) inside no_retrace(jit(step)), for the first time. Call it once "
                              "before the block, so that inside it every call reuses a compiled program.")


def test_no_retrace_without_arguments_watches_every_jaxstatic_function(step: js.JitFunction[..., jax.Array]) -> None:
    other = make_step()
    with pytest.raises(js.RetraceError, match=r"inside no_retrace\(\), for the first time"), js.testing.no_retrace():
        other(jnp.ones(3), 2)


def test_no_retrace_of_named_functions_lets_others_trace(step: js.JitFunction[..., jax.Array]) -> None:
    other = make_step()
    with js.testing.no_retrace(step):
        other(jnp.ones(3), 5)
    assert other.trace_count == 1


def test_no_retrace_refuses_a_method_bound_from_a_jaxstatic_function() -> None:
    class Model:
        @js.jit
        def apply(self: Static[object], x: jax.Array, n: Static[int]) -> jax.Array:
            return x * n

    model = Model()
    model.apply(jnp.ones(2), 1)
    with pytest.raises(js.RetraceError, match=r"Model\.apply was traced \(trace #2\) inside "
                                              r"no_retrace\(jit\(Model\.apply\)\), because n: 1 -> 2"), \
            js.testing.no_retrace(model.apply):
        model.apply(jnp.ones(2), 2)


def test_functions_jaxstatic_does_not_transform_are_refused_with_the_fix() -> None:
    plain = jax.jit(lambda x: x)
    with pytest.raises(TypeError, match=r"^no_retrace\(\) watches functions made by jaxstatic transforms .* but got "
                                        r"<PjitFunction .*>, whose traces jaxstatic does not see\. Wrap it with a "
                                        r"jaxstatic transform, or name the jaxstatic function that calls it\.$"):
        js.testing.no_retrace(plain)


def test_a_foreign_wrapper_around_a_jaxstatic_function_is_refused_not_watched() -> None:
    """jax.jit copies the vmap's attributes (its counters among them) through functools.wraps: watching them would
    let a retrace of the outer jax.jit pass unseen."""
    mapped = js.vmap(scale)
    outer = jax.jit(mapped, static_argnums=1)
    outer(jnp.ones((2, 3)), 1)
    for helper in (js.testing.no_retrace, js.testing.trace_log, lambda fn: js.testing.expect_traces(fn, 0)):
        with pytest.raises(TypeError, match=r"watches functions made by jaxstatic transforms, but got <PjitFunction "
                                            r"of .*>, a wrapper around <jaxstatic\.vmap of scale> \(reached through "
                                            r"fn\.__wrapped__\): jaxstatic counts the traces of <jaxstatic\.vmap of "
                                            r"scale>, not those of the wrapper \(a jax\.jit around it traces and "
                                            r"compiles on its own\)\. Make the outer transform a jaxstatic one \(js\.jit "
                                            r"rather than jax\.jit\), or name the jaxstatic function itself "
                                            r"\(fn\.__wrapped__\)\.$"):
            helper(outer)
    # Made a jaxstatic transform, the outer jit's retrace for a new shape is seen and refused.
    compiled = js.jit(mapped)
    compiled(jnp.ones((2, 3)), 1)
    with pytest.raises(js.RetraceError, match=r"because x: float32\[2,3\] -> float32\[4,3\]"), \
            js.testing.no_retrace(compiled):
        compiled(jnp.ones((4, 3)), 1)


def test_a_decorator_around_a_jaxstatic_function_is_refused_naming_the_function_inside(
        step: js.JitFunction[..., jax.Array]) -> None:
    @functools.wraps(step)
    def logged(*args: object) -> jax.Array:
        return step(*args)

    with pytest.raises(TypeError, match=r"a wrapper around <jaxstatic\.jit of step> \(reached through "
                                        r"fn\.__wrapped__\)"):
        js.testing.no_retrace(logged)
    with pytest.raises(js.RetraceError, match=r"inside no_retrace\(jit\(step\)\), because n: 2 -> 3"), \
            js.testing.no_retrace(logged.__wrapped__):
        logged(jnp.ones(3), 3)


# -- a refusal that does not leave the block ---------------------------------------------------------------------


def test_a_refusal_in_a_worker_thread_that_catches_it_fails_the_block(step: js.JitFunction[..., jax.Array]) -> None:
    caught: list[BaseException] = []

    def work() -> None:
        try:
            step(jnp.ones(3), 5)
        except js.RetraceError as error:  # logged and carried on
            caught.append(error)

    with pytest.raises(js.RetraceError) as err, js.testing.no_retrace(step):
        worker = threading.Thread(target=work, name="loader")
        worker.start()
        worker.join()
    assert len(caught) == 1
    assert str(err.value) == (
        f"{caught[0]}\nThat error was raised in thread 'loader' and did not leave the block (caught, or lost with its "
        "thread), so the block fails as it ends.")


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_refusal_that_ends_its_thread_fails_the_block(step: js.JitFunction[..., jax.Array]) -> None:
    workers = [threading.Thread(target=step, args=(jnp.ones(3), n), name=f"w{n}") for n in (6, 7)]
    with pytest.raises(js.RetraceError, match=r"^step was traced \(trace #2\) inside no_retrace\(jit\(step\)\), "
                                              r"because n: 2 -> [67]\..*\nThat error was raised in thread 'w[67]' "
                                              r"and did not leave the block \(caught, or lost with its thread\) "
                                              r"\(1 more trace refused too\), so the block fails as it ends\.$"), \
            js.testing.no_retrace(step):
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    assert step.trace_count == 1


def test_a_refusal_caught_in_the_same_thread_fails_the_block(step: js.JitFunction[..., jax.Array]) -> None:
    with pytest.raises(js.RetraceError, match=r"raised in thread 'MainThread' and did not leave the block"), \
            js.testing.no_retrace(step):
        with contextlib.suppress(js.RetraceError):
            step(jnp.ones(3), 4)
        step(jnp.ones(3), 2)  # the block goes on: cache hits


def test_a_refusal_that_leaves_the_block_is_raised_once(step: js.JitFunction[..., jax.Array]) -> None:
    with pytest.raises(js.RetraceError) as err, js.testing.no_retrace(step):
        step(jnp.ones(3), 4)
    assert "did not leave the block" not in str(err.value)
    assert not any("did not leave the block" in note for note in getattr(err.value, "__notes__", []))


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes are Python 3.11+")
def test_an_error_of_the_block_itself_notes_a_refusal_in_another_thread(step: js.JitFunction[..., jax.Array]) -> None:
    def work() -> None:
        with contextlib.suppress(js.RetraceError):
            step(jnp.ones(3), 9)

    worker = threading.Thread(target=work, name="side")
    with pytest.raises(KeyError) as err, js.testing.no_retrace(step):
        worker.start()
        worker.join()
        raise KeyError("mine")
    [note] = err.value.__notes__
    assert note.startswith("Inside the block, besides: step was traced (trace #2) inside no_retrace(jit(step)), "
                           "because n: 2 -> 9.") and "raised in thread 'side'" in note


# -- guards used again, and as decorators -----------------------------------------------------------------------


def test_a_guard_object_can_be_entered_again(step: js.JitFunction[..., jax.Array]) -> None:
    guard = js.testing.no_retrace(step)
    with guard:
        step(jnp.ones(3), 2)
    with guard, guard:  # again, and inside itself
        step(jnp.ones(3), 2)
    with pytest.raises(js.RetraceError, match=r"inside no_retrace\(jit\(step\)\), because n: 2 -> 3"), guard:
        step(jnp.ones(3), 3)
    budget = js.testing.expect_traces(step, 1)
    for n in (3, 4):
        with budget as log:
            step(jnp.ones(3), n)
        assert [e.number for e in log] == [n - 1]  # each entry counts afresh


def test_expect_traces_as_a_decorator_counts_each_call_on_its_own(step: js.JitFunction[..., jax.Array]) -> None:
    @js.testing.expect_traces(step, 1)
    def one_new_value(n: int) -> jax.Array:
        return step(jnp.ones(3), n)

    assert one_new_value.__name__ == "one_new_value"
    for n in (3, 4, 5):  # as under pytest.mark.parametrize: each call is a block of its own
        assert np.array_equal(one_new_value(n), [n] * 3)
    with pytest.raises(AssertionError, match=r"^expect_traces\(jit\(step\)\) expected exactly 1 trace, but 0 traces "
                                             r"happened\.$"):
        one_new_value(5)


def test_no_retrace_as_a_decorator(step: js.JitFunction[..., jax.Array]) -> None:
    @js.testing.no_retrace(step)
    def run(n: int) -> jax.Array:
        return step(jnp.ones(3), n)

    run(2)
    with pytest.raises(js.RetraceError, match=r"because n: 2 -> 8"):
        run(8)


# -- expect_traces -------------------------------------------------------------------------------------------


def test_expect_traces_passes_on_the_exact_number(step: js.JitFunction[..., jax.Array]) -> None:
    with js.testing.expect_traces(step, 2) as log:
        step(jnp.ones(3), 3)
        step(jnp.ones(3), 3)
        step(jnp.ones(3), 4)
    assert [e.changes for e in log] == [("n: 2 -> 3",), ("n: 3 -> 4",)]


def test_expect_traces_lists_each_trace_when_the_number_differs(step: js.JitFunction[..., jax.Array]) -> None:
    with pytest.raises(AssertionError) as err, js.testing.expect_traces(step, 1):
        step(jnp.ones(3), 3)
        step(jnp.ones(5), 3)
    assert str(err.value) == ("expect_traces(jit(step)) expected exactly 1 trace, but 2 traces happened:\n"
                              "  1. jit(step): trace #2, because n: 2 -> 3\n"
                              "  2. jit(step): trace #3, because x: float32[3] -> float32[5]")


def test_expect_traces_fails_when_too_few_happened(step: js.JitFunction[..., jax.Array]) -> None:
    with pytest.raises(AssertionError, match=r"^expect_traces\(jit\(step\)\) expected exactly 1 trace, but 0 traces "
                                             r"happened\.$"), js.testing.expect_traces(step, 1):
        step(jnp.ones(3), 2)


def test_expect_traces_at_most(step: js.JitFunction[..., jax.Array]) -> None:
    with js.testing.expect_traces(step, at_most=1):
        step(jnp.ones(3), 2)
    with pytest.raises(AssertionError, match=r"^expect_traces\(jit\(step\)\) expected at most 1 trace, but 2 traces "
                                             r"happened:\n  1\. jit\(step\): trace #2, because n: 2 -> 7\n"), \
            js.testing.expect_traces(step, at_most=1):
        step(jnp.ones(3), 7)
        step(jnp.ones(3), 8)


def test_expect_traces_of_any_function(step: js.JitFunction[..., jax.Array]) -> None:
    other = make_step()
    with js.testing.expect_traces(None, 2) as log:
        step(jnp.ones(3), 3)
        other(jnp.ones(3), 3)
    assert [(e.function, e.number, e.retrace) for e in log] == [("step", 2, True), ("step", 1, False)]


def test_expect_traces_lets_an_error_in_the_block_through(step: js.JitFunction[..., jax.Array]) -> None:
    with pytest.raises(KeyError), js.testing.expect_traces(step, 5):
        raise KeyError("mine")


def test_expect_traces_needs_one_number() -> None:
    for both_or_none in ({"n": 1, "at_most": 2}, {}):
        with pytest.raises(TypeError, match=r"^expect_traces\(\) takes one number of traces: exactly that many "
                                            r"\(n\), or at most that many \(at_most=\)\.$"):
            js.testing.expect_traces(None, **both_or_none)
    with pytest.raises(TypeError, match=r"must be an int >= 0, got -1"):
        js.testing.expect_traces(None, -1)


# -- trace_log, nesting, threads -------------------------------------------------------------------------------


def test_trace_log_records_function_transforms_number_and_explanation(step: js.JitFunction[..., jax.Array]) -> None:
    with js.testing.trace_log() as log:
        step(jnp.ones(3), 2)
        step(jnp.ones(3), 9)
    [event] = log
    assert (event.function, event.transforms, event.number, event.kind) == ("step", ("jit",), 2, "trace")
    assert event.explanation == "because n: 2 -> 9" and event.thread == threading.current_thread().name
    assert str(event) == "jit(step): trace #2, because n: 2 -> 9" and log.count(step) == 1


def test_blocks_nest_and_each_sees_the_traces_inside_it(step: js.JitFunction[..., jax.Array]) -> None:
    other = make_step()
    with js.testing.trace_log() as outer:
        step(jnp.ones(3), 3)
        with js.testing.expect_traces(other, 1) as inner, js.testing.no_retrace(step):
            other(jnp.ones(3), 1)
        with pytest.raises(js.RetraceError), js.testing.no_retrace(step):
            step(jnp.ones(3), 4)
    assert [e.function for e in inner] == ["step"] and inner.count(other) == 1
    assert [(e.function, e.number) for e in outer] == [("step", 2), ("step", 1)]


def test_a_trace_in_another_thread_counts(step: js.JitFunction[..., jax.Array]) -> None:
    worker = threading.Thread(target=step, args=(jnp.ones(3), 6), name="worker")
    with pytest.raises(AssertionError, match=r"expected exactly 0 traces, but 1 trace happened:\n  1\. jit\(step\): "
                                             r"trace #2, because n: 2 -> 6"), \
            js.testing.expect_traces(step, 0) as log:
        worker.start()
        worker.join()
    assert [e.thread for e in log] == ["worker"]


def test_concurrent_traces_are_each_recorded_once() -> None:
    fn = make_step()
    with js.testing.trace_log(fn) as log:
        threads = [threading.Thread(target=fn, args=(jnp.ones(3), n)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(e.number for e in log) == list(range(1, 9)) and fn.trace_count == 8


# -- every transform -----------------------------------------------------------------------------------------


def scale(x: jax.Array, k: Static[int]) -> jax.Array:
    return x * k


def test_pmap_traces_are_refused_and_counted() -> None:
    fn = js.pmap(scale, devices=CPUS[:2])
    xs = jnp.ones((2, 3))
    fn(xs, 1)
    with pytest.raises(js.RetraceError, match=r"^scale was traced \(trace #2\) inside no_retrace\(pmap\(scale\)\), because "
                                              r"k: 1 -> 2\."), js.testing.no_retrace(fn):
        fn(xs, 2)
    with js.testing.trace_log() as log:
        fn(xs, 3)
    assert [(e.transforms, e.changes) for e in log] == [(("pmap",), ("k: 1 -> 3",))]


def test_shard_map_traces_are_counted() -> None:
    """Its traces under a jit: outside one, it runs eagerly, as jax.shard_map does, and traces nothing."""
    mesh = Mesh(np.array(CPUS[:2]), ("d",))
    fn = js.shard_map(scale, mesh=mesh, in_specs=(P("d"),), out_specs=P("d"))
    with js.testing.expect_traces(fn, 2) as log:
        fn(jnp.ones(4), 1)
        js.jit(fn)(jnp.ones(4), 1)
        js.jit(fn)(jnp.ones(4), 1)
        js.jit(fn)(jnp.ones(4), 2)
    assert [str(e) for e in log] == ["shard_map(scale): trace #1 (the first)",
                                     "shard_map(scale): trace #2, because k: 1 -> 2"]


def test_vmap_and_grad_count_the_programs_they_build_when_named() -> None:
    mapped = js.vmap(fresh(scale))  # not the vmap of scale other tests built programs for
    grads = js.grad(lambda x, k: (x * k).sum())
    compiled = js.jit(mapped)
    with js.testing.trace_log(mapped, grads) as named, js.testing.trace_log() as compiles:
        compiled(jnp.ones((2, 3)), 1)
        compiled(jnp.ones((2, 3)), 2)
        grads(jnp.ones(3), 2.0)
    assert [str(e) for e in named] == ["vmap(scale): program #1 (the first)",
                                       "vmap(scale): program #2, because k: 1 -> 2",
                                       "grad(<lambda>): program #1 (the first)"]
    # Unnamed, a block watches what compiles: the jit, whose transforms say what it wraps.
    assert [str(e) for e in compiles] == ["jit(vmap(scale)): trace #1 (the first)",
                                          "jit(vmap(scale)): trace #2, because k: 1 -> 2"]


def test_no_retrace_refuses_a_new_vmap_program_before_building_it() -> None:
    mapped = js.vmap(fresh(scale))  # not the vmap of scale the test above built programs for
    mapped(jnp.ones((2, 3)), 1)
    with pytest.raises(js.RetraceError, match=r"^scale was given a new program \(#2\) for new static values inside "
                                              r"no_retrace\(vmap\(scale\)\), because k: 1 -> 2\."), js.testing.no_retrace(mapped):
        mapped(jnp.ones((2, 3)), 2)
    assert mapped.cache_info().misses == 1
    mapped(jnp.ones((2, 3)), 2)
    assert mapped.cache_info().misses == 2


def test_a_budget_over_named_vmap_and_pmap_functions_counts_programs_and_names_each() -> None:
    mapped, parallel = js.vmap(fresh(scale)), js.pmap(scale, devices=CPUS[:2])
    with pytest.raises(AssertionError) as err, js.testing.expect_traces(mapped, at_most=1):
        mapped(jnp.ones((2, 3)), 1)
        mapped(jnp.ones((2, 3)), 2)
    assert str(err.value) == (
        "expect_traces(vmap(scale)) expected at most 1 new program, but 2 new programs were built:\n"
        "  1. vmap(scale): program #1 (the first)\n"
        "  2. vmap(scale): program #2, because k: 1 -> 2\n"
        "vmap(scale) traced for the first time inside expect_traces(vmap(scale)): if another test usually calls it "
        "first (a test now deselected by -k or --lf, or run on another pytest-xdist worker), call it once before the "
        "budgeted code, or count its first trace in the budget.")
    block = js.testing.trace_log(parallel, mapped)
    assert block.where == "trace_log(pmap(scale), vmap(scale))"
    with pytest.raises(AssertionError, match=r"^expect_traces\(pmap\(scale\)\) expected exactly 1 trace, but 0 traces "
                                             r"happened\.$"), js.testing.expect_traces(parallel, 1):
        mapped(jnp.ones((2, 3)), 1)


def test_a_budget_missed_by_retraces_alone_says_nothing_of_first_traces(step: js.JitFunction[..., jax.Array]) -> None:
    with pytest.raises(AssertionError) as err, js.testing.expect_traces(step, at_most=0):
        step(jnp.ones(3), 3)
    assert "first time" not in str(err.value)


def test_a_trace_log_is_indexed_and_shown(step: js.JitFunction[..., jax.Array]) -> None:
    with js.testing.trace_log(step) as log:
        assert repr(log) == "<TraceLog of 0 traces>"
        step(jnp.ones(3), 3)
        step(jnp.ones(3), 4)
    assert log[-1].changes == ("n: 3 -> 4",) and log[0].number == 2
    assert [e.number for e in log[::-1]] == [3, 2]
    assert repr(log) == ("<TraceLog of 2 traces; jit(step): trace #2, because n: 2 -> 3; "
                         "jit(step): trace #3, because n: 3 -> 4>")
    with pytest.raises(IndexError):
        log[2]


def test_js_testing_is_reachable_from_the_package() -> None:
    import jaxstatic.testing

    assert js.testing is jaxstatic.testing
    assert set(js.testing.__all__) == {"Block", "TraceEvent", "TraceLog", "expect_traces", "no_retrace", "trace_log"}
