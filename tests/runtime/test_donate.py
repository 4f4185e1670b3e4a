"""``Donate[T]``: donation declared in the signature, with JAX's real deletion, and the errors that name the path."""

from __future__ import annotations

import gc
import re
import warnings
import weakref
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jaxstatic as js
from jaxstatic import Donate, Static

Params = dict[str, Any]


def _params() -> Params:
    return {"layers": [{"w": jnp.ones(4), "b": jnp.zeros(4)}]}


def _update(params: Params, scale: float) -> Params:
    return jax.tree.map(lambda p: p * scale, params)


def test_donate_deletes_the_callers_arrays_and_only_those(hit_path: str) -> None:
    @js.jit
    def step(params: Donate[Params], scale: float) -> Params:
        return _update(params, scale)

    params, other = _params(), _params()
    new = step(params, 2.0)
    assert params["layers"][0]["w"].is_deleted() and params["layers"][0]["b"].is_deleted()
    np.testing.assert_array_equal(new["layers"][0]["w"], 2 * np.ones(4))
    step(other, 3.0)  # a hit donates too
    assert other["layers"][0]["w"].is_deleted()
    assert step.trace_count == 1


def test_a_donated_parameter_may_get_python_scalars() -> None:
    @js.jit
    def step(state: Donate[tuple[Any, ...]]) -> tuple[Any, ...]:
        return tuple(2 * x for x in state)

    x = jnp.ones(2)
    out = step((x, 1.0, np.float32(2)))
    assert x.is_deleted() and float(out[1]) == 2.0


def test_a_plain_parameter_is_not_donated() -> None:
    @js.jit
    def step(params: Params, scale: float) -> Params:
        return _update(params, scale)

    params = _params()
    step(params, 2.0)
    assert not params["layers"][0]["w"].is_deleted()


def test_donate_beside_static_parameters_and_keywords() -> None:
    @js.jit
    def step(n: Static[int], x: Donate[jax.Array], *, y: jax.Array) -> jax.Array:
        return x * n + y

    x, y = jnp.ones(3), jnp.ones(3)
    np.testing.assert_array_equal(step(2, x, y=y), 3 * np.ones(3))
    assert x.is_deleted() and not y.is_deleted()
    x2 = jnp.ones(3)
    step(n=2, x=x2, y=y)
    assert x2.is_deleted()


@pytest.mark.parametrize("inner", [js.grad, js.vmap], ids=["grad", "vmap"])
def test_transforms_that_cannot_donate_pass_the_mark_to_the_jit_above(inner: Any) -> None:
    def loss(w: Donate[jax.Array], x: jax.Array) -> jax.Array:
        return (w * w * x).sum() if inner is js.grad else w * x

    w, x = jnp.ones(3), jnp.ones(3)
    js.jit(inner(loss))(w, x)
    assert w.is_deleted() and not x.is_deleted()


def test_the_jit_above_a_shard_map_donates_what_the_function_declares() -> None:
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    n = jax.local_device_count()
    mesh = Mesh(np.array(jax.devices()), ("batch",))

    def scale(x: Donate[jax.Array], y: jax.Array) -> jax.Array:
        return 2 * x + y

    sharded = js.shard_map(scale, mesh=mesh, in_specs=(P("batch"), P("batch")), out_specs=P("batch"))
    spread = NamedSharding(mesh, P("batch"))  # laid out as the program wants it, so the buffer itself is donated
    x, y = jax.device_put(jnp.ones(2 * n), spread), jax.device_put(jnp.ones(2 * n), spread)
    np.testing.assert_array_equal(js.jit(sharded)(x, y), 3 * np.ones(2 * n))
    assert x.is_deleted() and not y.is_deleted()


def test_donate_of_a_type_defined_only_for_checkers_still_donates() -> None:
    from . import future_donate

    x = jnp.ones(3)
    np.testing.assert_array_equal(js.jit(future_donate.scale)(x, 2), 2 * np.ones(3))
    assert x.is_deleted()


