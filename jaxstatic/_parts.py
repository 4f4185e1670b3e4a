"""The parts a jaxstatic function's core is made of, and what the lower layers ask of it.

A function transformed by jaxstatic is two objects. The transform (``_transform.StaticFunction``; a subclass per
transform) holds the options and knows how to build a JAX program; the core (``_core.Core``) holds the call shapes
and, in a ``Programs``, the programs by key. Neither imports the other:

- the core and the body JAX traces ask the transform for what differs per transform through ``Transform``;
- the misses (``_miss``) and the hit paths (``_lane``, ``_c_hits``), which the core builds, see the core through
  ``Owner``;
- the body JAX traces for one key reads its static values from that key's ``KeyState``.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Any, Protocol

from . import _codegen, _freeze
from ._explain import NOTHING_SEEN
from ._memo import IdentityMemo
from ._options import ParamOptions
from ._plan import Layout, Plan
from ._stats import TraceStats

Dispatch = Callable[[tuple[Any, ...], dict[str, Any]], Any]
"""The dispatcher of one call shape: ``dispatch(args, kwargs)`` (``_codegen.generate``)."""

Generated = dict[str, Callable[..., Any]]
"""The generated functions of one call shape, by name (``_codegen.generate``: ``key``, ``dispatch``,
``key_then_begin``, ``entry``)."""

EVICTED = "its compiled program had been evicted to keep at most cache_size={} programs"
EVICTED_MEMORY = 1024  # hashes of evicted keys kept, to explain retraces they cause (hashes keep no value alive)


class KeyState:
    """One static key's state, as the body of its program reads it, from the miss that builds the program until
    the program is evicted: the caller's own static values while the caller's call traces it (per thread, never
    through JAX), and whether a trace of the body ended (``traced``).

    The hand-over, in the order it runs: the miss hands the caller's values over when it sets its call up
    (``_miss.Miss.set_up`` calls ``hand``); the caller's frame calls the program, and JAX traces the body, which
    reads them (``statics``, in ``_body.traced_body``); the call ends and the values handed before it are given back
    (``Miss.done`` or ``Miss.fail`` call ``take_back``). A trace with nothing handed (a hit whose new shapes JAX
    traces again) reads values equal to the caller's, rebuilt from the key."""

    __slots__ = ("key", "local", "traced")

    def __init__(self, key: Any) -> None:
        self.key = key
        self.local = threading.local()
        self.traced = False  # the body returned from a counted trace: the program is JAX's to keep, whatever follows

    def hand(self, statics: dict[str, Any]) -> Any:
        """Hand the caller's own static values to the body while this thread's call traces it (``statics``);
        returns those handed before (a nested call's caller's), for ``take_back`` when the call ends."""
        outer = getattr(self.local, "statics", None)
        self.local.statics = statics
        return outer

    def take_back(self, outer: Any) -> None:
        """The call ``hand`` was for ended: the values handed before it are the body's again."""
        self.local.statics = outer

    def statics(self, plan: Plan) -> dict[str, Any]:
        """The static values the body runs with, by parameter name: the caller's own objects while the caller's
        call traces it (``hand``); on a retrace for new shapes, values equal to them (same types, order and bits),
        rebuilt from the key."""
        statics = getattr(self.local, "statics", None)
        if statics is None:
            names = [name for name, _ in plan.statics]
            statics = dict(zip(names, map(_freeze.thaw, _codegen.static_keys(self.key))))
        return statics


