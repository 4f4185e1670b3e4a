"""Ahead-of-time compilation that keeps the function's own signature and checks its static arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _freeze
from ._errors import StaticMismatchError
from ._plan import Plan, static_keys

PlanFor = Callable[[tuple[Any, ...], dict[str, Any]], Plan]
KeyFor = Callable[[tuple[Any, ...], dict[str, Any]], Any]


def _mismatch(function: str, compiled_for: Plan, compiled_key: Any, plan: Plan, key: Any) -> StaticMismatchError:
    changes: list[str] = []
    if compiled_for.variant != plan.variant:
        changes.append(f"arguments given: {list(compiled_for.variant)} -> {list(plan.variant)}")
    for (label, _), old, new in zip(plan.statics, static_keys(compiled_key), static_keys(key)):
        changes.extend(_freeze.diff(label, old, new))
    return StaticMismatchError(
        f"{function}() was compiled ahead of time for other static arguments: {'; '.join(changes)}. "
        f"Lower and compile again for these values (or call {function} itself, which compiles on demand)."
    )


class Lowered:
    """JAX's ``Lowered`` for one set of static values; ``compile()`` keeps the function's signature."""

    def __init__(self, function: str, plan: Plan, plan_for: PlanFor, key_for: KeyFor, key: Any,
                 lowered: Any) -> None:
        self._function, self._plan, self._plan_for, self._key_for = function, plan, plan_for, key_for
        self._key, self._lowered = key, lowered

    def compile(self, *args: Any, **kwargs: Any) -> Compiled:
        compiled = self._lowered.compile(*args, **kwargs)
        return Compiled(self._function, self._plan, self._plan_for, self._key_for, self._key, compiled)

    def __getattr__(self, name: str) -> Any:  # as_text, cost_analysis, ...: JAX's own
        return getattr(self._lowered, name)


class Compiled:
    """A compiled program called with the original function's arguments, static ones included."""

    def __init__(self, function: str, plan: Plan, plan_for: PlanFor, key_for: KeyFor, key: Any,
                 compiled: Any) -> None:
        self._function, self._plan, self._plan_for, self._key_for = function, plan, plan_for, key_for
        self._key, self._compiled = key, compiled

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        plan = self._plan_for(args, kwargs)
        key = self._key_for(args, kwargs)
        if key != self._key:
            raise _mismatch(self._function, self._plan, self._key, plan, key)
        pos, kw = plan.dynamic_values(args, kwargs)
        return self._compiled(*pos, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._compiled, name)
