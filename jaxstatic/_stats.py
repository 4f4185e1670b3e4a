"""Counting traces: per-function statistics, retrace records, and the process-wide report.

What a retrace is blamed on is worked out in ``_explain``; this module keeps the counts and the history.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import itertools
import logging
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

from . import _extension
from ._errors import retrace_limit_error
from ._explain import Signature, blame
from ._keys import Hashed

if TYPE_CHECKING:
    from ._options import Options

logger = logging.getLogger("jaxstatic")

_HISTORY = 64  # earlier signatures kept for comparison
_RECORDS = 1024  # retrace records kept (the newest)


class CacheInfo(NamedTuple):
    """Like ``functools.lru_cache``'s: hits and misses of the compiled-program cache, its bound (in static keys),
    the static keys whose programs are held now (a key's program holds one compilation per argument shape and
    dtype, as a ``jax.jit`` does), and how many keys were evicted to respect the bound."""

    hits: int
    misses: int
    maxsize: int | None
    currsize: int
    evictions: int = 0


DROPPED = "its compiled program had been dropped (clear_cache() or JAX's own cache)"
CLEARED = "clear_cache() released the earlier programs"
CHANGED = "the arguments differ from every earlier trace's, as changes lists"


@dataclasses.dataclass(frozen=True)
class Retrace:
    """One retrace of a function: which trace it was, and what changed, per parameter (descriptions only: a record
    keeps no user value alive)."""

    function: str
    """The function, by name."""
    trace_number: int
    """Which trace of the function this was (2 for its first retrace)."""
    changes: tuple[str, ...]
    """What changed since the most similar earlier trace, one entry per path (``"cfg['lr']: 0.1 -> 0.2"``)."""
    reason: str = DROPPED
    """Why no earlier program was reused: ``CHANGED`` when ``changes`` says what changed; otherwise the reason
    found, with arguments equal to an earlier trace's."""
    made_again: str = ""
    """For the first trace of a function made again (a closure of the same code) that could not share the programs
    of the one made before it: why, and the fix; ``changes`` says what it closes over differently."""

    def __str__(self) -> str:
        if self.made_again:
            return (f"{self.function} was traced anew (trace #{self.trace_number} of a function made again) because "
                    + "; ".join(self.changes) + f". {self.made_again}.")
        if self.reason == CLEARED:
            return (f"{self.function} was traced again (trace #{self.trace_number}) after clear_cache(), which "
                    "released the earlier programs and the values they were traced with: nothing is left to "
                    "compare this call with.")
        if not self.changes:
            return (f"{self.function} was traced again (trace #{self.trace_number}) with arguments equal to an "
                    f"earlier trace: {self.reason}.")
        return (f"{self.function} was traced again (trace #{self.trace_number}) because "
                + "; ".join(self.changes))


@dataclasses.dataclass(frozen=True)
class TraceEvent:
    """One trace seen by ``jaxstatic.testing``: which function, under which transforms, its number, and why.

    ``kind`` is ``"trace"`` for the transforms that compile one program per static key (``jit``, ``pmap``,
    ``shard_map``), and ``"build"`` for those that leave compiling to a jit around them (``vmap``, ``grad``,
    ``checkpoint``, ``custom_jvp``, ``custom_vjp``): a new program of theirs for new static values.
    """

    function: str
    transforms: tuple[str, ...]  # outermost first: ("jit", "vmap") for js.jit(js.vmap(f))
    number: int  # this function's trace (or build) number: 1 for its first
    explanation: str
    kind: Literal["trace", "build"] = "trace"
    changes: tuple[str, ...] = ()  # per parameter that changed: "n: 2 -> 3"; empty for a first trace
    thread: str = ""
    source: weakref.ref[TraceStats] | None = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def retrace(self) -> bool:
        return self.number > 1

    @property
    def name(self) -> str:
        """``jit(vmap(f))``: the function inside the transforms applied to it."""
        return "(".join((*self.transforms, self.function)) + ")" * len(self.transforms)

    def __str__(self) -> str:
        what = "trace" if self.kind == "trace" else "program"
        if self.explanation == FIRST:
            return f"{self.name}: {what} #{self.number} ({FIRST})"
        return f"{self.name}: {what} #{self.number}, {self.explanation}"


