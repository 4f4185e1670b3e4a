from __future__ import annotations

import functools
from typing import Annotated, Any

import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static
from jaxstatic._annotations import find_static_params

from . import future_module

IntS = Static[int]


def _names(fn: Any) -> set[str]:
    return set(find_static_params(fn, fn.__name__).names)


def test_static_and_aliases_are_found() -> None:
    def f(a: Static[int], b: IntS, c: Annotated[Static[int], "doc"], d: int, e: Static[int] | None = None) -> None: ...

    assert _names(f) == {"a", "b", "c"}


def test_optional_static_is_not_static() -> None:
    def f(e: Static[int] | None = None) -> None: ...

    assert _names(f) == set()


def test_variadic_static() -> None:
    def f(x: int, *args: Static[int], **kwargs: Static[str]) -> None: ...

    params = find_static_params(f, "f")
    assert params.var_positional and params.var_keyword and not params.names


def _logged(fn: Any) -> Any:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


def test_wraps_chain_keeps_static_parameters_visible() -> None:
    @js.jit
    @_logged
    @_logged
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    x = jnp.ones(2)
    assert f(x, 3).tolist() == [3.0, 3.0]
    assert f(x, n=3).tolist() == [3.0, 3.0]
    assert f.trace_count == 1


def test_future_annotations_with_forward_reference() -> None:
    cfg = future_module.Config(2.0)
    assert future_module.scale(jnp.ones(2), cfg).tolist() == [2.0, 2.0]
    assert future_module.scale(jnp.ones(2), future_module.Config(2.0)).tolist() == [2.0, 2.0]
    assert future_module.scale.trace_count == 1


def test_unresolvable_annotation_names_function_and_annotation() -> None:
    @js.jit
    def f(x: jax.Array, cfg: Static[Missing]) -> jax.Array:  # type: ignore[name-defined]  # noqa: F821
        return x

    with pytest.raises(js.AnnotationError, match=r"f: cannot resolve the annotation 'Missing'"):
        f(jnp.ones(2), 1)


def test_static_argnames_and_argnums_feed_plain_jax() -> None:
    def f(x: jax.Array, n: Static[int], *, mode: Static[str] = "a") -> jax.Array:
        return x * n if mode == "a" else x

    assert js.static_argnames(f) == ("n", "mode")
    assert js.static_argnums(f) == (1,)
    g = jax.jit(f, static_argnames=js.static_argnames(f))
    assert g(jnp.ones(2), 2, mode="a").tolist() == [2.0, 2.0]
