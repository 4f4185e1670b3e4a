"""Every fully qualified name the plugin dispatches on names something that exists at run time, and its tables of
transforms list what ``jaxstatic/_public.py`` declares (the plugin never imports the runtime, so they are written out).

A renamed module or a new transform would otherwise switch a check off in silence. (``JAX_STUB_CALLS`` name classes
that exist only in the jax stubs; ``tests/plugin/test_with_stubs.py`` exercises them.)
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

import pytest
from jaxstatic_mypy import _fullnames as names

from jaxstatic import _public

FULLNAMES = "mypy_plugin/_fullnames.py"

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
    assert hasattr(importlib.import_module(module), attribute), (
        f"{fullname}, which {FULLNAMES} names, does not exist at run time: correct the name there")


def test_transform_decorator_names_are_public_names() -> None:
    import jaxstatic

    for public, fullname in names.TRANSFORM_DECORATORS.items():
        assert public == f"jaxstatic.{fullname.rsplit('.', 1)[1]}", (
            f"TRANSFORM_DECORATORS in {FULLNAMES} maps {public!r} to {fullname!r}: the key must be "
            f"'jaxstatic.{fullname.rsplit('.', 1)[1]}', the transform's public name")
        assert getattr(jaxstatic, public.split(".")[1], None) is not None, (
            f"jaxstatic does not export {public}: declare it in jaxstatic/_public.py, or drop its row from "
            f"_TRANSFORMS in {FULLNAMES}")


def test_attrs_makers_are_those_mypy_knows() -> None:
    """The attrs decorators whose classes the plugin judges are the ones mypy's attrs plugin types."""
    from mypy.plugins import attrs as mypy_attrs

    known = (mypy_attrs.attr_class_makers | mypy_attrs.attr_dataclass_makers | mypy_attrs.attr_frozen_makers
             | mypy_attrs.attr_define_makers)
    _same("ATTRS_MAKERS", map(repr, names.ATTRS_MAKERS), map(repr, known), "mypy's attrs plugin types their classes")
    _same("ATTRS_FROZEN_MAKERS", map(repr, names.ATTRS_FROZEN_MAKERS), map(repr, mypy_attrs.attr_frozen_makers),
          "mypy's attrs plugin makes their classes frozen")


def _same(table: str, listed: Iterable[str], expected: Iterable[str], why: str) -> None:
    """``listed`` (``table`` in the plugin's ``_fullnames.py``, its entries as written there) is ``expected``; else
    the entries to add or drop."""
    listed, expected = set(listed), set(expected)
    fixes = [f"add {entry} to {table} in {FULLNAMES} ({why})" for entry in sorted(expected - listed)]
    fixes += [f"drop {entry} from {table} in {FULLNAMES} (not expected: {why})" for entry in sorted(listed - expected)]
    assert not fixes, "\n".join(fixes)




def _row(transform: _public.PublicTransform) -> tuple[str, str, str, bool, bool]:
    """The plugin's row for a transform, from the runtime's declaration and the class it returns."""
    import jaxstatic

    cls = getattr(jaxstatic, transform.wrapper)
    wrapper = f"{cls.__module__.removeprefix('jaxstatic.')}.{cls.__qualname__}"
    return transform.name, transform.module, wrapper, transform.differentiates, transform.donates


def test_the_plugins_transforms_are_those_the_runtime_declares() -> None:
    """The plugin never imports the runtime, so its one table of transforms is written out (every set the plugin
    reads is made from it: JAXSTATIC_TRANSFORMS, NODIFF_READERS, DONATING_TRANSFORMS, TRANSFORM_WRAPPERS); it must
    match the declaration, row for row, so that a new transform is never left unchecked in silence."""
    expected = [_row(t) for t in _public.TRANSFORMS]
    listed = list(names._TRANSFORMS)
    missing = [f"js.{row[0]} (jaxstatic/_public.py): add {row!r} to _TRANSFORMS in mypy_plugin/_fullnames.py, so "
               f"that the plugin checks the signature it receives and its call sites" for row in expected
               if row not in listed]
    assert not missing, "\n".join(missing)
    stale = [row for row in listed if row not in expected]
    assert not stale, (f"_TRANSFORMS in mypy_plugin/_fullnames.py lists {stale}, which jaxstatic/_public.py does "
                       f"not declare so (name, module, wrapper class, differentiates, donates): correct one or the "
                       f"other")


@pytest.mark.parametrize(("table", "flag"), [("NODIFF_READERS", 3), ("DONATING_TRANSFORMS", 4)])
def test_the_plugins_sets_follow_the_row_flags(table: str, flag: int) -> None:
    """A transform that differentiates reads NoDiff (a decorator hiding one is reported under it); one that donates
    has its reads after donation reported."""
    expected = {f"jaxstatic.{t.module}.{t.name}" for t in _public.TRANSFORMS if _row(t)[flag]}
    made = "made from the rows of _TRANSFORMS there"
    _same(table, map(repr, getattr(names, table)), map(repr, expected), f"{made} whose {('reads NoDiff', 'donates')[flag - 3]} flag is True")
    _same("JAXSTATIC_TRANSFORMS", map(repr, names.JAXSTATIC_TRANSFORMS),
          [repr(f"jaxstatic.{t.module}.{t.name}") for t in _public.TRANSFORMS], f"{made}, one per row")


def test_the_wrapper_table_maps_each_transform_class_to_its_first_transform() -> None:
    """A variable holding ``vmap(in_axes=0)`` is known by the wrapper class its decorator returns; remat returns
    checkpoint's class, known as checkpoint's."""
    expected: dict[str, str] = {}
    for t in _public.TRANSFORMS:
        expected.setdefault(f"jaxstatic.{_row(t)[2]}", f"jaxstatic.{t.module}.{t.name}")
    _same("TRANSFORM_WRAPPERS", [f"{k!r}: {v!r}" for k, v in names.TRANSFORM_WRAPPERS.items()],
          [f"{k!r}: {v!r}" for k, v in expected.items()],
          "made from the rows of _TRANSFORMS there: each wrapper class to the first transform returning it")
