"""Fully qualified names the plugin dispatches on, as mypy spells them."""

from __future__ import annotations

import sys
from typing import Final

STATIC_ALIAS: Final = "jaxstatic._annotations.Static"
NODIFF_ALIAS: Final = "jaxstatic._annotations.NoDiff"
"""``NoDiff[T]``: a dynamic parameter that is never differentiated (not static, so no hashability rule)."""
MARKER_ALIASES: Final = frozenset({STATIC_ALIAS, NODIFF_ALIAS})
STATIC_ARGNAMES: Final = "jaxstatic._annotations.static_argnames"
STATIC_ARGNUMS: Final = "jaxstatic._annotations.static_argnums"
"""``js.static_argnames(f)``/``js.static_argnums(f)``: ``f``'s Static parameters, for a plain JAX transform's
options; the plugin reads them from ``f``'s type."""
"""Aliases whose mark a transform reads from the signature it receives."""
MARKER_OBJECTS: Final = {
    "jaxstatic._annotations.STATIC": STATIC_ALIAS,
    "jaxstatic._annotations.NODIFF": NODIFF_ALIAS,
    "jaxstatic._annotations.DONATE": "jaxstatic._annotations.Donate",  # DONATE_ALIAS, named below
}
"""The metadata objects inside the aliases: ``Annotated[T, STATIC]`` is ``Static[T]``."""
ANNOTATED: Final = frozenset({"typing.Annotated", "typing_extensions.Annotated"})

JAXSTATIC_JIT: Final = "jaxstatic._jit.jit"
BOUND_METHOD: Final = "jaxstatic._transform.BoundMethod"
"""``obj.method`` for a transformed method (``JitMethod`` for a jitted one): typed as the method without ``self``."""
_TRANSFORMS: Final = (
    # (name, module, the wrapper class it returns as mypy spells it, reads NoDiff, donates): one row per transform,
    # as jaxstatic/_public.py declares it (the plugin never imports the runtime; tests/plugin/test_fullnames.py
    # holds this table to that declaration)
    ("jit", "_jit", "_jit.JitFunction", False, True),
    ("vmap", "_vmap_pmap", "_vmap_pmap.VmapFunction", False, False),
    ("pmap", "_vmap_pmap", "_vmap_pmap.PmapFunction", False, True),
    ("grad", "_ad", "_ad.GradFunction", True, False),
    ("value_and_grad", "_ad", "_ad.ValueAndGradFunction", True, False),
    ("checkpoint", "_ad", "_ad.CheckpointFunction", False, False),
    ("remat", "_ad", "_ad.CheckpointFunction", False, False),
    ("custom_vjp", "_ad", "_custom.CustomVJPFunction", True, False),
    ("custom_jvp", "_ad", "_custom.CustomJVPFunction", True, False),
    ("shard_map", "_shard_map", "_shard_map.ShardMapFunction", False, False),
)

JAXSTATIC_TRANSFORMS: Final = frozenset(f"jaxstatic.{module}.{name}" for name, module, *_ in _TRANSFORMS)
"""Transforms that read ``Static``/``NoDiff`` parameters from the signature they receive (check
``jaxstatic-signature``) and accept ``static_argnames``/``static_argnums``. Each is typed with a ``ParamSpec``
(``Callable[P, R] -> Wrapped[P, R]``): call sites are checked from that binding, whatever the wrapper class."""

NODIFF_READERS: Final = frozenset(f"jaxstatic.{module}.{name}" for name, module, _, nodiff, _ in _TRANSFORMS if nodiff)
"""Transforms that read ``NoDiff`` (the others trace a NoDiff parameter like any other): a decorator hiding one
matters only under these."""

TRANSFORM_DECORATORS: Final = {
    f"jaxstatic.{name.rsplit('.', 1)[1]}": name for name in JAXSTATIC_TRANSFORMS
}
"""Names given to the decorator a transform returns when called with options only (``jit(max_traces=3)``).

mypy uses a callable's name to find plugin hooks when the callee has no fully qualified name, so naming it lets the
plugin see the decorator being applied.
"""

