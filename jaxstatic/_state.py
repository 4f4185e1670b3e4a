"""What a jaxstatic function's core and its transform say to each other: the hooks the core calls (``Hooks``), and
the program's ``Slot``.

A function transformed by jaxstatic is two objects. The transform (``StaticFunction``, ``_transform``; a subclass per
transform) holds the options and knows how to build a JAX program; the core (``_core.Core``, over
``_programs.Programs``) holds the programs, their keys and the call shapes, and calls the transform through
``Hooks``. Each declares its own attributes where it sets them, and neither imports the other.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from ._options import ParamOptions
from ._plan import Layout, Plan

Dispatch = Callable[[tuple[Any, ...], dict[str, Any]], Any]


class Slot:
    """What one program's body needs: its key, and the caller's own static values while the caller traces it."""

    __slots__ = ("key", "local")

    def __init__(self, key: Any) -> None:
        self.key = key
        self.local = threading.local()


class Hooks(Protocol):
    """The transform, as its core sees it: what differs per transform (``StaticFunction`` says what each one means).
    Read-only where the transform may hold a more precise type (a property in a protocol is covariant)."""

    @property
    def _transform(self) -> str: ...
    @property
    def _name(self) -> str: ...
    @property
    def _fn(self) -> Callable[..., Any]: ...
    @property
    def _counts_traces(self) -> bool: ...
    @property
    def _eager_without_jit(self) -> bool: ...

    def _params(self) -> ParamOptions: ...
    def _layout(self) -> Layout: ...
    def _takes_lane(self) -> bool: ...
    def _lane_program(self, body: Callable[..., Any], argnums: tuple[int, ...],
                      argnames: tuple[str, ...]) -> Any: ...
    def _build(self, plan: Plan, body: Callable[..., Any], slot: Slot) -> Callable[..., Any]: ...
    def _unspecialized(self) -> type: ...


__all__ = ["Dispatch", "Hooks", "Slot"]
