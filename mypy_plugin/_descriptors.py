"""``@staticmethod`` over a descriptor (``@staticmethod @jit def f``): Python never calls the descriptor's
``__get__`` there (``staticmethod.__get__`` returns the object as it is), but mypy does, so ``obj.f(x, n)`` would be
checked as a bound method, with ``x`` taken for ``self``. The ``__get__`` signature hook answers with the
descriptor's own type instead, whatever the descriptor class.
"""

from __future__ import annotations

from mypy.nodes import ARG_OPT, ARG_POS, Decorator, MemberExpr, SuperExpr, TempNode
from mypy.plugin import MethodSigContext
from mypy.types import (
    AnyType,
    CallableType,
    FunctionLike,
    Instance,
    TypeOfAny,
    TypeType,
    TypeVarType,
    get_proper_type,
)


def staticmethod_get(ctx: MethodSigContext) -> FunctionLike | None:
    """``def (instance, owner=...) -> <the descriptor>`` when the attribute is a ``@staticmethod``, else ``None``."""
    context = ctx.context
    if not isinstance(context, (MemberExpr, SuperExpr)) or len(ctx.args) < 2 or not ctx.args[1]:
        return None
    owner_node = ctx.args[1][0]
    owner = get_proper_type(owner_node.type) if isinstance(owner_node, TempNode) else None
    if isinstance(owner, TypeType):
        owner = owner.item
    if isinstance(owner, TypeVarType):
        owner = get_proper_type(owner.upper_bound)
    if not isinstance(owner, Instance):
        return None
    sym = owner.type.get(context.name)
    if sym is None or not isinstance(sym.node, Decorator) or not sym.node.func.is_static:
        return None
    anything = AnyType(TypeOfAny.special_form)
    return CallableType(
        [anything, anything],
        [ARG_POS, ARG_OPT],
        [None, None],
        ctx.type,
        ctx.api.named_generic_type("builtins.function", []),
        name="__get__",
    )


def name_bound(ctx: MethodSigContext, sig: FunctionLike) -> FunctionLike:
    """Give the callable a descriptor's ``__get__`` returns the attribute's name (``apply of Model``).

    A call through ``super()`` has no fully qualified name, so mypy finds plugin hooks by the callee's own name;
    a bound ``Callable[P, R]`` has none, which would hide ``super().apply(...)`` from the call-site check.
    """
    context = ctx.context
    if not isinstance(context, (MemberExpr, SuperExpr)) or not isinstance(sig, CallableType):
        return sig
    ret = get_proper_type(sig.ret_type)
    if not isinstance(ret, CallableType) or ret.name is not None:
        return sig
    owner = ctx.type.type.name if isinstance(ctx.type, Instance) else "object"
    return sig.copy_modified(ret_type=ret.copy_modified(name=f"{context.name} of {owner}"))
