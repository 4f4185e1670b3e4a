"""``[jaxstatic-signature]``: a jaxstatic transform receives a callable that no longer shows the function's ``Static``
(or ``NoDiff``) parameters: a decorator typed ``Callable[..., Any]``, an untyped one, ``lru_cache``, a wrapper with
other parameters.

The function as written is found from the ``Decorator`` node (``@jit @erase def f``) or from the argument
(``jit(f)`` with ``f`` decorated, ``jit(erase(f))``). The decorators below the transform are then applied one by one,
innermost first, and the first whose result loses a marked parameter is blamed: in ``@jit @typed @erase`` that is
``erase``, not the ``ParamSpec``-typed ``typed`` that passed on what it got. This replay runs only once a problem is
known. Library decorators (a stub, or installed in site-packages) cannot be retyped by the user, so the advice for
them is to move the transform or wrap them.
"""

from __future__ import annotations

from dataclasses import dataclass

from mypy.checker import TypeChecker
from mypy.nodes import (
    ARG_POS,
    CallExpr,
    Decorator,
    Expression,
    FuncDef,
    MemberExpr,
    NameExpr,
    RefExpr,
    TempNode,
)
from mypy.plugin import FunctionContext
from mypy.types import AnyType, CallableType, Type, get_proper_type

from . import _messages
from ._calls import as_callable, expression_type
from ._chain import report
from ._compat import local_type_map, quiet
from ._errorcodes import SIGNATURE
from ._fullnames import NODIFF_ALIAS, NODIFF_READERS
from ._markers import marker, short
from ._spellings import transform_of


def named_decorator(ret: Type, name: str) -> Type | None:
    """``jit(max_traces=3)`` / ``jax.jit(static_argnames=...)`` return a decorator with no name; mypy looks plugin
    hooks up by a callable's name when the callee has no fully qualified one, so naming it lets the plugin see
    the decorator applied. ``None`` when ``ret`` is not such a decorator."""
    p = get_proper_type(ret)
    if isinstance(p, CallableType) and p.name is None:
        return p.copy_modified(name=name)
    return None


@dataclass(frozen=True)
class Applied:
    """A function as written and the decorators applied to it before the transform, outermost first."""

    function: FuncDef
    below: list[Expression]


def applied(ctx: FunctionContext, transform: str) -> Applied | None:
    """What the transform of this hook call is applied to, when it is a function the module defines."""
    if isinstance(ctx.context, Decorator):
        decorators = ctx.context.decorators
        i = next((i for i, d in enumerate(decorators) if _refers_to(d, transform)), None)
        below = decorators[i + 1 :] if i is not None else decorators[-1:]
        return _up_to_transform(Applied(ctx.context.func, below))
    if not ctx.args or not ctx.args[0]:
        return None
    chain: list[Expression] = []
    expr = ctx.args[0][0]
    while isinstance(expr, CallExpr) and len(expr.args) == 1 and len(chain) < 8:
        chain.append(expr.callee)  # ``jit(erase(f))``: ``erase`` applied to ``f``
        expr = expr.args[0]
    if isinstance(expr, RefExpr) and isinstance(expr.node, Decorator):
        return _up_to_transform(Applied(expr.node.func, chain + expr.node.decorators))
    if isinstance(expr, RefExpr) and isinstance(expr.node, FuncDef) and chain:
        return _up_to_transform(Applied(expr.node, chain))
    return None


def _up_to_transform(target: Applied) -> Applied | None:
    """Only the decorators above the next transform down: that transform reports what hides its parameters
    (``jit(grad(erase(f)))`` is one error, at ``grad``), and what it returns keeps them."""
    below = target.below
    cut = next((i for i, d in enumerate(below) if transform_of(d) is not None), len(below))
    return Applied(target.function, below[:cut]) if cut else None


def check_transform_argument(ctx: FunctionContext, transform: str) -> None:
    """Called when a jaxstatic transform is applied to a function, as a decorator or as ``jit(f)``."""
    if not ctx.arg_types or not ctx.arg_types[0]:
        return  # ``jit(max_traces=3)``: the function comes later
    target = applied(ctx, transform)
    original = target.function.type if target is not None else None
    if target is None or not isinstance(original, CallableType) or not target.below:
        return
    marks = {
        n: m
        for n, t in zip(original.arg_names, original.arg_types)
        if n and (m := marker(t)) and (m != NODIFF_ALIAS or transform in NODIFF_READERS)
    }
    if not marks or _lost(marks, ctx.arg_types[0][0]) is None:
        return
    culprit, problem = _culprit(ctx, original, target.below, marks)
    lost = sorted({short(m) for m in marks.values()})
    message = _messages.hidden_marks(
        short(transform),
        " and ".join(lost),
        target.function.name,
        _name(culprit),
        problem,
        _is_library(ctx, culprit),
    )
    report(ctx.api, message, ctx.context, SIGNATURE)


def _culprit(
    ctx: FunctionContext, original: CallableType, below: list[Expression], marks: dict[str, str]
) -> tuple[Expression, str]:
    """The innermost decorator whose result loses a mark, replaying each decorator's own type."""
    current: Type = original
    api = ctx.api
    for decorator in reversed(below):
        result = _apply(api, decorator, current) if isinstance(api, TypeChecker) else None
        if result is None:
            break
        problem = _lost(marks, result)
        if problem is not None:
            return decorator, problem
        current = result
    return below[0], _lost(marks, ctx.arg_types[0][0]) or "hides them"


def _apply(api: TypeChecker, decorator: Expression, arg: Type) -> Type | None:
    dec_type = expression_type(api, decorator, None)
    if dec_type is None:
        return None
    with quiet(api), local_type_map(api):
        result, _ = api.expr_checker.check_call(dec_type, [TempNode(arg)], [ARG_POS], decorator)
    return result


def _lost(marks: dict[str, str], received: Type) -> str | None:
    p = get_proper_type(received)
    if isinstance(p, AnyType):
        return "returns Any"
    sig = as_callable(p)
    if sig is None:
        return None  # overloaded or unknown: unsure
    if sig.is_ellipsis_args:
        return "returns Callable[..., Any]"
    by_name = {n: t for n, t in zip(sig.arg_names, sig.arg_types) if n is not None}
    for name, mark in marks.items():
        if name not in by_name:
            return f'drops parameter "{name}"'
        if marker(by_name[name]) != mark:
            return f'drops {short(mark)} from "{name}"'
    return None


def _refers_to(expr: Expression, transform: str) -> bool:
    return transform_of(expr) == transform


def _name(expr: Expression) -> str:
    if isinstance(expr, CallExpr):
        return _name(expr.callee)
    if isinstance(expr, (NameExpr, MemberExpr)):
        return expr.name
    return "decorator"


def _is_library(ctx: FunctionContext, expr: Expression) -> bool:
    """Defined in a stub or an installed package: the user cannot give it a ParamSpec."""
    while isinstance(expr, CallExpr):
        expr = expr.callee
    if not isinstance(expr, RefExpr) or not expr.fullname or not isinstance(ctx.api, TypeChecker):
        return False
    modules = ctx.api.modules
    module = expr.fullname
    while module and module not in modules:
        module = module.rpartition(".")[0]
    tree = modules.get(module)
    if tree is None:
        return False
    path = tree.path.replace("\\", "/")
    return tree.is_stub or "/site-packages/" in path or "/dist-packages/" in path