def test_options_and_marks_combine() -> None:
    def step(a: Donate[jax.Array], b: jax.Array, c: jax.Array) -> tuple[jax.Array, ...]:
        return a + 1, b + 1, c + 1

    a, b, c = jnp.ones(2), jnp.ones(2), jnp.ones(2)
    js.jit(step, donate_argnames="b")(a, b, c)
    assert a.is_deleted() and b.is_deleted() and not c.is_deleted()
    a, b, c = jnp.ones(2), jnp.ones(2), jnp.ones(2)
    js.jit(step, donate_argnums=(2,))(a, b, c)
    assert a.is_deleted() and not b.is_deleted() and c.is_deleted()


@pytest.mark.parametrize("spelling", ["static_outside", "static_inside"])
def test_static_and_donate_together_is_an_annotation_error(spelling: str) -> None:
    if spelling == "static_outside":
        def step(n: Static[Donate[int]], x: jax.Array) -> jax.Array:
            return x * n
    else:
        def step(n: Donate[Static[int]], x: jax.Array) -> jax.Array:  # type: ignore[no-redef]
            return x * n
    with pytest.raises(js.AnnotationError, match=r"step: parameter 'n' is both Static and Donate\. A Static value is "
                       r"a Python value compiled into the program: it has no buffer to donate"):
        js.jit(step)(2, jnp.ones(2))


def test_donate_on_a_parameter_made_static_by_option_is_an_annotation_error() -> None:
    def step(n: Donate[int], x: jax.Array) -> jax.Array:
        return x * n

    with pytest.raises(js.AnnotationError, match="parameter 'n' is both Static and Donate"):
        js.jit(step, static_argnames="n")(2, jnp.ones(2))


def test_donate_on_varargs_is_an_annotation_error() -> None:
    def step(*xs: Donate[jax.Array]) -> jax.Array:
        return sum(xs, jnp.zeros(2))

    with pytest.raises(js.AnnotationError, match=r"Donate\[\.\.\.\] on \*xs is not supported"):
        js.jit(step)(jnp.ones(2))


def test_donate_argnames_helper_for_plain_jax() -> None:
    def step(n: Static[int], params: Donate[Params], batch: jax.Array) -> Params:
        return _update(params, n)

    assert js.donate_argnames(step) == ("params",)
    assert js.donate_argnums(step) == (1,)
    params = _params()
    jax.jit(step, static_argnames=js.static_argnames(step), donate_argnames=js.donate_argnames(step))(
        2, params, jnp.ones(1))
    assert params["layers"][0]["w"].is_deleted()


def test_pmap_donates_what_the_signature_declares() -> None:
    n = jax.local_device_count()

    def step(x: Donate[jax.Array], y: jax.Array) -> jax.Array:
        return x + y

    spread = jax.pmap(lambda a: a)  # arrays laid out over the devices already, so pmap donates them, not copies
    x, y = spread(jnp.ones((n, 3))), spread(jnp.ones((n, 3)))
    np.testing.assert_array_equal(js.pmap(step)(x, y), 2 * np.ones((n, 3)))
    assert x.is_deleted() and not y.is_deleted()


# -- the errors ------------------------------------------------------------------------------------------------


def test_passing_a_donated_array_again_names_the_path_and_the_donating_call(hit_path: str) -> None:
    @js.jit
    def step(params: Donate[Params], scale: float) -> Params:
        return _update(params, scale)

    params = _params()
    step(params, 2.0); line = _here()  # noqa: E702
    jax_error = _what_jax_raises_for_a_donated_argument()
    for _ in range(2):  # the hit path too
        with pytest.raises(jax_error, match=re.escape(  # an except clause for JAX's own class still works
                f"step: parameter 'params' got a deleted array at params['layers'][0]['b'] (float32[4]): it was "
                f"donated to step at {__file__}:{line}, which consumed its buffer. Use the value step returned "
                "(params = step(params, ...)), not the one passed in; or copy it before donating.")) as info:
            step(params, 2.0)
        assert isinstance(info.value, js.DeletedArrayError)
        assert isinstance(info.value.__cause__, jax_error)  # JAX's own error, in its backend's words, kept as the cause


