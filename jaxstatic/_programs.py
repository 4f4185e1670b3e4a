"""A jaxstatic function's programs: one per static key, in a cache bounded by ``cache_size``, and what a miss and
a failed call do.

A miss traces without any function-wide lock: an in-flight entry per key makes equal keys trace once while other
keys trace in parallel, and a recursive call with the same key inside its own trace reuses the program being
traced. The least recently used program is evicted past ``cache_size`` (its key's hash kept, to explain the retrace
it causes). Faults leave nothing behind: a call that raises while it is traced is not cached, not counted as a trace
or a hit, and forgets its static values; a dynamic value JAX cannot trace is named by its parameter and path. A call
whose trace ended but that JAX refused to run keeps its program, as ``jax.jit`` keeps its trace (``_finish``).
"""

from __future__ import annotations

import collections
import functools
import threading
from collections.abc import Callable
from typing import Any

import jax

from . import _codegen, _donate_errors, _explain, _freeze, _lane, _typecheck
from ._body import traced_body
from ._errors import non_array_error, uncomparable_error
from ._lane import jit_disabled
from ._memo import IdentityMemo
from ._parts import Hooks, Miss, Slot
from ._plan import Plan
from ._stats import TraceStats

EVICTED = "its compiled program had been evicted to keep at most cache_size={} programs"
EVICTED_MEMORY = 1024  # hashes of evicted keys kept, to explain retraces they cause (hashes keep no value alive)


