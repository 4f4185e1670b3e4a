"""The parts of a jaxstatic function and what each asks of the other, in one place.

A function transformed by jaxstatic is two objects. The transform (``_transform.StaticFunction``; a subclass per
transform) holds the options and knows how to build a JAX program; the core (``_core.Core``, over
``_programs.Programs``) holds the programs, their keys and the call shapes. Neither imports the other:

- the core asks its transform for what differs per transform through ``Hooks``;
- the hit paths (``_lane``, ``_compiled``), which the core builds, call back into the core through ``Owner``, and
  read the transform through the core's ``_hooks``;
- a call that finds no program is a ``Miss``, run by the calling frame itself;
- the body JAX traces for one key reads its static values from that key's ``Slot``.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Any, Protocol

from ._explain import Signature
from ._memo import IdentityMemo
from ._options import ParamOptions
from ._plan import Layout, Plan
from ._stats import TraceStats

Dispatch = Callable[[tuple[Any, ...], dict[str, Any]], Any]
"""The dispatcher of one call shape: ``dispatch(args, kwargs)`` (``_codegen.generate``)."""

Generated = dict[str, Callable[..., Any]]
"""The generated functions of one call shape, by name (``_codegen.generate``: ``dispatch``, ``key``, ``entry``)."""


class Slot:
    """What one program's body needs: its key, and the caller's own static values while the caller traces it."""

    __slots__ = ("key", "local", "traced")

    def __init__(self, key: Any) -> None:
        self.key = key
        self.local = threading.local()
        self.traced = False  # the body returned from a counted trace: the program is JAX's to keep, whatever follows


class Miss:
    """A call that found no program, run by the calling frame itself: ``program(*pos, **kw)``, then ``done(result)``
    (its value), or on a failure ``fail(err)`` (what to raise: ``err`` itself, or an error that names what JAX could
    not trace).

    Why the caller's frame runs it: each frame between a call and the body JAX traces is one frame less that nested
    jitted functions can recurse (JAX's recursion limit is Python's), so the dispatcher (``_codegen``), the first
    call of a shape (``StaticFunction.__call__``) and the lane's ``__call__`` each call the program in their own
    frame, and a miss is claimed before it (``Programs._miss``) and finished after it (``done``, ``fail``), never
    around it.

    The miss that claims a key (``claim``) is also the key's in-flight entry: other threads with an equal key wait
    on it (``event``) instead of tracing twice, and a recursive call inside its own trace runs its program. A miss
    without an ``owner`` is a plain call (the lane's own call made again): nothing to finish."""

    __slots__ = ("args", "built", "cached", "event", "key", "kw", "kwargs", "lane", "local", "outer", "owner", "plan",
                 "pos", "program", "record", "slot", "thread", "traces")

    def __init__(self, owner: Finishes | None, plan: Plan | None, key: Any, args: tuple[Any, ...],
                 kwargs: dict[str, Any], traces: bool = True) -> None:
        self.owner, self.plan, self.key, self.args, self.kwargs = owner, plan, key, args, kwargs
        self.traces = traces  # a failure may be a dynamic value JAX cannot trace (not so for an eager call)
        self.event: threading.Event | None = None  # set by ``claim``: this miss traces the key
        self.local: Any = None  # the slot's thread-local while this call hands its static values to the body

    @classmethod
    def plain(cls, program: Callable[..., Any], pos: tuple[Any, ...], kw: dict[str, Any]) -> Miss:
        """A call with nothing to finish: the lane's own call made again (``Lane.switch``)."""
        return cls(None, None, None, pos, kw).runs(program, pos, kw)

    def runs(self, program: Callable[..., Any], pos: Any, kw: Any, slot: Slot | None = None) -> Miss:
        """The program this call runs, with these values; with ``slot``, the caller's own static values are handed
        to the body it traces until the call ends (no slot: a program cached, which a retrace for new shapes hands
        equal values rebuilt from the key, as a hit does)."""
        self.program, self.pos, self.kw = program, pos, kw
        if slot is not None and self.plan is not None:
            self.local = slot.local
            self.outer = getattr(self.local, "statics", None)
            self.local.statics = self.plan.static_values(self.args, self.kwargs)
        return self

    def claim(self, thread: int, cached: Any, slot: Slot, lane: bool, built: Signature | None,
              record: Any) -> Miss:
        """Make this miss the key's in-flight entry, by ``thread``: ``cached`` is the program cached once it has run
        (the lane's adapter, where the lane serves the key: ``lane``), ``built``/``record`` the build being counted
        for a transform whose traces a jit counts."""
        self.thread, self.cached, self.slot, self.lane = thread, cached, slot, lane
        self.built, self.record = built, record
        self.event = threading.Event()
        return self

    def done(self, result: Any) -> Any:
        """The program returned ``result``: a program traced is cached (``Programs._finish``)."""
        if self.local is not None:
            self.local.statics = self.outer
        owner = self.owner
        if self.event is not None and owner is not None:
            try:
                owner._finish(self.key, self, ok=True)
            except BaseException:
                owner._failed(self._plan(), self.args, self.kwargs, ran=True)
                raise
        return result

    def fail(self, err: BaseException) -> BaseException:
        """The program raised ``err``: what to raise instead (a dynamic value JAX cannot trace, named by its
        parameter), or ``err`` itself. The key is let go of, and the call counted as failed."""
        owner = self.owner
        if owner is None:
            return err
        try:
            try:
                if self.local is not None:
                    self.local.statics = self.outer
                if self.traces and isinstance(err, TypeError):
                    err = owner._dynamic_error(self._plan(), self.args, self.kwargs, err)
            finally:
                if self.event is not None:
                    owner._finish(self.key, self, ok=False)
        finally:
            owner._failed(self._plan(), self.args, self.kwargs)
        return err

    def _plan(self) -> Plan:
        assert self.plan is not None  # every miss with an owner has its call's plan
        return self.plan


class Hooks(Protocol):
    """The transform, as its core sees it: what differs per transform (``StaticFunction`` says what each one means).
    Read-only where the transform may hold a more precise type (a property in a protocol is covariant)."""

    @property
    def _transform(self) -> str: ...
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
    def _build(self, plan: Plan, body: Callable[..., Any], slot: Slot) -> Callable[..., Any]: ...
    def _unspecialized(self) -> type: ...


class Finishes(Protocol):
    """What ends a miss: the core's programs (``_programs.Programs`` satisfies it)."""

    def _finish(self, key: Any, miss: Miss, ok: bool) -> None: ...
    def _failed(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any], ran: bool = False) -> None: ...
    def _dynamic_error(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any],
                       err: TypeError) -> TypeError: ...