def test_a_later_donating_call_is_the_one_named(hit_path: str) -> None:
    # After the first call, a donating call is noted in C where the extension is built: from a hit in C (no frame
    # of jaxstatic's) and from the generated dispatcher (a frame of jaxstatic's, which the note skips).
    @js.jit
    def step(params: Donate[Params], scale: Static[float]) -> Params:
        return _update(params, scale)

    for scale in (2.0, -0.0):  # -0.0: a key the hit in C hands to the generated dispatcher
        for _ in range(2):
            step(_params(), scale)
        params = _params()
        step(params, scale); line = _here()  # noqa: E702
        with pytest.raises(js.DeletedArrayError, match=re.escape(f"donated to step at {__file__}:{line}, which")):
            step(params, scale)
    assert step.trace_count == 2


def test_a_donated_array_passed_again_by_keyword_is_named(hit_path: str) -> None:
    @js.jit
    def step(params: Donate[Params], scale: Static[int]) -> Params:
        return _update(params, scale)

    for _ in range(2):  # a keyword call's own dispatcher, after a first call that compiled it
        step(params=_params(), scale=3)
    params = _params()
    step(params=params, scale=3); line = _here()  # noqa: E702
    for _ in range(2):
        with pytest.raises(js.DeletedArrayError, match=re.escape(
                f"step: parameter 'params' got a deleted array at params['layers'][0]['b'] (float32[4]): it was "
                f"donated to step at {__file__}:{line}, which consumed its buffer.")):
            step(params=params, scale=3)
    assert step.trace_count == 1


def test_the_decision_is_made_from_the_arguments_not_from_jaxs_wording() -> None:
    # A TPU's runtime says "Donation requested for invalid buffer" where the CPU's says "Buffer has been deleted or
    # donated": whatever JAX's class (ValueError or RuntimeError) says, a deleted argument is what is named.
    tpu = "INVALID_ARGUMENT: Invalid buffer passed to Execute() as argument 0 to replica 0: INVALID_ARGUMENT: " \
          "Donation requested for invalid buffer"
    for error in (ValueError, RuntimeError):
        @js.jit
        def f(x: jax.Array, error: Static[type[Exception]] = error) -> jax.Array:
            raise error(tpu)

        x = jnp.ones(3)
        x.delete()
        with pytest.raises(error, match=re.escape(
                "f: parameter 'x' got a deleted array at x (float32[3]): its buffer was deleted")) as info:
            f(x)
        assert isinstance(info.value, js.DeletedArrayError) and str(info.value.__cause__) == tpu
        with pytest.raises(error, match=f"^{re.escape(tpu)}") as info:  # live arguments: JAX's error stands
            f(jnp.ones(3))
        assert not isinstance(info.value, js.DeletedArrayError)


def test_pmap_names_a_donated_array_passed_again(hit_path: str) -> None:
    n = jax.local_device_count()

    @js.pmap
    def step(x: Donate[jax.Array], scale: Static[float]) -> jax.Array:
        return x * scale

    x = step(jnp.ones((n, 2)), 2.0)  # laid out over the devices, as a training loop's state is
    step(x, 2.0); line = _here()  # noqa: E702
    for _ in range(2):  # jax.pmap itself crashes the process here on the CPU (jaxlib 0.10): refused before it
        with pytest.raises(js.DeletedArrayError, match=re.escape(
                f"step: parameter 'x' got a deleted array at x (float32[{n},2]): it was donated to step at "
                f"{__file__}:{line}, which consumed its buffer.")):
            step(x, 2.0)


def test_shard_map_names_a_deleted_array() -> None:
    from jax.sharding import Mesh, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()), ("batch",))
    double = js.shard_map(lambda x: 2 * x, mesh=mesh, in_specs=P("batch"), out_specs=P("batch"))
    x = jnp.ones((jax.device_count(), 2))
    x.delete()
    with pytest.raises(js.DeletedArrayError, match=re.escape(
            "<lambda>: parameter 'x' got a deleted array at x (float32[")):
        double(x)


