"""Checks where a function is handed to a transform.

* ``[jaxstatic-signature]``: a jaxstatic transform receives a callable whose signature no longer shows the
  function's ``Static`` parameters (a decorator typed ``Callable[..., Any]``, an untyped one, ``lru_cache``, a
  wrapper with other parameters). The ``Decorator`` node still holds the function as written; the transform
  receives what the decorators below it made of it.
* ``[jaxstatic-unhashable]`` for plain ``jax.jit(f, static_argnames=..., static_argnums=...)``, and for
  ``@jax.jit(static_argnames=...)`` and ``@functools.partial(jax.jit, ...)`` as decorators: the declared types of
  the parameters named must be hashable as they are.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import (
    ARG_POS,
    ARG_STAR,
    ARG_STAR2,
    CallExpr,
    Context,
    Decorator,
    Expression,
    IntExpr,
    ListExpr,
    MemberExpr,
    NameExpr,
    RefExpr,
    StrExpr,
    TupleExpr,
    UnaryExpr,
)
from mypy.plugin import CheckerPluginInterface, FunctionContext
from mypy.types import AnyType, CallableType, Type, get_proper_type

from ._calls import as_callable, expression_type, is_static
from ._chain import report
from ._errorcodes import SIGNATURE, UNHASHABLE
from ._fullnames import FUNCTOOLS_PARTIAL, JAX_JIT, JAXSTATIC_TRANSFORMS
from ._hashability import judge


def named_decorator(ret: Type, name: str) -> Type | None:
    """``jit(max_traces=3)`` / ``jax.jit(static_argnames=...)`` return a decorator with no name; mypy looks plugin
    hooks up by a callable's name when the callee has no fully qualified one, so naming it lets the plugin see
    the decorator applied. ``None`` when ``ret`` is not such a decorator."""
    p = get_proper_type(ret)
    if isinstance(p, CallableType) and p.name is None:
        return p.copy_modified(name=name)
    return None


# --- jaxstatic transforms: [jaxstatic-signature] ---------------------------------------------------------------


def check_transform_argument(ctx: FunctionContext, transform: str) -> None:
    """Called when a jaxstatic transform is applied to a function, as a decorator or as ``jit(f)``."""
    if not ctx.arg_types or not ctx.arg_types[0]:
        return  # ``jit(max_traces=3)``: the function comes later
    received = ctx.arg_types[0][0]
    if isinstance(ctx.context, Decorator):
        original, func_name, below = (
            ctx.context.func.type,
            ctx.context.func.name,
            _inner_decorator(ctx.context),
        )
    else:
        target = _decorated(ctx.args[0][0]) if ctx.args and ctx.args[0] else None
        if target is None:
            return
        original, func_name, below = target.func.type, target.func.name, _name(target.decorators[0])
    if not isinstance(original, CallableType):
        return
    static_names = [n for n, t in zip(original.arg_names, original.arg_types) if is_static(t) and n]
    if not static_names:
        return
    problem = _lost(static_names, received)
    if problem is None:
        return
    short = transform.rsplit(".", 1)[-1]
    report(
        ctx.api,
        f'"{short}" cannot see the Static parameters of "{func_name}": decorator "{below}" {problem}; '
        f'type "{below}" with ParamSpec, or move "{short}" below it',
        ctx.context,
        SIGNATURE,
    )


def _lost(static_names: list[str], received: Type) -> str | None:
    p = get_proper_type(received)
    if isinstance(p, AnyType):
        return "returns Any"
    sig = as_callable(p)
    if sig is None:
        return None  # overloaded or unknown: unsure
    if sig.is_ellipsis_args:
        return "returns Callable[..., Any]"
    by_name = {n: t for n, t in zip(sig.arg_names, sig.arg_types) if n is not None}
    for name in static_names:
        if name not in by_name:
            return f'drops parameter "{name}"'
        if not is_static(by_name[name]):
            return f'drops Static from "{name}"'
    return None


def _decorated(expr: Expression) -> Decorator | None:
    if isinstance(expr, RefExpr) and isinstance(expr.node, Decorator):
        return expr.node
    return None


def _inner_decorator(dec: Decorator) -> str:
    """The decorator applied just before the jaxstatic transform (the list is outermost first)."""
    for i, d in enumerate(dec.decorators):
        if _refers_to(d, JAXSTATIC_TRANSFORMS) and i + 1 < len(dec.decorators):
            return _name(dec.decorators[i + 1])
    return _name(dec.decorators[-1])


def _refers_to(expr: Expression, names: frozenset[str]) -> bool:
    if isinstance(expr, CallExpr):
        expr = expr.callee
    return isinstance(expr, RefExpr) and expr.fullname in names


def _name(expr: Expression) -> str:
    if isinstance(expr, CallExpr):
        return _name(expr.callee)
    if isinstance(expr, (NameExpr, MemberExpr)):
        return expr.name
    return "decorator"


# --- plain jax.jit: static_argnames / static_argnums must be hashable ------------------------------------------

_PARTIAL = frozenset({FUNCTOOLS_PARTIAL})


def check_jax_jit_call(api: CheckerPluginInterface, sig: CallableType, call: CallExpr) -> None:
    """``jax.jit(f, static_argnames=...)``: called once per item of jax.jit's overload, act on the one with ``fun``."""
    if not sig.arg_kinds or sig.arg_kinds[0] != ARG_POS:
        return
    if not call.args or call.arg_kinds[0] != ARG_POS:
        return
    if not isinstance(api, TypeChecker) or not _simple(call.args[0]):
        return
    fun_type = expression_type(api, call.args[0], None)
    fun = as_callable(fun_type) if fun_type is not None else None
    if fun is not None:
        _check_static_args(api, fun, call)


