from __future__ import annotations

import functools
import warnings
from typing import Annotated, Any

import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static
from jaxstatic._annotations import find_static_params

from . import future_module, future_unresolved as fu

IntS = Static[int]


def _names(fn: Any) -> set[str]:
    return set(find_static_params(fn, fn.__name__).names)


def test_static_and_aliases_are_found() -> None:
    def f(a: Static[int], b: IntS, c: Annotated[Static[int], "doc"], d: int, e: Static[int] | None = None) -> None: ...

    assert _names(f) == {"a", "b", "c"}


def test_optional_static_is_not_static() -> None:
    def f(e: Static[int] | None = None) -> None: ...

    assert _names(f) == set()


def test_a_none_default_keeps_static_on_every_python() -> None:
    # Python 3.10's typing.get_type_hints reads `n: Static[int | None] = None` as Optional[Static[int | None]]
    def f(x: jax.Array, n: Static[int | None] = None) -> jax.Array:
        return x if n is None else x * n

    assert _names(f) == {"n"}
    g = js.jit(f)
    assert float(g(jnp.ones(()), 3)) == 3.0
    assert float(g(jnp.ones(()))) == 1.0
    assert float(g(jnp.ones(()), 3)) == 3.0
    assert g.trace_count == 2


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


def test_static_with_an_undefined_inner_type_is_static_and_its_type_not_checked() -> None:
    @js.jit
    def f(x: jax.Array, cfg: Static[Missing]) -> jax.Array:  # type: ignore[name-defined]  # noqa: F821
        return x * cfg

    with warnings.catch_warnings():
        warnings.simplefilter("error", js.StaticTypeWarning)
        assert f(jnp.ones(2), 2).tolist() == [2.0, 2.0]
        assert f(jnp.ones(2), 2).tolist() == [2.0, 2.0]
        assert f(jnp.ones(2), 3).tolist() == [3.0, 3.0]
    assert f.trace_count == 2


def test_type_checking_only_imports_keep_static_parameters_static() -> None:
    x = jnp.ones(2)
    assert fu.scale(x, 2.0).tolist() == [0.5, 0.5]
    assert fu.scale(x, 2.0).tolist() == [0.5, 0.5]
    assert fu.scale(x, 4.0).tolist() == [0.25, 0.25]
    assert fu.scale.trace_count == 2
    assert fu.tagged(x, ("a", "b"), 3).tolist() == [6.0, 6.0]  # an alias defined after the decorator
    assert fu.tagged(jnp.ones(2), ("a", "b"), 3).tolist() == [6.0, 6.0]
    assert fu.tagged.trace_count == 1
    assert fu.mapped(jnp.arange(3.0), jnp.ones(3), 2).tolist() == [0.0, 2.0, 4.0]
    assert fu.loss(jnp.ones(3), jnp.full(3, 2.0), 3, jnp.ones(3)).tolist() == [6.0, 6.0, 6.0]
    assert js.static_argnames(fu.checked) == ("k", "n")
    assert js.static_argnums(fu.checked) == (1, 2)


def test_an_undefined_type_that_cannot_be_static_is_traced_as_jax_jit_traces_it() -> None:
    x = jnp.ones(2)
    assert fu.passthrough(x, jnp.full(2, 2.0)).tolist() == [3.0, 3.0]
    assert fu.passthrough(x, jnp.full(2, 5.0)).tolist() == [6.0, 6.0]
    assert fu.passthrough.trace_count == 1
    assert js.static_argnames(fu.passthrough.__wrapped__) == ()


def test_only_the_type_check_of_an_undefined_inner_type_is_skipped() -> None:
    checked = js.jit(fu.checked)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        checked(jnp.ones(2), "k is never checked", 2)  # type: ignore[arg-type]
        checked(jnp.ones(2), 1.0, 2.5)  # type: ignore[arg-type]
    assert [str(w.message).split(" (")[0] for w in caught if w.category is js.StaticTypeWarning] == [
        "checked(): parameter 'n' is declared Static[int], but got 2.5"]


def test_an_annotation_that_is_not_a_type_names_the_function() -> None:
    @js.jit
    def f(x: jax.Array, cfg: Annotated[int]) -> jax.Array:  # type: ignore[valid-type]
        return x

    with pytest.raises(js.AnnotationError, match=r"^f: cannot read its annotations \(TypeError: .*fix the "
                       r"annotation, or give static_argnames= explicitly\.$"):
        f(jnp.ones(2), 1)


def test_static_argnames_and_argnums_feed_plain_jax() -> None:
    def f(x: jax.Array, n: Static[int], *, mode: Static[str] = "a") -> jax.Array:
        return x * n if mode == "a" else x

    assert js.static_argnames(f) == ("n", "mode")
    assert js.static_argnums(f) == (1,)
    g = jax.jit(f, static_argnames=js.static_argnames(f))
    assert g(jnp.ones(2), 2, mode="a").tolist() == [2.0, 2.0]
