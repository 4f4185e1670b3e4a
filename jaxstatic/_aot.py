"""Ahead-of-time compilation that keeps the function's own signature and checks its static arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _freeze
from ._errors import StaticMismatchError
from ._plan import Plan

PlanFor = Callable[[tuple[Any, ...], dict[str, Any]], Plan]


def _mismatch(function: str, plan: Plan, compiled_key: Any, key: Any) -> StaticMismatchError:
    changes: list[str] = []
    if compiled_key[0] != key[0]:
        changes.append(f"dynamic arguments given: {list(compiled_key[0])} -> {list(key[0])}")
    for (label, _), old, new in zip(plan.statics, compiled_key[1:], key[1:]):
        changes.extend(_freeze.diff(label, old, new))
    return StaticMismatchError(
        f"{function}() was compiled ahead of time for other static arguments: {'; '.join(changes)}. "
        f"Lower and compile again for these values (or call {function} itself, which compiles on demand)."
    )


class Lowered:
    """JAX's ``Lowered`` for one set of static values; ``compile()`` keeps the function's signature."""

    def __init__(self, function: str, plan_for: PlanFor, key: Any, lowered: Any) -> None:
        self._function, self._plan_for, self._key, self._lowered = function, plan_for, key, lowered

    def compile(self, *args: Any, **kwargs: Any) -> Compiled:
        return Compiled(self._function, self._plan_for, self._key, self._lowered.compile(*args, **kwargs))

    def __getattr__(self, name: str) -> Any:  # as_text, cost_analysis, ...: JAX's own
        return getattr(self._lowered, name)


class Compiled:
    """A compiled program called with the original function's arguments, static ones included."""

    def __init__(self, function: str, plan_for: PlanFor, key: Any, compiled: Any) -> None:
        self._function, self._plan_for, self._key, self._compiled = function, plan_for, key, compiled

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        plan = self._plan_for(args, kwargs)
        key = plan.key(args, kwargs)
        if key != self._key:
            raise _mismatch(self._function, plan, self._key, key)
        pos, kw = plan.dynamic_values(args, kwargs)
        return self._compiled(*pos, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._compiled, name)
