"""Python 3.14's lazy annotations (PEP 649/749): what a module written for 3.14 (``lazy_module``) gets.

A ``Static``/``Donate``/``NoDiff`` mark is read from the annotation's head, so a name inside it that is defined
later, or only for type checkers, is never evaluated; a bare name that is never defined is an ordinary parameter,
as under ``jax.jit``."""

import dataclasses
import importlib
import inspect
import sys
import types
from decimal import Decimal

import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static

pytestmark = pytest.mark.skipif(sys.version_info < (3, 14), reason="annotations are lazy from Python 3.14")


@pytest.fixture(scope="module")
def lazy() -> types.ModuleType:
    return importlib.import_module("tests.runtime.lazy_module")


@dataclasses.dataclass(frozen=True)
class _Cfg:
    scale: float


def test_static_of_a_type_checking_only_name_is_static(lazy: types.ModuleType) -> None:
    x = jnp.ones(2)
    assert float(lazy.step(x, _Cfg(2.0))[0]) == 2.0
    lazy.step(x, _Cfg(2.0))
    assert lazy.step.trace_count == 1  # an equal config: the same program
    lazy.step(x, _Cfg(3.0))
    assert lazy.step.trace_count == 2
    assert "because cfg" in str(lazy.step.retraces[-1])  # the retrace is explained by the static parameter


def test_a_bare_undefined_name_is_an_ordinary_parameter(lazy: types.ModuleType) -> None:
    assert float(lazy.plain(jnp.ones(2), 3.0)[0]) == 3.0
    lazy.plain(jnp.ones(2) + 4, 3.0)
    assert lazy.plain.trace_count == 1  # traced, as jax.jit would


def test_static_of_a_later_class(lazy: types.ModuleType) -> None:
    x = jnp.ones(2)
    assert float(lazy.later(x, lazy.LaterCfg(2.0))[0]) == 2.0
    assert lazy.later.trace_count == 1


def test_donate_of_a_type_checking_only_name_donates(lazy: types.ModuleType) -> None:
    state = jnp.ones(3)
    assert float(lazy.update(state, 0.5)[0]) == 0.5
    assert state.is_deleted()


def test_grad_with_lazy_marks(lazy: types.ModuleType) -> None:
    g = lazy.grad_loss(jnp.ones(2), lazy.LaterCfg(3.0), jnp.ones(2))
    assert g.tolist() == [3.0, 3.0]
    assert inspect.signature(lazy.grad_loss).parameters.keys() == {"w", "cfg", "key"}


def test_functools_wraps_over_lazy_annotations(lazy: types.ModuleType) -> None:
    x = jnp.ones(2)
    assert float(lazy.wrapped(x, lazy.LaterCfg(2.0), {"w": 3})[0]) == 6.0
    lazy.wrapped(x, lazy.LaterCfg(2.0), {"w": 3})
    assert lazy.wrapped.trace_count == 1


def test_a_dataclass_naming_later_and_type_checking_only_classes(lazy: types.ModuleType) -> None:
    model = lazy.Model(jnp.ones(2), lazy.LaterCfg(2.0), {"w": 1}, jnp.zeros(2))
    leaves = jax.tree_util.tree_leaves(model)
    assert len(leaves) == 2  # w and plain: cfg and names are static metadata
    assert jax.tree_util.tree_structure(model) == jax.tree_util.tree_structure(
        lazy.Model(jnp.zeros(2), lazy.LaterCfg(2.0), {"w": 1}, jnp.ones(2)))


def test_jax_jit_itself_and_what_jaxstatic_does_better(lazy: types.ModuleType) -> None:
    def f(x: jax.Array, cfg: Static[Undefined]) -> jax.Array:  # noqa: F821
        return x

    with pytest.raises(NameError):  # jax.jit reads the signature with the annotations evaluated
        lazy.jax_static_argnames(f)(jnp.ones(2), cfg=Decimal(1))
    g = js.jit(f)
    g(jnp.ones(2), Decimal(1))
    g(jnp.ones(2), Decimal(1))
    assert g.trace_count == 1

