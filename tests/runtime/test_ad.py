"""grad, value_and_grad and checkpoint: Static values pass through, NoDiff values are never differentiated, options
are checked at decoration, and the transforms compose with jit with one trace per distinct static value."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxstatic as js
from jaxstatic import NoDiff, Static

P, X = jnp.array([0.5, -1.0, 2.0]), jnp.array([1.0, 2.0, 3.0])
CFG = {"act": jnp.tanh, "scale": 2.0}


def loss_int(params: jax.Array, x: jax.Array, n: Static[int]) -> jax.Array:
    return jnp.sum((params * x) ** n)


def loss_fn(params: jax.Array, x: jax.Array, act: Static[Callable[[jax.Array], jax.Array]]) -> jax.Array:
    return jnp.sum(act(params * x))


def loss_cfg(params: jax.Array, x: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
    return jnp.sum(cfg["act"](params * x)) * cfg["scale"]


def close(a: Any, b: Any) -> bool:
    return all(jax.tree_util.tree_leaves(jax.tree_util.tree_map(np.allclose, a, b)))


CASES = [(loss_int, 3, 4), (loss_fn, jnp.sin, jnp.cos), (loss_cfg, CFG, {"act": jnp.sin, "scale": 3.0})]


@pytest.mark.parametrize(("loss", "static", "other"), CASES, ids=["int", "callable", "dict"])
@pytest.mark.parametrize("transform", [js.grad, js.value_and_grad], ids=["grad", "value_and_grad"])
def test_static_values_pass_through_and_match_jax(transform: Any, loss: Callable[..., jax.Array], static: Any,
                                                  other: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    reference = jax.grad if transform is js.grad else jax.value_and_grad
    name = list(inspect.signature(loss).parameters)[2]
    f = transform(loss)
    for value in (static, other):
        assert close(f(P, X, value), reference(partial(loss, **{name: value}))(P, X))
    built: list[Any] = []  # equal static values reuse the program of their key: JAX's transform is not applied again
    jax_transform = getattr(jax, transform.__name__)
    monkeypatch.setattr(jax, transform.__name__, lambda *a, **k: built.append(a) or jax_transform(*a, **k))
    same = dict(static) if isinstance(static, dict) else static
    assert close(f(P, X, same), reference(partial(loss, **{name: static}))(P, X))
    assert built == []
    assert f.cache_info().currsize == 2


def test_value_and_grad_with_aux_matches_jax() -> None:
    def loss(params: jax.Array, cfg: Static[dict[str, Any]]) -> tuple[jax.Array, dict[str, jax.Array]]:
        y = cfg["act"](params)
        return jnp.sum(y), {"y": y}

    got = js.value_and_grad(loss, has_aux=True)(P, CFG)
    assert close(got, jax.value_and_grad(partial(loss, cfg=CFG), has_aux=True)(P))


def test_argnums_int_or_tuple_and_argnames_give_jaxs_result_structure() -> None:
    def loss(n: Static[int], params: jax.Array, x: jax.Array) -> jax.Array:
        return jnp.sum((params * x) ** n)

    bound = partial(loss, 2)  # positions after the Static one, as jax.grad sees them
    default = js.grad(loss)(2, P, X)
    assert isinstance(default, jax.Array) and close(default, jax.grad(bound)(P, X))
    assert close(js.grad(loss, argnums=2)(2, P, X), jax.grad(bound, argnums=1)(P, X))
    single = js.grad(loss, argnums=(1,))(2, P, X)
    assert isinstance(single, tuple) and close(single, jax.grad(bound, argnums=(0,))(P, X))
    both = js.grad(loss, argnums=(2, 1))(2, P, X)
    assert close(both, jax.grad(bound, argnums=(1, 0))(P, X))
    assert close(js.grad(loss, argnames="x")(2, P, X), jax.grad(bound, argnums=1)(P, X))
    assert close(js.grad(loss, argnames=("params", "x"))(2, x=X, params=P), jax.grad(bound, argnums=(0, 1))(P, X))


def test_nodiff_parameters_are_traced_and_skipped_by_default() -> None:
    seen: list[Any] = []

    @js.jit
    @js.value_and_grad
    def loss(key: NoDiff[jax.Array], params: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        seen.append(key)
        return jnp.sum(cfg["act"](params) * key)

    key = jnp.array([1.0, 0.0, 2.0])
    assert close(loss(key, P, CFG), jax.value_and_grad(partial(loss.__wrapped__.__wrapped__, cfg=CFG), argnums=1)(key, P))
    assert isinstance(seen[0], jax.core.Tracer)  # traced, not static
    assert loss.trace_count == 1


def test_bare_and_configured_decorators() -> None:
    @js.grad
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return jnp.sum(x**n)

    @js.grad(argnames="y")
    def g(x: jax.Array, y: jax.Array, n: Static[int]) -> jax.Array:
        return jnp.sum(x * y**n)

    assert close(f(X, 2), 2 * X)
    assert close(g(P, X, 2), 2 * P * X)


def test_argnums_misuse_is_an_error_at_decoration() -> None:
    def loss(params: jax.Array, x: jax.Array, cfg: Static[dict[str, Any]], key: NoDiff[jax.Array]) -> jax.Array:
        return jnp.sum(params * x * key) * cfg["scale"]

    cases = [
        (dict(argnums=2), "jaxstatic: argnums of loss names 'cfg', which is Static. A Static value is not an array; "
                          "drop 'cfg' from argnums, or make it dynamic."),
        (dict(argnames=("params", "cfg")), "jaxstatic: argnames of loss names 'cfg', which is Static."),
        (dict(argnums=(0, 3)), "jaxstatic: argnums of loss names 'key', which is NoDiff (traced, never "
                               "differentiated). Drop 'key' from argnums, or remove its NoDiff mark."),
        (dict(argnums=4), "jaxstatic: argnums of loss contains 4, but loss(params, x, cfg, key) has 4 positional "
                          "parameter(s). Use an index below 4, or name the parameter."),
        (dict(argnames="parms"), "jaxstatic: argnames of loss names 'parms', which is not a parameter of "
                                 "loss(params, x, cfg, key) (did you mean 'params'?). Name one of its parameters."),
        (dict(argnums=0, argnames="x"), "jaxstatic: argnums/argnames of loss are both given (0 and 'x'). Name the "
                                        "differentiated parameters one way."),
    ]
    for transform in (js.grad, js.value_and_grad):
        for options, message in cases:
            with pytest.raises(js.OptionError, match=re.escape(message)):
                transform(loss, **options)


def test_nothing_to_differentiate_by_default() -> None:
    @js.grad
    def f(n: Static[int], key: NoDiff[jax.Array]) -> jax.Array:
        return key * n

    with pytest.raises(js.OptionError, match=re.escape(
            "jaxstatic: argnums of f has no parameter to differentiate by default: every parameter is Static, "
            "NoDiff or variadic. Give argnums/argnames, or leave a parameter unmarked.")):
        f(2, X)


@pytest.mark.parametrize("transform", [js.grad, js.value_and_grad, js.checkpoint])
def test_bad_inputs_get_jits_named_errors(transform: Any) -> None:
    f = transform(loss_cfg)
    with pytest.raises(js.NonStaticValueError, match="^" + re.escape(
            "loss_cfg(): parameter 'cfg' is Static, but cfg['scale'] is a jax.Array (float32[2]), which cannot be "
            "static: a jax.Array is not hashable, and its value is only known at run time. Non-hashable static "
            "arguments are not supported. Pass it through a parameter that is not Static, or, if it truly is a "
            "constant, convert it to a "
            "tuple (tuple(x.tolist())).") + "$"):
        f(P, X, {"act": jnp.tanh, "scale": jnp.ones(2)})
    for args in [("a", X, CFG), (P, "a", CFG)]:  # the differentiated parameter, and another one
        name = "params" if isinstance(args[0], str) else "x"
        with pytest.raises(js.NonArrayArgumentError, match="^" + re.escape(
                f"loss_cfg(): parameter {name!r} is not Static, so its value is traced as an array, but {name} is a "
                f"str. Mark it static where it is declared ({name}: Static[...]), or pass an array.") + "$"):
            f(*args)


def test_differentiated_parameter_left_to_its_default_is_refused_and_no_hit() -> None:
    @js.grad(argnames="x")
    def f(params: jax.Array, x: jax.Array = X, n: Static[int] = 2) -> jax.Array:
        return jnp.sum(params * x**n)

    with pytest.raises(js.MissingArgumentError, match=re.escape(
            "f(): jaxstatic.grad differentiates parameter 'x', but this call leaves it to its default. Pass x in "
            "the call, or differentiate another parameter (argnums/argnames).")):
        f(P)
    assert f.cache_info()[:2] == (0, 0)
    assert close(f(P, X), 2 * P * X)


def test_second_order_keeps_each_transforms_own_argnums() -> None:
    def f(x: jax.Array, y: jax.Array, n: Static[int]) -> jax.Array:
        return x**n * jnp.sin(y)

    mixed = js.grad(js.grad(f, argnums=0), argnums=1)
    reference = jax.grad(jax.grad(partial(f, n=3), argnums=0), argnums=1)
    assert close(mixed(1.5, 0.5, 3), reference(1.5, 0.5))


def test_grad_keeps_its_meaning_under_disable_jit() -> None:
    with jax.disable_jit():
        assert close(js.grad(loss_int)(P, X, 2), jax.grad(partial(loss_int, n=2))(P, X))


def test_wrappers_keep_signature_wrapped_annotations_and_attributes() -> None:
    def loss(params: jax.Array, cfg: Static[dict[str, Any]], key: NoDiff[jax.Array]) -> jax.Array:
        return params

    loss.units = "nats"  # type: ignore[attr-defined]
    for transform in (js.grad, js.value_and_grad, js.checkpoint, js.remat, js.custom_vjp, js.custom_jvp):
        f = transform(loss)
        assert f.__wrapped__ is loss
        assert inspect.signature(f) == inspect.signature(loss)
        assert f.__annotations__ == loss.__annotations__
        assert (f.__name__, f.units) == ("loss", "nats")
    assert js.remat is js.checkpoint


# -- compositions: Static all the way down, one trace per distinct static value, counted by the jit ------------


def test_jit_of_grad() -> None:
    f = js.jit(js.grad(loss_cfg))
    for cfg in (CFG, dict(CFG), {"act": jnp.tanh, "scale": 2.0}):
        assert close(f(P, X, cfg), jax.grad(partial(loss_cfg, cfg=CFG))(P, X))
    assert f.trace_count == 1
    other = {"act": jnp.tanh, "scale": 3.0}
    assert close(f(P, X, other), jax.grad(partial(loss_cfg, cfg=other))(P, X))
    assert f.trace_count == 2
    assert str(f.retraces[-1]) == "loss_cfg was traced again (trace #2) because cfg['scale']: 2.0 -> 3.0"


def test_grad_of_jit() -> None:
    inner = js.jit(loss_int)
    f = js.grad(inner, argnums=(0, 1))
    for _ in range(3):
        assert close(f(P, X, 3), jax.grad(partial(loss_int, n=3), argnums=(0, 1))(P, X))
    assert inner.trace_count == 1
    f(P, X, 2)
    assert inner.trace_count == 2


def test_jit_of_value_and_grad_with_aux() -> None:
    def loss(params: jax.Array, act: Static[Callable[[jax.Array], jax.Array]]) -> tuple[jax.Array, jax.Array]:
        y = act(params)
        return jnp.sum(y), y

    f = js.jit(js.value_and_grad(loss, has_aux=True))
    for act in (jnp.sin, jnp.sin, jnp.cos, jnp.sin):
        assert close(f(P, act), jax.value_and_grad(partial(loss, act=act), has_aux=True)(P))
    assert f.trace_count == 2


def test_jit_of_checkpoint_and_grad_through_it() -> None:
    f = js.jit(js.checkpoint(loss_cfg))
    g = js.jit(js.grad(js.checkpoint(loss_cfg, prevent_cse=False)))
    for _ in range(2):
        assert close(f(P, X, CFG), loss_cfg(P, X, CFG))
        assert close(g(P, X, dict(CFG)), jax.grad(jax.checkpoint(partial(loss_cfg, cfg=CFG)))(P, X))
    assert (f.trace_count, g.trace_count) == (1, 1)


@pytest.mark.parametrize(("loss", "static", "other"), CASES, ids=["int", "callable", "dict"])
def test_checkpoint_static_values_match_jax(loss: Callable[..., jax.Array], static: Any, other: Any) -> None:
    f = js.checkpoint(loss, policy=jax.checkpoint_policies.nothing_saveable)
    name = list(inspect.signature(loss).parameters)[2]
    for value in (static, other, static):
        reference = jax.checkpoint(partial(loss, **{name: value}), policy=jax.checkpoint_policies.nothing_saveable)
        assert close(f(P, X, value), reference(P, X))
        assert close(jax.grad(f)(P, X, value), jax.grad(reference)(P, X))
    assert f.cache_info().currsize == 2


def test_checkpoint_passes_policy_and_prevent_cse_to_jax() -> None:
    policy = jax.checkpoint_policies.dots_saveable
    f = js.checkpoint(loss_int, policy=policy, prevent_cse=False)
    (eqn,) = [e for e in jax.make_jaxpr(partial(f, n=2))(P, X).eqns if "remat" in e.primitive.name]
    assert eqn.params["policy"] == policy and eqn.params["prevent_cse"] is False


def test_checkpoint_static_argnums_add_to_the_annotations() -> None:
    def f(x: jax.Array, n: int) -> jax.Array:
        return x * n

    g = js.checkpoint(f, static_argnums=1)
    assert close(jax.grad(g)(2.0, 3), 3.0) and close(jax.grad(g)(2.0, 4), 4.0)
    assert g.cache_info().currsize == 2
    with pytest.raises(js.OptionError, match="static_argnums of f contains 2"):
        js.checkpoint(f, static_argnums=2)


def _power(x: jax.Array, n: int) -> jax.Array:
    return jnp.sum(x**n)


INNER_STATIC = {
    "checkpoint static_argnames": lambda: js.checkpoint(_power, static_argnames="n"),
    "checkpoint static_argnums": lambda: js.checkpoint(_power, static_argnums=1),
    "grad of checkpoint": lambda: js.grad(js.checkpoint(_power, static_argnames="n")),
    "custom_jvp nondiff_argnums": lambda: _custom_power(),
}


def _custom_power() -> Any:
    f = js.custom_jvp(_power, nondiff_argnums=(1,))
    f.defjvp(lambda n, p, t: (_power(p[0], n), jnp.sum(n * p[0] ** (n - 1) * t[0])))
    return f


@pytest.mark.parametrize("inner", list(INNER_STATIC), ids=list(INNER_STATIC))
def test_a_parameter_static_by_an_inner_transforms_option_is_static_above_it(inner: str) -> None:
    f = js.jit(INNER_STATIC[inner]())
    x = jnp.array([1.0, 2.0])
    for n in (3, 3, 2):
        want = jax.grad(_power)(x, n) if "grad" in inner else _power(x, n)
        np.testing.assert_allclose(f(x, n), want)
    assert f.trace_count == 2


def _picked(x: jax.Array, n: Static[int], *ys: jax.Array) -> jax.Array:
    return x * ys[1] ** n


@pytest.mark.parametrize("argnums", [3, np.int64(3), (3, 0), (np.int32(0), 2)], ids=str)
def test_argnums_reach_into_args_as_in_jax_grad(argnums: Any) -> None:
    theirs = jax.grad(lambda x, *ys: _picked(x, 2, *ys), argnums=jax.tree_util.tree_map(lambda i: int(i) - (i > 1),
                                                                                        argnums))
    args = (1.5, 2.0, 3.0)
    want = theirs(*args)
    got = js.grad(_picked, argnums=argnums)(args[0], 2, *args[1:])
    assert isinstance(got, tuple) == isinstance(want, tuple)  # an integer, numpy's too, gives one gradient
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(js.jit(js.grad(_picked, argnums=argnums))(args[0], 2, *args[1:]), want)


def _spread(*args: jax.Array) -> jax.Array:
    return jnp.sum(args[0] ** 2 * args[1])


@pytest.mark.parametrize("argnums", [None, 0, 1, (1, 0)], ids=str)
@pytest.mark.parametrize("value", [False, True], ids=["grad", "value_and_grad"])
def test_a_variadic_function_is_differentiated_as_jax_grad_does(argnums: Any, value: bool) -> None:
    theirs, ours = (jax.value_and_grad, js.value_and_grad) if value else (jax.grad, js.grad)
    options = {} if argnums is None else {"argnums": argnums}
    args = (X, jnp.array(3.0))
    want = theirs(_spread, **options)(*args)
    assert close(ours(_spread, **options)(*args), want)
    assert close(js.jit(ours(_spread, **options))(*args), want)


def test_a_variadic_functions_named_parameters_keep_their_rules() -> None:
    def f(n: Static[int], key: NoDiff[jax.Array], *xs: jax.Array) -> jax.Array:
        return jnp.sum(xs[0] ** n * key)

    g = js.jit(js.grad(f))
    assert g(3, jnp.array(2.0), X).tolist() == (6.0 * X**2).tolist()
    assert g(2, jnp.array(1.0), X, X).tolist() == (2.0 * X).tolist()
    assert g.trace_count == 2
    with pytest.raises(js.MissingArgumentError, match="^" + re.escape(
            "f(): jaxstatic.grad differentiates xs[0], but this call passes no values to *xs. Pass at least 1, or "
            "differentiate another parameter (argnums/argnames).") + "$"):
        js.grad(f)(2, jnp.array(1.0))
    with pytest.raises(js.MissingArgumentError, match=re.escape("passes only 1 value to *xs. Pass at least 2")):
        js.grad(f, argnums=3)(2, jnp.array(1.0), X)


def _erasing(fn: Callable[..., jax.Array]) -> Callable[..., jax.Array]:
    def wrapper(*args: Any, **kwargs: Any) -> jax.Array:
        return fn(*args, **kwargs)

    return wrapper


def test_a_signature_erasing_wrapper_is_differentiated_and_still_warns_of_the_static_it_hides() -> None:
    @_erasing
    def power(x: jax.Array, n: Static[int]) -> jax.Array:
        return jnp.sum(x**n)

    with pytest.warns(js.HiddenStaticWarning, match=re.escape(
            "jaxstatic.grad cannot see the Static parameter 'n' of power: decorator _erasing hides it")):
        got = js.grad(power)(X, 3)
    assert got.tolist() == (3 * X**2).tolist()


class HessianFunction(js.GradFunction[Any, Any]):
    """The example of ARCHITECTURE.md's recipe for a new transform, as written there: ``js.hessian``, a
    ``GradFunction`` subclass saying its name and JAX's transform it applies."""

    _transform_name = "hessian"
    _jax_transform = staticmethod(jax.hessian)