FIRST = "the first"


def explanation(record: Retrace | None) -> str:
    """``because n: 2 -> 3``, or the reason nothing seen changed, or ``the first``."""
    if record is None:
        return FIRST
    return "because " + ("; ".join(record.changes) or record.reason)


class Listener(Protocol):
    """A ``jaxstatic.testing`` block: told before a trace runs (and may refuse it by raising) and after it ends."""

    def before(self, stats: TraceStats, kind: str, number: int, record: Retrace | None) -> None: ...

    def after(self, stats: TraceStats, event: TraceEvent) -> None: ...


# The active testing blocks, replaced whole (never mutated) so a trace reads it without a lock. Read only when a
# trace begins or ends, never on a cache hit: with no block active a trace pays one truth test.
_LISTENERS: tuple[Listener, ...] = ()
_LISTENERS_LOCK = threading.Lock()


def listen(listener: Listener) -> None:
    global _LISTENERS
    with _LISTENERS_LOCK:
        _LISTENERS = (*_LISTENERS, listener)


def unlisten(listener: Listener) -> None:
    global _LISTENERS
    with _LISTENERS_LOCK:
        _LISTENERS = tuple(x for x in _LISTENERS if x is not listener)


class TraceStats:
    """Counters of one jaxstatic-transformed function; exact under concurrent calls.

    A trace is counted when its body returns: a trace that raises (in the user's code, or refused by
    ``max_traces``) leaves no count, no history and no retrace record behind, and its call is counted as failed,
    not as a hit.
    """

    def __init__(self, options: Options, label: str | None = None) -> None:
        # The function's record of options (``_options.Options``), read by attribute where counting needs one
        # (``max_traces`` at a trace, ``cache_size`` at an insert): an option that changes counting reaches the
        # statistics through the record alone. Never read on a cache hit.
        self.options = options
        self.function = options.function
        self.label = label or options.function  # the report's name: the transform stack, jit(grad(loss))
        # Held for bookkeeping only, never while tracing or compiling; reentrant, as signatures are compared under
        # it (a static value's own __eq__ may call the function again).
        self.lock = threading.RLock()
        self.calls = _extension.counter()  # next() is atomic under the GIL: the hot path takes no lock
        self.failures = itertools.count()
        self.eager = itertools.count()  # calls run as plain Python under jax.disable_jit(): neither hit nor miss
        self.traces = 0
        self.builds = 0  # programs built by a transform that leaves counting traces to a jit (vmap, grad)
        self.running = 0  # traces begun and not yet ended (nested or concurrent)
        self.evictions = 0
        self.currsize: Callable[[], int] = lambda: 0
        self.retraces: collections.deque[Retrace] = collections.deque(maxlen=_RECORDS)
        self._history: list[Signature] = []
        self._cleared = False  # clear_cache() emptied the history: the next retrace is explained by that
        self.transforms: tuple[str, ...] = ()  # set by the transform: ("jit", "vmap") for js.jit(js.vmap(f))
        self.site = ""  # set by the transform: where the function was defined (site_of), as reports tell it apart
        # set by ``_shared`` for a closure made again that could not share the programs of the one made before it:
        # what differs and the fix, told at its first trace
        self.made_again: tuple[tuple[str, ...], str] | None = None
        # static values a body changed in place, by parameter: (key before, key after, the trace that changed it)
        self._by_body: dict[str, tuple[Any, Any, int]] = {}
        _REGISTRY.add(self)

    def begin_trace(self, signature: Signature, reason: str = DROPPED) -> Retrace | None:
        """Called from inside the traced body, before the user's code. Raises ``RetraceError`` past ``max_traces``;
        returns the retrace record to ``end_trace`` once the body has returned."""
        with self.lock:
            record = self._explain(signature, reason) if self.traces + self.running else self._first()
            limit = self.options.max_traces
            if limit is not None and self.traces + self.running >= limit:
                why = None if record is None else "; ".join(record.changes) or record.reason
                raise retrace_limit_error(self.function, limit, self.traces + self.running + 1, why)
            # a function made again traces for the first time, whatever its record says (no_retrace refuses the trace
            # here, before the user's code runs)
            told = None if record is not None and record.made_again else record
            for listener in _LISTENERS:
                listener.before(self, "trace", self.traces + self.running + 1, told)
            self.running += 1
            return record

    def tracing(self, signature: Signature, reason: str = DROPPED) -> Tracing:
        """``with stats.tracing(signature, reason): out = fn(...)``: one trace counted around the user's code
        (``begin_trace`` on entry, ``end_trace`` on exit, counted when no exception left it). Written in the traced
        body itself: a ``with`` adds no frame between a call and the function it traces (why that counts:
        ``_miss.Miss``)."""
        return Tracing(self, signature, reason)

    def end_trace(self, signature: Signature, record: Retrace | None, ok: bool) -> None:
        with self.lock:
            self.running -= 1
            if not ok:
                return
            self.traces += 1
            number = self.traces
            self._history = [*self._history[-_HISTORY + 1 :], signature]
            if record is not None:
                record = dataclasses.replace(record, trace_number=self.traces)
                self.retraces.append(record)
        if record is not None:
            logger.info("%s", record)
        if _LISTENERS:
            self._announce("trace", number, record)

    # Transforms that leave compiling to a jit (vmap, grad) count programs built, one per new static key; their
    # history holds the static values only, to say which one changed.

    def run_eagerly(self, call: Callable[..., Any], args: Any, kwargs: Any) -> Any:
        """A call run as plain Python under ``jax.disable_jit()``: counted as such once it returns, never as a hit."""
        out = call(*args, **kwargs)
        next(self.eager)
        return out

    def begin_build(self, signature: Signature) -> Retrace | None:
        """Before building a program for a new static key; a testing block may refuse it by raising."""
        with self.lock:
            # Only a testing block reads a build's explanation: none is made without one.
            record = self._explain(signature, DROPPED, self.builds + 1) if self.builds and _LISTENERS else None
            for listener in _LISTENERS:
                listener.before(self, "build", self.builds + 1, record)
            return record

    def end_build(self, signature: Signature, record: Retrace | None) -> None:
        with self.lock:
            self.builds += 1
            number = self.builds
            self._history = [*self._history[-_HISTORY + 1 :], signature]
        if _LISTENERS:
            self._announce("build", number, record)

    def _announce(self, kind: Literal["trace", "build"], number: int, record: Retrace | None) -> None:
        changes = () if record is None else record.changes
        event = TraceEvent(self.function, self.transforms, number, explanation(record), kind, changes,
                           threading.current_thread().name, weakref.ref(self))
        for listener in _LISTENERS:
            listener.after(self, event)

    def _explain(self, signature: Signature, reason: str, number: int | None = None) -> Retrace:
        number = self.traces + 1 if number is None else number
        if not self._history:  # cleared (or the first trace still running): nothing left to compare with
            return Retrace(self.function, number, (), CLEARED if self._cleared else DROPPED)
        changes = tuple(blame(self._history, signature))
        if self._by_body:
            changes = self._on_body(signature, changes)
        return Retrace(self.function, number, changes, CHANGED if changes else reason)

    def changed_by_body(self, name: str, before: Any, after: Any) -> None:
        """The body of trace ``self.traces`` changed its static value ``name`` in place: told now (a warning of the
        ``jaxstatic`` logger), and the retrace that the changed value causes is put on the body."""
        with self.lock:
            number = self.traces
            self._by_body[name] = (before, after, number)
        logger.warning("%s", "; ".join(self._body_changes(name, before, after, number)))

    def _body_changes(self, name: str, before: Any, after: Any, number: int) -> list[str]:
        from ._explain import diff

        fix = (f"{self.function}'s own body changed its Static parameter {name!r} in place while trace #{number} "
               f"ran, so the caller's value no longer matches the key of the program made for it; copy it before "
               f"changing it ({name} = dict({name}), or copy.copy)")
        return [f"{line} by the body, not the caller ({fix})" for line in diff(name, before, after)]

    def _on_body(self, signature: Signature, changes: tuple[str, ...]) -> tuple[str, ...]:
        """``changes``, with those of a static value the body changed (``changed_by_body``) put on the body."""
        out = list(changes)
        for name, (before, after, number) in self._by_body.items():
            new = getattr(signature.get(name), "key", None)
            if (new.key if type(new) is Hashed else new) == after:
                out = [c for c in out if not (c.startswith(name + "[") or c.startswith(name + ":")
                                              or c.startswith(name + "."))]
                out.extend(self._body_changes(name, before, after, number))
        return tuple(out)

    def _first(self) -> Retrace | None:
        """The first trace's record: a closure made again that shares nothing with the one made before it."""
        if self.made_again is None or self._cleared:
            return None
        changes, why = self.made_again
        return Retrace(self.function, 1, changes, CHANGED, why)

    def cache_info(self) -> CacheInfo:
        # itertools.count has no peek: read its repr (the extension's Counter reads the same), exact and lock-free.
        calls, failures = int(repr(self.calls)[6:-1]), int(repr(self.failures)[6:-1])
        eager = int(repr(self.eager)[6:-1])
        with self.lock:
            misses = self.traces + self.builds
            return CacheInfo(max(calls - failures - eager - misses, 0), misses, self.options.cache_size,
                             self.currsize(), self.evictions)

    def cleared(self) -> list[Signature]:
        """After ``clear_cache()``: the signatures held static values too, so they go with the programs (returned,
        for the caller to let go of outside its locks: a value's finalizer may call the function)."""
        with self.lock:
            history, self._history = self._history, []
            self._cleared = True
            return history