class Programs:
    """A function's compiled programs, one per static key, least recently used first, at most ``cache_size``
    (``insert`` evicts past it and keeps the evicted key's hash, to explain the retrace it causes). Beside them,
    each key's ``KeyState``, and the misses tracing a key for the first time (``inflight``, ``_miss.Miss.claim``).

    ``lock`` guards the bookkeeping only, never held while tracing or compiling. Reentrant, because a key's own
    ``__hash__``/``__eq__`` (or a finalizer) runs under it when the cache is looked up, and may call this very
    function."""

    __slots__ = ("cache", "evicted", "inflight", "lock", "states", "stats")

    def __init__(self, stats: TraceStats) -> None:
        self.stats = stats
        self.cache: collections.OrderedDict[Any, Any] = collections.OrderedDict()  # program by key, oldest first
        stats.currsize = self.cache.__len__
        self.states: dict[Any, KeyState] = {}
        self.inflight: dict[Any, Any] = {}  # by key: the ``_miss.Miss`` tracing it (``Miss.claim``)
        self.evicted: collections.deque[int] = collections.deque(maxlen=EVICTED_MEMORY)
        self.lock = threading.RLock()

    def insert(self, key: Any, program: Any, state: KeyState) -> list[tuple[Any, Any, Any]]:
        """Add a program, evicting the least recently used past ``cache_size`` (called under the lock). Returns the
        evicted ``(key, program, state)``s, for the caller to let go of once the lock is released (``let_go``): a
        key's last reference may run a finalizer that calls this function, and ``clear_cache()`` is JAX's code."""
        self.cache[key] = program
        self.states[key] = state
        evicted: list[tuple[Any, Any, Any]] = []
        while len(self.cache) > self.stats.options.cache_size:
            old, dropped = self.cache.popitem(last=False)
            evicted.append((old, dropped, self.states.pop(old, None)))
            self.evicted.append(hash(old))
            self.stats.evictions += 1
        return evicted

    def clear(self) -> list[tuple[Any, Any, Any]]:
        """Drop every program (``clear_cache()``), returned for the caller to let go of after the lock. The cache's
        entries read as the plain dict's, which hashes no key: no Python code runs, so no hit's ``move_to_end`` in
        another thread comes in between."""
        with self.lock:
            cleared = [(None, program, None) for program in dict.values(self.cache)]
            self.cache.clear()
            self.states.clear()
        return cleared

    def why_again(self, key: Any) -> str:
        """Why ``key`` traces again, where the programs know: it was evicted."""
        if hash(key) in self.evicted:
            return EVICTED.format(self.stats.options.cache_size)
        return NOTHING_SEEN


def let_go(evicted: list[tuple[Any, Any, Any]]) -> None:
    """Release the ``(key, program, state)``s a cache let go of, outside its lock: each program's own caches
    (``clear_cache()``: JAX's), then the keys themselves, whose values' finalizers may call the function again."""
    for _, program, _ in evicted:
        getattr(program, "clear_cache", lambda: None)()
    evicted.clear()


class Transform(Protocol):
    """The transform, as its core and its body see it: what differs per transform (``StaticFunction`` says what
    each one means). Read-only where the transform may hold a more precise type (a property in a protocol is
    covariant)."""

    @property
    def _transform_name(self) -> str: ...
    @property
    def _name(self) -> str: ...
    @property
    def _fn(self) -> Callable[..., Any]: ...
    @property
    def _counts_traces(self) -> bool: ...
    @property
    def _eager_without_jit(self) -> bool: ...

    def _traced_fn(self) -> Callable[..., Any]: ...
    def _after_trace(self, fn: Callable[..., Any]) -> None: ...
    def _params(self) -> ParamOptions: ...
    def _layout(self) -> Layout: ...
    def _takes_lane(self) -> bool: ...
    def _lane_program(self, body: Callable[..., Any], argnums: tuple[int, ...],
                      argnames: tuple[str, ...]) -> Any: ...
    def _build(self, plan: Plan, body: Callable[..., Any], state: KeyState) -> Callable[..., Any]: ...
    def _unspecialized(self) -> type: ...


class Switched(Protocol):
    """The part of a lane the hits in C read: whether it handed its calls to the general path."""

    @property
    def switched(self) -> bool: ...


class Owner(Protocol):
    """A jaxstatic function's core, as its misses, its lane and its hits in C see it (the core's private members,
    named as it names them); its transform is ``_transform``."""

    @property
    def _transform(self) -> Transform: ...
    @property
    def _name(self) -> str: ...
    @property
    def _stats(self) -> TraceStats: ...
    @property
    def _programs(self) -> Programs: ...
    @property
    def _memo(self) -> IdentityMemo: ...
    @property
    def _shapes(self) -> dict[Any, tuple[Plan, Generated]]: ...
    @property
    def _lane(self) -> Switched | None: ...

    def _plan_and_code(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Plan, Generated]: ...
    def _namespace(self, plan: Plan) -> dict[str, Any]: ...
    def _head(self) -> Any: ...
    def _specialize(self, entry: Callable[..., Any]) -> None: ...
    def _unspecialize(self) -> None: ...
    def _first_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any: ...
    def _failed(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any], ran: bool = False) -> None: ...
    def _failed_dynamic(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any],
                        err: TypeError) -> TypeError: ...


__all__ = ["EVICTED", "EVICTED_MEMORY", "Dispatch", "Generated", "KeyState", "Owner", "Programs", "Switched",
           "Transform", "let_go"]
