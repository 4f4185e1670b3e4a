"""What the hit paths and the lane need of a jaxstatic function, as a protocol, so that they import nothing of the
core (``_core`` builds them; they call back into it only through these members).

``StaticFunction`` satisfies ``Owner``; the members are its private ones, named as it names them. Read-only where
the core may hold a more precise type (a property in a protocol is covariant).
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any, Protocol

from ._memo import IdentityMemo
from ._plan import Layout, Plan
from ._stats import TraceStats

Generated = dict[str, Callable[..., Any]]
"""The generated functions of one call shape, by name (``_codegen.generate``: ``dispatch``, ``key``, ``entry``)."""


class Switched(Protocol):
    """The part of a lane the hits in C read: whether it handed its calls to the general path."""

    @property
    def switched(self) -> bool: ...


class Owner(Protocol):
    """A jaxstatic function, as its lane and its hits in C see it."""

    @property
    def _name(self) -> str: ...
    @property
    def _fn(self) -> Callable[..., Any]: ...
    @property
    def _stats(self) -> TraceStats: ...
    @property
    def _cache(self) -> collections.OrderedDict[Any, Any]: ...
    @property
    def _memo(self) -> IdentityMemo: ...
    @property
    def _shapes(self) -> dict[Any, tuple[Plan, Generated]]: ...
    @property
    def _lane(self) -> Switched | None: ...

    def _layout(self) -> Layout: ...
    def _shape(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Plan, Generated]: ...
    def _namespace(self, plan: Plan) -> dict[str, Any]: ...
    def _specializes(self) -> bool: ...
    def _specialize(self, entry: Callable[..., Any]) -> None: ...
    def _unspecialize(self) -> None: ...
    def _why_again(self, key: Any) -> str: ...
    def _failed(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None: ...
    def _failed_dynamic(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any],
                        err: TypeError) -> TypeError: ...


__all__ = ["Generated", "Owner", "Switched"]
