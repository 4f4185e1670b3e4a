"""What differs between the JAX versions jaxstatic supports, in one place: each name here behaves the same on every
supported JAX, so the rest of the package never asks which version it runs on.

The floor is ``JAX_FLOOR`` (``pyproject.toml`` declares it and CI runs the runtime tests against it).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
from collections.abc import Callable, Sequence, Set
from typing import Any

import jax
from jax.sharding import PartitionSpec

JAX_FLOOR = "0.4.38"
JAX_VERSION: tuple[int, ...] = tuple(int(p) for p in re.findall(r"\d+", jax.__version__)[:3])

SHARD_MAP_VERSION = "0.6.1"
LANE = JAX_VERSION >= (0, 5)
"""Whether the exact-key lane (``_lane``) may hand calls to ``jax.jit`` directly: before JAX 0.5 a ``jax.jit`` with
static arguments names none of the function's parameters in its tracing errors (the general path's program does)."""
"""The first JAX with ``jax.shard_map`` (its ``mesh`` read from ``jax.set_mesh``, ``in_specs`` inferred)."""


# ---------------------------------------------------------------------------------------------------------------
# shard_map


class _InferSpecs:
    """``jax.sharding.Infer`` where JAX has none: the default ``in_specs``, which this JAX cannot honour."""

    def __repr__(self) -> str:
        return "jax.sharding.Infer"


HAS_SHARD_MAP = hasattr(jax, "shard_map")

INFER: Any = (inspect.signature(jax.shard_map).parameters["in_specs"].default if HAS_SHARD_MAP
              else _InferSpecs())
"""``jax.sharding.Infer``, ``jax.shard_map``'s default ``in_specs``, read from its signature (jax 0.10 has no public
import path for it)."""


def jit_disabled() -> bool:
    """Whether ``jax.disable_jit()`` is on: jit runs the function as plain Python."""
    return bool(jax.config.jax_disable_jit)  # type: ignore[attr-defined]


def shard_map_needs(mesh: Any, in_specs: Any) -> str | None:
    """What a ``shard_map`` with these options needs that this JAX lacks (``None``: nothing). Before
    ``jax.shard_map``, ``jax.experimental.shard_map`` takes an explicit mesh and explicit specs."""
    if HAS_SHARD_MAP:
        return None
    if mesh is None:
        return "no mesh (to be read from the surrounding mesh context)"
    if in_specs is INFER:
        return "no in_specs (to be inferred from the arguments' shardings)"
    return None


def eager_shards() -> bool:
    """Whether the function called now runs as ``jax.shard_map``'s body over concrete shards: ``jax.shard_map``
    called outside any trace runs its body eagerly, under its own ``ShardMapTrace`` (named alike in
    ``jax.experimental.shard_map`` before ``jax.shard_map``), where a trace that compiles it would be a jaxpr's."""
    from jax._src import core  # trace_ctx: the current trace, since JAX 0.4.36

    trace = getattr(core.trace_ctx, "trace", None)
    if type(trace).__name__ == "RewriteTrace":  # JAX before 0.6's replication check, over the trace it rewrites
        trace = getattr(trace, "parent_trace", None)
    return type(trace).__name__ == "ShardMapTrace"


def shard_map(f: Callable[..., Any], *, in_specs: Any, out_specs: Any, mesh: Any, axis_names: Set[Any],
              check_vma: bool) -> Callable[..., Any]:
    """``jax.shard_map``; before it, ``jax.experimental.shard_map.shard_map`` with the same meaning: ``check_vma``
    was ``check_rep``, and ``axis_names`` (the axes mapped manually) the complement of ``auto``."""
    if HAS_SHARD_MAP:
        return jax.shard_map(f, in_specs=in_specs, out_specs=out_specs, mesh=mesh, axis_names=axis_names,
                             check_vma=check_vma)
    from jax.experimental.shard_map import shard_map as experimental

    auto = frozenset(mesh.axis_names) - frozenset(axis_names) if axis_names else frozenset()
    old_shard_map: Any = experimental  # typed by the newest JAX, where check_rep and auto are gone
    return old_shard_map(f, mesh, in_specs, out_specs, check_rep=check_vma, auto=auto)  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------------------------
# vmap


def vmap(fun: Callable[..., Any], **options: Any) -> Callable[..., Any]:
    """``jax.vmap``, raising ``TypeError`` for an argument that is not a JAX type on every version: before JAX 0.7
    a string given to a mapped parameter got a ``ValueError`` about its rank. ``jax.vmap`` traces the body on
    every call, so the frame added here is noise beside it."""
    return not_jax_as_type_error(jax.vmap(fun, **options), fun)