def test_the_strict_switch_reaches_a_program_already_called(hit_path: str) -> None:
    @js.jit
    def f(x: Donate[jax.Array]) -> jax.Array:
        return x + 1 if x.ndim == 1 else x.sum()  # reusable for a vector; a matrix's sum cannot reuse its buffer

    for _ in range(3):
        f(jnp.ones(3))
    js.set_strict_donation(True)
    try:  # the same program (one static key), compiled by JAX for a new shape: checked then
        with pytest.raises(js.UnusableDonationError, match=re.escape("f: donated buffers could not be reused")):
            f(jnp.ones((6, 7)))
    finally:
        js.set_strict_donation(None)
    with pytest.warns(UserWarning, match="not usable"):
        f(jnp.ones((6, 7)))
    assert f.trace_count == 3  # the refused program is dropped, so that the next call is checked again


def _what_jax_raises_for_a_donated_argument() -> type[BaseException]:
    """The class plain ``jax.jit`` raises for an argument donated before: ``ValueError`` (the runtime's
    INVALID_ARGUMENT) on some releases, ``RuntimeError`` ("Array has been deleted") on others."""
    step = jax.jit(lambda p: _update(p, 2.0), donate_argnums=0)
    params = _params()
    step(params)
    try:
        step(params)
    except (ValueError, RuntimeError) as error:
        return type(error)
    raise AssertionError("jax.jit took a donated argument again")


def _here() -> int:
    import sys
    return sys._getframe(1).f_lineno


def test_a_donated_array_passed_to_another_function_names_the_donor() -> None:
    @js.jit
    def step(params: Donate[Params]) -> Params:
        return _update(params, 2.0)

    @js.jit
    def evaluate(weights: Params) -> jax.Array:
        return weights["layers"][0]["w"].sum()

    params = _params()
    step(params)
    with pytest.raises(js.DeletedArrayError, match=re.escape(
            "evaluate: parameter 'weights' got a deleted array at weights['layers'][0]['b'] (float32[4]): it was "
            "donated to step as parameter 'params' at ")):
        evaluate(params)


def test_an_array_deleted_by_the_user_names_the_path() -> None:
    @js.jit
    def f(x: jax.Array, ys: list[jax.Array]) -> jax.Array:
        return x + ys[1]

    ys = [jnp.ones(2), jnp.ones(2)]
    ys[1].delete()
    with pytest.raises(RuntimeError, match=re.escape(
            "f: parameter 'ys' got a deleted array at ys[1] (float32[2]): its buffer was deleted (donated to a "
            "jax.jit with donate_argnums, or x.delete()) before this call. Pass a live array")):
        f(jnp.ones(2), ys)


def test_the_same_buffer_twice_with_one_use_donated_names_both_paths() -> None:
    @js.jit
    def step(params: Donate[Params], extra: jax.Array) -> Params:
        return _update(params, extra.sum())

    params = _params()
    with pytest.raises(RuntimeError, match=re.escape(
            "step: the same array is passed at params['layers'][0]['w'] and at extra, and the one at "
            "params['layers'][0]['w'] is donated: a donated buffer is consumed by the call, so it cannot also be read "
            "in the same call. Pass a copy at one of them (jnp.copy(x)), or donate neither.")):
        step(params, params["layers"][0]["w"])


def test_the_same_buffer_donated_at_two_paths_says_both() -> None:
    @js.jit
    def step(t: Donate[dict[str, jax.Array]]) -> jax.Array:
        return t["fast"] + t["slow"]

    w = jnp.ones(2)
    with pytest.raises(RuntimeError, match=re.escape(
            "step: the same array is passed at t['fast'] and at t['slow'], and both are donated: a donated buffer is "
            "consumed by the call, so it cannot be donated twice in the same call. Pass a copy at one of them "
            "(jnp.copy(x)), or donate neither.")):
        step({"fast": w, "slow": w})


def test_other_failures_are_left_as_they_were() -> None:
    @js.jit
    def f(x: Donate[jax.Array]) -> jax.Array:
        raise ValueError("mine")

    with pytest.raises(ValueError, match=r"^mine") as info:
        f(jnp.ones(2))
    assert not isinstance(info.value, js.DeletedArrayError)


# -- strict donation ---------------------------------------------------------------------------------------------


def _total(x: Donate[jax.Array], y: jax.Array) -> jax.Array:
    return (x * y).sum()  # a scalar: no output can reuse x's buffer


STRICT = re.escape("_total: donated buffers could not be reused, so donating them saves no memory: x (float32[3,4]).")