class Tracing:
    """One trace in progress (``TraceStats.tracing``): its signature, and the retrace record ``begin_trace`` made."""

    __slots__ = ("reason", "record", "signature", "stats")

    def __init__(self, stats: TraceStats, signature: Signature, reason: str) -> None:
        self.stats, self.signature, self.reason = stats, signature, reason
        self.record: Retrace | None = None

    def __enter__(self) -> None:
        self.record = self.stats.begin_trace(self.signature, self.reason)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: object) -> None:
        self.stats.end_trace(self.signature, self.record, kind is None)


def site_of(fn: Callable[..., object]) -> str:
    """``tests.test_train:12``: the module and first line of the function inside every ``functools.wraps`` layer,
    which tells apart two functions of the same name (and is the same in every process, pytest-xdist workers
    included). Read once, when the function is transformed."""
    for _ in range(64):  # a __wrapped__ cycle cannot hang a transform
        inner = fn.func if isinstance(fn, functools.partial) else getattr(fn, "__wrapped__", None)
        if inner is None:
            break
        fn = inner
    code = getattr(fn, "__code__", None) or getattr(type(fn).__dict__.get("__call__"), "__code__", None)
    module = getattr(fn, "__module__", None) or type(fn).__module__
    return f"{module}:{code.co_firstlineno}" if code is not None else str(module)


_REGISTRY: weakref.WeakSet[TraceStats] = weakref.WeakSet()


def trace_report() -> str:
    """A table of every live jaxstatic function, named by its transform stack (``jit(grad(loss))``): traces,
    hits, misses and the last retrace's reason. A transform that leaves compiling to a jit (``vmap``, ``grad``)
    counts the programs it built as its traces, each one a miss."""
    rows = [("function", "traces", "hits", "misses", "last retrace")]
    for stats in sorted(_REGISTRY, key=lambda s: s.label):
        info = stats.cache_info()
        last = "; ".join(stats.retraces[-1].changes) if stats.retraces else "-"
        traces = stats.traces + stats.builds
        rows.append((stats.label, str(traces), str(info.hits), str(info.misses), last or "(dropped)"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4] for r in rows]
    return "\n".join(lines)
