"""``jaxstatic.vmap``: ``jax.vmap`` whose ``Static[...]`` parameters are never mapped and may hold any static value.

Design: one ``jax.vmap``-transformed program per frozen static key (``_core``). The program's arguments are the
dynamic values alone, so a function, a string or a dict config never reaches JAX's batching, and the body reads the
static values as ``jit``'s does. ``in_axes`` is resolved once, by parameter name (``resolve_in_axes``, which ``pmap``
shares, since it takes the same forms), and laid onto each program's positions (``program_axes``).

``jax.vmap`` traces the Python body on every call; that is JAX's own cost and stays (about 2 ms for a two-op body on
CPU). What jaxstatic adds outside a ``jit`` is the static key, one dict lookup and rebuilding the user's call in the
body from values equal to the statics (about 13 us measured): equal static values reuse the program, never rebuild
it. Inside ``jaxstatic.jit`` the vmap runs only while the jit traces, so a cache-hit call of ``jit(vmap(f))`` costs
what ``jit`` alone costs (``benchmarks/vmap.py``). Traces are counted by the ``jit`` in the stack, not here.

``jaxstatic.pmap`` likewise: one ``jax.pmap`` program per static key, no ``static_broadcasted_argnums`` at JAX's
level, so a static callable needs no argnum and a dict config works; ``*args``/``**kwargs`` extras reach JAX packed
(``_shard_map.packed``). Unlike vmap it compiles, so it counts traces as ``jit`` does. A cache-hit call adds
jaxstatic's key and lookup (well under a microsecond) to ``jax.pmap``'s own dispatch (``benchmarks/pmap.py``).
"""

from __future__ import annotations

import dataclasses
import functools
import weakref
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, overload

import jax
from typing_extensions import ParamSpec

from . import _compat, _donate, _lazy, _options
from ._errors import option_error
from ._parts import KeyState
from ._plan import Layout, Plan
from ._shard_map import by_parameter, packed, program_names
from ._transform import StaticFunction

if TYPE_CHECKING:
    from ._aot import Lowered

_P = ParamSpec("_P", contravariant=True)  # type: ignore[misc]  # a callable's parameters: see _transform
_R = TypeVar("_R")

_VARIADIC = ("varpos", "varkw")


@dataclasses.dataclass(frozen=True)
class InAxes:
    """``in_axes`` by parameter name: ``by_name`` for the dynamic parameters it names, ``default`` for every other
    dynamic parameter (the int of the int form; otherwise 0, the axis ``jax.vmap`` maps keyword arguments over).
    An entry may be a tree of axes, a prefix of the parameter's value; for ``*args`` it is a tuple with one entry
    per extra argument or one entry for them all, for ``**kwargs`` a dict by keyword or one entry for them all.

    ``positional``: given in JAX's forms (an int, ``None``, a tuple), which are for the arguments passed by
    position: as ``jax.vmap`` and ``jax.pmap`` do, a value passed by keyword maps over axis 0 (``axis``). A dict,
    jaxstatic's own form, names parameters, and holds however they are passed."""

    by_name: Mapping[str, Any]
    default: Any
    positional: bool = True

    def of(self, name: str) -> Any:
        return self.by_name.get(name, self.default)

    def axis(self, function: str, transform: str, name: str, kind: str) -> Any:
        """The axes of parameter ``name`` in a call that passes it as ``kind`` (a ``_plan.Source`` kind)."""
        if kind not in ("kw", "varkw") or not self.positional:
            return self.of(name)
        if kind == "kw" and name in self.by_name:  # a tuple's entry, for an argument passed by keyword
            raise option_error("in_axes", function, f"gives {name!r} the entry {self.by_name[name]!r} by position, "
                               f"but this call passes {name!r} by keyword. As in jax.{transform}, a tuple in_axes "
                               "is for the arguments passed positionally, and each argument passed by keyword is "
                               "mapped over its leading axis", f"Pass {name!r} positionally, or give in_axes as a "
                               "dict by parameter name, which holds however an argument is passed.")
        return 0


