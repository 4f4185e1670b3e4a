"""Counting traces: per-function statistics, retrace records, and the process-wide report.

What a retrace is blamed on is worked out in ``_explain``; this module keeps the counts and the history.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import logging
import threading
import weakref
from collections.abc import Callable
from typing import NamedTuple

from ._errors import retrace_limit_error
from ._explain import Signature, blame

logger = logging.getLogger("jaxstatic")

_HISTORY = 64  # earlier signatures kept for comparison
_RECORDS = 1024  # retrace records kept (the newest)


class CacheInfo(NamedTuple):
    """Like ``functools.lru_cache``'s: hits and misses of the compiled-program cache, its bound, programs held now,
    and how many were evicted to respect the bound."""

    hits: int
    misses: int
    maxsize: int | None
    currsize: int
    evictions: int = 0


DROPPED = "its compiled program had been dropped (clear_cache() or JAX's own cache)"


@dataclasses.dataclass(frozen=True)
class Retrace:
    """One retrace of a function: which trace it was, and what changed, per parameter (descriptions only: a record
    keeps no user value alive)."""

    function: str
    trace_number: int
    changes: tuple[str, ...]
    reason: str = DROPPED  # when nothing changed: why the earlier program was not reused

    def __str__(self) -> str:
        if not self.changes:
            return (f"{self.function} was traced again (trace #{self.trace_number}) with arguments equal to an "
                    f"earlier trace: {self.reason}.")
        return (f"{self.function} was traced again (trace #{self.trace_number}) because "
                + "; ".join(self.changes))


class TraceStats:
    """Counters of one jaxstatic-transformed function; exact under concurrent calls.

    A trace is counted when its body returns: a trace that raises (in the user's code, or refused by
    ``max_traces``) leaves no count, no history and no retrace record behind, and its call is counted as failed,
    not as a hit.
    """

    def __init__(self, function: str, max_traces: int | None, maxsize: int | None = None,
                 label: str | None = None) -> None:
        self.function = function
        self.label = label or function  # the report's name: the transform stack, jit(grad(loss))
        self.max_traces = max_traces
        self.maxsize = maxsize
        self.lock = threading.Lock()  # held for bookkeeping only, never while tracing or compiling
        self.calls = itertools.count()  # next() is atomic under the GIL: the hot path takes no lock
        self.failures = itertools.count()
        self.traces = 0
        self.builds = 0  # programs built by a transform that leaves counting traces to a jit (vmap, grad)
        self.running = 0  # traces begun and not yet ended (nested or concurrent)
        self.evictions = 0
        self.currsize: Callable[[], int] = lambda: 0
        self.retraces: collections.deque[Retrace] = collections.deque(maxlen=_RECORDS)
        self._history: list[Signature] = []
        _REGISTRY.add(self)

    def begin_trace(self, signature: Signature, reason: str = DROPPED) -> Retrace | None:
        """Called from inside the traced body, before the user's code. Raises ``RetraceError`` past ``max_traces``;
        returns the retrace record to ``end_trace`` once the body has returned."""
        with self.lock:
            record = self._explain(signature, reason) if self.traces + self.running else None
            if self.max_traces is not None and self.traces + self.running >= self.max_traces:
                why = None if record is None else "; ".join(record.changes) or record.reason
                raise retrace_limit_error(self.function, self.max_traces, self.traces + self.running + 1, why)
            self.running += 1
            return record

    def end_trace(self, signature: Signature, record: Retrace | None, ok: bool) -> None:
        with self.lock:
            self.running -= 1
            if not ok:
                return
            self.traces += 1
            self._history = [*self._history[-_HISTORY + 1 :], signature]
            if record is not None:
                record = dataclasses.replace(record, trace_number=self.traces)
                self.retraces.append(record)
        if record is not None:
            logger.info("%s", record)

    def _explain(self, signature: Signature, reason: str) -> Retrace:
        number = self.traces + 1
        if not self._history:  # cleared: nothing left to compare with
            return Retrace(self.function, number, (), DROPPED)
        return Retrace(self.function, number, tuple(blame(self._history, signature)), reason)

    def cache_info(self) -> CacheInfo:
        # itertools.count has no peek: read its repr, which is exact and takes no lock.
        calls, failures = int(repr(self.calls)[6:-1]), int(repr(self.failures)[6:-1])
        with self.lock:
            misses = self.traces + self.builds
            return CacheInfo(max(calls - failures - misses, 0), misses, self.maxsize, self.currsize(), self.evictions)

    def cleared(self) -> None:
        """After ``clear_cache()``: the signatures held static values too, so they go with the programs."""
        with self.lock:
            self._history = []


_REGISTRY: weakref.WeakSet[TraceStats] = weakref.WeakSet()


def trace_report() -> str:
    """A table of every live jaxstatic function, named by its transform stack (``jit(grad(loss))``): traces,
    hits, misses and the last retrace's reason."""
    rows = [("function", "traces", "hits", "misses", "last retrace")]
    for stats in sorted(_REGISTRY, key=lambda s: s.label):
        info = stats.cache_info()
        last = "; ".join(stats.retraces[-1].changes) if stats.retraces else "-"
        rows.append((stats.label, str(stats.traces), str(info.hits), str(info.misses), last or "(dropped)"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4] for r in rows]
    return "\n".join(lines)
