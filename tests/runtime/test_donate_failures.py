"""A call that fails after JAX consumed its donated buffers keeps the error that happened: an array is named as
deleted only when it was deleted before the call, on every route a failure takes (the program's own run, a compile
error, a refused retrace, an interruption, strict donation, pmap, shard_map), in both hit paths."""

from __future__ import annotations

import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxstatic as js
from jaxstatic import Donate, Static

from ._devices import ACCELERATOR

Params = dict[str, Any]


def _fresh() -> tuple[Params, jax.Array]:
    return {"w": jnp.ones(10), "b": jnp.ones(3)}, jnp.ones(3)


def _body(params: Params, x: jax.Array) -> jax.Array:
    return x * 2.0 + params["b"] + params["w"].sum()  # params['w'] matches no output: XLA cannot reuse it


UNUSABLE = ("_body: donated buffers could not be reused, so donating them saves no memory: params['w'] "
            "(float32[10]). An input buffer is reused only for an output of the same shape and dtype. Return a "
            "value of that shape, or stop donating it (drop Donate[...] or its donate_argnums entry); "
            "strict_donation=False warns instead.")


def test_strict_donation_names_the_unusable_leaf_of_fresh_arguments(hit_path: str) -> None:
    loud = js.jit(_body, donate_argnames="params", strict_donation=True)
    for _ in range(2):  # compiled again each time, so raised again
        params, x = _fresh()
        with pytest.raises(js.UnusableDonationError) as info:
            loud(params, x)
        assert str(info.value) == UNUSABLE
        assert not isinstance(info.value, js.DeletedArrayError)
        assert params["b"].is_deleted() and not params["w"].is_deleted()  # params['b'] consumed by this very call


