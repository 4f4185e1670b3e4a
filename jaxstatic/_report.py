"""The session-wide trace report of the pytest plugin: every trace of the run, by function and by test.

A recorder is a ``_stats`` listener for the whole session. It keeps counts and reasons, never the functions: a
function defined inside a test (and the programs it compiled) is freed when the test ends, as without the plugin.
A row is one function definition, told apart from others of the same name by its module and line: the objects it
made (one defined in a parametrized test, the copy each pytest-xdist worker imports) add up there, and the limit of
``--jaxstatic-max-retraces`` checks those totals, as printed. Retraces are counted per function object, since a new
object's first trace is no retrace.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import threading
import weakref
from typing import Any

from . import _stats
from ._stats import Retrace, TraceEvent, TraceStats

OUTSIDE = "(outside any test)"
_ROWS = 25  # functions shown in the terminal table; the JSON report has all
_REASON_WIDTH = 100  # the table clips a long explanation; the JSON report has it whole


@dataclasses.dataclass
class Row:
    """One function's traces during the session: every object made by one definition (its copy in each
    pytest-xdist worker, a function defined anew in each test) adds up here."""

    name: str
    site: str = ""  # where it was defined: module and line (TraceStats.site)
    traces: int = 0
    retraces: int = 0
    hits: int = 0
    reasons: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    example: dict[str, str] = dataclasses.field(default_factory=dict)  # the latest explanation of each reason

    def add(self, other: Row) -> None:
        self.traces += other.traces
        self.retraces += other.retraces
        self.hits += other.hits
        self.reasons.update(other.reasons)
        self.example.update(other.example)


class _Seen:
    """A live function object: its row, and the hits already added to it."""

    __slots__ = ("hits", "row")

    def __init__(self, row: Row) -> None:
        self.row, self.hits = row, 0


class Recorder:
    """Counts every trace of the compiling transforms (jit, pmap, shard_map) while the session runs."""

    def __init__(self) -> None:
        self.test: str | None = None  # the test running now: traces in any thread are charged to it
        self.rows: dict[tuple[str, str], Row] = {}  # by name and site: what the report prints and the limit checks
        self.per_test: collections.Counter[str] = collections.Counter()
        self._live: weakref.WeakKeyDictionary[TraceStats, _Seen] = weakref.WeakKeyDictionary()
        self._recent: weakref.WeakSet[TraceStats] = weakref.WeakSet()  # traced since the last refresh(recent=True)
        self._lock = threading.Lock()

    def start(self) -> None:
        _stats.listen(self)

    def stop(self) -> None:
        self.refresh()
        _stats.unlisten(self)

    def before(self, stats: TraceStats, kind: str, number: int, record: Retrace | None) -> None:
        pass

    def after(self, stats: TraceStats, event: TraceEvent) -> None:
        if event.kind != "trace":
            return
        with self._lock:
            seen = self._live.get(stats)
            if seen is None:
                seen = self._live[stats] = _Seen(self._row(event.name, stats.site))
            row = seen.row
            row.traces += 1
            self._recent.add(stats)
            self.per_test[self.test or OUTSIDE] += 1
            if event.retrace:  # per function object: a new object's first trace is no retrace
                row.retraces += 1
                reason = _reason(event)
                row.reasons[reason] += 1
                row.example[reason] = "; ".join(event.changes)

    def _row(self, name: str, site: str) -> Row:
        row = self.rows.get((name, site))
        if row is None:
            row = self.rows[name, site] = Row(name, site)
        return row

    def refresh(self, recent: bool = False) -> None:
        """Read the hits of the functions still alive (those freed keep their last count). After each test, only
        those it traced: a function defined in a test is freed with it, one defined at module level lives on."""
        with self._lock:
            live = [(stats, self._live[stats]) for stats in self._recent] if recent else list(self._live.items())
            self._recent = weakref.WeakSet()
        for stats, seen in live:
            hits = stats.cache_info().hits
            with self._lock:
                seen.row.hits += hits - seen.hits
                seen.hits = hits

    def export(self) -> dict[str, Any]:
        """What a pytest-xdist worker hands the controller (plain data, as execnet sends it)."""
        self.refresh()
        rows = [{**dataclasses.asdict(row), "reasons": dict(row.reasons)} for row in self.rows.values()]
        return {"rows": rows, "per_test": dict(self.per_test)}

    def absorb(self, data: dict[str, Any]) -> None:
        """Add a worker's records to the rows of the same functions (by name and site): the report's totals are
        what the limit checks, however the tests were spread."""
        with self._lock:
            for row in data["rows"]:
                worker = Row(**{**row, "reasons": collections.Counter(row["reasons"])})
                self._row(worker.name, worker.site).add(worker)
            self.per_test.update(data["per_test"])

    # -- what the session shows ------------------------------------------------------------------------------

    def functions(self) -> list[dict[str, Any]]:
        """One entry per function (name and site), most traced first."""
        return [{"function": row.name, "defined_at": row.site, "traces": row.traces, "hits": row.hits,
                 "retraces": row.retraces, "most_common_retrace_reason": _top_reason(row),
                 "retrace_reasons": dict(row.reasons)}
                for row in sorted(self.rows.values(), key=lambda r: (-r.traces, r.name, r.site))]

    def tests(self) -> list[dict[str, Any]]:
        return [{"test": t, "traces": n} for t, n in self.per_test.most_common()]

    def table(self) -> str:
        functions = self.functions()
        if not functions:
            return "no jaxstatic jit, pmap or shard_map function traced during the run"
        head = ("function", "defined at", "traces", "hits", "retraces", "most common retrace reason")
        rows: list[tuple[str, ...]] = [head, *((str(f["function"]), str(f["defined_at"]), str(f["traces"]),
                                                str(f["hits"]), str(f["retraces"]),
                                                _clip(f["most_common_retrace_reason"] or "-"))
                                               for f in functions[:_ROWS])]
        lines = _columns(rows)
        if len(functions) > _ROWS:
            lines.append(f"... and {len(functions) - _ROWS} more functions (--jaxstatic-report=json:PATH lists all)")
        tests = self.tests()
        lines += ["", "traces per test:", *_columns([(str(t["traces"]), str(t["test"])) for t in tests[:_ROWS]])]
        if len(tests) > _ROWS:
            lines.append(f"... and {len(tests) - _ROWS} more tests that traced")
        return "\n".join(lines)

    def over(self, limit: int) -> list[Row]:
        return sorted((row for row in self.rows.values() if row.retraces > limit), key=lambda r: -r.retraces)

    def offenders(self, limit: int) -> str:
        return "\n".join(f"{row.name} ({row.site}) retraced {row.retraces} times (allowed: {limit}); most often: "
                         f"{_top_reason(row)}" for row in self.over(limit))

    def write_json(self, path: str, limit: int | None) -> None:
        data: dict[str, Any] = {"functions": self.functions(), "tests": self.tests()}
        if limit is not None:
            data["max_retraces"] = limit
            data["over_max_retraces"] = [{"function": r.name, "defined_at": r.site, "retraces": r.retraces}
                                         for r in self.over(limit)]
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as file:
            json.dump(data, file, indent=2)


def _reason(event: TraceEvent) -> str:
    """What a retrace is grouped under: the parameters that changed (``n``, ``cfg['lr']``), or why nothing did."""
    if not event.changes:
        return event.explanation.removeprefix("because ")
    return ", ".join(dict.fromkeys(change.partition(": ")[0] for change in event.changes)) + " changed"


def _top_reason(row: Row) -> str:
    """``n changed (3 of 5 retraces), e.g. n: 2 -> 3``; empty without retraces."""
    if not row.reasons:
        return ""
    reason, count = row.reasons.most_common(1)[0]
    example = row.example[reason]
    retraces = "retrace" if row.retraces == 1 else "retraces"
    return f"{reason} ({count} of {row.retraces} {retraces})" + (f", e.g. {example}" if example else "")


def _clip(text: str, width: int = _REASON_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _columns(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return ["  ".join([*(c.ljust(w) for c, w in zip(r, widths)), r[-1]]) for r in rows]