def test_unusable_donation_warns_by_default() -> None:
    with pytest.warns(UserWarning, match="Some donated buffers were not usable"):
        js.jit(_total)(jnp.ones((3, 4)), jnp.ones((3, 4)))


def test_an_unusable_donation_keeps_no_buffer_alive() -> None:
    f = js.jit(_total)
    xs = [jnp.ones((6, 4)) for _ in range(3)]
    refs = [weakref.ref(x) for x in xs]
    with pytest.warns(UserWarning, match="not usable"):
        for x in xs:
            f(x, x)
    assert not any(x.is_deleted() for x in xs)
    del x, xs
    gc.collect()
    assert all(r() is None for r in refs)


def test_strict_donation_option_raises_naming_the_path() -> None:
    f = js.jit(_total, strict_donation=True)
    for _ in range(2):  # compiled again, so raised again
        with pytest.raises(js.UnusableDonationError, match=STRICT):
            f(jnp.ones((3, 4)), jnp.ones((3, 4)))


def test_strict_donation_by_switch_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # checked when a program compiles: shapes of their own, which no other test compiled
    js.set_strict_donation(True)
    try:
        with pytest.raises(js.UnusableDonationError, match=STRICT.replace("3,4", "2,4")):
            js.jit(_total)(jnp.ones((2, 4)), jnp.ones((2, 4)))
        with pytest.warns(UserWarning, match="not usable"):  # the option wins over the switch
            js.jit(_total, strict_donation=False)(jnp.ones((4, 4)), jnp.ones((4, 4)))
    finally:
        js.set_strict_donation(None)
    monkeypatch.setenv("JAXSTATIC_STRICT_DONATION", "1")
    js.set_strict_donation(None)  # reads the environment again, as importing jaxstatic does
    try:
        with pytest.raises(js.UnusableDonationError, match=STRICT.replace("3,4", "5,4")):
            js.jit(_total)(jnp.ones((5, 4)), jnp.ones((5, 4)))
    finally:
        monkeypatch.delenv("JAXSTATIC_STRICT_DONATION")
        js.set_strict_donation(None)


def test_strict_donation_is_quiet_when_every_buffer_is_reused() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = jnp.ones(3)
        js.jit(lambda x: x + 1, donate_argnums=0, strict_donation=True)(x)
    assert x.is_deleted()


def test_strict_donation_must_be_a_bool() -> None:
    with pytest.raises(js.OptionError, match=r"strict_donation of _total is 'yes'\. Give True"):
        js.jit(_total, strict_donation="yes")


_trees = st.recursive(
    st.just(0),
    lambda inner: st.one_of(st.lists(inner, min_size=1, max_size=3),
                            st.dictionaries(st.sampled_from(["a", "b", "w"]), inner, min_size=1, max_size=3)),
    max_leaves=6)


@settings(max_examples=15, deadline=None)
@given(_trees)
def test_the_named_path_leads_to_a_deleted_leaf_of_the_argument(shape: Any) -> None:
    @js.jit
    def step(params: Donate[Any]) -> Any:
        return jax.tree.map(lambda p: p + 1, params)

    params = jax.tree.map(lambda _: jnp.ones(2), shape)
    step(params)
    with pytest.raises(js.DeletedArrayError) as info:
        step(params)
    path = re.search(r"deleted array at (params\S*) \(", str(info.value))
    assert path is not None
    assert eval(path.group(1), {"params": params}).is_deleted()  # the path, as Python reads it


class _Scale:
    """A static value whose lifetime the test watches (hashable by identity)."""

    def __init__(self, value: float) -> None:
        self.value = value


def test_a_donating_program_goes_when_the_cache_drops_it(hit_path: str) -> None:
    # By reference counting alone, as a program that donates nothing goes: nothing of the donation record makes a
    # cycle that keeps the program, and the static values its body holds, alive until a collection.
    @js.jit
    def step(params: Donate[Params], scale: Static[_Scale]) -> Params:
        return _update(params, scale.value)

    scale = _Scale(2.0)
    ref = weakref.ref(scale)
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):  # the first call, then hits
            step(_params(), scale)
        step.clear_cache()
        del scale
        assert ref() is None
    finally:
        gc.enable()