def not_jax_as_type_error(mapped: Callable[..., Any], fun: Callable[..., Any]) -> Callable[..., Any]:
    """``mapped`` (a ``jax.vmap`` or ``jax.pmap`` of ``fun``), raising ``TypeError`` for an argument that is not a
    JAX type: older JAX checks the rank of a mapped argument first and raises a ``ValueError`` about it. A ``try``
    costs nothing when the call succeeds."""

    @functools.wraps(fun)
    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            return mapped(*args, **kwargs)
        except ValueError as err:
            for leaf in jax.tree_util.tree_leaves((args, kwargs)):
                try:
                    typeof(leaf)
                except TypeError as not_jax:
                    raise not_jax from err
            raise

    return checked


# ---------------------------------------------------------------------------------------------------------------
# Arrays, shardings, pytrees


def typeof(value: Any) -> Any:
    """``jax.typeof``: the abstract value (shape, dtype, weak type, sharding) an argument is traced as."""
    if hasattr(jax, "typeof"):
        return jax.typeof(value)
    return jax.core.get_aval(value)  # type: ignore[attr-defined]  # JAX before 0.5


def spec_text(spec: PartitionSpec) -> str:
    """``P('d', None)``, as JAX 0.9 prints a spec; JAX 0.6-0.8 print ``PartitionSpec('d', None)``, and messages must
    read the same on every version. JAX's own ``repr`` rather than ``tuple(spec)``: a spec with ``reduced``/
    ``unreduced`` axes refuses to be iterated, and those axes (with JAX 0.12's ``unreduced_kind``) are part of the
    type a program is compiled for."""
    text = repr(spec)
    return "P" + text[len("PartitionSpec"):] if text.startswith("PartitionSpec(") else text


_DROP_FIELDS_FIXED = (0, 10)
"""Before JAX 0.10, ``register_dataclass(drop_fields=...)`` applied ``difference_update(*drop_fields)``, removing
the characters of each name rather than the names: a dropped field named longer than one character failed to
register."""


def register_dataclass(cls: type, data_fields: Sequence[str], meta_fields: Sequence[str],
                       drop_fields: Sequence[str]) -> None:
    """``jax.tree_util.register_dataclass`` (flatten in C++) with ``drop_fields``: ``__init__`` fields that are
    neither data nor metadata. On a JAX whose ``drop_fields`` is broken, or absent, they are marked outside
    ``__init__`` for the registration's check alone, which is all ``drop_fields`` does."""
    if JAX_VERSION >= _DROP_FIELDS_FIXED:
        jax.tree_util.register_dataclass(cls, data_fields=data_fields, meta_fields=meta_fields,
                                         drop_fields=drop_fields)
        return
    fields: dict[str, dataclasses.Field[Any]] = cls.__dict__["__dataclass_fields__"]
    dropped = [fields[name] for name in drop_fields if fields[name].init]
    try:
        for f in dropped:
            f.init = False
        jax.tree_util.register_dataclass(cls, data_fields=data_fields, meta_fields=meta_fields)
    finally:
        for f in dropped:
            f.init = True

# ---------------------------------------------------------------------------------------------------------------
# jax.clear_caches()


def register_jax_cache(cache: Any, what: str) -> None:
    """Have ``jax.clear_caches()`` call ``cache.cache_clear()`` (JAX's own registry of caches, kept weakly: the
    caller keeps ``cache`` alive). A JAX without that registry leaves ``clear_cache()`` the one way to clear."""
    from jax._src import util

    register = getattr(util, "register_cache", None)
    if register is not None:
        register(cache, what)


# ---------------------------------------------------------------------------------------------------------------
# JAX's trace context


_SETTINGS = ("enable_x64", "default_matmul_precision", "default_device", "numpy_rank_promotion",
             "numpy_dtype_promotion", "threefry_partitionable", "softmax_custom_jvp", "debug_key_reuse")


def trace_context() -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """What JAX's tracing caches are keyed on besides the arguments (``jax.config`` flags and contexts such as
    ``jax.default_matmul_precision``), with each entry's name (``jax_enable_x64``): JAX's own trace context where
    jaxlib names its entries, else the settings that enter it read one by one. Read at a trace, never on a hit."""
    from jax._src import config

    try:
        values, names = tuple(config.trace_context()), tuple(config.trace_context_names())
        if len(values) == len(names):
            return names, values
    except Exception:  # a jaxlib that does not name its entries
        pass
    states: list[tuple[str, Any]] = [(f"jax_{name}", getattr(config, name, None)) for name in _SETTINGS]
    states = [(n, s) for n, s in states if hasattr(type(s), "value")]  # a setting's state, not a function
    return tuple(n for n, _ in states), tuple(s.value for _, s in states)


__all__ = ["jit_disabled", "HAS_SHARD_MAP", "INFER", "JAX_FLOOR", "JAX_VERSION", "LANE", "SHARD_MAP_VERSION", "eager_shards",
           "register_dataclass", "register_jax_cache",
           "shard_map", "shard_map_needs", "spec_text", "trace_context", "typeof", "vmap"]