class Switched(Protocol):
    """The part of a lane the hits in C read: whether it handed its calls to the general path."""

    @property
    def switched(self) -> bool: ...


class Owner(Finishes, Protocol):
    """A jaxstatic function's core, as its lane, its hits in C and its misses see it (the core's private members,
    named as it names them); its transform is ``_hooks``."""

    @property
    def _hooks(self) -> Hooks: ...
    @property
    def _name(self) -> str: ...
    @property
    def _stats(self) -> TraceStats: ...
    @property
    def _cache(self) -> collections.OrderedDict[Any, Any]: ...
    @property
    def _memo(self) -> IdentityMemo: ...
    @property
    def _shapes(self) -> dict[Any, tuple[Plan, Generated]]: ...
    @property
    def _lane(self) -> Switched | None: ...

    def _shape(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Plan, Generated]: ...
    def _namespace(self, plan: Plan) -> dict[str, Any]: ...
    def _head(self) -> Any: ...
    def _specialize(self, entry: Callable[..., Any]) -> None: ...
    def _unspecialize(self) -> None: ...
    def _why_again(self, key: Any) -> str: ...
    def _call_as_miss(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Miss: ...
    def _failed_dynamic(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any],
                        err: TypeError) -> TypeError: ...


__all__ = ["Dispatch", "Finishes", "Generated", "Hooks", "Miss", "Owner", "Slot", "Switched"]