def resolve_in_axes(function: str, layout: Layout, in_axes: Any, option: str = "in_axes") -> InAxes:
    """Check ``in_axes`` against the function's parameters, once, and key it by parameter name.

    Forms: an int or ``None`` (every dynamic parameter); a tuple over all positional parameters, ``None`` at the
    Static ones, or over the dynamic positional ones only (as ``jax.jit``'s ``in_shardings``), then the ``*args``
    extras' (``_options.into_extras``); a dict by parameter name, ``*args``/``**kwargs`` included. A mapped axis for
    a Static parameter is an ``OptionError`` naming it. The first two are JAX's, for the arguments passed by
    position (``InAxes.positional``).
    """
    if isinstance(in_axes, list):  # jax.vmap treats a list as the tuple of entries
        in_axes = tuple(in_axes)
    if not isinstance(in_axes, (tuple, Mapping)):
        if in_axes is not None and type(in_axes) is not int:
            raise option_error(option, function, f"is {in_axes!r} (a {type(in_axes).__qualname__})",
                               "Give an int, None, a tuple with one entry per positional parameter, or a dict by "
                               "parameter name.")
        return InAxes({}, in_axes)
    by_name = by_parameter(function, layout, in_axes, option, over_all=True)
    for name, axes in by_name.items():
        _check_entry(function, name, axes, option)
        if name in layout.static and axes is not None:
            raise option_error(option, function, f"maps {name!r} over axis {axes!r}, but {name!r} is Static, so it "
                               "is never mapped", f"Give {name!r} None (or leave it out of a dict), or make it "
                               "dynamic.")
    return InAxes({n: a for n, a in by_name.items() if n not in layout.static}, 0, isinstance(in_axes, tuple))


def _check_entry(function: str, name: str, axes: Any, option: str) -> None:
    for leaf in jax.tree_util.tree_leaves(axes):
        if type(leaf) is not int:
            raise option_error(option, function, f"gives {name!r} the axes {axes!r}, and {leaf!r} (a "
                               f"{type(leaf).__qualname__}) is not an axis", "Give each parameter an int, None "
                               "(not mapped), or a tree of those that is a prefix of its value.")


def program_axes(function: str, axes: InAxes, plan: Plan, nargs: int, kwnames: tuple[str, ...],
                 option: str = "in_axes", transform: str = "vmap") -> tuple[Any, ...]:
    """The axes of one program's arguments, in order: the named dynamic parameters of ``plan``, then the
    ``nargs - len(named)`` extras of ``*args``, then the ``kwnames`` extras of ``**kwargs`` (``InAxes.axis``)."""
    named = [(name, src) for name, src in plan.dynamics if src.kind not in _VARIADIC]
    out = [axes.axis(function, transform, name, src.kind) for name, src in named]
    for name, src in plan.dynamics:
        if src.kind == "varpos":
            out += _each(function, name, axes.of(name), nargs - len(named), option)
        elif src.kind == "varkw":
            entry = axes.axis(function, transform, name, src.kind)
            out += [entry.get(k, axes.default) if isinstance(entry, Mapping) else entry for k in kwnames]
    return tuple(out)


def _each(function: str, name: str, entry: Any, count: int, option: str) -> list[Any]:
    if not isinstance(entry, (tuple, list)):
        return [entry] * count
    if len(entry) != count:
        raise option_error(option, function, f"gives *{name} {len(entry)} axes, but this call passes {count} "
                           f"extra positional argument(s)", f"Give *{name} one axis per extra argument, or one "
                           "int (or None) for them all.")
    return list(entry)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class VmapOptions(_options.Options):
    """``js.vmap``'s options (``_options.Options``): ``in_axes`` as given, checked and keyed by parameter name once
    the Static parameters are known (``resolve_in_axes``); the rest are ``jax.vmap``'s, passed on as they are."""

    in_axes: Any = 0

    @classmethod
    def _derived(cls, function: str, given: Mapping[str, Any]) -> dict[str, Any]:
        _check_out_axes(function, given.get("out_axes", 0))
        return {}


