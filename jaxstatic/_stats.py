"""Counting and explaining traces: per-function statistics, retrace records, and the process-wide report.

A trace's *signature* maps each parameter to what the compiled program depends on: the frozen key of a static
value, or the shapes, dtypes and pytree structure of a dynamic one. A retrace is explained by comparing its signature
with the most similar earlier one, parameter by parameter, so the blame lands on the parameter that changed.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import threading
import weakref
from collections.abc import Mapping
from typing import Any, NamedTuple

import jax

from . import _freeze
from ._errors import RetraceError

logger = logging.getLogger("jaxstatic")

_HISTORY = 64  # earlier signatures kept for comparison


class CacheInfo(NamedTuple):
    """Like ``functools.lru_cache``'s: hits and misses of the compiled-program cache, and programs held now."""

    hits: int
    misses: int
    maxsize: None
    currsize: int


@dataclasses.dataclass(frozen=True)
class DynamicSig:
    """What a dynamic argument contributes to a compiled program: its pytree structure and leaf types."""

    treedef: Any
    leaves: tuple[tuple[str, str], ...]  # (path inside the argument, "float32[3]")


@dataclasses.dataclass(frozen=True)
class StaticSig:
    key: Any


Signature = Mapping[str, "DynamicSig | StaticSig"]


def aval_str(leaf: Any) -> str:
    """``float32[3]``, with ``(weak type)`` for Python scalars: what a dynamic leaf compiles for."""
    aval = getattr(leaf, "aval", leaf)
    if not hasattr(aval, "dtype"):
        return type(leaf).__name__
    text = _freeze.shaped(aval)
    return text + " (weak type)" if getattr(aval, "weak_type", False) else text


def dynamic_sig(value: Any) -> DynamicSig:
    leaves, treedef = jax.tree_util.tree_flatten_with_path(value)
    return DynamicSig(treedef, tuple((jax.tree_util.keystr(p), aval_str(x)) for p, x in leaves))


def _diff_param(label: str, old: DynamicSig | StaticSig, new: DynamicSig | StaticSig) -> list[str]:
    if isinstance(old, StaticSig) and isinstance(new, StaticSig):
        return _freeze.diff(label, old.key, new.key)
    if isinstance(old, DynamicSig) and isinstance(new, DynamicSig):
        if old.treedef != new.treedef:
            return [f"{label}: pytree structure {old.treedef} -> {new.treedef}"]
        return [f"{label}{p}: {a} -> {b}" for (p, a), (_, b) in zip(old.leaves, new.leaves) if a != b]
    return [f"{label}: static/dynamic split changed"]


def explain(old: Signature, new: Signature) -> list[str]:
    """Per-parameter differences between two signatures."""
    out: list[str] = []
    for label in new:
        if label not in old:
            out.append(f"{label}: now given (was absent)")
        elif old[label] != new[label]:
            out.extend(_diff_param(label, old[label], new[label]) or [f"{label}: changed"])
    out.extend(f"{label}: now absent (was given)" for label in old if label not in new)
    return out


def _distance(changes: list[str]) -> int:
    """How far apart two traces are: a changed pytree structure counts more than a changed leaf."""
    return sum(2 if " pytree structure " in c else 1 for c in changes)


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
        diffs = [explain(old, signature) for old in reversed(self._history)]
        best = min(diffs, key=_distance)  # the most similar earlier trace; the latest among equals
        return Retrace(self.function, self.traces + 1, tuple(best))

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
