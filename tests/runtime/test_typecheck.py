"""A static value checked against ``T`` of its ``Static[T]``: ``StaticTypeWarning`` on a cache miss, once per
function and parameter, never on a hit."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static, _typecheck

g = jnp.ones(2)


@contextmanager
def type_warnings() -> Iterator[list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found: list[warnings.WarningMessage] = []
        yield found
    found.extend(w for w in caught if issubclass(w.category, js.StaticTypeWarning))


def expected(function: str, param: str, declared: str, value: str, reason: str) -> str:
    return (f"{function}(): parameter {param!r} is declared Static[{declared}], but got {value} ({reason}). "
            "jaxstatic compiles for the value as it is, so the body may fail inside JAX or compute something else. "
            f"Pass a value of type {declared}, or correct the annotation.")


def test_public_warning_class() -> None:
    assert issubclass(js.StaticTypeWarning, UserWarning)
    assert js.StaticTypeWarning.__module__ == "jaxstatic"
    assert "StaticTypeWarning" in js.__all__


def test_a_list_for_a_float_warns_at_the_users_line_naming_everything() -> None:
    @js.jit
    def clip(grads: jax.Array, l2_norm_clip: Static[float]) -> jax.Array:
        return grads * 2

    with type_warnings() as found:
        here = inspect.currentframe().f_lineno  # type: ignore[union-attr]
        clip(g, [1.0, 2.0])  # type: ignore[arg-type]
    assert [(str(w.message), w.filename, w.lineno) for w in found] == [
        (expected("clip", "l2_norm_clip", "float", "[1.0, 2.0]", "list is neither float or int"), __file__,
         here + 1)]


def test_once_per_function_and_parameter() -> None:
    @js.jit
    def step(x: jax.Array, lr: Static[float], mode: Static[Literal["adam", "sgd"]] = "adam") -> jax.Array:
        return x * 2

    with type_warnings() as found:
        step(g, "0.1")  # type: ignore[arg-type]
        step(g, "0.2")  # type: ignore[arg-type]  # another miss, same parameter: no second warning
        step(g, 0.1, "adm")  # type: ignore[arg-type]
        step(g, 0.1, "sgdd")  # type: ignore[arg-type]
    assert [str(w.message) for w in found] == [
        expected("step", "lr", "float", "'0.1'", "str is neither float or int"),
        expected("step", "mode", "Literal['adam', 'sgd']", "'adm'", "str is not any of ('adam', 'sgd')"),
    ]


def test_items_of_containers_and_variadic_parameters_are_checked() -> None:
    @js.jit
    def layers(x: jax.Array, sizes: Static[tuple[int, ...]], *scales: Static[float],
               **names: Static[str]) -> jax.Array:
        return x

    with type_warnings() as found:
        layers(g, (1, 2, "3"), 1.0, 2.0, "big", first=1)  # type: ignore[arg-type]
    assert [str(w.message) for w in found] == [
        expected("layers", "sizes", "tuple[int, ...]", "(1, 2, '3')", "item 2 of tuple is not an instance of int"),
        expected("layers", "scales", "float", "(1.0, 2.0, 'big')", "str is neither float or int"),
        expected("layers", "names", "str", "{'first': 1}", "int is not an instance of str"),
    ]


def _relu(x: jax.Array) -> jax.Array:
    return jnp.maximum(x, 0)


def test_values_that_fit_never_warn() -> None:
    """The numeric tower (an int for a float), Any, object, unions, callables, configs."""
    @js.jit
    def f(x: jax.Array, lr: Static[float], anything: Static[Any], obj: Static[object], n: Static[int | None],
          act: Static[Callable[[jax.Array], jax.Array]], cfg: Static[dict[str, Any]]) -> jax.Array:
        return act(x) * lr

    with type_warnings() as found:
        f(g, 1, [1, 2], {"a": [1]}, None, _relu, {"w": (1, 2), "act": jnp.tanh})
        f(g, True, "s", object, 3, jnp.tanh, {})
    assert found == []


def test_only_misses_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[Any] = []
    real = _typecheck.check_type

    def counting(value: Any, *args: Any, **kwargs: Any) -> Any:
        checked.append(value)
        return real(value, *args, **kwargs)

    monkeypatch.setattr(_typecheck, "check_type", counting)

    @js.jit
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    for n in (2, 2, 3, 2, 3, 3):
        f(g, n)
    assert checked == [2, 3]  # the two misses
    assert f.cache_info().hits == 4


def test_as_an_error_the_call_fails_and_nothing_is_compiled() -> None:
    @js.jit
    def clip(grads: jax.Array, l2_norm_clip: Static[float]) -> jax.Array:
        return grads / l2_norm_clip

    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=js.StaticTypeWarning)
        with pytest.raises(js.StaticTypeWarning, match=r"^clip\(\): parameter 'l2_norm_clip' is declared "):
            clip(g, [1.0, 2.0])  # type: ignore[arg-type]
        assert clip.trace_count == 0
        assert clip(g, 2.0).tolist() == [0.5, 0.5]


def test_a_stack_of_transforms_warns_once() -> None:
    def scale(x: jax.Array, factor: Static[float]) -> jax.Array:
        return x * 2

    f = js.jit(js.vmap(scale))
    with type_warnings() as found:
        f(jnp.ones((2, 3)), "2")  # type: ignore[arg-type]
    assert [str(w.message) for w in found] == [
        expected("scale", "factor", "float", "'2'", "str is neither float or int")]


@pytest.mark.parametrize("transform", [js.vmap, js.grad, js.checkpoint, js.pmap])
def test_every_transform_checks(transform: Callable[..., Any]) -> None:
    def loss(x: jax.Array, factor: Static[float]) -> jax.Array:
        return (x * 2).sum()

    with type_warnings() as found:
        transform(loss)(jnp.ones((1, 3)), "2")
    assert [str(w.message) for w in found] == [
        expected("loss", "factor", "float", "'2'", "str is neither float or int")]


def test_numpy_scalars_are_the_numbers_they_hold() -> None:
    """A count that arrives as ``np.int64`` (from a NumPy array, a config loaded with NumPy) is an ``int`` to
    ``jax.jit(static_argnums=...)``; code moved to ``Static[int]`` keeps running without a warning."""
    import numpy as np

    def f(x: jax.Array, times: Static[int], scale: Static[float], flag: Static[bool]) -> jax.Array:
        return x * times * scale if flag else x

    g = js.jit(f)
    with type_warnings() as found:
        assert g(jnp.ones(1), np.int64(3), np.float32(0.5), np.bool_(True)).tolist() == [1.5]
        g(jnp.ones(1), 3, np.int32(2), True)  # an integer for a float: the numeric tower
    assert found == []
    with type_warnings() as found:
        g(jnp.ones(1), np.float64(2.5), 1.0, True)  # a NumPy float is no int
    assert [str(w.message) for w in found] == [expected(
        "f", "times", "int", repr(np.float64(2.5)), "numpy.float64 is not an instance of int")]
