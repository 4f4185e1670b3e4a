"""``jaxstatic.pmap``: ``jax.pmap`` whose ``Static[...]`` parameters are broadcast to every device without
``static_broadcasted_argnums``.

Design: one ``jax.pmap`` program per frozen static key (``_core``), with no static arguments at JAX's level: the
program's arguments are the dynamic values alone, and the body reads the static values at trace time, as ``jit``'s
does. So a static callable needs no ``in_axes`` entry and no argnum, a dict config works (equal dicts share one
program), and JAX never hashes the static values on a call. ``in_axes`` is resolved once, by parameter name, and laid
onto each program's arguments; ``*args``/``**kwargs`` extras reach JAX packed (``_shard_map.packed``).

Cost of a cache-hit call: jaxstatic's key and lookup (well under a microsecond) on top of ``jax.pmap``'s own Python
dispatch, which is tens of microseconds; ``benchmarks/pmap.py`` compares it with
``jax.pmap(..., static_broadcasted_argnums=...)`` and ``equinox.filter_pmap``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, overload

import jax
from typing_extensions import ParamSpec

from . import _options
from ._core import Slot, StaticFunction
from ._errors import option_error
from ._plan import Layout, Plan
from ._shard_map import by_parameter, packed, program_names

_P = ParamSpec("_P")
_R = TypeVar("_R")


def resolve_in_axes(function: str, layout: Layout, in_axes: Any) -> dict[str, Any] | None:
    """``in_axes`` by dynamic parameter name, or ``None`` for the int form (one axis, or ``None``, for every dynamic
    argument). Checked once: a tuple over all positional parameters (``None`` at the Static ones) or over the dynamic
    positional ones; a dict by parameter name, ``*args``/``**kwargs`` included. A mapped axis for a Static
    parameter is an ``OptionError`` naming it."""
    if isinstance(in_axes, list):  # jax treats a list of axes as the tuple of them
        in_axes = tuple(in_axes)
    if not isinstance(in_axes, (tuple, Mapping)):
        if in_axes is not None and type(in_axes) is not int:
            raise option_error("in_axes", function, f"is {in_axes!r} (a {type(in_axes).__qualname__})",
                               "Give an int, None, a tuple with one entry per positional parameter, or a dict by "
                               "parameter name.")
        return None
    by_name = by_parameter(function, layout, in_axes, "in_axes", over_all=True)
    for name, axes in by_name.items():
        if name in layout.static and axes is not None:
            raise option_error("in_axes", function, f"maps {name!r} over axis {axes!r}, but {name!r} is Static, so "
                               "it is broadcast to every device, never mapped", f"Give {name!r} None (or leave it "
                               "out of a dict), or make it dynamic.")
    return {n: a for n, a in by_name.items() if n not in layout.static}


def _argnums(value: int | Iterable[int]) -> tuple[Any, ...]:
    """An int or any iterable of ints (``jax.pmap`` takes a range or a set too) as a tuple."""
    return tuple(value) if isinstance(value, Iterable) else (value,)


class PmapFunction(StaticFunction[_P, _R]):
    """A function mapped over devices by ``jaxstatic.pmap``. Call it like the function it wraps.

    Besides calls: ``trace_count``, ``retraces``, ``cache_info()`` and ``clear_cache()``, as for ``jaxstatic.jit``.
    """

    _transform = "pmap"
    _counts_traces = True  # one compiled program per static key, as for jit

    def __init__(self, fn: Callable[_P, _R], axis_name: Hashable | None = None, *, in_axes: Any = 0,
                 out_axes: Any = 0, static_broadcasted_argnums: int | Iterable[int] = (),
                 devices: Sequence[Any] | None = None, backend: str | None = None, axis_size: int | None = None,
                 donate_argnums: int | Iterable[int] = (), max_traces: int | None = None,
                 cache_size: int = _options.JAX_JIT_CACHE_SIZE) -> None:
        self._in_axes = in_axes
        self._by_name: dict[str, Any] | None = None
        self._pmap_options = {"axis_name": axis_name, "out_axes": out_axes, "devices": devices, "backend": backend,
                              "axis_size": axis_size}
        params = {"static_argnums": _argnums(static_broadcasted_argnums), "donate_argnums": _argnums(donate_argnums)}
        # given only when non-empty, so that a plain js.pmap(f) reads no signature until its first call
        super().__init__(fn, {k: v for k, v in params.items() if v}, max_traces=max_traces, cache_size=cache_size)

    def _checks_at_decoration(self) -> bool:
        return not (self._in_axes is None or type(self._in_axes) is int)

    def _resolve(self, layout: Layout) -> None:
        _options.check_not_static(self._function, self._params().donate, layout.static, "donate_argnums")
        self._by_name = resolve_in_axes(self._function, layout, self._in_axes)

    def _build(self, plan: Plan, body: Callable[..., Any], slot: Slot) -> Callable[..., Any]:
        names = program_names(plan)
        in_axes = self._in_axes if self._by_name is None else tuple(self._by_name.get(n, 0) for n in names)
        donate = tuple(i for i, name in enumerate(names) if name in self._params().donate)
        options = dict(self._pmap_options, in_axes=in_axes, donate_argnums=donate)
        return packed(plan, body, lambda f: jax.pmap(f, **options))


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

    - an int or ``None``: that axis for every dynamic argument;
    - a tuple (or list) over all positional parameters, ``None`` (or anything) at the Static ones, as
      ``jax.pmap`` takes it, or over the dynamic positional parameters only;
    - a dict by parameter name (``*args``/``**kwargs`` by their names, the entry a prefix of the tuple of extra
      arguments or the dict of extra keywords).

    Parameters a tuple or dict leaves out get axis 0, ``jax.pmap``'s default; a parameter gets its axis however it
    is passed (``jax.pmap`` maps every keyword argument over axis 0). A non-``None`` axis for a Static parameter is an
    ``OptionError`` naming it. ``static_broadcasted_argnums`` adds to the annotations; ``donate_argnums`` names
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


__all__ = ["PmapFunction", "pmap", "resolve_in_axes"]