def hessian(fn: Callable[..., Any], /, *, argnums: int | tuple[int, ...] | None = None,
            argnames: str | tuple[str, ...] | None = None, has_aux: bool = False,
            holomorphic: bool = False) -> HessianFunction:
    return HessianFunction(fn, argnums=argnums, argnames=argnames, has_aux=has_aux, holomorphic=holomorphic)


def test_the_new_transform_recipes_example_runs_as_written(hit_path: str) -> None:
    def cubed(key: NoDiff[jax.Array], x: jax.Array, power: Static[int]) -> jax.Array:
        return jnp.sum(key * x**power)

    def plain(x: jax.Array, power: int) -> jax.Array:
        return jnp.sum(X * x**power)

    h = js.jit(hessian(cubed))
    assert close(h(X, P, 3), jax.hessian(plain)(P, 3))  # NoDiff `key` skipped: the hessian in `x`
    assert close(h(X, P, 2), jax.hessian(plain)(P, 2))
    assert close(h(X, P, 3), jax.hessian(plain)(P, 3))
    assert (h.trace_count, h.cache_info().hits) == (2, 1)
    assert repr(hessian(cubed)) == "<jaxstatic.hessian of cubed>"
    with pytest.raises(js.OptionError, match=r"names 'key', which is NoDiff"):
        hessian(cubed, argnames="key")
