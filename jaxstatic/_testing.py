"""Trace budgets for tests: ``no_retrace``, ``expect_traces`` and ``trace_log``.

Each entry into a block (a ``with``, or a call of a function the block decorates) registers a fresh listener with
``_stats`` until it exits; traces in every thread report to every active block, so blocks nest, a guard object can be
entered again, and a trace in a worker thread during a block counts. A trace refused in another thread (or caught
inside the block) is remembered, and fails the block when it exits. Outside any block a trace pays one truth test
and a cache hit pays nothing.

Naming no function watches the transforms that compile a program per static key (``jit``, ``pmap``,
``shard_map``): their traces are what costs time. Naming a function watches it whatever its transform, so a
``js.vmap`` or ``js.grad`` function counts the programs it builds for new static values. Only jaxstatic's own
function objects are accepted: a foreign wrapper (``jax.jit`` around a ``js.vmap``, a decorator) carries the
jaxstatic function's attributes through ``functools.wraps``, but its own traces are not the ones counted there.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any, Generic, TypeVar, overload

from . import _stats, _transform
from ._errors import RetraceError
from ._stats import Retrace, TraceEvent, TraceStats

_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])


class TraceLog:
    """The traces recorded by a block, in the order they ended: iterate it, index it (``log[-1]``), take its
    ``len``, or ``count(fn)``."""

    def __init__(self) -> None:
        self._events: list[TraceEvent] = []

    @property
    def events(self) -> tuple[TraceEvent, ...]:
        return tuple(self._events)

    def count(self, fn: Callable[..., Any] | None = None) -> int:
        """How many traces of ``fn`` (of any watched function when None) were recorded."""
        if fn is None:
            return len(self._events)
        stats = _stats_of(fn, "TraceLog.count")
        return sum(1 for e in self._events if e.source is not None and e.source() is stats)

    def __iter__(self) -> Iterator[TraceEvent]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self._events)

    @overload
    def __getitem__(self, index: int) -> TraceEvent: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[TraceEvent, ...]: ...
    def __getitem__(self, index: int | slice) -> TraceEvent | tuple[TraceEvent, ...]:
        return self.events[index]

    def __str__(self) -> str:
        if not self._events:
            return "no traces"
        return "\n".join(f"  {i}. {event}" for i, event in enumerate(self._events, 1))

    def __repr__(self) -> str:
        return f"<TraceLog of {_counted(self._events)}{''.join(f'; {e}' for e in self._events)}>"


class Watch:
    """One entry into a block: which functions it watches, whether it refuses their traces, and what it saw."""

    def __init__(self, targets: frozenset[TraceStats] | None, where: str, refuse: bool = False) -> None:
        self.targets = targets
        self.where = where
        self.refuse = refuse
        self.log = TraceLog()
        self.refused: list[tuple[RetraceError, str]] = []  # each refusal, with the thread it was raised in
        self._lock = threading.Lock()

    def wants(self, stats: TraceStats, kind: str) -> bool:
        return kind == "trace" if self.targets is None else stats in self.targets

    def before(self, stats: TraceStats, kind: str, number: int, record: Retrace | None) -> None:
        if self.refuse and self.wants(stats, kind):
            error = _refused(stats, kind, number, record, self.where)
            with self._lock:
                self.refused.append((error, threading.current_thread().name))
            raise error

    def after(self, stats: TraceStats, event: TraceEvent) -> None:
        if self.wants(stats, event.kind):
            with self._lock:
                self.log._events.append(event)


class Block(Generic[_T]):
    """A budget: a context manager (``with``; the object can be entered again, each time afresh) and a decorator
    (each call of the decorated function is a block of its own, as under ``pytest.mark.parametrize``)."""

    def __init__(self, fns: tuple[Callable[..., Any], ...], name: str, *, refuse: bool = False,
                 n: int | None = None, at_most: int | None = None, gives_log: bool = True) -> None:
        self._targets = frozenset(_stats_of(fn, name) for fn in fns) if fns else None
        self._kinds = frozenset(_kind(fn) for fn in fns) if fns else frozenset({"trace"})
        self.where = f"{name}({', '.join(_stats_of(fn, name).label for fn in fns)})"
        self._refuse, self._n, self._at_most, self._gives_log = refuse, n, at_most, gives_log
        self._entered = threading.local()  # per thread, a stack: a block entered again inside itself, or in a thread

    def __enter__(self) -> _T:
        watch = self.start()
        self._entered.__dict__.setdefault("stack", []).append(watch)
        return watch.log if self._gives_log else None  # type: ignore[return-value]

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        watch: Watch = self._entered.stack.pop()
        self.stop(watch)
        if error is not None:  # the block's own error goes on, saying what else was refused
            lost = [(e, t) for e, t in watch.refused if e is not error]
            if lost and hasattr(error, "add_note"):  # Python 3.11+
                error.add_note(f"Inside the block, besides: {_lost_refusal(lost)}")
            return
        failure = self.failure(watch)
        if failure is not None:
            raise failure

    def start(self) -> Watch:
        """A fresh entry, listening to traces until ``stop``."""
        watch = Watch(self._targets, self.where, self._refuse)
        _stats.listen(watch)
        return watch

    def stop(self, watch: Watch) -> None:
        _stats.unlisten(watch)

    def failure(self, watch: Watch) -> Exception | None:
        """How an entry that ended without an error of its own fails: a refusal that did not leave it (another
        thread's, or one caught inside it), or a number of traces off budget."""
        if watch.refused:
            return _lost_refusal(watch.refused)
        message = None if self._n is None and self._at_most is None else count_error(
            watch, self._kinds, self._n, self._at_most)
        return None if message is None else AssertionError(message)

    def __call__(self, fn: _F) -> _F:
        """As a decorator: each call of ``fn`` runs inside a fresh entry of this block."""

        @functools.wraps(fn)
        def budgeted(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return budgeted  # type: ignore[return-value]


def no_retrace(*fns: Callable[..., Any]) -> Block[None]:
    """Inside the block, tracing any of ``fns`` (any jaxstatic ``jit``, ``pmap`` or ``shard_map`` function when
    none is named) raises ``jaxstatic.RetraceError`` before the function's body runs, saying which parameter
    changed and how. A trace refused in another thread, or an error caught inside the block, still fails the block
    when it exits. Call the functions once before the block, so that it sees cache hits only::

        step(state, batch)  # compiles
        with js.testing.no_retrace(step):
            for batch in batches:
                state = step(state, batch)
    """
    return Block(fns, "no_retrace", refuse=True, gives_log=False)


def expect_traces(fn: Callable[..., Any] | None = None, n: int | None = None, *,
                  at_most: int | None = None) -> Block[TraceLog]:
    """On leaving the block, fail (``AssertionError``, each trace listed with its explanation) unless ``fn`` was
    traced exactly ``n`` times inside it, or at most ``at_most`` times. With ``fn=None``: traces of any jaxstatic
    ``jit``, ``pmap`` or ``shard_map`` function. The block gives the ``TraceLog`` it checks; as a decorator, each
    call of the decorated function is counted on its own."""
    if (n is None) == (at_most is None):
        raise TypeError("expect_traces() takes one number of traces: exactly that many (n), or at most that many "
                        "(at_most=).")
    limit = n if at_most is None else at_most
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise TypeError(f"expect_traces(): the number of traces must be an int >= 0, got {limit!r}.")
    return Block(() if fn is None else (fn,), "expect_traces", n=n, at_most=at_most)


def trace_log(*fns: Callable[..., Any]) -> Block[TraceLog]:
    """Record every trace (first traces and retraces) inside the block, in any thread: function, transforms,
    number and explanation, as ``TraceEvent`` records. With no function named: any jaxstatic ``jit``, ``pmap`` or
    ``shard_map`` function; a named function is recorded whatever its transform::

        with js.testing.trace_log() as log:
            train(steps=3)
        assert [e.changes for e in log if e.retrace] == []
    """
    return Block(fns, "trace_log")


def count_error(watch: Watch, kinds: frozenset[str], n: int | None, at_most: int | None) -> str | None:
    """What is wrong with the number of traces ``watch`` saw, each listed with its explanation; None when right.
    ``kinds``: what the watched functions make, ``trace`` (jit, pmap, shard_map) and/or ``build`` (vmap, grad)."""
    events = watch.log._events
    count = len(events)
    if (n is not None and count == n) or (at_most is not None and count <= at_most):
        return None
    limit = n if n is not None else at_most
    assert limit is not None
    expected = f"{'exactly' if n is not None else 'at most'} {limit} {_noun(kinds, limit)}"
    listing = f":\n{watch.log}" if count else "."
    note = _first_note(events, watch, limit)
    return f"{watch.where} expected {expected}, but {_happened(events, kinds)}{listing}{note}"


# -- helpers ---------------------------------------------------------------------------------------------------


def _stats_of(fn: Callable[..., Any], where: str) -> TraceStats:
    """The counters of a jaxstatic function (or of a method bound from one); a clear TypeError for anything else,
    a foreign wrapper of a jaxstatic function included."""
    target = fn.func if isinstance(fn, _transform.BoundMethod) else fn
    if isinstance(target, _transform.StaticFunction):
        return target._core._stats
    name = where.partition("(")[0]
    inner, path = _wrapped(fn)
    if inner is None:
        raise TypeError(f"{name}() watches functions made by jaxstatic transforms (js.jit, js.pmap, js.vmap, js.grad, "
                        f"...), but got {fn!r}, whose traces jaxstatic does not see. Wrap it with a jaxstatic "
                        "transform, or name the jaxstatic function that calls it.")
    raise TypeError(f"{name}() watches functions made by jaxstatic transforms, but got {fn!r}, a wrapper around "
                    f"{inner!r} (reached through {path}): jaxstatic counts the traces of {inner!r}, not those of the "
                    "wrapper (a jax.jit around it traces and compiles on its own). Make the outer transform a "
                    f"jaxstatic one (js.jit rather than jax.jit), or name the jaxstatic function itself ({path}).")


def _wrapped(fn: object) -> tuple[_transform.StaticFunction[Any, Any] | None, str]:
    """The jaxstatic function a foreign wrapper wraps through ``__wrapped__``, and the expression that reaches it."""
    path = "fn"
    for _ in range(64):  # a __wrapped__ cycle cannot hang the error
        fn = getattr(fn, "__wrapped__", None)
        path += ".__wrapped__"
        if fn is None or isinstance(fn, _transform.StaticFunction):
            return fn, path
    return None, path


def _kind(fn: Callable[..., Any]) -> str:
    """``trace`` for a transform that compiles (jit, pmap, shard_map), ``build`` for one that leaves it to a jit."""
    target = fn.func if isinstance(fn, _transform.BoundMethod) else fn
    return "trace" if isinstance(target, _transform.StaticFunction) and target._counts_traces else "build"


def name_of(fn: Callable[..., Any]) -> str:
    """The name a jaxstatic function is reported under, with its transforms (a TypeError for anything else)."""
    return _stats_of(fn, "max_traces").label


def _noun(kinds: frozenset[str], n: int) -> str:
    s = "" if n == 1 else "s"
    words = [w for k, w in (("trace", f"trace{s}"), ("build", f"new program{s}")) if k in kinds]
    return " or ".join(words)


def _counted(events: list[TraceEvent]) -> str:
    """``2 traces``, ``1 new program``, ``2 traces, 1 new program``."""
    traces = sum(1 for e in events if e.kind == "trace")
    builds = len(events) - traces
    parts = [f"{traces} trace{'' if traces == 1 else 's'}"] if traces or not builds else []
    if builds:
        parts.append(f"{builds} new program{'' if builds == 1 else 's'}")
    return ", ".join(parts)


def _happened(events: list[TraceEvent], kinds: frozenset[str]) -> str:
    """``2 traces happened``, ``1 new program was built``, ``1 trace happened and 2 new programs were built``."""
    traces = sum(1 for e in events if e.kind == "trace")
    builds = len(events) - traces
    parts = []
    if traces or (not builds and "trace" in kinds):
        parts.append(f"{traces} trace{'' if traces == 1 else 's'} happened")
    if builds or not parts:
        parts.append(f"{builds} new program{' was' if builds == 1 else 's were'} built")
    return " and ".join(parts)


def _first_note(events: list[TraceEvent], watch: Watch, limit: int) -> str:
    """Over budget with a first trace among the traces: the warm-up may have moved out of the run."""
    firsts = list(dict.fromkeys(e.name for e in events if e.number == 1))
    if len(events) <= limit or not firsts:
        return ""
    return (f"\n{', '.join(firsts)} traced for the first time inside {watch.where}: if another test usually "
            "calls it first (a test now deselected by -k or --lf, or run on another pytest-xdist worker), call it "
            "once before the budgeted code, or count its first trace in the budget.")


def _refused(stats: TraceStats, kind: str, number: int, record: Retrace | None, where: str) -> RetraceError:
    what = f"traced (trace #{number})" if kind == "trace" else f"given a new program (#{number}) for new static values"
    if record is None:
        return RetraceError(f"{stats.function} was {what} inside {where}, for the first time. Call it once "
                            "before the block, so that inside it every call reuses a compiled program.")
    return RetraceError(f"{stats.function} was {what} inside {where}, {_stats.explanation(record)}. Keep the "
                        "arguments' shapes, dtypes and Static values as they were before the block, or mark "
                        "Static only parameters that take few values.")


def _lost_refusal(refused: list[tuple[RetraceError, str]]) -> RetraceError:
    """The block ended without the error of a refused trace: it was caught, or its thread ended with it."""
    error, thread = refused[0]
    more = f" ({len(refused) - 1} more trace{'s' if len(refused) > 2 else ''} refused too)" if len(refused) > 1 else ""
    return RetraceError(f"{error}\nThat error was raised in thread {thread!r} and did not leave the block (caught, or "
                        f"lost with its thread){more}, so the block fails as it ends.")
