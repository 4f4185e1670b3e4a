"""A miss, top to bottom: a call whose static key has no program, from the dispatcher that found none to the
program cached. In the order a miss meets them:

1. ``begin``: the static values are checked against their ``Static[T]`` (``_typecheck``: on a miss, never on a
   hit). Under ``jax.disable_jit()`` a jit runs the function as plain Python instead (nothing cached).
2. ``Miss.claim``: the miss becomes its key's in-flight entry (``Programs.inflight``), with the in-flight wait
   beside it: a program cached meanwhile runs as a hit does; this thread's own in flight runs nested (a recursive
   call); another thread's is waited for. Equal keys trace once, other keys in parallel, with no function-wide lock.
3. ``Miss.build``: the transform's JAX program (``StaticFunction._build``, e.g. ``jax.jit``) over the body JAX traces
   (``_body.traced_body``), or the exact-key lane's program where the lane serves the key (``_lane``); the body
   reads the key's static values from the key's ``_parts.KeyState``.
4. The caller's frame calls ``miss.program(*miss.pos, **miss.kw)``: JAX traces the body, which hands the user's
   function the caller's static values and counts and explains the trace (``_stats``), then compiles it. Why the
   caller's frame: ``Miss``.
5. ``Miss.done`` finishes it (``Miss.finish``): the program cached (``Programs.insert``), the waiting threads woken, the
   build counted. ``Miss.fail`` lets go of the key and says what went wrong: a dynamic value JAX cannot trace
   (``dynamic_error``), a deleted or donated array (``_donate_errors``).

Faults leave nothing behind (``failed``): a call that raises is counted once as failed, never a hit, and its static
values are forgotten. A call whose trace ended but that JAX refused to run keeps its program, as ``jax.jit`` keeps
its trace (``Miss.finish``).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import jax

from . import _codegen, _donate_errors, _explain, _freeze, _typecheck
from ._body import traced_body
from ._compat import jit_disabled
from ._errors import non_array_error, uncomparable_error
from ._parts import KeyState, Owner, let_go
from ._plan import Plan

if TYPE_CHECKING:
    from ._lane import Lane


class Miss:
    """A call that found no program, run by the calling frame itself: ``program(*pos, **kw)``, then ``done(result)``
    (its value), or on a failure ``fail(err)`` (what to raise: ``err`` itself, or an error that names what JAX could
    not trace). Read top to bottom: ``begin`` makes it, ``claim``, ``build``, the caller's frame runs it, ``done``
    or ``fail``, ``finish``.

    The miss that claims its key (``claim``: ``claimed``) is the key's in-flight entry (``Programs.inflight``) until
    it finishes: the thread tracing it (``thread``), which other threads with an equal key wait for (``event``),
    whether the exact-key lane serves the key (``by_lane``), the program to cache once it has run (``made``) and, for a
    transform that counts its builds, the build being counted (``build_record``). ``state`` is the key's
    ``KeyState``, which the body of its program reads the caller's static values from. A miss that finds a program
    after all (cached meanwhile by another thread or call shape, or its own key in flight in this thread) runs that
    program, as a hit does, and has nothing to finish; so does a miss without a ``core``, a plain call (the lane's own
    call made again).

    Why the caller's frame runs it: each frame between a call and the body JAX traces is one frame less that nested
    jitted functions can recurse (JAX's recursion limit is Python's), so the dispatcher (``_codegen``), the first
    call of a shape (``StaticFunction.__call__``) and the lane's ``__call__`` each call the program in their own
    frame, and a miss is claimed before it (``begin``) and finished after it (``done``, ``fail``), never around it."""

    __slots__ = ("args", "build_record", "by_lane", "claimed", "core", "event", "key", "kw", "kwargs", "made", "outer",
                 "plan", "pos", "program", "state", "thread", "traces")
    program: Callable[..., Any]  # set by ``set_up``: what the caller's frame calls, with ``pos`` and ``kw``
    pos: Any
    kw: Any
    outer: Any  # the statics handed to the body before this call's, given back when it ends
    thread: int  # set by ``claim``, as the rest of the in-flight entry
    event: threading.Event
    by_lane: bool

    def __init__(self, core: Owner | None, plan: Plan | None, key: Any, args: tuple[Any, ...],
                 kwargs: dict[str, Any], traces: bool = True) -> None:
        self.core, self.plan, self.key, self.args, self.kwargs = core, plan, key, args, kwargs
        self.traces = traces  # a failure may be a dynamic value JAX cannot trace (not so for an eager call)
        self.claimed = False
        self.state: KeyState | None = None  # the key state this call hands its static values to the body through
        self.made: Any = None
        self.build_record: tuple[Any, Any] | None = None

    @classmethod
    def plain(cls, program: Callable[..., Any], pos: tuple[Any, ...], kw: dict[str, Any]) -> Miss:
        """A call with nothing to finish: the lane's own call made again (``Lane.switch``)."""
        return cls(None, None, None, pos, kw).set_up(program, pos, kw)

    def set_up(self, program: Callable[..., Any], pos: Any, kw: Any, hand_to: KeyState | None = None) -> Miss:
        """The program this call runs, with these values; with ``hand_to``, the caller's own static values are
        handed to the body it traces until the call ends (``KeyState.hand``; none: a program cached, which a retrace
        for new shapes hands equal values rebuilt from the key, as a hit does)."""
        self.program, self.pos, self.kw = program, pos, kw
        if hand_to is not None and self.plan is not None:
            self.state, self.outer = hand_to, hand_to.hand(self.plan.static_values(self.args, self.kwargs))
        return self

    # -- 2. claim, and the in-flight wait -----------------------------------------------------------------------

    def claim(self, core: Owner) -> bool:
        """True: this miss claimed its key and is now the key's in-flight entry, for this thread to build and trace.
        False: it is set up to run a program found: one cached (meanwhile, or by another call shape, or before an
        ahead-of-time ``lower``), run as a hit does; this thread's own, being traced, run with its key state (a
        recursive call: JAX traces the new shapes nested); or, after waiting while another thread traced the key, the
        one it cached."""
        programs, plan, key, args, kwargs = core._programs, self._plan(), self.key, self.args, self.kwargs
        me = threading.get_ident()
        while True:
            with programs.lock:
                program = programs.cache.get(key)
                flight = programs.inflight.get(key) if program is None else None
                if program is None and flight is None:
                    lane = _lane_of(core)  # asked under the lock: another thread may install the lane meanwhile
                    self.by_lane = lane is not None and lane.serves(plan, key)
                    self.claimed, self.thread, self.event = True, me, threading.Event()
                    programs.inflight[key] = self
                    return True
            if program is not None:
                self.set_up(program, *plan.dynamic_values(args, kwargs))
                return False
            assert flight is not None
            if flight.thread == me:
                self.set_up(flight.made, *plan.dynamic_values(args, kwargs), hand_to=flight.state)
                return False
            flight.event.wait()

    # -- 3. build -----------------------------------------------------------------------------------------------

    def build(self, core: Owner) -> None:
        """The program of the key this miss claimed, set up to run with the caller's static values: the lane's,
        where the lane serves the key, else the transform's (which may raise: a call it refuses, as grad of a missing
        argument; the key is then let go of). JAX traces and compiles it when the caller's frame first calls it."""
        plan, key, args, kwargs = self._plan(), self.key, self.args, self.kwargs
        state = self.state = KeyState(key)
        try:
            self.build_record = _count_build(core, plan, key)
            lane = _lane_of(core)
            if self.by_lane and lane is not None:  # the lane's program, with its arguments
                self.made = lane.adapter(plan, key)
                self.set_up(lane.program, *lane.arguments(plan, key, args, kwargs), hand_to=state)
            else:
                self.made = _transform_program(core, plan, state)
                self.set_up(self.made, *plan.dynamic_values(args, kwargs), hand_to=state)
        except BaseException:
            self.finish(core, ok=False)  # claimed, never run: let go of, for the threads waiting on it
            raise

    # -- 4. run by the caller's frame, then done or failed ------------------------------------------------------

    def done(self, result: Any) -> Any:
        """The program returned ``result``: a program traced is cached (``finish``)."""
        if self.state is not None:
            self.state.take_back(self.outer)
        core = self.core
        if self.claimed and core is not None:
            try:
                self.finish(core, ok=True)
            except BaseException:
                failed(core, self._plan(), self.args, self.kwargs, ran=True)
                raise
        return result

    def fail(self, err: BaseException) -> BaseException:
        """The program raised ``err``: what to raise instead (a dynamic value JAX cannot trace, named by its
        parameter), or ``err`` itself. The key is let go of, and the call counted as failed."""
        core = self.core
        if core is None:
            return err
        try:
            try:
                if self.state is not None:
                    self.state.take_back(self.outer)
                if self.traces and isinstance(err, TypeError):
                    err = dynamic_error(core, self._plan(), self.args, self.kwargs, err)
            finally:
                if self.claimed:
                    self.finish(core, ok=False)
        finally:
            failed(core, self._plan(), self.args, self.kwargs)
        return err

    # -- 5. finish ----------------------------------------------------------------------------------------------

    def finish(self, core: Owner, ok: bool) -> None:
        """This miss, which claimed its key, ends (``done``, ``fail``, a failed ``build``): the in-flight entry gone
        and the threads waiting on it woken; a program that traced is cached, with the key's state; where a jit
        above counts the traces (vmap, grad), its build is counted."""
        programs, key, state = core._programs, self.key, self.state
        assert state is not None  # made by ``build``, which the miss that claims a key runs at once
        with programs.lock:
            programs.inflight.pop(key, None)
            # A call refused after its body traced (JAX refused to run it: a buffer donated twice, a deleted one)
            # keeps its program, as jax.jit keeps its trace: JAX's own caches decide what a retry traces again.
            evicted = programs.insert(key, self.made, state) if ok or state.traced else []
        build, self.made, self.build_record = self.build_record, None, None
        self.event.set()
        let_go(evicted)
        if ok and build is not None:
            core._stats.end_build(*build)

    def _plan(self) -> Plan:
        assert self.plan is not None  # every miss with a core has its call's plan
        return self.plan


