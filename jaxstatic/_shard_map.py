"""``jaxstatic.shard_map``: ``jax.shard_map`` whose ``Static[...]`` parameters are closed over, one program per value.

Design: one program per frozen static key (``_parts.Programs``), ``jax.shard_map(body, ...)`` itself. The program's
arguments are the dynamic values alone, so a function or a dict config never meets ``in_specs``; the body reads the
static values, as ``jit``'s does. ``in_specs`` is given for the dynamic parameters only and laid onto each program's
arguments by parameter name; a ``None`` spec is ``jax.shard_map``'s (that input static, handed to the body as it is).

Outside any trace, ``jax.shard_map`` runs its body eagerly over the shards' values on every call, and so does
``js.shard_map``: the body may branch on values and print a shard, and JAX's eager errors are JAX's. What is kept
per static key is the ``jax.shard_map`` object, so a static value is checked and frozen once, and nothing is
compiled: such a run is counted as eager, not as a trace (``_in_shards``). Under a ``jit`` the ``jax.shard_map`` is
traced into the outer program (no ``jit`` of its own in the jaxpr), and that trace is counted.
``benchmarks/shard_map.py`` measures both against ``jax.shard_map`` and ``jax.jit(jax.shard_map(...))``.

JAX's ``shard_map`` and ``pmap`` take positional arguments only, so a call's ``*args`` extras reach them as one tuple
and its ``**kwargs`` extras as one dict (``packed``): an entry for ``*args`` or ``**kwargs`` is a prefix of that
tuple or dict, and any number of extras shares one program.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Mapping, Set
from typing import Any, ClassVar, TypeVar, overload

import jax
from jax.sharding import PartitionSpec
from typing_extensions import ParamSpec

from . import _compat, _options
from ._errors import option_error
from ._parts import KeyState
from ._plan import Layout, Plan
from ._transform import StaticFunction

_P = ParamSpec("_P", contravariant=True)  # type: ignore[misc]  # a callable's parameters: see _transform
_R = TypeVar("_R")

_VARIADIC = ("varpos", "varkw")


INFER: Any = _compat.INFER


def packed(plan: Plan, body: Callable[..., Any], transform: Callable[[Callable[..., Any]], Callable[..., Any]],
           ) -> Callable[..., Any]:
    """``transform(body)`` as a program taking ``plan``'s dynamic values (``StaticFunction._build``'s calling convention).

    ``transform`` receives a function of the program arguments ``program_names(plan)``: the named dynamic
    parameters, then the ``*args`` extras as one tuple, then the ``**kwargs`` extras as one dict. Without variadic
    extras that is ``body`` itself and the program is ``transform(body)``, with no frame added to a call.
    """
    named = sum(src.kind not in _VARIADIC for _, src in plan.dynamics)
    varpos = any(src.kind == "varpos" for _, src in plan.dynamics)
    varkw = any(src.kind == "varkw" for _, src in plan.dynamics)
    if not (varpos or varkw):
        return transform(body)

    def flat(*values: Any) -> Any:
        extras = values[named] if varpos else ()
        return body(*values[:named], *extras, **(values[-1] if varkw else {}))

    kind = inspect.Parameter
    flat.__name__, flat.__qualname__ = body.__name__, body.__qualname__
    if hasattr(body, "__wrapped__"):  # JAX's debug info: the user's function
        flat.__wrapped__ = body.__wrapped__  # type: ignore[attr-defined]
    flat.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [kind(n, kind.POSITIONAL_OR_KEYWORD) for n in program_names(plan)])
    mapped = transform(flat)

    def pack(pos: tuple[Any, ...], kw: dict[str, Any]) -> tuple[Any, ...]:
        return (*pos[:named], *((pos[named:],) if varpos else ()), *((kw,) if varkw else ()))

    def program(*pos: Any, **kw: Any) -> Any:
        return mapped(*pack(pos, kw))

    lower = getattr(mapped, "lower", None)
    if lower is not None:  # ahead of time (pmap's): lowered and compiled for the packed values, called unpacked
        program.lower = lambda *pos, **kw: Repacked(lower(*pack(pos, kw)), pack)  # type: ignore[attr-defined]
    return program


class Repacked:
    """JAX's ``Lowered`` or ``Compiled`` of a ``packed`` program, compiled and called with its values unpacked, as
    the program itself is; the rest is JAX's."""

    def __init__(self, inner: Any, pack: Callable[[tuple[Any, ...], dict[str, Any]], tuple[Any, ...]]) -> None:
        self._inner, self._pack = inner, pack

    def compile(self, *args: Any, **kwargs: Any) -> Repacked:
        return Repacked(self._inner.compile(*args, **kwargs), self._pack)

    def __call__(self, *pos: Any, **kw: Any) -> Any:
        return self._inner(*self._pack(pos, kw))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def program_names(plan: Plan) -> list[str]:
    """The parameter names of a packed program's arguments, in order (see ``packed``)."""
    return [name for name, _ in plan.dynamics]


