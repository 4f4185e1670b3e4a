"""Type aliases of ``Static[...]`` and ``Donate[...]`` (``type`` statements, ``TypeAliasType``) mark a parameter
or a dataclass field as the marker written out does; only an alias at the top of an annotation does."""

from __future__ import annotations

import importlib
import sys
import types
import warnings

import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js

_MODULES = ["aliases_extensions"] + (["aliases_pep695"] if sys.version_info >= (3, 12) else [])


@pytest.fixture(params=_MODULES)
def aliases(request: pytest.FixtureRequest) -> types.ModuleType:
    return importlib.import_module(f"tests.runtime.{request.param}")


def test_an_alias_of_static_is_static(aliases: types.ModuleType) -> None:
    x = jnp.ones(2)
    assert float(aliases.scale(x, 2)[0]) == 2.0
    assert float(aliases.scale(x, 3)[0]) == 3.0
    assert float(aliases.scale(x, 3)[0]) == 3.0
    assert aliases.scale.trace_count == 2  # one program per value, as Static[int] written out
    with pytest.raises(js.NonStaticValueError, match=r"scale\(\): parameter 'n' is Static"):
        aliases.scale(x, jnp.ones(()))


def test_a_generic_alias_of_static_is_static(aliases: types.ModuleType) -> None:
    x = jnp.ones(2)
    assert float(aliases.total(x, [1, 2])[0]) == 3.0
    assert float(aliases.total(x, [1, 2])[0]) == 3.0
    assert aliases.total.trace_count == 1  # an equal list shares the program: it was frozen, not traced


def test_an_alias_inside_an_annotation_marks_nothing(aliases: types.ModuleType) -> None:
    x = jnp.ones(2)
    assert float(aliases.nested(x, [jnp.asarray(2.0)])[0]) == 2.0  # an array is welcome: ns is traced
    aliases.nested(x, [jnp.asarray(5.0)])
    assert aliases.nested.trace_count == 1


def test_an_alias_of_donate_donates(aliases: types.ModuleType) -> None:
    state = jnp.ones(4)
    out = aliases.step(state, 0.5)
    assert float(out[0]) == 0.5
    assert state.is_deleted()


def test_a_dataclass_field_annotated_with_an_alias_is_static(aliases: types.ModuleType) -> None:
    layer = aliases.Layer(jnp.ones(2), 3)
    leaves, treedef = jax.tree_util.tree_flatten(layer)
    assert len(leaves) == 1  # w alone: width is metadata
    assert jax.tree_util.tree_unflatten(treedef, leaves).width == 3


def test_an_alias_of_an_alias_is_static() -> None:
    from . import aliases_extensions as ext

    x = jnp.ones(2)
    ext.scale_again(x, 2)
    ext.scale_again(x, 2)
    assert ext.scale_again.trace_count == 1


def test_static_of_an_alias_is_static_and_checked_against_its_value() -> None:
    from . import aliases_extensions as ext

    x = jnp.ones(2)
    assert float(ext.widen(x, {"w": 2})[0]) == 2.0
    assert ext.widen.trace_count == 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ext.widen(x, {"w": 2.5})
    messages = [str(w.message) for w in caught if issubclass(w.category, js.StaticTypeWarning)]
    assert len(messages) == 1 and "widen(): parameter 'widths' is declared Static[dict[str, int]], but got {'w': 2.5}" in messages[0]


@pytest.mark.skipif(sys.version_info < (3, 12), reason="type statements are Python 3.12+")
def test_an_alias_naming_a_later_class_is_read_at_the_first_call() -> None:
    from . import aliases_pep695 as pep695

    x = jnp.ones(2)
    assert float(pep695.configured(x, pep695.LaterCfg(2.0))[0]) == 2.0
    pep695.configured(x, pep695.LaterCfg(2.0))
    assert pep695.configured.trace_count == 1


@pytest.mark.skipif(sys.version_info < (3, 12), reason="type statements are Python 3.12+")
def test_an_alias_whose_value_names_nothing_defined() -> None:
    from . import aliases_pep695 as pep695

    x = jnp.ones(2)
    if sys.version_info >= (3, 14):  # read lazily: Static[NotDefinedAnywhere] is Static, whatever that name is
        assert float(pep695.broken(x, 3)[0]) == 3.0
        assert pep695.broken.trace_count == 1
        return
    with pytest.raises(js.AnnotationError) as raised:  # below 3.14 the value cannot be read at all
        pep695.broken(x, 3)
    assert str(raised.value) == (
        "broken: the annotation of parameter 'n' is a type alias whose value cannot be evaluated (name "
        "'NotDefinedAnywhere' is not defined), so jaxstatic cannot tell whether it is Static. Define what the "
        "alias names before the first call, or write Static[...] in the annotation itself.")