TRANSFORM_WRAPPERS: Final = {
    f"jaxstatic.{wrapper}": f"jaxstatic.{module}.{name}" for name, module, wrapper, *_ in reversed(_TRANSFORMS)
}  # reversed: a class two transforms return (remat's, checkpoint's) is known by the first
"""The wrapper class each transform returns: a variable holding ``vmap(in_axes=0)`` is known by the decorator's
shape (mypy drops the name the plugin gives it when it infers the variable's type)."""

JAX_JIT: Final = frozenset({"jax._src.api.jit", "jax.jit"})
"""``jax.jit`` as jax defines it, and as the jax stubs in ``typeshed_stubs/`` define it."""
JAX_PMAP: Final = frozenset({"jax._src.pmap.pmap", "jax._src.api.pmap", "jax.pmap"})
"""``jax.pmap``, whose ``static_broadcasted_argnums`` are static as jit's ``static_argnums`` are (jax defines it
in ``jax._src.api`` before 0.7)."""
JAX_STATIC_OPTIONS: Final = JAX_JIT | JAX_PMAP
"""Plain JAX transforms that make the parameters their options name static: hashed as they are."""

JAX_STUB_CALLS: Final = frozenset({"jax._JitWrapped.__call__", "jax._PmapWrapped.__call__"})
"""Calls of jitted/pmapped functions when the jax stubs are in use: they carry the wrapped parameters."""
JAX_WRAPPED_CALLS: Final = frozenset({"jax._src.stages.Wrapped.__call__", "jax._src.pjit.JitWrapped.__call__"})
"""Calls of jitted functions typed by jax itself (``*args, **kwargs``): checked when ``jax.jit`` made some static."""
JIT_WRAPPED: Final = frozenset({"jax._src.pjit.JitWrapped", "jax._JitWrapped", "jax._PmapWrapped"})
"""The type ``jax.jit`` returns, as jax defines it and as the stubs do (and ``jax.pmap``, as the stubs do: jax's
own returns ``Any``)."""
PLAIN_STATIC_NAMES: Final = "__jaxstatic_static_argnames"
PLAIN_STATIC_FUN: Final = "__jaxstatic_static_fun"
PLAIN_STATIC_MODULE: Final = "__jaxstatic_static_module"
PLAIN_STATIC_BY: Final = "__jaxstatic_static_by"
"""Where a jitted function's type keeps the parameters ``jax.jit`` made static, the function they belong to and
the module that applied ``jax.jit``, and which transform did (``jax.jit``, ``jax.pmap``) (``Instance.extra_attrs``, serialized with the type from mypy 1.18)."""
PLAIN_DONATED_NAMES: Final = "__jaxstatic_donated_argnames"
"""Where a jitted function's type keeps the parameters ``donate_argnums``/``donate_argnames`` donate."""
DONATE_ALIAS: Final = "jaxstatic._annotations.Donate"
"""``Donate[T]``: a parameter whose buffers a call consumes (``[jaxstatic-donated]``)."""
DONATING_TRANSFORMS: Final = frozenset(f"jaxstatic.{module}.{name}" for name, module, *_, donates in _TRANSFORMS if donates)
"""jaxstatic's transforms taking ``donate_argnums``/``donate_argnames``: ``js.jit(step, donate_argnums=0)`` is read
as ``step`` with its first parameter ``Donate[...]``."""
STAGING_METHODS: Final = frozenset({"lower", "trace", "eval_shape"})
"""Methods of a jaxstatic function that trace or lower for their arguments without running anything: nothing donated."""
JAX_JIT_DECORATOR: Final = "jax.jit(...)"
"""Name given to the decorator ``jax.jit(static_argnames=...)`` returns, so the plugin sees it applied."""

