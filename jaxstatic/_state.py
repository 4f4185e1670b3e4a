"""What the parts of a jaxstatic function share: its state, declared once, and the program's ``Slot``.

``StaticFunction`` (``_core``) is made of parts, one module each: its call shapes (``_shapes``), its program cache
(``_programs``) and the body JAX traces (``_body``). Each part is a class over ``State``, which declares for type
checkers the attributes ``StaticFunction.__init__`` sets and the methods the other parts and the transforms define,
so that no part imports another or the core. At run time ``State`` is empty.
"""

from __future__ import annotations

import collections
import inspect
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from ._lane import Lane
from ._memo import IdentityMemo
from ._options import ParamOptions
from ._owner import Generated
from ._plan import Layout, Plan
from ._stats import TraceStats

Dispatch = Callable[[tuple[Any, ...], dict[str, Any]], Any]


class Slot:
    """What one program's body needs: its key, and the caller's own static values while the caller traces it."""

    __slots__ = ("key", "local")

    def __init__(self, key: Any) -> None:
        self.key = key
        self.local = threading.local()


class State:
    """The state every part of a jaxstatic function reads (declared here; set by ``StaticFunction.__init__``)."""

    if not TYPE_CHECKING:  # no layout of its own; to type checkers, a class whose attributes live in __dict__
        __slots__ = ()

    if TYPE_CHECKING:
        _transform: ClassVar[str]
        _counts_traces: ClassVar[bool]
        _eager_without_jit: ClassVar[bool]
        _core: Any  # the object the programs hold: the function itself, or for a handle its shared core
        _handles: tuple[weakref.ref[Any], ...]
        _name: str  # the function by name, as errors and reports print it (``_naming.display_name``)
        _options: dict[str, Any]
        _signature_: inspect.Signature | None
        _params_: ParamOptions | None
        _layout_: Layout | None
        _stats: TraceStats
        _cache: collections.OrderedDict[Any, Any]
        _slots: dict[Any, Slot]
        _inflight: dict[Any, Any]
        _evicted: collections.deque[int]
        _lock: threading.RLock
        _memo: IdentityMemo
        _plans: dict[int, Dispatch]
        _kw_plans: dict[tuple[str, ...], Dispatch]
        _shapes: dict[Any, tuple[Plan, Generated]]
        _variants: dict[tuple[str, ...], int]
        _lane: Lane | None
        _lane_checked: bool

        @property
        def _fn(self) -> Callable[..., Any]: ...
        # what a transform supplies (``_core``)
        def _resolve(self, layout: Layout) -> None: ...
        def _takes_lane(self) -> bool: ...
        def _lane_program(self, body: Callable[..., Any], argnums: tuple[int, ...],
                          argnames: tuple[str, ...]) -> Any: ...
        def _build(self, plan: Plan, body: Callable[..., Any], slot: Slot) -> Callable[..., Any]: ...
        # one part's, read by another
        def _params(self) -> ParamOptions: ...
        def _layout(self) -> Layout: ...
        def _body(self, plan: Plan, slot: Slot) -> Callable[..., Any]: ...
        def _why_again(self, key: Any) -> str: ...
        def _miss(self, plan: Plan, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any: ...  # a Run
        def _new_dispatch(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Dispatch: ...
        def _failed(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None: ...
        def _failed_dynamic(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any],
                            err: TypeError) -> TypeError: ...
        def _uncomparable(self, plan: Plan, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                          err: Exception) -> Exception: ...
        def clear_cache(self) -> None: ...


def inner_transform(fn: Callable[..., Any]) -> State | None:
    """The jaxstatic transform that ``fn`` is, or that it wraps (through ``functools.wraps`` decorators)."""
    for _ in range(64):  # a __wrapped__ cycle cannot hang clear_cache()
        if getattr(type(fn), "_jaxstatic_transform_", False) is True:  # as _hidden.is_transform_object, unloaded
            return fn  # type: ignore[return-value]  # a StaticFunction, which is a State
        fn = getattr(fn, "__wrapped__", None)  # type: ignore[assignment]
        if fn is None:
            return None
    return None


__all__ = ["Dispatch", "Slot", "State", "inner_transform"]
