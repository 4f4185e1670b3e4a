"""Every fully qualified name the plugin dispatches on names something that exists at run time, and its tables of
transforms list what ``jaxstatic/_public.py`` declares (the plugin never imports the runtime, so they are written out).

A renamed module or a new transform would otherwise switch a check off in silence. (``JAX_STUB_CALLS`` name classes
that exist only in the jax stubs; ``tests/plugin/test_with_stubs.py`` exercises them.)
"""

from __future__ import annotations

import importlib

import pytest
from jaxstatic_mypy import _fullnames as names

from jaxstatic import _public

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


def test_attrs_makers_are_those_mypy_knows() -> None:
    """The attrs decorators whose classes the plugin judges are the ones mypy's attrs plugin types."""
    from mypy.plugins import attrs as mypy_attrs

    known = (mypy_attrs.attr_class_makers | mypy_attrs.attr_dataclass_makers | mypy_attrs.attr_frozen_makers
             | mypy_attrs.attr_define_makers)
    assert known == names.ATTRS_MAKERS
    assert mypy_attrs.attr_frozen_makers == names.ATTRS_FROZEN_MAKERS




def _fullname(transform: _public.Transform) -> str:
    return f"jaxstatic.{transform.module}.{transform.name}"


_TABLES = {
    "JAXSTATIC_TRANSFORMS": (lambda t: True, "is a transform",
                             "the plugin checks the signature it receives and its call sites"),
    "NODIFF_READERS": (lambda t: t.differentiates, "differentiates",
                       "the plugin reports a decorator that hides a NoDiff parameter only under these"),
    "DONATING_TRANSFORMS": (lambda t: t.donates, "donates",
                            "the plugin reads its donate_argnums/donate_argnames and reports a read after donation"),
}
"""The plugin's sets of transforms, each with who belongs in it, as ``jaxstatic/_public.py`` says, and why."""


@pytest.mark.parametrize("table", sorted(_TABLES))
def test_each_transform_table_lists_what_the_runtime_declares(table: str) -> None:
    """The plugin never imports the runtime, so its tables are written out; each must match the declaration."""
    belongs, what, why = _TABLES[table]
    listed: frozenset[str] = getattr(names, table)
    missing = [f"js.{t.name} {what} (jaxstatic/_public.py): add {_fullname(t)!r} to {table} in "
               f"mypy_plugin/_fullnames.py, since {why}" for t in _public.TRANSFORMS
               if belongs(t) and _fullname(t) not in listed]
    assert not missing, "\n".join(missing)
    stale = sorted(listed - {_fullname(t) for t in _public.TRANSFORMS if belongs(t)})
    assert not stale, (f"{table} in mypy_plugin/_fullnames.py lists {stale}, which jaxstatic/_public.py does not "
                       f"declare as a transform that {what}: remove them from {table}, or correct TRANSFORMS there")


def test_the_wrapper_table_maps_each_transform_class_to_its_transform() -> None:
    """A variable holding ``vmap(in_axes=0)`` is known by the wrapper class its decorator returns."""
    import jaxstatic

    expected: dict[str, str] = {}
    missing = []
    for t in _public.TRANSFORMS:
        cls = getattr(jaxstatic, t.wrapper)
        wrapper = f"{cls.__module__}.{cls.__qualname__}"
        if wrapper in expected:  # remat after checkpoint: the class is known by the first
            continue
        expected[wrapper] = _fullname(t)
        if names.TRANSFORM_WRAPPERS.get(wrapper) != _fullname(t):
            missing.append(f"js.{t.name} returns {t.wrapper} (jaxstatic/_public.py): add {wrapper!r}: "
                           f"{_fullname(t)!r} to TRANSFORM_WRAPPERS in mypy_plugin/_fullnames.py, so that a variable "
                           f"holding its decorator (`d = js.{t.name}(...)`, then `@d`) is checked")
    assert not missing, "\n".join(missing)
    stale = sorted(set(names.TRANSFORM_WRAPPERS) - set(expected))
    assert not stale, (f"TRANSFORM_WRAPPERS in mypy_plugin/_fullnames.py lists {stale}, which no transform of "
                       f"jaxstatic/_public.py returns: remove them there")