def by_parameter(function: str, layout: Layout, value: tuple[Any, ...] | list[Any] | Mapping[str, Any], option: str,
                 *, over_all: bool = False) -> dict[str, Any]:
    """A per-parameter option given as a tuple or a dict, by parameter name (``_options.per_parameter``); a dict may
    also name ``*args`` and ``**kwargs``, for their extras. A tuple gives entry i to positional argument i, as JAX's
    transforms take it: past the named parameters, to the ``*args`` extras (``_options.into_extras``)."""
    params = layout.signature.parameters
    variadic = {n for n, p in params.items() if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    named = {k: v for k, v in value.items() if k not in variadic} if isinstance(value, Mapping) else tuple(value)
    found = _options.per_parameter(function, layout.signature, named, option, layout.static, over_all=over_all,
                                   into_varargs=True)
    assert found is not None
    if isinstance(value, Mapping):
        found.update({k: v for k, v in value.items() if k in variadic})
    return found


def _is_spec_tree(value: Any) -> bool:
    """One spec for every argument, as opposed to a tuple or dict by parameter."""
    return isinstance(value, PartitionSpec) or value is None or value is INFER or not isinstance(
        value, (tuple, list, Mapping))


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ShardMapOptions(_options.Options):
    """``js.shard_map``'s options (``_options.Options``): ``in_specs`` as given, laid onto each program's arguments
    by parameter name (``ShardMapFunction._resolve``); the rest are ``jax.shard_map``'s, passed on as they are."""

    in_specs: Any = INFER

    @classmethod
    def _derived(cls, function: str, given: Mapping[str, Any]) -> dict[str, Any]:
        needs = _compat.shard_map_needs(given.get("mesh"), given.get("in_specs", INFER))
        if needs is not None:
            raise option_error("shard_map", function, f"is given {needs}, which needs JAX "
                               f"{_compat.SHARD_MAP_VERSION} or later (this is JAX {jax.__version__})",
                               "Pass mesh= and in_specs= explicitly, or upgrade JAX.")
        return {}


class ShardMapFunction(StaticFunction[_P, _R]):
    """A function mapped over shards by ``jaxstatic.shard_map``. Call it like the function it wraps.

    Besides calls: ``trace_count``, ``retraces``, ``cache_info()`` and ``clear_cache()``, as for ``jaxstatic.jit``.
    """

    _transform_name = "shard_map"
    _counts_traces = True  # traced under a jit once per static key, as jit: a trace there is a real event
    _options_type: ClassVar[type[_options.Options]] = ShardMapOptions
    _opts: ShardMapOptions

    def __init__(self, fn: Callable[_P, _R], *, out_specs: Any, in_specs: Any, mesh: Any, axis_names: Set[Any],
                 check_vma: bool, max_traces: int | None = None,
                 cache_size: int = _options.JAX_JIT_CACHE_SIZE) -> None:
        self._by_name: dict[str, Any] | None = None  # derived: in_specs by parameter, once the Static ones are known
        super().__init__(fn, {"in_specs": in_specs, "out_specs": out_specs, "mesh": mesh, "axis_names": axis_names,
                              "check_vma": check_vma, "max_traces": max_traces, "cache_size": cache_size})

    def _checks_at_decoration(self) -> bool:
        return not _is_spec_tree(self._opts.in_specs)

    def _resolve(self, layout: Layout) -> None:
        in_specs = self._opts.in_specs
        if _is_spec_tree(in_specs):
            return
        if isinstance(in_specs, Mapping):
            _options.check_not_static(self._name, in_specs, layout.static, "in_specs")
        by_name = by_parameter(self._name, layout, in_specs, "in_specs", over_all=True)
        for name in layout.static & by_name.keys():
            if (spec := by_name[name]) is not None:  # None: as JAX's, static
                said = _compat.spec_text(spec) if isinstance(spec, PartitionSpec) else repr(spec)
                raise option_error("in_specs", self._name, f"gives {name!r} the spec {said}, but {name!r} "
                                   "is Static, so it is never sharded", f"Give {name!r} None (or leave it out), or "
                                   "make it dynamic.")
        required = [p.name for p in layout.signature.parameters.values()
                    if p.name not in layout.static and p.default is p.empty
                    and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        self._by_name = by_name
        for name in required:
            self._spec_of(name)

    def _spec_of(self, name: str) -> Any:
        assert self._by_name is not None
        if name not in self._by_name:
            given = sorted(self._by_name)
            raise option_error("in_specs", self._name, f"gives no spec for the dynamic parameter {name!r} "
                               f"(it gives {given})", f"Add an entry for {name!r}; in_specs names the dynamic "
                               "parameters only (by position among them, or as a dict by name).")
        return self._by_name[name]

    def _build(self, plan: Plan, body: Callable[..., Any], state: KeyState) -> Callable[..., Any]:
        in_specs = self._opts.in_specs
        if self._by_name is not None:
            in_specs = tuple(self._spec_of(name) for name in program_names(plan))
        options = self._opts.jax
        return packed(plan, _in_shards(body, state), lambda f: _compat.shard_map(f, in_specs=in_specs, **options))


def _in_shards(body: Callable[..., Any], state: KeyState) -> Callable[..., Any]:
    """``body``, which tells the core's body that a run over concrete shards (``jax.shard_map`` called outside any
    trace) is an eager call, counted as such, not a trace (``state.local.eager``, read by ``_body``)."""

    @functools.wraps(body)
    def shards(*args: Any, **kwargs: Any) -> Any:
        if not _compat.eager_shards():
            return body(*args, **kwargs)
        local = state.local
        outer, local.eager = getattr(local, "eager", False), True
        try:
            return body(*args, **kwargs)
        finally:
            local.eager = outer

    return shards


@overload
def shard_map(fn: Callable[_P, _R], /, *, out_specs: Any, in_specs: Any = ..., mesh: Any = None,
              axis_names: Set[Any] = frozenset(), check_vma: bool = True, max_traces: int | None = None,
              cache_size: int = ...) -> ShardMapFunction[_P, _R]: ...
@overload
def shard_map(fn: None = None, /, *, out_specs: Any, in_specs: Any = ..., mesh: Any = None,
              axis_names: Set[Any] = frozenset(), check_vma: bool = True, max_traces: int | None = None,
              cache_size: int = ...) -> Callable[[Callable[_P, _R]], ShardMapFunction[_P, _R]]: ...
def shard_map(fn: Callable[_P, _R] | None = None, /, *, out_specs: Any, in_specs: Any = INFER, mesh: Any = None,
              axis_names: Set[Any] = frozenset(), check_vma: bool = True, max_traces: int | None = None,
              cache_size: int = _options.JAX_JIT_CACHE_SIZE) -> Any:
    """Map ``fn`` over shards of its arguments with ``jax.shard_map``; parameters annotated ``Static[...]`` are
    closed over, never sharded.

    Static values may be anything static-hashable (a function, a ``dict`` config), as for ``jaxstatic.jit``; equal
    values share one program. ``in_specs`` takes ``jax.shard_map``'s forms, by parameter:

    - one ``PartitionSpec`` (or a tree of them) for every argument, or ``jax.sharding.Infer`` (the default, left
      out: ``in_specs`` inferred from the arguments' shardings, on a mesh whose axes are all ``Explicit``);
    - a tuple (or list) giving entry i to positional argument i, ``None`` at the Static ones, or over the dynamic
      positional parameters only; past the named parameters, one entry per ``*args`` extra;
    - a dict by parameter name; ``*args``/``**kwargs`` by their names, the entry a prefix of the tuple of extra
      arguments or the dict of extra keywords.

    A ``None`` spec makes that input static, as in ``jax.shard_map``: the body receives the object itself. A spec
    for a Static parameter is an ``OptionError``, as is a missing spec for a dynamic parameter without a default,
    both raised here. ``out_specs``, ``mesh``, ``axis_names`` and ``check_vma`` are ``jax.shard_map``'s.

    Outside a ``jit`` it runs eagerly, as ``jax.shard_map`` does: the body runs on every call over the shards'
    values, and such a call is no trace. Under ``jaxstatic.jit`` (or ``jax.jit``) it is traced into the outer
    program, and those traces are counted as for ``jaxstatic.jit`` (``trace_count``, ``max_traces``,
    ``cache_size``): one per distinct static value.
    """
    options = {"out_specs": out_specs, "in_specs": in_specs, "mesh": mesh, "axis_names": axis_names,
               "check_vma": check_vma, "max_traces": max_traces, "cache_size": cache_size}
    if fn is None:
        return functools.partial(shard_map, **options)
    return ShardMapFunction(fn, **options)


__all__ = ["INFER", "ShardMapFunction", "ShardMapOptions", "by_parameter", "packed", "program_names", "shard_map"]