def test_strict_donation_from_the_environment_names_the_unusable_leaf(hit_path: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAXSTATIC_STRICT_DONATION", "error")
    js.set_strict_donation(None)
    try:
        quiet = js.jit(_body, donate_argnames="params")
        with pytest.raises(js.UnusableDonationError, match=f"^{re.escape(UNUSABLE)}$"):
            quiet(*_fresh())
    finally:
        monkeypatch.delenv("JAXSTATIC_STRICT_DONATION")
        js.set_strict_donation(None)


def _raise(_: Any) -> None:
    raise ValueError("the callback's own error")


@pytest.mark.skipif(ACCELERATOR, reason="on an accelerator a callback's error reaches no call: JAX raises it at its "
                    "effects barrier (jax.effects_barrier(), or the process's exit)")
def test_a_program_that_fails_while_running_keeps_its_error(hit_path: str) -> None:
    # A callback that raises fails the program after it started: JAX consumed the donated buffer, which this call
    # was given alive. On the CPU the error reaches the call itself.
    @js.jit
    def f(x: Donate[jax.Array], fail: jax.Array) -> jax.Array:
        jax.lax.cond(fail, lambda: jax.debug.callback(_raise, x), lambda: None)
        return x + 1

    f(jnp.ones(3), jnp.bool_(False))  # compiled: the failing calls below are hits
    for _ in range(2):
        x = jnp.ones(3)
        with pytest.raises(RuntimeError, match="the callback's own error") as info:
            f(x, jnp.bool_(True))
        assert not isinstance(info.value, js.DeletedArrayError)
        assert x.is_deleted()  # consumed by the call that failed, not before it
    assert f.trace_count == 1


def test_an_array_deleted_before_a_donating_call_is_still_named(hit_path: str) -> None:
    f = js.jit(lambda x, y: x + y, donate_argnums=0)
    f(jnp.ones(3), jnp.ones(3))
    for where in (0, 1):  # donated, not donated
        args = [jnp.ones(3), jnp.ones(3)]
        args[where].delete()
        name = "xy"[where]
        with pytest.raises(RuntimeError, match=re.escape(
                f"<lambda>: parameter {name!r} got a deleted array at {name} (float32[3]): its buffer was deleted "
                "(donated to a jax.jit with donate_argnums, or x.delete()) before this call.")) as info:
            f(*args)
        assert isinstance(info.value, js.DeletedArrayError)


def test_a_compile_error_keeps_its_error(hit_path: str) -> None:
    c = js.jit(lambda x: x + 1, donate_argnums=0, compiler_options={"xla_no_such_option": True})
    for _ in range(2):
        x = jnp.ones(3)
        with pytest.raises(RuntimeError, match="xla_no_such_option") as info:
            c(x)
        assert not isinstance(info.value, js.DeletedArrayError) and not x.is_deleted()


def test_a_refused_retrace_keeps_its_error(hit_path: str) -> None:
    @js.jit(max_traces=1)
    def step(params: Donate[Params], n: Static[int]) -> Params:
        return jax.tree.map(lambda p: p * n, params)

    step(_fresh()[0], 1)
    old = _fresh()[0]
    step(old, 1)
    for params in (_fresh()[0], old):  # fresh arrays, and arrays donated before: the refusal is what happened
        with pytest.raises(js.RetraceError) as info:
            step(params, 2)
        assert not isinstance(info.value, js.DeletedArrayError)


def test_an_error_after_the_program_returned_is_no_deleted_array(monkeypatch: pytest.MonkeyPatch) -> None:
    # An interruption (or any error) arriving once the program ran, as its program is cached: what it consumed is
    # no fault of the arguments.
    from jaxstatic import _parts

    for error in (KeyboardInterrupt, ValueError):
        def refuse(*args: Any, error: type[BaseException] = error) -> Any:
            raise error("interrupted")

        f = js.jit(lambda x: x + 1, donate_argnums=0)
        with monkeypatch.context() as patch:
            patch.setattr(_parts.Programs, "insert", refuse)
            x = jnp.ones(3)
            with pytest.raises(error, match=r"^interrupted$"):
                f(x)
        assert x.is_deleted()
        np.testing.assert_array_equal(f(jnp.ones(3)), 2 * np.ones(3))


@pytest.mark.skipif(ACCELERATOR, reason="on an accelerator a callback's error reaches no call: JAX raises it at its "
                    "effects barrier (jax.effects_barrier(), or the process's exit)")
def test_an_interrupted_program_keeps_its_interruption(hit_path: str) -> None:
    def interrupt(_: Any) -> None:
        raise KeyboardInterrupt

    @js.jit
    def f(x: Donate[jax.Array]) -> jax.Array:
        jax.debug.callback(interrupt, x)
        return x + 1

    for _ in range(2):
        with pytest.raises(BaseException) as info:
            f(jnp.ones(3))
        assert not isinstance(info.value, js.DeletedArrayError)


def test_pmap_keeps_the_errors_of_live_arguments(hit_path: str) -> None:
    n = jax.local_device_count()

    @js.pmap(max_traces=2)
    def step(x: Donate[jax.Array], scale: Static[float]) -> jax.Array:
        if scale < 0:
            raise ValueError("negative scale")
        return x * scale

    x = step(step(jnp.ones((n, 2)), 2.0), 2.0)  # laid out over the devices (a trace of its own): donated for real
    if step.trace_count < 2:  # JAX before 0.5 traces a pmap's own output as any other array: the budget spent here
        step(jnp.ones((n, 2)), 5.0)
    assert step.trace_count == 2
    with pytest.raises(js.RetraceError) as info:
        step(x, 3.0)
    assert not isinstance(info.value, js.DeletedArrayError) and not x.is_deleted()
    with pytest.raises(ValueError, match=r"^negative scale") as raised:
        js.pmap(step.__wrapped__)(x, -1.0)
    assert not isinstance(raised.value, js.DeletedArrayError)


def test_shard_map_keeps_the_errors_of_live_arguments(hit_path: str) -> None:
    from jax.sharding import Mesh, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()), ("batch",))

    def body(x: jax.Array, fail: Static[bool]) -> jax.Array:
        if fail:
            raise ValueError("refused by the body")
        return 2 * x

    double = js.shard_map(body, mesh=mesh, in_specs=P("batch"), out_specs=P("batch"))
    step = js.jit(double, donate_argnums=0)
    x = step(jnp.ones((jax.device_count(), 2)), False)
    with pytest.raises(ValueError, match=r"^refused by the body") as info:
        step(x, True)
    assert not isinstance(info.value, js.DeletedArrayError) and not x.is_deleted()
    x.delete()
    with pytest.raises(js.DeletedArrayError, match=re.escape("parameter 'x' got a deleted array at x (float32[")):
        double(x, False)