FUNCTOOLS_PARTIAL: Final = "functools.partial"
PARTIAL_CALL: Final = "functools.partial.__call__"
PARTIAL_ATTR: Final = "__mypy_partial"
"""Where mypy's functools plugin keeps the signature left after binding arguments."""

DATACLASS_DECORATORS: Final = frozenset({"dataclasses.dataclass"})
ATTRS_FROZEN_MAKERS: Final = frozenset({"attr.frozen", "attrs.frozen"})
ATTRS_MAKERS: Final = ATTRS_FROZEN_MAKERS | {
    "attr.s",
    "attr.attrs",
    "attr.attributes",
    "attr.dataclass",
    "attr.define",
    "attr.mutable",
    "attrs.define",
    "attrs.mutable",
}
"""attrs' class decorators, as mypy's attrs plugin knows them: the frozen ones hash their fields by default, the
others set ``__hash__`` to None (``eq=True``, not frozen)."""
PYTREE_DATACLASS: Final = "jaxstatic._dataclass.dataclass"
"""``jaxstatic.dataclass``: a ``dataclass_transform`` (frozen by default) whose classes are pytrees: ``Static``
fields are metadata, the others children. An instance hashes its leaves and static fields as they are."""
PYTREE_FIELD: Final = "jaxstatic._dataclass.field"
"""Its field specifier (mypy's dataclasses plugin reads it from the ``dataclass_transform``; listed so that a
rename is caught by the fullname test)."""

HASH_BY_FIELDS: Final = frozenset({"equinox._module._module.Module", "equinox._module.Module"})
"""Classes whose own ``__hash__`` hashes every field's value (``eqx.Module``): an array field makes it fail."""

ARRAY_TYPES: Final = ("jax._src.basearray.Array", "jax._src.core.Tracer", "numpy.ndarray")
"""Never static: arrays and tracers are not hashable (and their stubs keep object.__hash__)."""

FREEZABLE_CONTAINERS: Final = frozenset(
    {"builtins.dict", "builtins.list", "builtins.set", "builtins.frozenset", "builtins.tuple"}
)
"""Builtin containers the runtime freezes: static when their keys and items are."""

SLICE: Final = "builtins.slice"
"""jaxstatic keys a slice by ``(start, stop, step)`` on every Python; plain ``hash()`` of one works from Python 3.12
only, and code checked for one version often runs on the next: judged by its parts under both rules."""

EQ_WITHOUT_HASH: Final = frozenset({"typing.Mapping", "typing.AbstractSet"})
"""Abstract classes that define ``__eq__`` and not ``__hash__``, so Python sets their ``__hash__`` to None (the stubs
do not say so): a concrete subclass that defines no ``__hash__`` (``UserDict``) is not hashable. Abstract ones
(a parameter declared ``Mapping``) may hold a hashable subclass: unsure, silent."""

HASH_BY_ITEMS: Final = frozenset({"builtins.tuple", "builtins.frozenset"})
"""Hashable builtin containers whose hash needs hashable items."""

NEVER_STATIC_PACKAGES: Final = frozenset(sys.stdlib_module_names) | {
    "jax",
    "jaxlib",
    "numpy",
    "typing_extensions",
    "mypy_extensions",
}
"""Top-level packages whose functions and methods never declare Static parameters: the call-site hooks skip calls
whose fully qualified name starts here (most calls in typical code), except the few checked specially below."""

DATACLASS_REPLACE: Final = "dataclasses.replace"
"""Runs ``__init__`` again: the new values of Static fields are judged as at construction."""

CHECKED_ANYWAY: Final = (
    frozenset({FUNCTOOLS_PARTIAL, PARTIAL_CALL, DATACLASS_REPLACE}) | JAX_STATIC_OPTIONS | JAX_STUB_CALLS | JAX_WRAPPED_CALLS
)
