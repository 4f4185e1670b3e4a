"""Ahead-of-time compilation that keeps the function's own signature and checks its static arguments."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import jax
import jax.stages
from typing_extensions import ParamSpec

from . import _explain
from ._codegen import static_keys
from ._errors import StaticMismatchError
from ._plan import Plan

if TYPE_CHECKING:
    from jax.tree_util import PyTreeDef

_P = ParamSpec("_P", contravariant=True)  # type: ignore[misc]  # a callable's parameters: see _transform
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


def same_order(info: Any, laid: Any) -> bool:
    """Whether ``laid`` (``call_layout``'s) flattens to the very entries of ``info`` in the same order: then the
    program's flat arguments are the user's call flattened, and its tree may be the user's (``jax.jit``'s), which
    ``jax.export`` records and ``Exported.call`` checks."""
    return list(map(id, jax.tree_util.tree_leaves(info))) == list(map(id, jax.tree_util.tree_leaves(laid)))


def adopt(stage: Any, of: Any, *, skip: frozenset[str] = frozenset()) -> None:
    """Give ``stage`` (a subclass of one of ``jax.stages``' classes) the state of JAX's own ``of``, slots and
    attributes, so that JAX's methods work on it as on ``of``: an ``isinstance`` of ``jax.stages`` whatever JAX's
    version keeps there."""
    for cls in type(of).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in skip and not name.startswith("__") and hasattr(of, name):
                object.__setattr__(stage, name, getattr(of, name))
    stage.__dict__.update({k: v for k, v in getattr(of, "__dict__", {}).items() if k not in skip})


class _LaidOut:
    """What the stages share: ``args_info`` laid out as the user's call was (``call_layout``), and ``in_tree`` the
    tree of that layout where the program's flat arguments follow it (as ``jax.jit``'s), the program's otherwise."""

    _plan: Plan
    _jax_stage: Any

    @property
    def args_info(self) -> Any:
        return call_layout(self._plan, self._jax_stage.args_info)

    @property
    def in_tree(self) -> PyTreeDef:
        info = self._jax_stage.args_info
        laid = call_layout(self._plan, info)
        return jax.tree_util.tree_structure(laid if same_order(info, laid) else info)


_LAID_OUT = frozenset({"args_info", "in_tree"})  # laid out by _LaidOut, never JAX's program's


class ArgsLaidOut(_LaidOut, jax.stages.Traced):
    """JAX's ``Traced`` of a program (an instance of ``jax.stages.Traced``), whose ``args_info`` and ``in_tree`` are
    laid out as the user's call was; its ``lower()`` gives JAX's ``Lowered`` laid out so too, so that ``jax.export``
    records keyword arguments as keywords, as it does for ``jax.jit``."""

    def __init__(self, traced: Any, plan: Plan) -> None:
        adopt(self, traced, skip=_LAID_OUT)
        self._jax_stage, self._plan = traced, plan

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        lowered = self._jax_stage.lower(*args, **kwargs)
        info = lowered.args_info
        laid = call_layout(self._plan, info)
        if same_order(info, laid):
            lowered.args_info = laid  # JAX's own Lowered, with the tree of jax.jit's for the same call
        return lowered

    def __getattr__(self, name: str) -> Any:
        return getattr(self._jax_stage, name)


@dataclasses.dataclass(frozen=True)
class Compilation:
    """What ahead-of-time objects need to check a call: the compiled call shape and static key, and how to get
    both for a new call."""

    function: str
    plan: Plan
    key: Any
    plan_for: PlanFor
    key_for: KeyFor


class Lowered(_LaidOut, jax.stages.Lowered, Generic[_P, _R_co]):
    """JAX's ``Lowered`` (an instance of ``jax.stages.Lowered``) for one set of static values; ``compile()`` keeps
    the function's signature (``Lowered[[jax.Array, int], jax.Array]`` for a function of those parameters)."""

    def __init__(self, compilation: Compilation, lowered: Any, bound: tuple[Any, ...] = ()) -> None:
        adopt(self, lowered, skip=_LAID_OUT)
        self._compilation, self._lowered, self._bound = compilation, lowered, bound
        self._jax_stage, self._plan = lowered, compilation.plan

    def bind(self, *leading: Any) -> Lowered[..., _R_co]:
        """The same program, whose compiled form takes ``leading`` (a method's ``self``) as given already."""
        return Lowered(self._compilation, self._lowered, (*self._bound, *leading))

    def compile(self, *args: Any, **kwargs: Any) -> Compiled[_P, _R_co]:
        """JAX's ``compile`` (its options pass through), returning a ``Compiled`` called like the function."""
        return Compiled(self._compilation, self._lowered.compile(*args, **kwargs), self._bound)

    if not TYPE_CHECKING:  # what JAX's version adds beyond its slots: JAX's (of the program's arguments)
        def __getattr__(self, name: str) -> Any:
            return getattr(self._lowered, name)

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """JAX's ``as_text``: the lowered program's text (StableHLO by default)."""
        # debug_info passed only when asked for: JAX before 0.5 has no such parameter
        text = self._lowered.as_text(dialect, debug_info=True) if debug_info else self._lowered.as_text(dialect)
        return str(text)


class Compiled(_LaidOut, jax.stages.Compiled, Generic[_P, _R_co]):
    """A compiled program (an instance of ``jax.stages.Compiled``) called with the original function's arguments,
    static ones included; static values other than those it was compiled for raise ``StaticMismatchError``."""

    def __init__(self, compilation: Compilation, compiled: Any, bound: tuple[Any, ...] = ()) -> None:
        adopt(self, compiled, skip=_LAID_OUT)
        self._compilation, self._compiled, self._bound = compilation, compiled, bound
        self._jax_stage, self._plan = compiled, compilation.plan

    def __call__(self, *given: _P.args, **kwargs: _P.kwargs) -> _R_co:
        c = self._compilation
        args: tuple[Any, ...] = (*self._bound, *given) if self._bound else given
        plan = c.plan_for(args, kwargs)
        key = c.key_for(args, kwargs)
        if key != c.key:
            raise _mismatch(c.function, c.plan, c.key, plan, key)
        pos, kw = plan.dynamic_values(args, kwargs)
        return self._compiled(*pos, **kw)  # type: ignore[no-any-return]

    if not TYPE_CHECKING:  # what JAX's version adds beyond its slots: JAX's (of the program's arguments)
        def __getattr__(self, name: str) -> Any:
            return getattr(self._compiled, name)

    def as_text(self) -> str | None:
        """JAX's ``as_text``: the compiled program's text, where the backend gives one."""
        text = self._compiled.as_text()
        return None if text is None else str(text)
