"""What jaxstatic says about an ``equinox.Module`` given to a parameter it does not fit: a module holding arrays
beside functions and names is neither traceable nor static as a whole, and the advice is the one that works."""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static

MLP = "equinox.nn._mlp.MLP"


def _mlp() -> eqx.nn.MLP:
    return eqx.nn.MLP(2, 2, 4, 1, key=jax.random.key(0))


def _split_advice(where: str, here: str) -> str:
    return (f"Pass it to a function wrapped with eqx.filter_jit, which traces its arrays and keeps the rest static; "
            f"or split it with `arrays, rest = eqx.partition({where}, eqx.is_array)`, {here}, and rebuild it inside "
            "with `eqx.combine(arrays, rest)`.")


def test_a_module_given_to_a_dynamic_parameter_is_not_told_to_become_static() -> None:
    @js.jit
    def apply(x: jax.Array, mlp: Any) -> jax.Array:
        return mlp(x)

    expected = (f"apply(): parameter 'mlp' is not Static, so its value is traced as an array, but mlp.activation is "
                f"a function (relu, a jax._src.custom_derivatives.custom_jvp). mlp is an equinox Module ({MLP}) "
                "holding arrays beside other values (functions, names), so it can be neither traced nor static as a "
                "whole. " + _split_advice("mlp", "pass `arrays` here and `rest` to a Static parameter"))
    with pytest.raises(js.NonArrayArgumentError) as err:
        apply(jnp.ones(2), _mlp())
    assert str(err.value) == expected


def test_a_module_inside_a_dict_is_named_by_its_path() -> None:
    @js.jit
    def apply(x: jax.Array, models: dict[str, Any]) -> jax.Array:
        return models["mlp"](x)

    with pytest.raises(js.NonArrayArgumentError, match=r"models\['mlp'\] is an equinox Module .* "
                       r"eqx\.partition\(models\['mlp'\], eqx\.is_array\)"):
        apply(jnp.ones(2), {"mlp": _mlp()})


def test_a_static_module_holding_arrays_names_the_array_and_the_split() -> None:
    @js.jit
    def apply(x: jax.Array, mlp: Static[eqx.nn.MLP]) -> jax.Array:
        return mlp(x)

    expected = ("apply(): parameter 'mlp' is Static, but mlp.layers[0].weight is a jax.Array (float32[4,2]), which "
                "cannot be static: a jax.Array is not hashable, and its value is only known at run time. "
                "Non-hashable static arguments are not supported. mlp is an "
                f"equinox Module ({MLP}) holding arrays beside other values (functions, names), so it cannot be "
                "static as a whole. "
                + _split_advice("mlp", "pass `rest` here and `arrays` to a parameter that is not Static"))
    with pytest.raises(js.NonStaticValueError) as err:
        apply(jnp.ones(2), _mlp())
    assert str(err.value) == expected


def test_a_static_module_of_arrays_only_is_told_to_be_traced() -> None:
    @js.jit
    def apply(x: jax.Array, linear: Static[eqx.nn.Linear]) -> jax.Array:
        return linear(x)

    with pytest.raises(js.NonStaticValueError, match=r"^apply\(\): parameter 'linear' is Static, but "
                       r"linear\.weight is a jax\.Array \(float32\[2,2\]\), .* linear is an equinox Module "
                       r"\(equinox\.nn\._linear\.Linear\) holding arrays, so it cannot be static as a whole\. Pass "
                       r"it through a parameter that is not Static, where its arrays are traced\.$"):
        apply(jnp.ones(2), eqx.nn.Linear(2, 2, key=jax.random.key(0)))


def test_the_advice_works() -> None:
    mlp = _mlp()
    x = jnp.ones(2)

    @js.jit
    def apply(x: jax.Array, arrays: Any, rest: Static[Any]) -> jax.Array:
        return eqx.combine(arrays, rest)(x)

    arrays, rest = eqx.partition(mlp, eqx.is_array)
    assert jnp.allclose(apply(x, arrays, rest), mlp(x))
    arrays2, rest2 = eqx.partition(_mlp(), eqx.is_array)  # equal static halves: one program
    arrays2 = jax.tree_util.tree_map(lambda a: 2 * a, arrays2)
    assert jnp.allclose(apply(x, arrays2, rest2), eqx.combine(arrays2, rest2)(x))
    assert apply.trace_count == 1
    assert jnp.allclose(eqx.filter_jit(lambda m, x: m(x))(mlp, x), mlp(x))
