"""The mypy versions the plugin supports, and one spelling for each internal whose shape changed among them.

The plugin reads mypy's checker state (throw-away type maps, binder frames, error filters), which mypy does not
promise to keep stable. Each difference between the supported versions is bridged here, and only here, so the
checks read the same on every version. The range is the one the tests run on: a mypy outside it is refused at
start-up with the range and the fix, rather than failing somewhere inside a check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Final, cast

from mypy.errors import CompileError
from mypy.version import __version__

if TYPE_CHECKING:  # only annotations: importing this module must work on any mypy, to refuse it cleanly
    from mypy.binder import ConditionalTypeBinder
    from mypy.checker import TypeChecker
    from mypy.errors import ErrorWatcher
    from mypy.nodes import Expression
    from mypy.types import Type

OLDEST: Final = (1, 15)
"""The oldest mypy supported (inclusive)."""
BEYOND: Final = (2, 5)
"""The first mypy release not supported: its internals are untested."""
SUPPORTED: Final = f">={OLDEST[0]}.{OLDEST[1]},<{BEYOND[0]}.{BEYOND[1]}"
"""The range as pip spells it (pyproject's ``mypy`` extra carries the same)."""


def release(version: str) -> tuple[int, int]:
    """``(major, minor)`` of a mypy version string (``"1.15.0"``, ``"1.19.0+dev.abc"``)."""
    parts = version.split("+", 1)[0].split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return (0, 0)


def refuse_unsupported(version: str) -> None:
    """Stop mypy with one clear message when ``version`` is outside the supported range.

    ``CompileError`` is how mypy itself stops on bad configuration: it prints the message and exits with status 2,
    no traceback.
    """
    if OLDEST <= release(version) < BEYOND:
        return
    raise CompileError(
        [
            f"jaxstatic_mypy supports mypy {SUPPORTED}, but this is mypy {version}. "
            f"Install a supported mypy with: pip install 'mypy{SUPPORTED}'"
        ]
    )


_RUNNING: Final = release(__version__)
# mypy 1.18 made the throw-away type map an attribute (a context manager) instead of a method returning one.
_TYPE_MAP_IS_METHOD: Final = _RUNNING < (1, 18)
# mypy 1.20 gave binder frames ``discard=True``; before, a frame's narrowing always merged into its parent.
_FRAME_DISCARD: Final = _RUNNING >= (1, 20)
# mypy 1.20 marked the filter of overload matching with ``filter_revealed_type=True``.
_MARKED_OVERLOAD_FILTER: Final = _RUNNING >= (1, 20)

# mypy 1.18 keeps ``extra_attrs`` in the cache for an instance of a class without type arguments; before, the
# cache dropped them (a jitted function's static parameters, ``_plain_jit``).
EXTRA_ATTRS_CACHED: Final = _RUNNING >= (1, 18)

# mypy 1.16 matches a function against a protocol whose ``__call__`` is overloaded, solving type variables from each
# signature (``jaxstatic._ad``'s signatures of ``grad`` read the gradient's type so); before, nothing matched.
MATCHES_OVERLOADED_CALL: Final = _RUNNING >= (1, 16)

_TypeMapContext = AbstractContextManager["dict[Expression, Type]"]


def local_type_map(api: TypeChecker) -> _TypeMapContext:
    """A context in which inferred types go to a throw-away map, not mypy's (which mypyc and dmypy read)."""
    if _TYPE_MAP_IS_METHOD:
        return cast(Callable[[], _TypeMapContext], api.local_type_map)()
    return api.local_type_map


def throwaway_frame(binder: ConditionalTypeBinder) -> AbstractContextManager[object]:
    """A binder frame whose narrowing (a walrus inside the expression) is dropped when it closes."""
    if _FRAME_DISCARD:
        return binder.frame_context(can_skip=False, discard=True)
    return _dropped_frame(binder)


@contextmanager
def _dropped_frame(binder: ConditionalTypeBinder) -> Iterator[None]:
    # What ``discard=True`` does on newer mypy: pop the frame and its jump options without merging them.
    frames, options = len(binder.frames), len(binder.options_on_return)
    binder.push_frame()
    try:
        yield
    finally:
        del binder.frames[frames:]
        del binder.options_on_return[options:]
        binder.last_pop_changed = False


def quiet(api: TypeChecker) -> ErrorWatcher:
    """An error filter for the plugin's own throw-away checks.

    It keeps what it hides, which no filter of mypy's overload matching does, so that ``is_overload_matcher``
    never mistakes it for one (before mypy 1.20 the two differ in nothing else).
    """
    return api.msg.filter_errors(save_filtered_errors=True)


def is_overload_matcher(watcher: ErrorWatcher) -> bool:
    """Whether ``watcher`` is the filter mypy opens around each item of an overloaded callee it tries."""
    if _MARKED_OVERLOAD_FILTER:
        # mypy opens filters with filter_revealed_type=True and without keeping what they hide in two places:
        # overload matching, and (with --warn-unreachable) probing an unreachable call statement.
        return watcher.filter_revealed_type and watcher._filtered is None
    return watcher._filtered is None and watcher._filter is True