class Programs:
    """The program cache of a jaxstatic function, and its misses and faults: the part of its core (``_core.Core``)
    that holds the programs, by key."""

    def __init__(self, hooks: Hooks, stats: TraceStats) -> None:
        self._hooks = hooks  # the transform: its options, and how it builds a program (``_parts.Hooks``)
        self._name = hooks._name  # the function by name, as errors print it (``_naming.display_name``)
        self._stats = stats
        self._cache: collections.OrderedDict[Any, Any] = collections.OrderedDict()  # program by key, oldest first
        stats.currsize = self._cache.__len__
        self._slots: dict[Any, Slot] = {}  # by key: what the program's body reads
        self._inflight: dict[Any, Miss] = {}  # by key: the misses tracing it for the first time (``Miss.claim``)
        self._evicted: collections.deque[int] = collections.deque(maxlen=EVICTED_MEMORY)  # hashes of keys evicted
        # Bookkeeping only: never held while tracing or compiling. Reentrant, because a key's own __hash__/__eq__
        # (or a finalizer) runs under it when the cache is looked up, and may call this very function.
        self._lock = threading.RLock()
        self._memo = IdentityMemo()  # static containers remembered by identity (``_memo``)
        self._lane: _lane.Lane | None = None  # the exact-key lane, once the first call shows it can be taken

    def _miss(self, plan: Plan, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Miss:
        """A key not in the cache: the ``Miss`` the caller's own frame runs (why that frame: ``Miss``). A call that
        raises on the way (in the type check, the transform, the trace) is counted once as failed, never a hit."""
        try:
            # a new static value: checked against its Static[T] here (the lane's body checks its own), never on a hit
            lane = self._lane
            if lane is None or not lane.serves(plan, key):
                _typecheck.check(self._hooks._fn, self._name, plan.static_values(args, kwargs))
            # jax.disable_jit() runs jit eagerly, not a trace, nothing cached; pmap, shard_map, grad, vmap and the
            # others keep their meaning (pmap still maps over devices), as JAX's do.
            if self._hooks._eager_without_jit and jit_disabled():
                return Miss(self, plan, key, args, kwargs, traces=False).runs(
                    functools.partial(_lane.eager, self._stats, self._hooks._fn), (args, kwargs), {})
            return self._claim(Miss(self, plan, key, args, kwargs))
        except BaseException:
            self._failed(plan, args, kwargs)
            raise

    def _claim(self, miss: Miss) -> Miss:
        """The claim step of a miss: it becomes the key's in-flight entry when this thread is to trace the key
        (``_start``); a program cached (meanwhile, or by another call shape) runs as a hit does; this thread's own,
        being traced, runs with its slot (a recursive call: JAX traces the new shapes nested); it waits while
        another thread traces the key."""
        plan, key, args, kwargs = miss._plan(), miss.key, miss.args, miss.kwargs
        me = threading.get_ident()
        while True:
            with self._lock:
                program = self._cache.get(key)
                flight = self._inflight.get(key) if program is None else None
                if program is None and flight is None:
                    self._inflight[key] = self._start(miss, me)
                    break
            if program is not None:
                return miss.runs(program, *plan.dynamic_values(args, kwargs))
            assert flight is not None
            if flight.thread == me:
                return miss.runs(flight.cached, *plan.dynamic_values(args, kwargs), slot=flight.slot)
            assert flight.event is not None
            flight.event.wait()
        try:
            lane = self._lane
            if miss.lane and lane is not None:  # the lane's program, with its arguments
                return miss.runs(lane.program, *lane.arguments(plan, key, args, kwargs), slot=miss.slot)
            return miss.runs(miss.cached, *plan.dynamic_values(args, kwargs), slot=miss.slot)
        except BaseException:
            self._finish(key, miss, ok=False)  # claimed, never run: let go of, for the threads waiting on it
            raise

    def _start(self, miss: Miss, me: int) -> Miss:
        """``miss`` claims its key for this thread (under the lock), with the program cached once it has run: the
        lane's, where the lane serves the key (asked again: another thread may have installed it meanwhile), else the
        transform's (which may raise: a call it refuses, as grad of a missing argument)."""
        plan, key = miss._plan(), miss.key
        slot = Slot(key)
        built = None if self._hooks._counts_traces else _static_signature(plan, key)
        record = None if built is None else self._stats.begin_build(built)
        lane = self._lane if self._lane is not None and self._lane.serves(plan, key) else None
        program = lane.adapter(plan, key) if lane is not None else self._build(plan, slot)
        return miss.claim(me, program, slot, lane is not None, built, record)

    def _build(self, plan: Plan, slot: Slot) -> Callable[..., Any]:
        """The transform's program for ``slot``'s key, over the body JAX traces (``_body``)."""
        return self._hooks._build(plan, traced_body(self._hooks, self._stats, self._why_again, plan, slot), slot)

    def _finish(self, key: Any, miss: Miss, ok: bool) -> None:
        """The finish step of a miss that claimed its key: the in-flight entry gone and the threads waiting on it
        woken; a program that traced is cached (and, where a jit counts the traces, its build counted)."""
        with self._lock:
            self._inflight.pop(key, None)
            # A call refused after its body traced (JAX refused to run it: a buffer donated twice, a deleted one)
            # keeps its program, as jax.jit keeps its trace: JAX's own caches decide what a retry traces again.
            evicted = self._insert(key, miss.cached, miss.slot) if ok or miss.slot.traced else []
        assert miss.event is not None
        miss.event.set()
        let_go(evicted)
        if ok and miss.built is not None:  # a miss, for transforms whose traces a jit counts
            self._stats.end_build(miss.built, miss.record)

    def _add(self, key: Any, program: Any, slot: Slot) -> None:
        """Add a program (``_insert``) under the lock, and let go of what it evicted after."""
        with self._lock:
            evicted = self._insert(key, program, slot)
        let_go(evicted)

    def _insert(self, key: Any, program: Any, slot: Slot) -> list[tuple[Any, Any, Any]]:
        """Add a program, evicting the least recently used past ``cache_size`` (called under the lock). Returns the
        evicted ``(key, program, slot)``s, for the caller to let go of once the lock is released (``_let_go``): a
        key's last reference may run a finalizer that calls this function, and ``clear_cache()`` is JAX's code."""
        self._cache[key] = program
        self._slots[key] = slot
        evicted: list[tuple[Any, Any, Any]] = []
        while len(self._cache) > self._stats.options.cache_size:
            old, dropped = self._cache.popitem(last=False)
            evicted.append((old, dropped, self._slots.pop(old, None)))
            self._evicted.append(hash(old))
            self._stats.evictions += 1
        return evicted

    def _uncomparable(self, plan: Plan, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                      err: Exception) -> Exception:
        """The error for a cache lookup that raised: ``err`` itself where the key's hash raises (a static value's
        own ``__hash__``, as ``jax.jit`` raises it); else a static value's ``__eq__`` raised, which is named."""
        try:
            hash(key)
        except Exception:
            return err
        statics = plan.static_values(args, kwargs)
        for j, (name, _) in enumerate(plan.statics):
            mine = key[1 + 2 * j:3 + 2 * j]
            for other in list(dict.keys(self._cache)):  # the plain dict's keys: no lookup that would compare
                try:
                    _ = other[1 + 2 * j:3 + 2 * j] == mine
                except Exception:
                    return uncomparable_error(self._name, name, statics[name], err)
        return uncomparable_error(self._name, plan.statics[0][0], statics[plan.statics[0][0]], err) \
            if plan.statics else err

    def _failed(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any], ran: bool = False) -> None:
        """A call raised: it is no hit, and its static values are not kept. ``ran``: it raised after its program
        returned (the buffers it donated are consumed, so its deleted arrays say nothing of its arguments)."""
        next(self._stats.failures)
        for value in plan.static_values(args, kwargs).values():
            self._memo.discard(value)
        if not ran:  # JAX's error about a deleted or donated buffer, raised again naming the parameter and path
            _donate_errors.explain_failure(self._name, plan, args, kwargs, self._hooks._params())

    def _failed_dynamic(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any], err: TypeError) -> TypeError:
        self._failed(plan, args, kwargs)
        return self._dynamic_error(plan, args, kwargs, err)

    def _dynamic_error(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any],
                       err: TypeError) -> TypeError:
        """Say which non-Static parameter got a value JAX cannot trace; otherwise the original error."""
        for name, src in plan.dynamics:
            leaves = jax.tree_util.tree_flatten_with_path(src.get(args, kwargs))[0]
            for path, leaf in leaves:
                if not is_traceable(leaf):
                    where = name + jax.tree_util.keystr(path)
                    from . import _hidden

                    hidden = _hidden.non_array_error(self._hooks._fn, plan.layout.static,
                                                     f"jaxstatic.{self._hooks._transform}",
                                                     args, kwargs, leaf)  # a decorator hid a Static parameter
                    if hidden is not None:
                        return hidden
                    return non_array_error(self._name, name, where, leaf, src.kind == "varkw",
                                           src.get(args, kwargs))
        return err

    def _clear(self) -> None:
        """Drop every program and every static value held for them (``clear_cache()``; ``_release``)."""
        with self._lock:
            # The cache's entries read as the plain dict's, which hashes no key: no Python code runs, so no hit's
            # move_to_end in another thread comes in between. What was held is let go of after the lock.
            cleared = [(None, program, None) for program in dict.values(self._cache)]
            self._cache.clear()
            self._slots.clear()
            held = self._memo.clear()
        let_go(cleared)
        del held

    def _release(self) -> None:
        """The function this core was kept in is gone (``_shared``): its programs go now (JAX's hold the arrays the
        function captured), not when the garbage collector finds the core."""
        self._clear()
        if self._lane is not None:
            getattr(self._lane.program, "clear_cache", lambda: None)()

    def _cache_size(self) -> int:
        """The entries of JAX's dispatch caches held for this function, as ``jax.jit`` objects' ``_cache_size()``
        counts its own: one per static key and shapes of the dynamic values (``cache_info().currsize`` counts
        programs, one per static key)."""
        own = [p for p in list(dict.values(self._cache)) if not getattr(p, "lane", False)]  # no key hashed
        lane = [] if self._lane is None else [self._lane.program]
        return sum(int(getattr(p, "_cache_size", lambda: 1)()) for p in own + lane)

    def _why_again(self, key: Any) -> str:
        if hash(key) in self._evicted:
            return EVICTED.format(self._stats.options.cache_size)
        return _explain.NOTHING_SEEN


def let_go(evicted: list[tuple[Any, Any, Any]]) -> None:
    """Release the ``(key, program, slot)``s a cache let go of, outside its lock: each program's own caches
    (``clear_cache()``: JAX's), then the keys themselves, whose values' finalizers may call the function again."""
    for _, program, _ in evicted:
        getattr(program, "clear_cache", lambda: None)()
    evicted.clear()


def _static_signature(plan: Plan, key: Any) -> _explain.Signature:
    """What a program of a transform that leaves compiling to a jit depends on: its static values."""
    return {name: _explain.StaticSig(k) for (name, _), k in zip(plan.statics, _codegen.static_keys(key))}


def is_traceable(leaf: object) -> bool:
    # a dtype class (jnp.int32) has a ``dtype`` attribute too, but JAX cannot trace it
    return (_freeze.is_array(leaf) or isinstance(leaf, (int, float, complex, bool))
            or (hasattr(leaf, "dtype") and not isinstance(leaf, type)))


__all__ = ["EVICTED", "EVICTED_MEMORY", "Programs", "is_traceable", "let_go"]
