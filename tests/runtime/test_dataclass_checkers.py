"""``js.dataclass`` under the runtime type checkers users put on top of it (``@jaxtyped(typechecker=beartype)``,
``jaxtyping.install_import_hook``, ``@beartype``, typeguard): construction is checked, shapes included, and JAX's
unflatten never calls the checked ``__init__``, so every transform works on the instances."""

from __future__ import annotations

import importlib
import inspect
import sys
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from typeguard import TypeCheckError, typechecked

import jaxstatic as js
from jaxstatic import Static


def _every_transform_works(model: Any, loss: Any) -> None:
    """tree_map (with placeholder leaves too), jax.jit, js.jit, jax.grad and jax.vmap keep the Static fields."""
    static = {f: getattr(model, f) for f in type(model).__jaxstatic_class__.statics}
    assert jax.tree_util.tree_map(lambda a: 2 * a, model) == jax.tree_util.tree_map(lambda a: a + a, model)
    jax.tree_util.tree_map(lambda a: object(), model)  # placeholders: no check runs on them
    assert np.allclose(jax.jit(loss)(model), loss(model))
    assert np.allclose(js.jit(loss)(model), loss(model))
    grads = jax.grad(loss)(model)
    assert {f: getattr(grads, f) for f in static} == static
    stacked = jax.tree_util.tree_map(lambda a: jnp.stack([a, a]), model)
    assert jax.vmap(loss)(stacked).shape == (2,)


def _checked_models() -> Any:
    pytest.importorskip("jaxtyping")
    pytest.importorskip("beartype")
    return importlib.import_module(f"{__package__}.checked_models")


def test_jaxtyped_with_beartype_checks_shapes_and_transforms_work() -> None:
    m = _checked_models()
    from jaxtyping import TypeCheckError as ShapeError

    model = m.Linear(jnp.ones((2, 3)), jnp.ones(2), 2)
    with pytest.raises(ShapeError, match=r"Linear\.__init__\.\nThe problem arose whilst typechecking parameter 'b'"):
        m.Linear(jnp.ones((2, 3)), jnp.ones(3), 2)  # b: n is 2 in w
    with pytest.raises(ShapeError, match=r"Linear\.__init__\.\nThe problem arose whilst typechecking parameter 'k'"):
        m.Linear(jnp.ones((2, 3)), jnp.ones(2), "2")
    _every_transform_works(model, lambda m: jnp.sum(m.w @ jnp.ones(3) + m.b) * m.k)


def test_install_import_hook_over_a_module_of_dataclasses() -> None:
    jaxtyping = pytest.importorskip("jaxtyping")
    pytest.importorskip("beartype")
    name = f"{__package__}.hooked_models"
    sys.modules.pop(name, None)
    with jaxtyping.install_import_hook(name, "beartype.beartype"):
        hooked = importlib.import_module(name)
    layer = hooked.Layer(jnp.eye(2), jnp.zeros(2), jax.nn.relu)
    with pytest.raises(jaxtyping.TypeCheckError, match=r"Layer\.__init__"):
        hooked.Layer(jnp.eye(2), jnp.zeros(3), jax.nn.relu)
    assert jax.jit(hooked.apply)(layer, jnp.ones(2)).tolist() == [1.0, 1.0]
    _every_transform_works(layer, lambda m: jnp.sum(hooked.apply(m, jnp.ones(2))))


def test_beartype_on_the_class_checks_the_generated_and_a_custom_init() -> None:
    m = _checked_models()
    from beartype.roar import BeartypeCallHintParamViolation

    with pytest.raises(BeartypeCallHintParamViolation, match=r"Scaled\.__init__\(\) parameter k='2' violates"):
        m.Scaled(jnp.ones(2), "2")
    with pytest.raises(BeartypeCallHintParamViolation, match=r"Custom\.__init__\(\) parameter k='2' violates"):
        m.Custom(jnp.ones(2), "2")
    _every_transform_works(m.Scaled(jnp.ones(2), 3), lambda m: jnp.sum(m.w) * m.k)
    _every_transform_works(m.Custom(jnp.ones(2)), lambda m: jnp.sum(m.w) * m.k)


def test_typeguard_on_a_custom_init() -> None:
    @js.dataclass
    class Custom:
        w: jax.Array
        k: Static[int]

        @typechecked
        def __init__(self, w: jax.Array, k: int = 2) -> None:
            self.w = w
            self.k = k

    with pytest.raises(TypeCheckError, match=r'argument "k" \(str\) is not an instance of int'):
        Custom(jnp.ones(2), "2")  # type: ignore[arg-type]
    _every_transform_works(Custom(jnp.ones(2), 3), lambda m: jnp.sum(m.w) * m.k)


def test_the_generated_init_has_the_signature_and_defaults_of_the_one_it_runs() -> None:
    @js.dataclass
    class Options:
        w: jax.Array
        k: Static[int] = 2
        tags: Static[tuple[str, ...]] = js.field(default=(), kw_only=True)

    @js.dataclass
    class Variadic:
        w: jax.Array
        k: Static[int]

        def __init__(self, w: Any, /, *extra: int, k: int = 1, **named: int) -> None:
            self.w = jnp.asarray(w)
            self.k = k + sum(extra) + sum(named.values())

    assert str(inspect.signature(Options.__init__)) == (
        "(self, w: 'jax.Array', k: 'Static[int]' = 2, *, tags: 'Static[tuple[str, ...]]' = ()) -> None")
    assert Options(jnp.ones(1), tags=("a",)).tags == ("a",)
    assert str(inspect.signature(Variadic.__init__)) == (
        "(self, w: 'Any', /, *extra: 'int', k: 'int' = 1, **named: 'int') -> 'None'")
    assert Variadic([1.0], 2, 3, k=4, n=5).k == 14
    assert Variadic.__init__.__code__.co_varnames[:5] == ("self", "w", "k", "extra", "named")