class VmapFunction(StaticFunction[_P, _R]):
    """A function vectorized by ``jaxstatic.vmap``. Call it like the function it wraps.

    Besides calls: ``cache_info()`` (misses are programs built, one per static key) and ``clear_cache()``.
    """

    _transform_name = "vmap"
    _counts_traces = False
    _keyword_variants = True  # a value passed by keyword maps over axis 0 (``InAxes.axis``): a program of its own
    _options_type: ClassVar[type[_options.Options]] = VmapOptions
    _opts: VmapOptions

    def __init__(self, fn: Callable[_P, _R], *, in_axes: Any = 0, out_axes: Any = 0, axis_name: Hashable | None = None,
                 axis_size: int | None = None, spmd_axis_name: Any = None,
                 cache_size: int = _options.JAX_JIT_CACHE_SIZE) -> None:
        self._axes: InAxes | None = None  # derived: in_axes by parameter, once the Static ones are known
        super().__init__(fn, {"in_axes": in_axes, "out_axes": out_axes, "axis_name": axis_name,
                              "axis_size": axis_size, "spmd_axis_name": spmd_axis_name, "cache_size": cache_size})

    def _checks_at_decoration(self) -> bool:
        """An int or None needs no signature; any other ``in_axes`` is checked against it when applied."""
        return not (self._opts.in_axes is None or type(self._opts.in_axes) is int)

    def _resolve(self, layout: Layout) -> None:
        self._axes = resolve_in_axes(self._name, layout, self._opts.in_axes)

    def _build(self, plan: Plan, body: Callable[..., Any], state: KeyState) -> Callable[..., Any]:
        assert self._axes is not None
        axes, options = self._axes, self._opts.jax
        if not any(src.kind in _VARIADIC for _, src in plan.dynamics):
            return _compat.vmap(body, in_axes=program_axes(self._name, axes, plan, 0, ()), **options)
        # One static key serves every number of *args extras and every set of **kwargs names: one jax.vmap each,
        # with the extra keywords passed positionally so that their axes apply (jax.vmap maps keywords over 0).
        programs: dict[tuple[int, tuple[str, ...]], Callable[..., Any]] = {}

        def program(*pos: Any, **kw: Any) -> Any:
            shape = (len(pos), tuple(kw))
            mapped = programs.get(shape)
            if mapped is None:
                in_axes = program_axes(self._name, axes, plan, *shape)
                mapped = programs[shape] = _compat.vmap(_flat(body, *shape), in_axes=in_axes, **options)
            return mapped(*pos, *kw.values())

        return program


def _check_out_axes(function: str, out_axes: Any) -> None:
    """``jax.vmap``'s check of ``out_axes``, made when it is applied, as ``jax.vmap`` makes it."""
    leaves = jax.tree_util.tree_leaves(out_axes, is_leaf=lambda v: v is None)
    bad = next((leaf for leaf in leaves if leaf is not None and type(leaf) is not int), None)
    if bad is not None:
        raise option_error("out_axes", function, f"is {out_axes!r}, and {bad!r} (a {type(bad).__qualname__}) is not "
                           "an axis", "Give an int, None, or a tree of those matching the output.")


def _flat(body: Callable[..., Any], nargs: int, kwnames: tuple[str, ...]) -> Callable[..., Any]:
    """``body`` taking its extra keyword values positionally, after the ``nargs`` positional ones."""

    @functools.wraps(body)
    def flat(*values: Any) -> Any:
        return body(*values[:nargs], **dict(zip(kwnames, values[nargs:])))

    return flat


@overload
def vmap(fn: Callable[_P, _R], /, *, in_axes: Any = 0, out_axes: Any = 0, axis_name: Hashable | None = None,
         axis_size: int | None = None, spmd_axis_name: Any = None, cache_size: int = ...) -> VmapFunction[_P, _R]: ...
@overload
def vmap(fn: None = None, /, *, in_axes: Any = 0, out_axes: Any = 0, axis_name: Hashable | None = None,
         axis_size: int | None = None, spmd_axis_name: Any = None,
         cache_size: int = ...) -> Callable[[Callable[_P, _R]], VmapFunction[_P, _R]]: ...
