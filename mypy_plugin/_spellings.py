"""Spellings of a jaxstatic transform other than its own name, so that every check sees through them.

* ``functools.partial(js.jit, max_traces=2)``: mypy types a ``partial`` of an overloaded function from its first
  item, ``JitFunction[[*Any, **Any], Any]``, which switches off every check on the function it decorates. Binding
  options only is the transform called with options only, so the plugin gives it that item's type: the decorator
  that keeps the function's ``ParamSpec``.
* ``partial(partial(js.jit, max_traces=2), donate_argnums=0)``, or a partial of a variable holding one: more
  options bound to that decorator, which stays the same decorator. A partial of any other ``partial`` is bound
  from the signature the inner one leaves (mypy would see ``*args: Any, **kwargs: Any``).
* A decorator kept in a variable (``batched = js.vmap(in_axes=(0, None))``, then ``@batched``): mypy looks hooks up
  by the variable's name, so the plugin recognises the variable by the named decorator type it holds.
"""

from __future__ import annotations

from mypy.nodes import ARG_NAMED, ARG_POS, CallExpr, Expression, RefExpr, Var
from mypy.plugin import FunctionContext
from mypy.types import (
    CallableType,
    Instance,
    NoneType,
    Overloaded,
    ProperType,
    Type,
    get_proper_type,
)

from ._fullnames import (
    FUNCTOOLS_PARTIAL,
    JAXSTATIC_TRANSFORMS,
    PARTIAL_ATTR,
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
    if transform is None:
        return _more_options(overloaded)
    if not isinstance(overloaded, Overloaded):
        return None
    for item in overloaded.items:
        first = get_proper_type(item.arg_types[0]) if item.arg_types else None
        decorator = get_proper_type(item.ret_type)
        if isinstance(first, NoneType) and isinstance(decorator, CallableType):
            return decorator.copy_modified(name=f"jaxstatic.{transform.rsplit('.', 1)[1]}")
    return None


def _more_options(decorator: ProperType | None) -> Type | None:
    """``partial(partial(jit, a=1), b=2)``, ``partial(donating, b=2)``: options bound to a decorator that already
    holds some are the transform called with all of them (the runtime's options-only form returns
    ``partial(transform, **options)``). Known by the plugin's name for it, or, in a variable (where mypy drops the
    name), by its shape."""
    if not isinstance(decorator, CallableType) or (decorator.name is not None and decorator.name not in TRANSFORM_DECORATORS):
        return None
    transform = held_transform(decorator)
    return decorator.copy_modified(name=f"jaxstatic.{transform.rsplit('.', 1)[1]}") if transform else None


def bind_through(ctx: FunctionContext) -> FunctionContext:
    """``partial(p, ...)`` where ``p`` is itself a ``partial``: mypy types it from ``partial.__call__``
    (``*args: Any, **kwargs: Any``), losing the signature left to bind and every check after it. Its own
    ``partial`` support is given that signature instead, so a partial of a partial binds like one of a function,
    at any depth."""
    first = get_proper_type(ctx.arg_types[0][0]) if ctx.arg_types and len(ctx.arg_types[0]) == 1 else None
    extra = first.extra_attrs if isinstance(first, Instance) and first.type.fullname == FUNCTOOLS_PARTIAL else None
    left = extra.attrs.get(PARTIAL_ATTR) if extra is not None else None
    if left is None:
        return ctx
    return ctx._replace(arg_types=[[left], *ctx.arg_types[1:]])


def _named_transform(expr: Expression) -> str | None:
    if not isinstance(expr, RefExpr):
        return None
    name = TRANSFORM_DECORATORS.get(expr.fullname, expr.fullname)
    return name if name in JAXSTATIC_TRANSFORMS else None


def _is_partial(expr: Expression) -> bool:
    return isinstance(expr, RefExpr) and expr.fullname == FUNCTOOLS_PARTIAL
