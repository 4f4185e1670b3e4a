"""Trace budgets for tests: ``no_retrace``, ``expect_traces`` and ``trace_log``.

Each block registers a listener with ``_stats`` for its duration; traces in every thread report to every active
block, so blocks nest and a trace in a worker thread during a block counts. Outside any block a trace pays one truth
test and a cache hit pays nothing.

Naming no function watches the transforms that compile a program per static key (``jit``, ``pmap``,
``shard_map``): their traces are what costs time. Naming a function watches it whatever its transform, so a
``js.vmap`` or ``js.grad`` function counts the programs it builds for new static values.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from . import _stats
from ._errors import RetraceError
from ._stats import Retrace, TraceEvent, TraceStats


class TraceLog:
    """The traces recorded by a block, in the order they ended. Iterate it, take its ``len``, or ``count(fn)``."""

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

    def __str__(self) -> str:
        if not self._events:
            return "no traces"
        return "\n".join(f"  {i}. {event}" for i, event in enumerate(self._events, 1))


class Watch:
    """One active block: which functions it watches, whether it refuses their traces, and what it saw."""

    def __init__(self, fns: tuple[Callable[..., Any], ...], where: str, refuse: bool = False) -> None:
        self.targets = frozenset(_stats_of(fn, where) for fn in fns) if fns else None
        self.where = where
        self.refuse = refuse
        self.log = TraceLog()
        self._lock = threading.Lock()

    def wants(self, stats: TraceStats, kind: str) -> bool:
        return kind == "trace" if self.targets is None else stats in self.targets

    def before(self, stats: TraceStats, kind: str, number: int, record: Retrace | None) -> None:
        if self.refuse and self.wants(stats, kind):
            raise _refused(stats, kind, number, record, self.where)

    def after(self, stats: TraceStats, event: TraceEvent) -> None:
        if self.wants(stats, event.kind):
            with self._lock:
                self.log._events.append(event)


@contextlib.contextmanager
def watching(watch: Watch) -> Iterator[TraceLog]:
    _stats.listen(watch)
    try:
        yield watch.log
    finally:
        _stats.unlisten(watch)


def no_retrace(*fns: Callable[..., Any]) -> contextlib.AbstractContextManager[None]:
    """Inside the block, tracing any of ``fns`` (any jaxstatic ``jit``, ``pmap`` or ``shard_map`` function when
    none is named) raises ``jaxstatic.RetraceError`` before the function's body runs, saying which parameter
    changed and how. Call the functions once before the block, so that it sees cache hits only::

        step(state, batch)  # compiles
        with js.testing.no_retrace(step):
            for batch in batches:
                state = step(state, batch)
    """
    return _refusing(Watch(fns, _call_text("no_retrace", fns), refuse=True))


@contextlib.contextmanager
def _refusing(watch: Watch) -> Iterator[None]:
    with watching(watch):
        yield


def expect_traces(fn: Callable[..., Any] | None = None, n: int | None = None, *,
                  at_most: int | None = None) -> contextlib.AbstractContextManager[TraceLog]:
    """On leaving the block, fail (``AssertionError``, each trace listed with its explanation) unless ``fn`` was
    traced exactly ``n`` times inside it, or at most ``at_most`` times. With ``fn=None``: traces of any jaxstatic
    ``jit``, ``pmap`` or ``shard_map`` function. The block gives the ``TraceLog`` it checks."""
    if (n is None) == (at_most is None):
        raise TypeError("expect_traces() takes one number of traces: exactly that many (n), or at most that many "
                        "(at_most=).")
    limit = n if at_most is None else at_most
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise TypeError(f"expect_traces(): the number of traces must be an int >= 0, got {limit!r}.")
    fns = () if fn is None else (fn,)
    return _expecting(Watch(fns, _call_text("expect_traces", fns)), n, at_most)


@contextlib.contextmanager
def _expecting(watch: Watch, n: int | None, at_most: int | None) -> Iterator[TraceLog]:
    with watching(watch) as log:
        yield log
    check_count(log, watch.where, n, at_most)


def check_count(log: TraceLog, where: str, n: int | None, at_most: int | None) -> None:
    """Raise ``AssertionError`` listing the traces when their number is not ``n`` / exceeds ``at_most``."""
    message = count_error(log, where, n, at_most)
    if message is not None:
        raise AssertionError(message)


def count_error(log: TraceLog, where: str, n: int | None, at_most: int | None) -> str | None:
    """What is wrong with the number of traces in ``log``, each listed with its explanation; None when right."""
    count = len(log)
    if (n is not None and count == n) or (at_most is not None and count <= at_most):
        return None
    expected = f"exactly {n}" if n is not None else f"at most {at_most}"
    traces = "trace" if count == 1 else "traces"
    listing = f":\n{log}" if count else "."
    return (f"{where} expected {expected} {_plural(n if n is not None else at_most)}, "
            f"but {count} {traces} happened{listing}")


def trace_log(*fns: Callable[..., Any]) -> contextlib.AbstractContextManager[TraceLog]:
    """Record every trace (first traces and retraces) inside the block, in any thread: function, transforms,
    number and explanation, as ``TraceEvent`` records. With no function named: any jaxstatic ``jit``, ``pmap`` or
    ``shard_map`` function; a named function is recorded whatever its transform::

        with js.testing.trace_log() as log:
            train(steps=3)
        assert [e.changes for e in log if e.retrace] == []
    """
    return watching(Watch(fns, _call_text("trace_log", fns)))


# -- helpers ---------------------------------------------------------------------------------------------------


def _stats_of(fn: Callable[..., Any], where: str) -> TraceStats:
    """The counters of a jaxstatic function (or of a method bound from one)."""
    stats = getattr(fn, "_stats", None) or getattr(getattr(fn, "func", None), "_stats", None)
    if isinstance(stats, TraceStats):
        return stats
    raise TypeError(f"{where.partition('(')[0]}() watches functions made by jaxstatic transforms (js.jit, js.pmap, "
                    f"js.vmap, js.grad, ...), but got {fn!r}, whose traces jaxstatic does not see. Wrap it with "
                    "a jaxstatic transform, or name the jaxstatic function that calls it.")


def name_of(fn: Callable[..., Any]) -> str:
    """The name a jaxstatic function is reported under (a TypeError for anything else)."""
    return _stats_of(fn, "max_traces").function


def _call_text(name: str, fns: tuple[Callable[..., Any], ...]) -> str:
    return f"{name}({', '.join(_stats_of(fn, name).function for fn in fns)})"


def _plural(n: int | None) -> str:
    return "trace" if n == 1 else "traces"


def _refused(stats: TraceStats, kind: str, number: int, record: Retrace | None, where: str) -> RetraceError:
    what = f"traced (trace #{number})" if kind == "trace" else f"given a new program (#{number}) for new static values"
    if record is None:
        return RetraceError(f"{stats.function} was {what} inside {where}, for the first time. Call it once "
                            "before the block, so that inside it every call reuses a compiled program.")
    return RetraceError(f"{stats.function} was {what} inside {where}, {_stats.explanation(record)}. Keep the "
                        "arguments' shapes, dtypes and Static values as they were before the block, or mark "
                        "Static only parameters that take few values.")
