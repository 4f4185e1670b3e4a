"""Each public name is declared once, in ``jaxstatic/_public.py``, and ``jaxstatic/__init__.py`` agrees with it.

``__init__``'s imports and ``__all__`` stay written out, since type checkers read them as written (a name imported only
through ``__getattr__`` is unknown to mypy and pyright); these tests say what to add there when a name is declared,
and what to declare when a transform, error or warning is defined. The plugin's tables are held to the same
declaration by ``tests/plugin/test_fullnames.py``, the docs by ``tests/docs``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import sys
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec

import jaxstatic
import jaxstatic as js
from jaxstatic import NoDiff, _public
from jaxstatic._errors import JaxstaticError
from jaxstatic._transform import StaticFunction

from ._devices import cpu_mesh

INIT = Path(jaxstatic.__file__)
PUBLIC = "jaxstatic/_public.py"
DECLARED = _public.modules()


def _imports() -> tuple[dict[str, str], dict[str, str]]:
    """The names ``__init__.py`` imports as ``X as X``, with the module each comes from: those imported with the
    package, and those under ``if TYPE_CHECKING:`` (loaded on first use)."""
    eager: dict[str, str] = {}
    lazy: dict[str, str] = {}
    tree = ast.parse(INIT.read_text())
    blocks = [(eager, tree.body)] + [(lazy, node.body) for node in tree.body
                                     if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"]
    for found, body in blocks:
        for node in body:
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                for alias in node.names:
                    if alias.asname == alias.name:  # a re-export; ``from . import _public`` is not one
                        found[alias.name] = node.module or alias.name
    return eager, lazy


def test_the_declaration_is_read() -> None:
    # guards the tests below against a declaration that finds nothing, which would make them pass
    assert {"jit", "grad", "JitFunction", "RetraceError", "Static", "dataclass"} <= set(DECLARED)
    assert _imports()[0]["jit"] == "_jit" and _imports()[1]["grad"] == "_ad"


def test_all_lists_every_declared_name() -> None:
    declared = {*DECLARED, *_public.SUBMODULES}
    missing = sorted(declared - set(jaxstatic.__all__))
    assert not missing, (f"{PUBLIC} declares {missing}, which jaxstatic/__init__.py's __all__ does not list: add "
                         f"them there, so that `from jaxstatic import *` and type checkers export them")
    stale = sorted(set(jaxstatic.__all__) - declared)
    assert not stale, (f"jaxstatic/__init__.py's __all__ lists {stale}, which {PUBLIC} does not declare: declare "
                       f"each in TRANSFORMS, ERRORS or OTHERS there, by the module it comes from")
    assert len(jaxstatic.__all__) == len(set(jaxstatic.__all__)), "__all__ lists a name twice"


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_init_imports_each_declared_name_where_type_checkers_see_it(name: str) -> None:
    module = DECLARED[name]
    eager, lazy = _imports()
    where, other = (lazy, eager) if module in _public.LAZY_MODULES else (eager, lazy)
    place = ("under `if TYPE_CHECKING:` (it loads on first use, through _LAZY)" if where is lazy
             else "at the top, with the package")
    assert name not in other, (f"jaxstatic/__init__.py imports {name} from .{other[name]} in the wrong place: "
                               f"{PUBLIC} declares it from {module}, so import it {place}")
    assert where.get(name) == module, (f"jaxstatic.{name} is declared in {PUBLIC} (from {module}), but "
                                       f"jaxstatic/__init__.py does not import it from there: add `{name} as {name}` "
                                       f"to `from .{module} import (...)` {place}, so that type checkers see it")


def test_init_imports_nothing_undeclared() -> None:
    eager, lazy = _imports()
    stale = sorted((set(eager) | set(lazy)) - set(DECLARED) - set(_public.SUBMODULES))
    assert not stale, (f"jaxstatic/__init__.py re-exports {stale}, which {PUBLIC} does not declare: declare each "
                       f"there (TRANSFORMS, ERRORS or OTHERS), by the module it comes from")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="typing.get_overloads arrived in Python 3.11")
@pytest.mark.parametrize("transform", _public.TRANSFORMS, ids=lambda t: t.name)
def test_each_transform_returns_its_wrapper(transform: _public.PublicTransform) -> None:
    """The plugin knows a variable holding ``vmap(in_axes=0)`` by the wrapper class the decorator returns."""
    function = getattr(importlib.import_module(f"jaxstatic.{transform.module}"), transform.name)
    assert function.__module__ == f"jaxstatic.{transform.module}", (
        f"{PUBLIC} declares jaxstatic.{transform.name} in {transform.module}, where the plugin looks it up by its "
        f"full name, but it is defined in {function.__module__}")
    wrapper = getattr(jaxstatic, transform.wrapper)
    assert isinstance(wrapper, type) and issubclass(wrapper, StaticFunction), transform
    returned = [str(o.__annotations__["return"]) for o in typing.get_overloads(function)]
    assert returned and all(transform.wrapper in r for r in returned), (
        f"{PUBLIC} declares that jaxstatic.{transform.name} returns {transform.wrapper}, but its overloads "
        f"return {returned}")


def _runtime_modules() -> list[types.ModuleType]:
    return [importlib.import_module(f"jaxstatic.{m.name}") for m in pkgutil.iter_modules(jaxstatic.__path__)
            if m.name.startswith("_") and m.name != "_hits"]


def _classes_defined(*bases: type) -> Iterator[tuple[str, str, str]]:
    """``(module, its short name, class name)`` of every public class of the runtime's modules deriving from
    ``bases``, where it is defined."""
    for module in _runtime_modules():
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and issubclass(obj, bases) and obj.__module__ == module.__name__
                    and not name.startswith("_")):
                yield module.__name__, module.__name__.rpartition(".")[2], name


def test_every_transform_class_is_declared() -> None:
    wrappers = {t.wrapper for t in _public.TRANSFORMS}
    for module, short, name in _classes_defined(StaticFunction):
        assert name in wrappers or name == "StaticFunction", (
            f"{module}.{name} is a transform's class, but {PUBLIC} declares no transform returning it: add "
            f"PublicTransform(\"<its function>\", \"{short}\", \"{name}\", ...) to TRANSFORMS there, saying whether it "
            "differentiates (reads NoDiff) and whether it donates")


def test_every_error_and_warning_class_is_declared() -> None:
    declared = {name for names in _public.ERRORS.values() for name in names}
    for module, short, name in _classes_defined(JaxstaticError, Warning):
        assert name in declared, (
            f"{module}.{name} is an error or warning class, but {PUBLIC} does not declare it: add \"{name}\" to "
            f"ERRORS[\"{short}\"] there, so that it is exported and named jaxstatic.{name} in tracebacks (name it "
            f"_{name} if it is not for users)")


@pytest.mark.parametrize("name", sorted(n for names in _public.ERRORS.values() for n in names))
def test_each_exported_error_is_named_as_users_import_it(name: str) -> None:
    module = next(m for m, names in _public.ERRORS.items() if name in names)
    cls = getattr(importlib.import_module(f"jaxstatic.{module}"), name)
    assert issubclass(cls, BaseException), f"{PUBLIC} declares {name} in ERRORS, but it is not an exception class"
    assert cls.__module__ == "jaxstatic", (
        f"jaxstatic.{name} shows as {cls.__module__}.{name} in tracebacks: jaxstatic/{module}.py should end with "
        f"`name_as_exported(globals())` (from ._public), which names the classes ERRORS[\"{module}\"] declares")


def _with_vjp(f: js.CustomVJPFunction[..., jax.Array]) -> js.CustomVJPFunction[..., jax.Array]:
    def fwd(key: jax.Array, x: jax.Array) -> tuple[jax.Array, tuple[jax.Array, jax.Array]]:
        return jnp.sum(key * x), (key, x)

    def bwd(res: tuple[jax.Array, jax.Array], g: jax.Array) -> tuple[jax.Array, jax.Array]:
        return g * res[1], g * res[0]

    f.defvjp(fwd, bwd)  # the rules of f(key, x) with nothing NoDiff
    return f


def _with_jvp(f: js.CustomJVPFunction[..., jax.Array]) -> js.CustomJVPFunction[..., jax.Array]:
    def jvp(primals: tuple[jax.Array, jax.Array], tangents: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, ...]:
        (key, x), (dkey, dx) = primals, tangents
        return jnp.sum(key * x), jnp.sum(dkey * x + key * dx)

    f.defjvp(jvp)  # the rule of f(key, x) with nothing NoDiff
    return f


_APPLY: dict[str, Callable[[Callable[..., jax.Array]], Callable[..., object]]] = {
    "jit": js.jit, "vmap": js.vmap, "pmap": js.pmap, "grad": js.grad, "value_and_grad": js.value_and_grad,
    "checkpoint": js.checkpoint, "remat": js.remat,
    "custom_vjp": lambda f: _with_vjp(js.custom_vjp(f)), "custom_jvp": lambda f: _with_jvp(js.custom_jvp(f)),
    "shard_map": lambda f: js.shard_map(f, mesh=cpu_mesh((1,), ("i",)), in_specs=(PartitionSpec(), PartitionSpec()),
                                        out_specs=PartitionSpec()),
}
"""Each transform applied to a function of ``(key, x)``, as a user would with no option but those it needs."""


def _marked(key: NoDiff[jax.Array], x: jax.Array) -> jax.Array:
    return jnp.sum(key * x)


def _unmarked(key: jax.Array, x: jax.Array) -> jax.Array:
    return jnp.sum(key * x)


def _outcome(apply: Callable[[Callable[..., jax.Array]], Callable[..., object]],
             fn: Callable[..., jax.Array]) -> object:
    """What the transformed ``fn`` gives for ``key = [2.0]``, ``x = [3.0]`` (one element: pmap needs one device),
    or the jaxstatic error it raises."""
    try:
        out = apply(fn)(jnp.array([2.0]), jnp.array([3.0]))
    except js.JaxstaticError as err:
        return type(err).__name__
    return [np.asarray(leaf).tolist() for leaf in jax.tree_util.tree_leaves(out)]


@pytest.mark.parametrize("transform", _public.TRANSFORMS, ids=lambda t: t.name)
def test_each_transform_reads_nodiff_as_its_row_says(transform: _public.PublicTransform) -> None:
    """A row's ``differentiates`` (the plugin reports a decorator hiding a NoDiff parameter only under such a
    transform) says whether NoDiff changes what the transform does: here, ``f(key: NoDiff[Array], x)`` against the
    same function unmarked."""
    apply = _APPLY.get(transform.name)
    assert apply is not None, (
        f"add to _APPLY in {__name__.replace('.', '/')}.py how to apply js.{transform.name} to a function of "
        "(key, x), so that its row's differentiates flag is checked against what it does")
    reads = _outcome(apply, _marked) != _outcome(apply, _unmarked)
    assert reads == transform.differentiates, (
        f"{PUBLIC} declares js.{transform.name} with differentiates={transform.differentiates}, but a NoDiff "
        f"parameter {'changes' if reads else 'does not change'} what it does: make it "
        f"differentiates={reads} there (and in mypy_plugin/_fullnames.py's _TRANSFORMS row)")
