"""Every public name of jaxstatic, declared once: the module it comes from and, for a transform, what the mypy plugin
must know of it.

Made from these tables: ``_LAZY`` in ``jaxstatic/__init__.py`` (what loads on first use) and the ``jaxstatic.X``
name the exported errors and warnings show in tracebacks (``name_as_exported``). Checked against them, by tests that
say what to add and where: ``__init__``'s imports and ``__all__``, which type checkers read as written, so they stay
literal (``tests/runtime/test_public.py``); the plugin's tables in ``mypy_plugin/_fullnames.py``, since the plugin
never imports the runtime (``tests/plugin/test_fullnames.py``); the API reference and the error catalogue
(``tests/docs/test_docs.py``, ``tests/docs/test_catalogue.py``).

Imports nothing: ``import jaxstatic`` reads it before anything else.
"""

from __future__ import annotations

from typing import Any


class PublicTransform:
    """A public transform, ``jaxstatic.<name>``, defined in ``jaxstatic.<module>``, returning a ``wrapper`` (its
    ``StaticFunction`` subclass, exported from the same module). Whether it ``differentiates``: it reads ``NoDiff``
    (the others trace a NoDiff parameter like any other), so the plugin reports a decorator that hides one under it.
    Whether it ``donates``: it takes ``donate_argnums``/``donate_argnames`` and reads ``Donate``, so the plugin
    reports a read after donation.

    A plain class: ``import jaxstatic`` reads this module, and making a ``NamedTuple`` class costs ~60 µs more."""

    __slots__ = ("differentiates", "donates", "module", "name", "wrapper")

    def __init__(self, name: str, module: str, wrapper: str, *, differentiates: bool = False,
                 donates: bool = False) -> None:
        self.name, self.module, self.wrapper = name, module, wrapper
        self.differentiates, self.donates = differentiates, donates


TRANSFORMS = (
    PublicTransform("jit", "_jit", "JitFunction", donates=True),
    PublicTransform("vmap", "_vmap_pmap", "VmapFunction"),
    PublicTransform("pmap", "_vmap_pmap", "PmapFunction", donates=True),
    PublicTransform("grad", "_ad", "GradFunction", differentiates=True),
    PublicTransform("value_and_grad", "_ad", "ValueAndGradFunction", differentiates=True),
    PublicTransform("checkpoint", "_ad", "CheckpointFunction"),
    PublicTransform("remat", "_ad", "CheckpointFunction"),  # checkpoint under JAX's other name
    PublicTransform("custom_vjp", "_ad", "CustomVJPFunction", differentiates=True),
    PublicTransform("custom_jvp", "_ad", "CustomJVPFunction", differentiates=True),
    PublicTransform("shard_map", "_shard_map", "ShardMapFunction"),
)

ERRORS = {
    "_errors": ("JaxstaticError", "AnnotationError", "NonStaticValueError", "NonArrayArgumentError",
                "StaticMismatchError", "RetraceError", "OptionError", "MissingArgumentError", "RuleError",
                "HiddenStaticWarning", "StaticTypeWarning"),
    "_donate": ("DeletedArrayError", "UnusableDonationError"),
}
"""The exported exception and warning classes, by the module that defines them."""

OTHERS = {
    "_annotations": ("Static", "NoDiff", "STATIC", "NODIFF", "static_argnames", "static_argnums"),
    "_donate": ("Donate", "DONATE", "donate_argnames", "donate_argnums", "set_strict_donation"),
    "_transform": ("StaticFunction", "BoundMethod"),
    "_jit": ("JitMethod",),
    "_stats": ("CacheInfo", "Retrace", "trace_report"),
    "_aot": ("Lowered", "Compiled"),
    "_dataclass": ("dataclass", "field"),
}
"""The other public names, by the module ``jaxstatic`` takes them from."""

SUBMODULES = ("testing",)
"""Public submodules, loaded on first use."""

LAZY_MODULES = frozenset({"_ad", "_aot", "_dataclass", "_shard_map", "_vmap_pmap"})
"""Loaded on first use, not with jaxstatic: what a program calling jit alone never needs (``import jaxstatic`` after
jax took ~32 ms of CPU with them, ~13 ms without: ``benchmarks/import_time.py``)."""


def modules() -> dict[str, str]:
    """Every public name but the submodules, with the module ``jaxstatic`` takes it from."""
    found = {name: module for module, names in (*OTHERS.items(), *ERRORS.items()) for name in names}
    for t in TRANSFORMS:
        found[t.name] = found[t.wrapper] = t.module
    return found


def name_as_exported(namespace: dict[str, Any]) -> None:
    """Names the exported classes defined in the module whose globals are ``namespace`` ``jaxstatic.X``, so that
    tracebacks and reprs show the name users import and catch."""
    module = namespace["__name__"]
    for name in ERRORS[module.rpartition(".")[2]]:
        if name not in namespace:
            raise ImportError(f"jaxstatic/_public.py declares {name} in ERRORS, but {module} does not define it")
        namespace[name].__module__ = "jaxstatic"
