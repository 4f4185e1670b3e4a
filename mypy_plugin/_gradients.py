"""The gradient's type: ``js.grad(loss)`` differentiates the first parameter that is neither ``Static`` nor
``NoDiff`` (without ``argnums``/``argnames``), so the gradient has that parameter's type.

The signatures in ``jaxstatic._ad`` say ``Any`` there: to every other checker ``Static[C]`` is ``C``, so the first
parameter's type would be the config's for ``loss(cfg: Static[C], params, x)``. mypy keeps the marks as alias types
(``_markers``), so the plugin can name the parameter and put its type in the ``Any``'s place: ``grad`` returns it (with
``has_aux``, the first item), ``value_and_grad`` the second item. Anything else (options given, a generic function, a
signature it cannot read) keeps the ``Any``: never a wrong type.
"""

from __future__ import annotations

from typing import Final

from mypy.nodes import ARG_STAR, ARG_STAR2
from mypy.plugin import FunctionContext
from mypy.types import AnyType, Instance, ProperType, TupleType, Type, get_proper_type

from ._calls import as_callable
from ._markers import marker

GRAD: Final = "jaxstatic._ad.grad"
VALUE_AND_GRAD: Final = "jaxstatic._ad.value_and_grad"
GRADIENTS: Final = frozenset({GRAD, VALUE_AND_GRAD})
_CHOOSERS: Final = ("argnums", "argnames")


def typed(ctx: FunctionContext, transform: str, returned: Type) -> Type:
    """``returned`` (a ``GradFunction``/``ValueAndGradFunction``) with the gradient's ``Any`` made exact."""
    gradient = _default_gradient(ctx)
    ret = get_proper_type(returned)
    if gradient is None or not isinstance(ret, Instance) or not ret.args:
        return returned
    result = _placed(transform, get_proper_type(ret.args[-1]), gradient)
    return returned if result is None else ret.copy_modified(args=[*ret.args[:-1], result])


def _default_gradient(ctx: FunctionContext) -> Type | None:
    """The type of the parameter differentiated by default, when no option chooses another."""
    for name in _CHOOSERS:
        if name in ctx.callee_arg_names and ctx.args[ctx.callee_arg_names.index(name)]:
            return None
    if not ctx.arg_types or len(ctx.arg_types[0]) != 1:
        return None
    fn = as_callable(ctx.arg_types[0][0])
    if fn is None or fn.variables or fn.is_ellipsis_args:
        return None  # a generic function's parameter type is not solved here; ``...`` names none
    for kind, t in zip(fn.arg_kinds, fn.arg_types):
        if kind in (ARG_STAR, ARG_STAR2):
            return None  # jax takes the first *args extra: its type is the *args element, left as Any
        if marker(t) is None:
            return t
    return None


def _placed(transform: str, result: ProperType, gradient: Type) -> Type | None:
    if transform == GRAD and isinstance(result, AnyType):
        return gradient
    if isinstance(result, TupleType) and len(result.items) == 2:
        at = 0 if transform == GRAD else 1  # grad with has_aux: (gradient, aux); value_and_grad: (value, gradient)
        if isinstance(get_proper_type(result.items[at]), AnyType):
            items = list(result.items)
            items[at] = gradient
            return result.copy_modified(items=items)
    return None
