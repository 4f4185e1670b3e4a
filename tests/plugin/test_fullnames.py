"""Every fully qualified name the plugin dispatches on names something that exists at run time.

A renamed module or transform would otherwise switch a check off in silence. (``JAX_STUB_CALLS`` name classes
that exist only in the jax stubs; ``tests/plugin/test_with_stubs.py`` exercises them.)
"""

from __future__ import annotations

import importlib
import typing

import pytest
from jaxstatic_mypy import _fullnames as names

RUNTIME_NAMES = sorted(
    names.JAXSTATIC_TRANSFORMS
    | names.MARKER_ALIASES
    | set(names.MARKER_OBJECTS)
    | names.JAX_JIT
    | set(names.ARRAY_TYPES)
    | names.HASH_BY_FIELDS
    | names.DATACLASS_DECORATORS
    | {names.PYTREE_DATACLASS, names.PYTREE_FIELD}
    | {names.FUNCTOOLS_PARTIAL, names.STATIC_ARGNAMES, names.STATIC_ARGNUMS}
    | set(names.TRANSFORM_WRAPPERS)
    | names.ATTRS_MAKERS
)


@pytest.mark.parametrize("fullname", RUNTIME_NAMES)
def test_listed_name_exists_at_run_time(fullname: str) -> None:
    module, _, attribute = fullname.rpartition(".")
    assert hasattr(importlib.import_module(module), attribute), f"{fullname} does not exist"


def test_transform_decorator_names_are_public_names() -> None:
    import jaxstatic

    for public, fullname in names.TRANSFORM_DECORATORS.items():
        assert public == f"jaxstatic.{fullname.rsplit('.', 1)[1]}"
        assert getattr(jaxstatic, public.split(".")[1], None) is not None, f"jaxstatic does not export {public}"


@pytest.mark.parametrize("wrapper", sorted(names.TRANSFORM_WRAPPERS))
def test_each_wrapper_is_what_its_transform_returns(wrapper: str) -> None:
    """A variable holding ``vmap(in_axes=0)`` is recognised by the wrapper class its decorator returns."""
    transform = names.TRANSFORM_WRAPPERS[wrapper]
    module, _, function = transform.rpartition(".")
    overloads = typing.get_overloads(getattr(importlib.import_module(module), function))
    returned = [str(o.__annotations__["return"]) for o in overloads]
    assert returned and all(wrapper.rpartition(".")[2] in r for r in returned), (transform, returned)


def test_attrs_makers_are_those_mypy_knows() -> None:
    """The attrs decorators whose classes the plugin judges are the ones mypy's attrs plugin types."""
    from mypy.plugins import attrs as mypy_attrs

    known = (mypy_attrs.attr_class_makers | mypy_attrs.attr_dataclass_makers | mypy_attrs.attr_frozen_makers
             | mypy_attrs.attr_define_makers)
    assert known == names.ATTRS_MAKERS
    assert mypy_attrs.attr_frozen_makers == names.ATTRS_FROZEN_MAKERS



_TRANSFORM_MODULES = ("jaxstatic._jit", "jaxstatic._vmap_pmap", "jaxstatic._ad", "jaxstatic._custom",
                      "jaxstatic._shard_map")
"""The transforms layer (ARCHITECTURE.md): every public function defined there is a transform."""


def test_every_public_transform_is_known_to_the_plugin() -> None:
    """A new transform the plugin does not know loses its ``[jaxstatic-signature]`` and call-site checks silently
    (``js.jacfwd(erase(f))`` would pass): list it in ``_fullnames`` with its wrapper class."""
    import inspect

    import jaxstatic
    from jaxstatic._core import StaticFunction

    functions, wrappers = set(), set()
    for public in jaxstatic.__all__:
        obj = getattr(jaxstatic, public)
        if inspect.isfunction(obj) and obj.__module__ in _TRANSFORM_MODULES:
            functions.add(f"{obj.__module__}.{public}")
        elif isinstance(obj, type) and issubclass(obj, StaticFunction) and obj is not StaticFunction:
            wrappers.add(f"{obj.__module__}.{obj.__qualname__}")
    assert functions - names.JAXSTATIC_TRANSFORMS == set(), "transforms missing from JAXSTATIC_TRANSFORMS"
    assert wrappers - set(names.TRANSFORM_WRAPPERS) == set(), "wrapper classes missing from TRANSFORM_WRAPPERS"
    assert set(names.TRANSFORM_WRAPPERS.values()) <= functions
