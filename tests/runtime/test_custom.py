"""custom_vjp and custom_jvp: Static and NoDiff parameters are JAX's nondiff arguments, in JAX's positions, with any
static-hashable value; rules that do not fit are named; the transforms compose with jit and grad."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxstatic as js
from jaxstatic import NoDiff, Static

X = jnp.array([0.5, -1.0, 2.0])
CFG = {"act": jnp.sin, "dact": jnp.cos, "scale": 2.0}


def close(a: Any, b: Any) -> bool:
    return all(jax.tree_util.tree_leaves(jax.tree_util.tree_map(np.allclose, a, b)))


def power(x: jax.Array, n: Static[int]) -> jax.Array:
    return x**n


def power_fwd(x: jax.Array, n: int) -> tuple[jax.Array, jax.Array]:
    return x**n, x


def power_bwd(n: int, x: jax.Array, g: jax.Array) -> tuple[jax.Array]:
    return (10.0 * n * x ** (n - 1) * g,)  # scaled, so that the rule visibly replaces JAX's own derivative


def apply(x: jax.Array, act: Static[Callable[[jax.Array], jax.Array]]) -> jax.Array:
    return act(x)


def apply_fwd(x: jax.Array, act: Callable[[jax.Array], jax.Array]) -> tuple[jax.Array, jax.Array]:
    return act(x), x


def apply_bwd(act: Callable[[jax.Array], jax.Array], x: jax.Array, g: jax.Array) -> tuple[jax.Array]:
    return (jax.grad(lambda v: jnp.sum(act(v)))(x) * g * 10.0,)


def configured(x: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
    return cfg["act"](x) * cfg["scale"]


def configured_fwd(x: jax.Array, cfg: dict[str, Any]) -> tuple[jax.Array, jax.Array]:
    return configured(x, cfg), x


def configured_bwd(cfg: dict[str, Any], x: jax.Array, g: jax.Array) -> tuple[jax.Array]:
    return (cfg["dact"](x) * cfg["scale"] * g * 10.0,)


VJP_CASES = [(power, power_fwd, power_bwd, 3, 2), (apply, apply_fwd, apply_bwd, jnp.sin, jnp.tanh),
             (configured, configured_fwd, configured_bwd, CFG, {**CFG, "scale": 3.0})]


def loss_of(f: Callable[..., jax.Array], static: Any) -> Callable[[jax.Array], jax.Array]:
    return lambda x: jnp.sum(f(x, static))


@pytest.mark.parametrize(("fn", "fwd", "bwd", "static", "other"), VJP_CASES, ids=["int", "callable", "dict"])
def test_custom_vjp_matches_jax_nondiff_argnums(fn: Any, fwd: Any, bwd: Any, static: Any, other: Any) -> None:
    f = js.custom_vjp(fn)
    f.defvjp(fwd, bwd)
    reference = jax.custom_vjp(fn, nondiff_argnums=(1,))
    reference.defvjp(fwd, bwd)
    for value in (static, other, static):
        assert close(f(X, value), fn(X, value))
        assert close(jax.grad(loss_of(f, value))(X), jax.grad(loss_of(reference, value))(X))
    assert f.cache_info().currsize == 2


def test_custom_vjp_under_jit_counts_one_trace_per_static_value_and_bwd_gets_equal_statics() -> None:
    seen: list[Any] = []

    def bwd(cfg: dict[str, Any], x: jax.Array, g: jax.Array) -> tuple[jax.Array]:
        seen.append(cfg)
        return configured_bwd(cfg, x, g)

    f = js.custom_vjp(configured)
    f.defvjp(configured_fwd, bwd)

    @js.jit
    @js.value_and_grad
    def loss(x: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        return jnp.sum(f(x, cfg))

    reference = jax.custom_vjp(configured, nondiff_argnums=(1,))
    reference.defvjp(configured_fwd, configured_bwd)
    for cfg in (CFG, dict(CFG), {**CFG, "scale": 3.0}):
        assert close(loss(X, cfg), jax.value_and_grad(loss_of(reference, cfg))(X))
    assert loss.trace_count == 2
    assert seen == [CFG, {**CFG, "scale": 3.0}]


def test_grad_of_jit_of_custom_vjp() -> None:
    f = js.custom_vjp(power)
    f.defvjp(power_fwd, power_bwd)
    def loss(x: jax.Array, n: Static[int]) -> jax.Array:
        return jnp.sum(f(x, n))

    jitted = js.jit(loss)
    grad = js.grad(jitted)
    for _ in range(2):
        assert close(grad(X, 3), 30.0 * X**2)
    assert jitted.trace_count == 1


def test_nodiff_values_are_traced_inputs_handed_to_the_rules_with_zero_cotangent() -> None:
    @js.custom_vjp
    def f(x: jax.Array, key: NoDiff[jax.Array], n: Static[int]) -> jax.Array:
        return x**n + key

    def fwd(x: jax.Array, key: jax.Array, n: int) -> tuple[jax.Array, jax.Array]:
        return x**n + key, x

    def bwd(key: jax.Array, n: int, x: jax.Array, g: jax.Array) -> tuple[jax.Array]:
        return (n * x ** (n - 1) * g * key,)  # the NoDiff value reaches bwd

    f.defvjp(fwd, bwd)
    key = jnp.array([1.0, 2.0, 3.0])
    @js.jit
    def grads(x: jax.Array, key: jax.Array, n: Static[int]) -> tuple[jax.Array, jax.Array]:
        return jax.grad(lambda x, key: jnp.sum(f(x, key, n)), argnums=(0, 1))(x, key)  # key is a tracer here

    gx, gkey = grads(X, key, 2)
    assert close(gx, 2 * X * key) and close(gkey, jnp.zeros(3))


def test_custom_vjp_args_keywords_and_defaults_follow_jax_positions() -> None:
    def f(n: Static[int], x: jax.Array, *xs: jax.Array, scale: jax.Array = 2.0) -> jax.Array:  # type: ignore[assignment]
        return (x + sum(xs)) ** n * scale

    def fwd(n: int, x: jax.Array, *xs: jax.Array, scale: jax.Array = 2.0) -> tuple[jax.Array, Any]:  # type: ignore[assignment]
        return f(n, x, *xs, scale=scale), (x + sum(xs), scale)

    def bwd(n: int, res: Any, g: jax.Array) -> tuple[jax.Array, ...]:
        s, scale = res
        d = n * s ** (n - 1) * scale * g
        return (d, d, 2 * d, 7.0)  # x, xs[0], xs[1], then the keyword with its default

    ours = js.custom_vjp(f)
    ours.defvjp(fwd, bwd)
    theirs = jax.custom_vjp(lambda n, x, a, b, scale: f(n, x, a, b, scale=scale), nondiff_argnums=(0,))
    theirs.defvjp(lambda n, x, a, b, scale: fwd(n, x, a, b, scale=scale), bwd)
    ones = jnp.ones(3)
    got = jax.grad(lambda *v: jnp.sum(ours(2, *v)), argnums=(0, 1, 2))(X, ones, ones)
    assert close(got, jax.grad(lambda *v: jnp.sum(theirs(2, *v, 2.0)), argnums=(0, 1, 2))(X, ones, ones))


def test_nondiff_argnums_add_statics_by_position_as_in_jax() -> None:
    def f(x: jax.Array, n: int) -> jax.Array:
        return x**n

    ours = js.custom_vjp(f, nondiff_argnums=(1,))
    ours.defvjp(power_fwd, power_bwd)
    assert close(jax.grad(loss_of(ours, 3))(X), 30.0 * X**2)
    with pytest.raises(js.OptionError, match=re.escape(
            "jaxstatic: nondiff_argnums of f contains 2, but f(x, n) has 2 positional parameter(s).")):
        js.custom_vjp(f, nondiff_argnums=2)
    with pytest.raises(js.OptionError, match=re.escape(
            "jaxstatic: nondiff_argnames of f names 'nn', which is not a parameter of f(x, n) (did you mean 'n'?)")):
        js.custom_jvp(f, nondiff_argnames="nn")


@pytest.mark.parametrize("transform", ["custom_vjp", "custom_jvp"])
def test_array_given_to_a_static_parameter(transform: str) -> None:
    if transform == "custom_vjp":
        f = js.custom_vjp(power)
        f.defvjp(power_fwd, power_bwd)
    else:
        f = js.custom_jvp(power)
        f.defjvp(JVP_CASES[0][1])
    with pytest.raises(js.NonStaticValueError, match=re.escape(
            "power(): parameter 'n' is Static, but n is a jax.Array (int32[]), which cannot be static")):
        f(X, jnp.array(2))
    with pytest.raises(js.NonArrayArgumentError, match=re.escape(
            "power(): parameter 'x' is not Static, so its value is traced as an array, but x is a str.")):
        f("x", 2)  # type: ignore[arg-type]


def test_rules_that_do_not_fit_are_named_when_defined() -> None:
    def fwd(x: jax.Array) -> tuple[jax.Array, jax.Array]:
        return x, x

    def bwd(res: jax.Array, g: jax.Array) -> tuple[jax.Array]:
        return (g,)

    def jvp(primals: tuple[jax.Array], tangents: tuple[jax.Array]) -> tuple[jax.Array, jax.Array]:
        return primals[0], tangents[0]

    f = js.custom_vjp(configured)
    with pytest.raises(js.RuleError, match=re.escape(
            "jaxstatic.custom_vjp of configured: its fwd rule fwd(x) does not fit the call fwd(x, cfg) (too many "
            "positional arguments: it cannot take 'cfg'). fwd takes the same parameters as configured, Static ones "
            "included.")):
        f.defvjp(fwd, configured_bwd)  # type: ignore[arg-type]
    with pytest.raises(js.RuleError, match=re.escape(
            "jaxstatic.custom_vjp of configured: its bwd rule bwd(res, g) does not fit the call bwd(cfg, residuals, "
            "g) (too many positional arguments). bwd takes the Static and NoDiff parameters first ('cfg', in "
            "signature order), then the residuals and the output cotangent, as jax.custom_vjp passes "
            "nondiff_argnums.")):
        f.defvjp(configured_fwd, bwd)
    h = js.custom_jvp(power)
    with pytest.raises(js.RuleError, match=re.escape(
            "jaxstatic.custom_jvp of power: its jvp rule jvp(primals, tangents) does not fit the call jvp(n, "
            "primals, tangents) (too many positional arguments). jvp takes the Static and NoDiff parameters first "
            "('n', in signature order), then the tuples of primals and tangents, as jax.custom_jvp passes "
            "nondiff_argnums.")):
        h.defjvp(jvp)
    with pytest.raises(js.RuleError, match=re.escape(
            "jaxstatic.custom_vjp of configured: its bwd rule is 3 (a int), not a function. Pass a function.")):
        f.defvjp(configured_fwd, 3)  # type: ignore[arg-type]
    with pytest.raises(js.RuleError, match="no rule yet"):  # a refused rule is not kept
        f(X, CFG)


def test_rule_outputs_that_do_not_fit_are_named() -> None:
    f = js.custom_vjp(power)
    f.defvjp(power_fwd, lambda n, x, g: (g, g))
    with pytest.raises(js.RuleError, match=re.escape(
            "jaxstatic.custom_vjp of power: its bwd rule returned a tuple of 2, but power has 1 differentiable "
            "input(s) ['x']: return a tuple with one cotangent per input, in that order (None for zero); Static and "
            "NoDiff parameters get none.")):
        jax.grad(loss_of(f, 2))(X)
    f.defvjp(lambda x, n: x, power_bwd)  # type: ignore[arg-type,return-value]
    with pytest.raises(js.RuleError, match=re.escape(
            "its fwd rule returned an object of type ArrayImpl, but fwd returns a pair (output, residuals).")):
        jax.grad(loss_of(f, 2))(X)


def test_a_call_before_the_rule_is_defined_is_refused_and_no_hit() -> None:
    f = js.custom_jvp(power)
    with pytest.raises(js.RuleError, match=re.escape(
            "power(): jaxstatic.custom_jvp has no rule yet. Call power.defjvp(jvp) before calling it, as with "
            "jax.custom_jvp.")):
        f(X, 2)
    assert f.cache_info()[:2] == (0, 0)


def test_variadic_keywords_are_refused_at_decoration() -> None:
    def f(x: jax.Array, **options: Static[int]) -> jax.Array:
        return x

    with pytest.raises(js.OptionError, match=re.escape(
            "jaxstatic: custom_vjp of f has a **options parameter, which the rules cannot take by position. Give "
            "those values as named parameters.")):
        js.custom_vjp(f)


JVP_CASES = [(power, lambda n, p, t: (p[0] ** n, 10.0 * n * p[0] ** (n - 1) * t[0]), 3, 2),
             (apply, lambda act, p, t: (act(p[0]), 10.0 * jax.jvp(act, p, t)[1]), jnp.sin, jnp.tanh),
             (configured, lambda cfg, p, t: (configured(p[0], cfg), 10.0 * cfg["dact"](p[0]) * cfg["scale"] * t[0]),
              CFG, {**CFG, "scale": 3.0})]


@pytest.mark.parametrize(("fn", "rule", "static", "other"), JVP_CASES, ids=["int", "callable", "dict"])
def test_custom_jvp_matches_jax_nondiff_argnums(fn: Any, rule: Any, static: Any, other: Any) -> None:
    f = js.custom_jvp(fn)
    assert f.defjvp(rule) is rule
    reference = jax.custom_jvp(fn, nondiff_argnums=(1,))
    reference.defjvp(rule)
    for value in (static, other, static):
        assert close(f(X, value), fn(X, value))
        assert close(jax.jvp(lambda x, v=value: f(x, v), (X,), (X,)),
                     jax.jvp(lambda x, v=value: reference(x, v), (X,), (X,)))
        assert close(jax.grad(loss_of(f, value))(X), jax.grad(loss_of(reference, value))(X))


def test_custom_jvp_under_jit_with_a_nodiff_tracer() -> None:
    @js.custom_jvp
    def f(x: jax.Array, key: NoDiff[jax.Array], cfg: Static[dict[str, Any]]) -> jax.Array:
        return cfg["act"](x) * key

    @f.defjvp
    def f_jvp(key: jax.Array, cfg: dict[str, Any], primals: tuple[jax.Array], tangents: tuple[jax.Array]) -> Any:
        (x,), (t,) = primals, tangents
        return f(x, key, cfg), cfg["dact"](x) * key * t * 10.0

    @js.jit
    @js.grad(argnums=(0, 1))
    def loss(x: jax.Array, key: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        return jnp.sum(f(x, key, cfg))

    key = jnp.array([1.0, 2.0, 3.0])
    for cfg in (CFG, dict(CFG)):
        gx, gkey = loss(X, key, cfg)
        assert close(gx, jnp.cos(X) * key * 10.0) and close(gkey, jnp.zeros(3))
    assert loss.trace_count == 1


def summed(x: jax.Array, *ys: jax.Array) -> jax.Array:
    return x + sum(ys)


def summed_fwd(x: jax.Array, *ys: jax.Array) -> tuple[jax.Array, tuple[jax.Array, ...]]:
    return summed(x, *ys), ys


def summed_bwd(ys: tuple[jax.Array, ...], g: jax.Array) -> tuple[jax.Array, ...]:
    return (g, *(g * (k + 2) for k in range(len(ys))))  # weights 1, 2, 3, ...: a misplaced input shows


@pytest.mark.parametrize("counts", [(1, 2, 1), (2, 1, 3)], ids=["more-then-fewer", "fewer-then-more"])
def test_custom_jvp_gives_each_number_of_extras_its_own_rule(counts: tuple[int, ...]) -> None:
    def rule(primals: tuple[jax.Array, ...], tangents: tuple[jax.Array, ...]) -> Any:
        return summed(*primals), sum(t * (k + 1) for k, t in enumerate(tangents))

    ours, theirs = js.custom_jvp(summed), jax.custom_jvp(summed)
    ours.defjvp(rule)
    theirs.defjvp(rule)
    for extras in counts:
        ys = [jnp.float32(k + 2.0) for k in range(extras)]
        assert ours(1.0, *ys) == theirs(1.0, *ys) == 1.0 + sum(ys)
        for argnums in range(extras + 1):
            assert jax.grad(ours, argnums)(1.0, *ys) == jax.grad(theirs, argnums)(1.0, *ys) == argnums + 1
        assert jax.jit(ours)(1.0, *ys) == 1.0 + sum(ys)


@pytest.mark.parametrize("counts", [(1, 2), (2, 1)], ids=["one-then-two", "two-then-one"])
def test_custom_vjp_gives_each_number_of_extras_its_own_rule(counts: tuple[int, ...]) -> None:
    ours, theirs = js.custom_vjp(summed), jax.custom_vjp(summed)
    ours.defvjp(summed_fwd, summed_bwd)
    theirs.defvjp(summed_fwd, summed_bwd)
    for extras in counts:
        ys = [2.0 + k for k in range(extras)]
        assert ours(1.0, *ys) == theirs(1.0, *ys) == 1.0 + sum(ys)
        for argnums in range(extras + 1):
            assert jax.grad(ours, argnums)(1.0, *ys) == jax.grad(theirs, argnums)(1.0, *ys) == argnums + 1
