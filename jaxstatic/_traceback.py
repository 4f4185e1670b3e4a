"""jaxstatic's frames in tracebacks: hidden as JAX hides its own, shown with ``JAX_TRACEBACK_FILTERING=off``.

A failure inside a transformed body would otherwise show the dispatcher, the miss path and the traced body between
the user's call and the user's failing line. jaxstatic's package directory and its generated code (compiled under
``GENERATED``, a path prefix of its own) are registered with JAX's traceback filter, as Equinox and Flax register
theirs, so JAX's own boundary drops them below it; ``hide`` drops those above it, called by the outermost
jaxstatic frame of a call (the dispatcher a user calls) on its way out. ``hide`` follows JAX's mode: nothing is
removed when filtering is ``off``, frames are marked ``__tracebackhide__`` in ``tracebackhide`` mode.

This leans on JAX's private ``jax._src.traceback_util`` (and ``source_info_util``, which attributes operations to
the user's lines). Should a JAX release drop them, importing jaxstatic still works and tracebacks stay complete.

On Python 3.10 a bare ``raise`` re-raises the traceback as it was caught, so ``hide`` drops nothing there: the frames
above JAX's boundary stay (JAX still drops those below it).

Cost: nothing on calls that succeed (a ``try`` costs nothing on Python 3.11+); one walk of the traceback when a
call raises.
"""

from __future__ import annotations

import linecache
import os
import types
import weakref
from collections.abc import Callable

GENERATED = "<jaxstatic>"
"""The file-name prefix of generated code: ``<jaxstatic>/dispatch of f(2 positional) #0``. A directory of its own,
since JAX matches excluded paths by whole path components."""

_filter: Callable[[types.TracebackType], types.TracebackType | None] | None = None
_mode: Callable[[], str] | None = None
_mark: Callable[[types.TracebackType | None], None] | None = None


def _register() -> None:
    global _filter, _mode, _mark
    try:
        from jax._src import source_info_util, traceback_util
    except ImportError:
        return
    package = os.path.dirname(os.path.abspath(__file__))
    for module in (traceback_util, source_info_util):
        register = getattr(module, "register_exclusion", None)
        if register is None:
            continue
        for path in (package, GENERATED):
            try:
                register(path)
            except Exception:  # a changed private API: keep tracebacks whole rather than fail the import
                continue
    _filter = getattr(traceback_util, "filter_traceback", None)
    _mode = getattr(traceback_util, "_filtering_mode", None)
    _mark = getattr(traceback_util, "_add_tracebackhide_to_hidden_frames", None)


_register()


def hide(err: BaseException) -> None:
    """Drop jaxstatic's (and JAX's) frames from ``err``'s traceback, as JAX's mode says; the caller re-raises with
    a bare ``raise``, which adds no frame of its own."""
    if _filter is None or _mode is None or err.__traceback__ is None:
        return
    try:
        mode = _mode()
        if mode == "tracebackhide":
            if _mark is not None:
                _mark(err.__traceback__)
        elif mode != "off":
            err.with_traceback(_filter(err.__traceback__))
    except Exception:  # never let the filter replace the user's error with one of its own
        return


def forget_with(owner: object, filename: str) -> None:  # a name used once: jaxstatic dataclasses' __init__
    """Drop the ``linecache`` entry of generated code once ``owner`` (a function compiled from it) is collected."""
    weakref.finalize(owner, linecache.cache.pop, filename, None).atexit = False


__all__ = ["GENERATED", "forget_with", "hide"]