def vmap(fn: Callable[_P, _R] | None = None, /, *, in_axes: Any = 0, out_axes: Any = 0,
         axis_name: Hashable | None = None, axis_size: int | None = None, spmd_axis_name: Any = None,
         cache_size: int = _options.JAX_JIT_CACHE_SIZE) -> Any:
    """Vectorize ``fn`` with ``jax.vmap``; parameters annotated ``Static[...]`` are never mapped.

    Static values may be anything static-hashable (a function, a string, a ``dict`` config), as for
    ``jaxstatic.jit``; equal values share one ``jax.vmap`` program. ``in_axes`` is checked now, by parameter:

    - an int or ``None``: that axis for every dynamic argument passed by position, ``*args`` extras included;
    - a tuple (or list) over all positional parameters, with ``None`` at the Static ones, or over the dynamic
      positional parameters only, then one entry per ``*args`` extra (entry i for positional argument i, as
      ``jax.vmap`` counts);
    - a dict by parameter name (``*args``/``**kwargs`` by their names); parameters it leaves out get axis 0,
      ``jax.vmap``'s default.

    The int and tuple forms are for the arguments passed by position, as in ``jax.vmap``: an argument passed by
    keyword (keyword-only parameters and ``**kwargs`` extras too) maps over axis 0, and a tuple entry for a parameter
    the call passes by keyword is an ``OptionError`` (a ``ValueError``, as JAX's). A dict holds however a parameter is
    passed. Entries may be trees of axes (prefixes of the value), passed to JAX as they are. A non-``None`` axis for a
    Static parameter is an ``OptionError``. ``out_axes``, ``axis_name``, ``axis_size`` and ``spmd_axis_name`` are
    ``jax.vmap``'s; ``cache_size`` bounds the programs kept, as for ``jaxstatic.jit``.

    Composes in any order with ``jaxstatic.jit`` and the other transforms: ``Static`` parameters stay static all
    the way down, and the ``jit`` in the stack counts one trace per distinct static value.
    """
    if fn is None:
        return functools.partial(vmap, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name, axis_size=axis_size,
                                 spmd_axis_name=spmd_axis_name, cache_size=cache_size)
    return VmapFunction(fn, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name, axis_size=axis_size,
                        spmd_axis_name=spmd_axis_name, cache_size=cache_size)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class PmapOptions(_options.Options):
    """``js.pmap``'s options (``_options.Options``): ``in_axes`` as given, keyed by parameter name as vmap's;
    ``static_broadcasted_argnums`` given as ``static_argnums``; the rest are ``jax.pmap``'s, passed on as they are."""

    in_axes: Any = 0

    @classmethod
    def _derived(cls, function: str, given: Mapping[str, Any]) -> dict[str, Any]:
        devices = given.get("devices")
        if devices is not None and len(devices) == 0:  # jax.pmap's own check, when it is applied
            raise option_error("devices", function, f"is {devices!r}: 'devices' argument to pmap must be non-empty, "
                               "or None", "Give None (the local devices) or the devices to map over.")
        return {}


def _argnums(value: int | Iterable[int]) -> tuple[Any, ...]:
    """An int or any iterable of ints (``jax.pmap`` takes a range or a set too) as a tuple."""
    return tuple(value) if isinstance(value, Iterable) else (value,)


class PmapFunction(StaticFunction[_P, _R]):
    """A function mapped over devices by ``jaxstatic.pmap``. Call it like the function it wraps.

    Besides calls: ``trace_count``, ``retraces``, ``cache_info()`` and ``clear_cache()``, as for ``jaxstatic.jit``,
    and ``lower(*args, **kwargs)``, as ``jax.pmap``'s, with static values given as plain Python values.
    """

    _transform_name = "pmap"
    _keyword_variants = True  # as js.vmap's
    _counts_traces = True  # one compiled program per static key, as for jit
    # Never shared across rebuilds (``_shared``): JAX keeps a pmap's traced body until jax.clear_caches(), and the
    # body reaches the function, which would then keep this function's static values alive through its own.
    _shares = False
    _options_type: ClassVar[type[_options.Options]] = PmapOptions
    _opts: PmapOptions

    def __init__(self, fn: Callable[_P, _R], axis_name: Hashable | None = None, *, in_axes: Any = 0,
                 out_axes: Any = 0, static_broadcasted_argnums: int | Iterable[int] = (),
                 devices: Sequence[Any] | None = None, backend: str | None = None, axis_size: int | None = None,
                 donate_argnums: int | Iterable[int] = (), max_traces: int | None = None,
                 cache_size: int = _options.JAX_JIT_CACHE_SIZE) -> None:
        self._axes = InAxes({}, 0)  # derived: in_axes by parameter, once the Static ones are known
        params = {"static_argnums": _argnums(static_broadcasted_argnums), "donate_argnums": _argnums(donate_argnums)}
        # given only when non-empty, so that a plain js.pmap(f) reads no signature until its first call
        super().__init__(fn, {**{k: v for k, v in params.items() if v}, "in_axes": in_axes, "axis_name": axis_name,
                              "out_axes": out_axes, "devices": devices, "backend": backend, "axis_size": axis_size,
                              "max_traces": max_traces, "cache_size": cache_size})

    def _checks_at_decoration(self) -> bool:
        return not (self._opts.in_axes is None or type(self._opts.in_axes) is int)

    def _resolve(self, layout: Layout) -> None:
        self._known_params = _donate.with_declared(self._fn, self._name, layout.signature, layout.static,
                                                   self._params())  # Donate[...] marks join donate_argnums
        _options.check_not_static(self._name, self._params().donate, layout.static, "donate_argnums")
        if self._params().donate_extras:  # jax.pmap would donate that extra; refused rather than silently kept
            k = min(self._params().donate_extras)
            raise option_error("donate_argnums", self._name, f"reaches into *args (its extra {k}), which js.pmap "
                               "cannot donate: it passes the extras to jax.pmap together, as one tuple",
                               "Donate a named parameter: declare it in the signature.")
        self._axes = resolve_in_axes(self._name, layout, self._opts.in_axes)

    def lower(self, *args: _P.args, **kwargs: _P.kwargs) -> Lowered[_P, _R]:
        """Lower for these arguments (ahead of time); ``.compile()`` gives a callable with this signature that
        refuses other static values (``StaticMismatchError``)."""
        from ._aot import Compilation, Lowered  # ahead of time alone loads it

        plan, key, lowered = self._core._with_program("lower", args, kwargs)
        core = self._core
        return Lowered(Compilation(self._name, plan, key, lambda a, k: core._plan_and_code(a, k)[0], core._key), lowered)

    def _build(self, plan: Plan, body: Callable[..., Any], state: KeyState) -> Callable[..., Any]:
        names = program_names(plan)
        sources = dict(plan.dynamics)  # *args/**kwargs extras reach JAX packed, one entry each
        axes = [self._axes.axis(self._name, "pmap", name, sources[name].kind) for name in names]
        in_axes = tuple(_packed_axes(a, sources[name]) for a, name in zip(axes, names))
        donate = tuple(i for i, name in enumerate(names) if name in self._params().donate)
        options = dict(self._opts.jax, in_axes=in_axes, donate_argnums=donate)
        program = packed(plan, _weakly(body), lambda f: _pmapped(f, options))
        if not donate:
            return _Held(program, body)
        held = _DonatingHeld(program, body, donate)
        return _donate.recording(held, self._name, [(i, names[i]) for i in donate], None)


