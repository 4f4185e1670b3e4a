"""Ahead-of-time compilation that keeps the function's own signature and checks its static arguments."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from typing_extensions import ParamSpec

from . import _explain
from ._codegen import static_keys
from ._errors import StaticMismatchError
from ._plan import Plan

if TYPE_CHECKING:
    from jax.tree_util import PyTreeDef

_P = ParamSpec("_P", contravariant=True)  # type: ignore[misc]  # a callable's parameters: see _core
_R_co = TypeVar("_R_co", covariant=True)

PlanFor = Callable[[tuple[Any, ...], dict[str, Any]], Plan]
KeyFor = Callable[[tuple[Any, ...], dict[str, Any]], Any]


def _mismatch(function: str, compiled_for: Plan, compiled_key: Any, plan: Plan, key: Any) -> StaticMismatchError:
    changes: list[str] = []
    if compiled_for.variant != plan.variant:
        changes.append(f"arguments given: {list(compiled_for.variant)} -> {list(plan.variant)}")
    for (label, _), old, new in zip(plan.statics, static_keys(compiled_key), static_keys(key)):
        changes.extend(_explain.diff(label, old, new))
    return StaticMismatchError(
        f"{function}() was compiled ahead of time for other static arguments: {'; '.join(changes)}. "
        f"Lower and compile again for these values (or call {function} itself, which compiles on demand)."
    )


def call_layout(plan: Plan, info: tuple[tuple[Any, ...], dict[str, Any]]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Per-argument entries of a program (its positional arguments: the named dynamic values, then the ``*args``
    extras; its keywords: the ``**kwargs`` extras) rearranged as the user's call gave those values."""
    pos, kw = info
    by_position: list[tuple[int, Any]] = []
    by_name: dict[str, Any] = dict(kw)
    i = 0
    for name, src in plan.dynamics:
        if src.kind == "arg" and i < len(pos):
            by_position.append((src.index, pos[i]))
        elif src.kind == "kw" and i < len(pos):
            by_name[name] = pos[i]
        elif src.kind == "varpos":
            extras = [k for k in range(src.index, plan.nargs) if k not in src.skip]
            by_position += zip(extras, pos[i:i + len(extras)])
            i += len(extras)
            continue
        else:  # varkw: the program's keywords, already in by_name
            continue
        i += 1
    if i != len(pos):  # not a program of this plan's layout: JAX's own
        return info
    return tuple(entry for _, entry in sorted(by_position, key=lambda item: item[0])), dict(sorted(by_name.items()))


class ArgsLaidOut:
    """JAX's ``Traced`` of a program, whose ``args_info`` is laid out as the user's call was (``call_layout``);
    everything else is JAX's own."""

    def __init__(self, traced: Any, plan: Plan) -> None:
        self._traced, self._plan = traced, plan

    @property
    def args_info(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return call_layout(self._plan, self._traced.args_info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._traced, name)


@dataclasses.dataclass(frozen=True)
class Compilation:
    """What ahead-of-time objects need to check a call: the compiled call shape and static key, and how to get
    both for a new call."""

    function: str
    plan: Plan
    key: Any
    plan_for: PlanFor
    key_for: KeyFor


class Lowered(Generic[_P, _R_co]):
    """JAX's ``Lowered`` for one set of static values; ``compile()`` keeps the function's signature
    (``Lowered[[jax.Array, int], jax.Array]`` for a function of those parameters)."""

    def __init__(self, compilation: Compilation, lowered: Any, bound: tuple[Any, ...] = ()) -> None:
        self._compilation, self._lowered, self._bound = compilation, lowered, bound

    def bind(self, *leading: Any) -> Lowered[..., _R_co]:
        """The same program, whose compiled form takes ``leading`` (a method's ``self``) as given already."""
        return Lowered(self._compilation, self._lowered, (*self._bound, *leading))

    def compile(self, *args: Any, **kwargs: Any) -> Compiled[_P, _R_co]:
        """JAX's ``compile`` (its options pass through), returning a ``Compiled`` called like the function."""
        return Compiled(self._compilation, self._lowered.compile(*args, **kwargs), self._bound)

    if TYPE_CHECKING:  # JAX's own attributes, typed as JAX types them, so that a misspelt one is reported
        @property
        def in_avals(self) -> Any: ...
        @property
        def out_info(self) -> Any: ...
        @property
        def in_tree(self) -> PyTreeDef: ...
        @property
        def out_tree(self) -> PyTreeDef: ...
        @property
        def donate_argnums(self) -> tuple[int, ...]: ...
        def compiler_ir(self, dialect: str | None = None) -> Any | None: ...
        def cost_analysis(self) -> Any | None: ...
    else:  # the rest is JAX's: in_avals, out_info, compiler_ir, cost_analysis, ... (of the program's arguments, the
        # static ones left out)
        def __getattr__(self, name: str) -> Any:
            return getattr(self._lowered, name)

    @property
    def args_info(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """JAX's ``args_info`` (each dynamic argument's shape, dtype and donation) laid out as the call was, as
        ``jax.jit``'s: the positional arguments in a tuple, those given by keyword in a dict; static ones left out."""
        return call_layout(self._compilation.plan, self._lowered.args_info)

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """JAX's ``as_text``: the lowered program's text (StableHLO by default)."""
        # debug_info passed only when asked for: JAX before 0.5 has no such parameter
        text = self._lowered.as_text(dialect, debug_info=True) if debug_info else self._lowered.as_text(dialect)
        return str(text)


class Compiled(Generic[_P, _R_co]):
    """A compiled program called with the original function's arguments, static ones included; static values other
    than those it was compiled for raise ``StaticMismatchError``."""

    def __init__(self, compilation: Compilation, compiled: Any, bound: tuple[Any, ...] = ()) -> None:
        self._compilation, self._compiled, self._bound = compilation, compiled, bound

    def __call__(self, *given: _P.args, **kwargs: _P.kwargs) -> _R_co:
        c = self._compilation
        args: tuple[Any, ...] = (*self._bound, *given) if self._bound else given
        plan = c.plan_for(args, kwargs)
        key = c.key_for(args, kwargs)
        if key != c.key:
            raise _mismatch(c.function, c.plan, c.key, plan, key)
        pos, kw = plan.dynamic_values(args, kwargs)
        return self._compiled(*pos, **kw)  # type: ignore[no-any-return]

    if TYPE_CHECKING:  # JAX's own attributes, typed as JAX types them, so that a misspelt one is reported
        @property
        def in_avals(self) -> Any: ...
        @property
        def out_info(self) -> Any: ...
        @property
        def args_info(self) -> Any: ...
        @property
        def in_tree(self) -> PyTreeDef: ...
        @property
        def out_tree(self) -> PyTreeDef: ...
        @property
        def donate_argnums(self) -> tuple[int, ...]: ...
        @property
        def input_shardings(self) -> Any: ...
        @property
        def output_shardings(self) -> Any: ...
        @property
        def input_formats(self) -> Any: ...
        @property
        def output_formats(self) -> Any: ...
        def cost_analysis(self) -> Any | None: ...
        def memory_analysis(self) -> Any | None: ...
        def runtime_executable(self) -> Any | None: ...
    else:  # the rest is JAX's (of the program's arguments, the static ones left out)
        def __getattr__(self, name: str) -> Any:
            return getattr(self._compiled, name)

    def as_text(self) -> str | None:
        """JAX's ``as_text``: the compiled program's text, where the backend gives one."""
        text = self._compiled.as_text()
        return None if text is None else str(text)
