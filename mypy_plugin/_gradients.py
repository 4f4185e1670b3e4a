"""The gradient's type: ``js.grad(loss)`` differentiates the first parameter that is neither ``Static`` nor
``NoDiff`` (without ``argnums``/``argnames``), so the gradient has that parameter's type.

The signatures in ``jaxstatic._ad`` say the first parameter's type there (``argnums=0``): to every other checker
``Static[C]`` is ``C``, so they cannot skip a marked parameter. mypy keeps the marks as alias types (``_markers``),
so the plugin names the parameter differentiated and puts its type in the gradient's place: ``grad`` returns it
(with ``has_aux``, the first item), ``value_and_grad`` the second item. Where the first parameter is marked and the
one differentiated cannot be read (a generic function, ``*args`` reached), the gradient is ``Any``: never a wrong
type. Options (``argnums``, ``argnames``) leave the signatures' answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from mypy.erasetype import erase_typevars
from mypy.nodes import ARG_OPT, ARG_POS, IntExpr, NameExpr
from mypy.plugin import AnalyzeTypeContext, FunctionContext
from mypy.types import (
    AnyType,
    Instance,
    Parameters,
    ProperType,
    TupleType,
    Type,
    TypeOfAny,
    UnboundType,
    get_proper_type,
)

from ._calls import as_callable
from ._compat import MATCHES_OVERLOADED_CALL
from ._markers import marker

GRAD: Final = "jaxstatic._ad.grad"
VALUE_AND_GRAD: Final = "jaxstatic._ad.value_and_grad"
GRADIENTS: Final = frozenset({GRAD, VALUE_AND_GRAD})
_CHOOSERS: Final = ("argnums", "argnames")


def typed(ctx: FunctionContext, transform: str, returned: Type) -> Type:
    """``returned`` (a ``GradFunction``/``ValueAndGradFunction``) with the gradient made exact."""
    gradient = _default_gradient(ctx)
    ret = get_proper_type(returned)
    if gradient is None or not isinstance(ret, Instance) or not ret.args:
        return returned
    result = _placed(transform, _has_aux(ctx), get_proper_type(ret.args[-1]), gradient)
    if result is None:
        return returned
    return ret.copy_modified(args=[*_parameters(ctx, ret.args[:-1]), result])


def _parameters(ctx: FunctionContext, args: Sequence[Type]) -> Sequence[Type]:
    """The parameters as the function's, its type variables as ``Any``, where mypy before 1.16 read a generic
    function through ``as_plain_callable`` with the gradient unsolved (and made its type variables ``Never``)."""
    fn = as_callable(ctx.arg_types[0][0])
    params = get_proper_type(args[0]) if args else None
    if MATCHES_OVERLOADED_CALL or fn is None or not fn.variables or not isinstance(params, Parameters):
        return args
    return [params.copy_modified(arg_types=[erase_typevars(t) for t in fn.arg_types]), *args[1:]]


def _default_gradient(ctx: FunctionContext) -> Type | None:
    """The type of the parameter differentiated: by default the first neither Static nor NoDiff, with
    ``argnums=1`` the second; ``Any`` where it cannot be read (a generic function, ``*args`` reached); ``None``
    for other options, which keep what the signatures say."""
    if _given(ctx, "argnames") or not ctx.arg_types or len(ctx.arg_types[0]) != 1:
        return None
    at = _argnums(ctx)
    fn = as_callable(ctx.arg_types[0][0])
    if at is None or fn is None or fn.is_ellipsis_args:
        return None
    unknown = AnyType(TypeOfAny.special_form)
    for i, (kind, t) in enumerate(zip(fn.arg_kinds, fn.arg_types)):
        if kind not in (ARG_POS, ARG_OPT):
            return unknown  # jax takes the first *args extra: its type is the *args element, left as Any
        if i == at if at else marker(t) is None:
            return unknown if fn.variables else t  # a generic function's parameter type is not solved here
    return unknown


def _argnums(ctx: FunctionContext) -> int | None:
    """0 where ``argnums`` is left out (the default rule), the position a literal 0 or 1 names, else ``None``."""
    if not _given(ctx, "argnums"):
        return 0
    [expr] = ctx.args[ctx.callee_arg_names.index("argnums")]
    return expr.value if isinstance(expr, IntExpr) and expr.value in (0, 1) else None


def _given(ctx: FunctionContext, *names: str) -> bool:
    return any(name in ctx.callee_arg_names and ctx.args[ctx.callee_arg_names.index(name)] for name in names)


def _has_aux(ctx: FunctionContext) -> bool | None:
    """``has_aux`` as written: ``None`` where it is neither left out nor a literal ``True``/``False``."""
    if not _given(ctx, "has_aux"):
        return False
    [expr] = ctx.args[ctx.callee_arg_names.index("has_aux")]
    if isinstance(expr, NameExpr) and expr.fullname in ("builtins.True", "builtins.False"):
        return expr.fullname == "builtins.True"
    return None


def _placed(transform: str, aux: bool | None, result: ProperType, gradient: Type) -> Type | None:
    if transform == GRAD and aux is False:
        return gradient
    if aux is None or not isinstance(result, TupleType) or len(result.items) != 2:
        return None
    at = 0 if transform == GRAD else 1  # grad with has_aux: (gradient, aux); value_and_grad: (value, gradient)
    items = list(result.items)
    items[at] = gradient
    return result.copy_modified(items=items)



FUNCTION_PROTOCOLS: Final = frozenset({"jaxstatic._ad._First", "jaxstatic._ad._Second"})


def as_plain_callable(ctx: AnalyzeTypeContext) -> Type:
    """``_First[P, G, R]`` (in ``jaxstatic._ad``'s signatures of ``grad``/``value_and_grad``) read as
    ``Callable[P, R]``, on mypy before 1.16. The protocol names the gradient through an overloaded ``__call__``
    (the function's parameters, and its first parameter's type), which those releases cannot match a function
    against; the gradient is left unsolved there, and ``typed`` puts the exact one in its place."""
    args = ctx.type.args
    if len(args) != 3:
        return ctx.api.analyze_type(ctx.type)
    return ctx.api.analyze_type(UnboundType("Callable", [args[0], args[2]], line=ctx.type.line,
                                            column=ctx.type.column))