def _packed_axes(axes: Any, src: Any) -> Any:
    """A parameter's axes as its program takes them: for ``*args`` given a tuple over every extra, the static ones'
    (``static_broadcasted_argnums`` into ``*args``) left out, as the program's tuple leaves them out."""
    if src.kind != "varpos" or not src.skip or not isinstance(axes, tuple):
        return axes
    return _options.dynamic_entries(axes, [i - src.index for i in src.skip])


class _Held:
    """A pmap program and the body it traces, kept alive by jaxstatic's cache alone.

    ``jax.pmap`` caches its traced functions process-wide (``lu.cache``, until ``jax.clear_caches()``), and the cached
    values hold the function they trace. Handed the body, whose static values it closes over, JAX would keep them
    alive after ``clear_cache()`` and after the function is dropped; handed ``_weakly(body)``, it keeps a function
    holding nothing. One Python call more per dispatch, against ``jax.pmap``'s tens of microseconds."""

    __slots__ = ("body", "program")

    def __init__(self, program: Callable[..., Any], body: Callable[..., Any]) -> None:
        self.program, self.body = program, body

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.program(*args, **kwargs)

    def clear_cache(self) -> None:
        getattr(self.program, "clear_cache", lambda: None)()

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        return self.program.lower(*args, **kwargs)  # type: ignore[attr-defined]  # _pmapped's, or packed's


class _DonatingHeld(_Held):
    """A donating pmap program, which refuses a deleted array at a donated position before calling ``jax.pmap``.

    ``jax.pmap`` given a deleted array where it donates crashes the process on some backends (a segmentation fault
    on the CPU, jaxlib 0.10) instead of raising; refused here, the core's failure path names the parameter, the path
    and the donating call (``_donate_errors``). Costs one ``tree_leaves`` per donated argument and call, against
    ``jax.pmap``'s tens of microseconds."""

    __slots__ = ("donated",)

    def __init__(self, program: Callable[..., Any], body: Callable[..., Any], donated: tuple[int, ...]) -> None:
        super().__init__(program, body)
        self.donated = donated

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for i in self.donated:
            if i < len(args) and any(_donate.is_deleted(leaf) for leaf in jax.tree_util.tree_leaves(args[i])):
                raise RuntimeError("a donated argument holds an array whose buffer was deleted")
        return self.program(*args, **kwargs)


def _pmapped(f: Callable[..., Any], options: dict[str, Any]) -> Callable[..., Any]:
    """``jax.pmap(f)``, whose ``TypeError`` for a non-JAX argument reads as ``jax.jit``'s, with its ``lower``."""
    mapped = jax.pmap(f, **options)
    checked = _compat.not_jax_as_type_error(mapped, f)
    checked.lower = mapped.lower  # type: ignore[attr-defined]
    return checked