# -- 1. begin --------------------------------------------------------------------------------------------------

def begin(core: Owner, plan: Plan, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Miss:
    """A key not in the cache: the ``Miss`` the caller's own frame runs, claimed and built. A call that raises on the
    way (in the type check, the transform, the trace) is counted once as failed, never a hit."""
    try:
        lane = _lane_of(core)
        if lane is None or not lane.serves(plan, key):  # the lane's body checks its own
            _typecheck.check(core._transform._fn, core._name, plan.static_values(args, kwargs))
        # jax.disable_jit() runs jit eagerly, not a trace, nothing cached; pmap, shard_map, grad, vmap and the
        # others keep their meaning (pmap still maps over devices), as JAX's do.
        if core._transform._eager_without_jit and jit_disabled():
            return Miss(core, plan, key, args, kwargs, traces=False).set_up(
                functools.partial(core._stats.run_eagerly, core._transform._fn), (args, kwargs), {})
        miss = Miss(core, plan, key, args, kwargs)
        if miss.claim(core):  # this miss traces the key
            miss.build(core)
        return miss
    except BaseException:
        failed(core, plan, args, kwargs)
        raise


def ahead_of_time(core: Owner, plan: Plan, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                  method: str) -> Any:
    """``program.<method>(dynamic values)`` (``lower``, ``trace``, ``eval_shape``) of the key's program, claimed
    and built where none is cached as a call's miss is (other threads wait for it; cached once it traced), with the
    caller's own static values handed to the body while JAX traces it. Never the lane's program: a key whose
    ahead-of-time objects the lane makes does not come here (``Lane.serves_aot``)."""
    miss = Miss(core, plan, key, args, kwargs)
    if miss.claim(core):
        miss.by_lane = False  # the lane's program takes its arguments its own way, not as ``_aot`` lays them out
        miss.build(core)
    elif getattr(miss.program, "lane", False):
        # the lane's program, cached for a key it serves once it handed calls on (``Lane.adapter``), is no JAX
        # program: the transform's, made for this and not cached, lowers as the call is laid out
        if miss.state is not None:  # the lane's own key in flight in this thread: its values given back
            miss.state.take_back(miss.outer)
        own = KeyState(key)
        miss.set_up(_transform_program(core, plan, own), *plan.dynamic_values(args, kwargs), hand_to=own)
    elif miss.state is None:  # a program cached: JAX may trace it again for these shapes, with the caller's values
        with core._programs.lock:
            state = core._programs.states.get(key)
        miss.set_up(miss.program, miss.pos, miss.kw, hand_to=state)
    try:
        result = getattr(miss.program, method)(*miss.pos, **miss.kw)
    except BaseException as err:
        raised = miss.fail(err)
        if raised is err:
            raise
        raise raised from None
    return miss.done(result)


def _transform_program(core: Owner, plan: Plan, state: KeyState) -> Callable[..., Any]:
    """The transform's program for ``state``'s key (``StaticFunction._build``), over the body JAX traces
    (``_body``)."""
    body = traced_body(core._transform, core._stats, core._programs.why_again, plan, state)
    return core._transform._build(plan, body, state)


def _count_build(core: Owner, plan: Plan, key: Any) -> tuple[_explain.Signature, Any] | None:
    """None for a transform that counts its traces (``js.jit``). One whose traces a jit above counts (vmap, grad:
    ``_counts_traces`` false) counts its builds instead, by their static values: this build's signature and record
    (``TraceStats.begin_build``), for ``finish`` to count it."""
    if core._transform._counts_traces:
        return None
    signature: _explain.Signature = {
        name: _explain.StaticSig(k) for (name, _), k in zip(plan.statics, _codegen.static_keys(key))}
    return signature, core._stats.begin_build(signature)


# -- faults -----------------------------------------------------------------------------------------------------

def failed(core: Owner, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any], ran: bool = False) -> None:
    """A call raised: it is no hit, and its static values are not kept. ``ran``: it raised after its program
    returned (the buffers it donated are consumed, so its deleted arrays say nothing of its arguments)."""
    next(core._stats.failures)
    for value in plan.static_values(args, kwargs).values():
        core._memo.discard(value)
    if not ran:  # JAX's error about a deleted or donated buffer, raised again naming the parameter and path
        _donate_errors.explain_failure(core._name, plan, args, kwargs, core._transform._params())


