"""Spellings of a jaxstatic transform other than its own name, so that every check sees through them.

* ``functools.partial(js.jit, max_traces=2)``: mypy types a ``partial`` of an overloaded function from its first
  item, ``JitFunction[[*Any, **Any], Any]``, which switches off every check on the function it decorates. Binding
  options only is the transform called with options only, so the plugin gives it that item's type: the decorator
  that keeps the function's ``ParamSpec``.
* A decorator kept in a variable (``batched = js.vmap(in_axes=(0, None))``, then ``@batched``): mypy looks hooks up
  by the variable's name, so the plugin recognises the variable by the named decorator type it holds.
"""

from __future__ import annotations

from mypy.nodes import ARG_NAMED, ARG_POS, CallExpr, Expression, RefExpr, Var
from mypy.plugin import FunctionContext
from mypy.types import CallableType, Instance, NoneType, Overloaded, Type, get_proper_type

from ._fullnames import (
    FUNCTOOLS_PARTIAL,
    JAXSTATIC_TRANSFORMS,
    TRANSFORM_DECORATORS,
    TRANSFORM_WRAPPERS,
)


def transform_of(expr: Expression) -> str | None:
    """The transform ``expr`` applies as a decorator: ``jit``, ``jit(...)``, ``partial(jit, ...)``, or a variable
    holding ``jit(...)``; ``None`` for anything else."""
    if isinstance(expr, CallExpr):
        if _is_partial(expr.callee) and expr.args and expr.arg_kinds[0] == ARG_POS:
            return transform_of(expr.args[0])
        expr = expr.callee
    if not isinstance(expr, RefExpr):
        return None
    name = TRANSFORM_DECORATORS.get(expr.fullname, expr.fullname)
    if name in JAXSTATIC_TRANSFORMS:
        return name
    return held_transform(expr.node.type) if isinstance(expr.node, Var) else None


def held_transform(t: Type | None) -> str | None:
    """The transform whose options-only decorator a variable of type ``t`` holds."""
    p = get_proper_type(t) if t is not None else None
    if not isinstance(p, CallableType):
        return None
    if p.name in TRANSFORM_DECORATORS:
        return TRANSFORM_DECORATORS[p.name]
    wrapper = get_proper_type(p.ret_type)
    if len(p.arg_types) == 1 and isinstance(wrapper, Instance):
        return TRANSFORM_WRAPPERS.get(wrapper.type.fullname)
    return None


def partial_decorator(ctx: FunctionContext) -> Type | None:
    """``partial(transform, **options)``: the type of ``transform(**options)``, named so its hooks run where it is
    applied; ``None`` when ``ctx`` binds anything else (a function, or positional arguments)."""
    call = ctx.context
    if not isinstance(call, CallExpr) or not call.args or call.arg_kinds[0] != ARG_POS:
        return None
    if any(kind != ARG_NAMED for kind in call.arg_kinds[1:]):
        return None
    transform = _named_transform(call.args[0])
    overloaded = get_proper_type(ctx.arg_types[0][0]) if ctx.arg_types and ctx.arg_types[0] else None
    if transform is None or not isinstance(overloaded, Overloaded):
        return None
    for item in overloaded.items:
        first = get_proper_type(item.arg_types[0]) if item.arg_types else None
        decorator = get_proper_type(item.ret_type)
        if isinstance(first, NoneType) and isinstance(decorator, CallableType):
            return decorator.copy_modified(name=f"jaxstatic.{transform.rsplit('.', 1)[1]}")
    return None


def _named_transform(expr: Expression) -> str | None:
    if not isinstance(expr, RefExpr):
        return None
    name = TRANSFORM_DECORATORS.get(expr.fullname, expr.fullname)
    return name if name in JAXSTATIC_TRANSFORMS else None


def _is_partial(expr: Expression) -> bool:
    return isinstance(expr, RefExpr) and expr.fullname == FUNCTOOLS_PARTIAL
