"""Counting traces: per-function statistics, retrace records, and the process-wide report.

What a retrace is blamed on is worked out in ``_explain``; this module keeps the counts and the history.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import threading
import weakref
from typing import NamedTuple

from ._errors import RetraceError
from ._explain import Signature, blame

logger = logging.getLogger("jaxstatic")

_HISTORY = 64  # earlier signatures kept for comparison


class CacheInfo(NamedTuple):
    """Like ``functools.lru_cache``'s: hits and misses of the compiled-program cache, and programs held now."""

    hits: int
    misses: int
    maxsize: None
    currsize: int


@dataclasses.dataclass(frozen=True)
class Retrace:
    """One retrace of a function: which trace it was, and what changed, per parameter."""

    function: str
    trace_number: int
    changes: tuple[str, ...]

    def __str__(self) -> str:
        if not self.changes:
            return (f"{self.function} was traced again (trace #{self.trace_number}) with arguments equal to an "
                    "earlier trace: its compiled program had been dropped (clear_cache() or JAX's own cache).")
        return (f"{self.function} was traced again (trace #{self.trace_number}) because "
                + "; ".join(self.changes))


class TraceStats:
    """Counters of one jaxstatic-transformed function; exact under concurrent calls."""

    def __init__(self, function: str, max_traces: int | None) -> None:
        self.function = function
        self.max_traces = max_traces
        self.lock = threading.RLock()
        self.calls = itertools.count()  # next() is atomic under the GIL: the hot path takes no lock
        self.traces = 0
        self.programs = 0  # traces since the last clear_cache()
        self.retraces: list[Retrace] = []
        self._history: list[Signature] = []
        _REGISTRY.add(self)

    def record_trace(self, signature: Signature) -> None:
        """Called from inside the traced body. Raises ``RetraceError`` past ``max_traces``."""
        with self.lock:
            record = self._explain(signature) if self.traces else None
            if self.max_traces is not None and self.traces >= self.max_traces:
                raise RetraceError(
                    f"{self.function} exceeded max_traces={self.max_traces}. {str(record).rstrip('.')}. Mark the "
                    "changing parameter Static only if it takes few values, keep shapes and dtypes fixed, "
                    "or raise max_traces."
                )
            self.traces += 1
            self.programs += 1
            self._history = [*self._history[-_HISTORY + 1 :], signature]
            if record is not None:
                self.retraces.append(record)
                logger.info("%s", record)

    def _explain(self, signature: Signature) -> Retrace:
        if not self._history:  # cleared: nothing left to compare with
            return Retrace(self.function, self.traces + 1, ())
        return Retrace(self.function, self.traces + 1, tuple(blame(self._history, signature)))

    def calls_made(self) -> int:
        # itertools.count has no peek: read its repr, which is exact and takes no lock.
        return int(repr(self.calls)[6:-1])

    def cache_info(self) -> CacheInfo:
        with self.lock:
            calls = self.calls_made()
            return CacheInfo(max(calls - self.traces, 0), self.traces, None, self.programs)

    def cleared(self) -> None:
        """After ``clear_cache()``: the signatures held static values too, so they go with the programs."""
        with self.lock:
            self.programs = 0
            self._history = []


_REGISTRY: weakref.WeakSet[TraceStats] = weakref.WeakSet()


def trace_report() -> str:
    """A table of every live jaxstatic function: traces, hits, misses and the last retrace's reason."""
    rows = [("function", "traces", "hits", "misses", "last retrace")]
    for stats in sorted(_REGISTRY, key=lambda s: s.function):
        info = stats.cache_info()
        last = "; ".join(stats.retraces[-1].changes) if stats.retraces else "-"
        rows.append((stats.function, str(stats.traces), str(info.hits), str(info.misses), last or "(dropped)"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4] for r in rows]
    return "\n".join(lines)