def _weakly(body: Callable[..., Any]) -> Callable[..., Any]:
    """``body``, called through a weak reference, with its name, signature and source for JAX's debug info."""
    ref = weakref.ref(body)

    def traced(*args: Any, **kwargs: Any) -> Any:
        return ref()(*args, **kwargs)  # type: ignore[misc]  # alive: the program's _Held keeps it

    traced.__name__, traced.__qualname__ = body.__name__, body.__qualname__
    if hasattr(body, "__wrapped__"):  # JAX's debug info: absent where the function has no code of its own
        traced.__wrapped__ = body.__wrapped__  # type: ignore[attr-defined]
    traced.__signature__ = _lazy.signature(body)  # type: ignore[attr-defined]
    return traced


@overload
def pmap(fn: Callable[_P, _R], /, axis_name: Hashable | None = None, *, in_axes: Any = 0, out_axes: Any = 0,
         static_broadcasted_argnums: int | Iterable[int] = (), devices: Sequence[Any] | None = None,
         backend: str | None = None, axis_size: int | None = None, donate_argnums: int | Iterable[int] = (),
         max_traces: int | None = None, cache_size: int = ...) -> PmapFunction[_P, _R]: ...
@overload
def pmap(fn: None = None, /, axis_name: Hashable | None = None, *, in_axes: Any = 0, out_axes: Any = 0,
         static_broadcasted_argnums: int | Iterable[int] = (), devices: Sequence[Any] | None = None,
         backend: str | None = None, axis_size: int | None = None, donate_argnums: int | Iterable[int] = (),
         max_traces: int | None = None,
         cache_size: int = ...) -> Callable[[Callable[_P, _R]], PmapFunction[_P, _R]]: ...
def pmap(fn: Callable[_P, _R] | None = None, /, axis_name: Hashable | None = None, *, in_axes: Any = 0,
         out_axes: Any = 0, static_broadcasted_argnums: int | Iterable[int] = (),
         devices: Sequence[Any] | None = None, backend: str | None = None, axis_size: int | None = None,
         donate_argnums: int | Iterable[int] = (), max_traces: int | None = None,
         cache_size: int = _options.JAX_JIT_CACHE_SIZE) -> Any:
    """Map ``fn`` over devices with ``jax.pmap``; parameters annotated ``Static[...]`` are broadcast to every device
    as compile-time constants, with no ``static_broadcasted_argnums``.

    Static values may be anything static-hashable (a function, a ``dict`` config), as for ``jaxstatic.jit``; equal
    values share one compiled program. ``in_axes`` is checked now, by parameter:

    - an int or ``None``: that axis for every dynamic argument passed by position;
    - a tuple (or list) over all positional parameters, ``None`` at the Static ones, as
      ``jax.pmap`` takes it, or over the dynamic positional parameters only, then one entry per ``*args`` extra;
    - a dict by parameter name (``*args``/``**kwargs`` by their names, the entry a prefix of the tuple of extra
      arguments or the dict of extra keywords).

    Parameters a tuple or dict leaves out get axis 0, ``jax.pmap``'s default. The int and tuple forms are for the
    arguments passed by position, as in ``jax.pmap``: an argument passed by keyword maps over axis 0, and a tuple
    entry for a parameter the call passes by keyword is an ``OptionError`` (a ``ValueError``, as JAX's); a dict holds
    however a parameter is passed. A non-``None`` axis for a Static parameter is an ``OptionError`` naming it. ``static_broadcasted_argnums`` adds to the annotations; ``donate_argnums`` names
    dynamic parameters; ``axis_name``, ``out_axes``, ``devices``, ``backend`` and ``axis_size`` are ``jax.pmap``'s.

    Traces are counted as for ``jaxstatic.jit``: ``trace_count``, ``retraces``, ``max_traces``, ``cache_size``.
    """
    options = {"axis_name": axis_name, "in_axes": in_axes, "out_axes": out_axes,
               "static_broadcasted_argnums": static_broadcasted_argnums, "devices": devices, "backend": backend,
               "axis_size": axis_size, "donate_argnums": donate_argnums, "max_traces": max_traces,
               "cache_size": cache_size}
    if fn is None:
        return functools.partial(pmap, **options)
    return PmapFunction(fn, **options)


__all__ = ["InAxes", "PmapFunction", "PmapOptions", "VmapFunction", "VmapOptions", "pmap", "program_axes",
           "resolve_in_axes", "vmap"]