def dynamic_error(core: Owner, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any],
                  err: TypeError) -> TypeError:
    """Say which non-Static parameter got a value JAX cannot trace; otherwise the original error."""
    for name, src in plan.dynamics:
        for path, leaf in jax.tree_util.tree_flatten_with_path(src.get(args, kwargs))[0]:
            if not is_traceable(leaf):
                from . import _hidden

                fn, transform = core._transform._fn, f"jaxstatic.{core._transform._transform_name}"
                hidden = _hidden.non_array_error(fn, plan.layout.static, transform, args, kwargs, leaf)
                if hidden is not None:  # a decorator hid a Static parameter
                    return hidden
                return non_array_error(core._name, name, name + jax.tree_util.keystr(path), leaf,
                                       src.kind == "varkw", src.get(args, kwargs))
    return err


def uncomparable(core: Owner, plan: Plan, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                 err: Exception) -> Exception:
    """The error for a cache lookup that raised: ``err`` itself where the key's hash raises (a static value's own
    ``__hash__``, as ``jax.jit`` raises it); else a static value's ``__eq__`` raised, which is named."""
    try:
        hash(key)
    except Exception:
        return err
    statics = plan.static_values(args, kwargs)
    for j, (name, _) in enumerate(plan.statics):
        mine = key[1 + 2 * j:3 + 2 * j]
        for other in list(dict.keys(core._programs.cache)):  # the plain dict's keys: no lookup that would compare
            try:
                _ = other[1 + 2 * j:3 + 2 * j] == mine
            except Exception:
                return uncomparable_error(core._name, name, statics[name], err)
    return uncomparable_error(core._name, plan.statics[0][0], statics[plan.statics[0][0]], err) \
        if plan.statics else err


def is_traceable(leaf: object) -> bool:
    # a dtype class (jnp.int32) has a ``dtype`` attribute too, but JAX cannot trace it
    return (_freeze.is_array(leaf) or isinstance(leaf, (int, float, complex, bool))
            or (hasattr(leaf, "dtype") and not isinstance(leaf, type)))


def _lane_of(core: Owner) -> Lane | None:
    """The core's exact-key lane, once taken (the hits in C see it as a ``_parts.Switched``)."""
    return cast("Lane | None", core._lane)


__all__ = ["Miss", "ahead_of_time", "begin", "dynamic_error", "failed", "is_traceable", "uncomparable"]