def check_jax_jit_decorator(api: CheckerPluginInterface, dec: Decorator) -> None:
    """``@functools.partial(jax.jit, static_argnames=...)`` or ``@jax.jit(static_argnames=...)`` over a function:
    judge the declared types of the parameters named."""
    original = dec.func.type
    if not isinstance(original, CallableType):
        return
    for d in dec.decorators:
        if not isinstance(d, CallExpr):
            continue
        partial_of_jit = _refers_to(d, _PARTIAL) and d.args and _refers_to(d.args[0], JAX_JIT)
        jit_options = _refers_to(d, JAX_JIT) and ARG_POS not in d.arg_kinds
        if partial_of_jit or jit_options:
            _check_static_args(api, original, d)


def _simple(expr: Expression) -> bool:
    """Only names and attributes are re-inferred (cheap, and no side effects on mypy's state)."""
    return isinstance(expr, (NameExpr, MemberExpr))


def _check_static_args(api: CheckerPluginInterface, fun: CallableType, call: CallExpr) -> None:
    for name, value in zip(call.arg_names, call.args):
        if name == "static_argnames":
            for param in _strings(value):
                _check_param(api, fun, _index_by_name(fun, param), value)
        elif name == "static_argnums":
            for index in _ints(value):
                _check_param(api, fun, _index_by_position(fun, index), value)


def _check_param(
    api: CheckerPluginInterface, fun: CallableType, index: int | None, where: Context
) -> None:
    if index is None:
        return
    declared = fun.arg_types[index]
    reason = judge(declared, freeze=False)
    if reason is None:
        return
    name = fun.arg_names[index] or f"#{index}"
    report(
        api,
        f'Static argument "{name}" of "{(fun.name or "function").split(" of ")[0]}" is not hashable: {reason}; '
        "use a hashable type (tuple, frozenset, frozen dataclass) or jaxstatic.Static",
        where,
        UNHASHABLE,
    )


def _index_by_name(fun: CallableType, name: str) -> int | None:
    for i, (n, kind) in enumerate(zip(fun.arg_names, fun.arg_kinds)):
        if n == name and kind not in (ARG_STAR, ARG_STAR2):
            return i
    return None


def _index_by_position(fun: CallableType, index: int) -> int | None:
    positional = [i for i, k in enumerate(fun.arg_kinds) if k.is_positional() and k != ARG_STAR]
    if -len(positional) <= index < len(positional):
        return positional[index]
    return None


def _strings(expr: Expression) -> list[str]:
    if isinstance(expr, StrExpr):
        return [expr.value]
    if isinstance(expr, (TupleExpr, ListExpr)):
        return [item.value for item in expr.items if isinstance(item, StrExpr)]
    return []


def _ints(expr: Expression) -> list[int]:
    if isinstance(expr, IntExpr):
        return [expr.value]
    if isinstance(expr, UnaryExpr) and expr.op == "-" and isinstance(expr.expr, IntExpr):
        return [-expr.expr.value]
    if isinstance(expr, (TupleExpr, ListExpr)):
        return [n for item in expr.items for n in _ints(item)]
    return []
