"""Judge the value an argument will hold at run time, as the runtime judges it.

mypy infers an argument with the parameter's type as context, so under ``Static[Any]``, ``Static[dict[str, Any]]``
or ``Static[Mapping[str, Any]]`` a literal's items become ``Any`` and ``{"w": jnp.zeros(3)}`` looks static; under
``Static[object]`` ``[1, x]`` joins to ``list[object]``. So a ``dict``/``list``/``tuple``/``set`` literal is judged
item by item, nested literals too, and every other expression is inferred on its own, without context (``Box(x)``
is then ``Box[Array]``, not ``Box[Any]``). A call that builds a container whose declared items may say ``Any``
(``Registry(w=x)`` for ``class Registry(dict[str, Any])``, a ``TypedDict`` or a named tuple) has the values it
stores judged too. Inference happens in a throw-away type map; it costs one inference per
leaf of a literal, only for arguments bound to ``Static`` parameters.
"""

from __future__ import annotations

from typing import Final

from mypy.checker import TypeChecker
from mypy.nodes import (
    ARG_NAMED,
    ARG_POS,
    CallExpr,
    DictExpr,
    Expression,
    ListExpr,
    RefExpr,
    SetExpr,
    StarExpr,
    TupleExpr,
    TypeInfo,
)
from mypy.types import Type

from ._compat import local_type_map, quiet, throwaway_frame
from ._fullnames import FREEZABLE_CONTAINERS, NEVER_STATIC_PACKAGES
from ._hashability import judge, own_tuple_hash

# Literals nested deeper than this are judged as a whole.
_MAX_DEPTH: Final = 16


def judge_value(api: TypeChecker, expr: Expression, deps: set[str], depth: int = 0, *, freeze: bool = True) -> str | None:
    """Why the value of ``expr`` cannot be static, or ``None``. ``freeze=False``: why it does not hash as it is
    (plain ``jax.jit``): a dict, list or set literal is judged whole, a tuple's items one by one."""
    if depth > _MAX_DEPTH:
        return _judge_expression(api, expr, deps, freeze)
    if not freeze and not isinstance(expr, TupleExpr):
        reason = _judge_expression(api, expr, deps, freeze)
        if reason is None and isinstance(expr, CallExpr):
            # A named tuple hashes its items: ``Pair("layers", [64, 64])`` with ``b: Any`` holds a list.
            return _first(api, _tuple_items(expr, deps), deps, depth, freeze)
        return reason
    if isinstance(expr, DictExpr):
        for key, value in expr.items:
            parts = [value] if key is None else [key, value]  # ``{**other}``: judge ``other`` whole
            for part in parts:
                reason = judge_value(api, part, deps, depth + 1)
                if reason is not None:
                    return reason
        return None
    if isinstance(expr, (ListExpr, TupleExpr, SetExpr)):
        for item in expr.items:
            inner = item.expr if isinstance(item, StarExpr) else item
            reason = judge_value(api, inner, deps, depth + 1, freeze=freeze)
            if reason is not None:
                return reason
        return None
    if isinstance(expr, CallExpr) and _typeddict_by_keywords(expr):
        # ``MaskCfg(lr=0.1, masks=[])``: the values given are all it holds (an empty list of arrays is static).
        return _first(api, expr.args, deps, depth, freeze)
    reason = _judge_expression(api, expr, deps, freeze)
    if reason is None and isinstance(expr, CallExpr):
        return _first(api, _stored(expr, deps), deps, depth, freeze)
    return reason


def _first(api: TypeChecker, exprs: list[Expression], deps: set[str], depth: int, freeze: bool) -> str | None:
    for item in exprs:
        reason = judge_value(api, item, deps, depth + 1, freeze=freeze)
        if reason is not None:
            return reason
    return None


def _constructed(call: CallExpr) -> TypeInfo | None:
    callee = call.callee
    return callee.node if isinstance(callee, RefExpr) and isinstance(callee.node, TypeInfo) else None


def _typeddict_by_keywords(call: CallExpr) -> bool:
    info = _constructed(call)
    return info is not None and info.typeddict_type is not None and all(k == ARG_NAMED for k in call.arg_kinds)


def _tuple_items(call: CallExpr, deps: set[str]) -> list[Expression]:
    """The arguments a named tuple's constructor stores, when its hash is its items'."""
    info = _constructed(call)
    if info is None or info.tuple_type is None or info.fullname == "builtins.tuple" or own_tuple_hash(info, deps):
        return []
    return [a for a, kind in zip(call.args, call.arg_kinds) if not kind.is_star()]


def _stored(call: CallExpr, deps: set[str]) -> list[Expression]:
    """The argument expressions a container's constructor stores as they are: every argument of a named tuple;
    the keyword values of a dict (``TypedDict`` too), and a literal given to a builtin container or to a subclass
    that keeps its base's constructor."""
    info = _constructed(call)
    if info is None:
        return []
    if info.tuple_type is not None and info.fullname != "builtins.tuple":
        return _tuple_items(call, deps)
    if info.typeddict_type is None and not _builds_like_its_base(info):
        return []
    return [
        a
        for a, kind in zip(call.args, call.arg_kinds)
        if kind == ARG_NAMED or (kind == ARG_POS and isinstance(a, (DictExpr, ListExpr, TupleExpr, SetExpr)))
    ]


def _builds_like_its_base(info: TypeInfo) -> bool:
    """A builtin container, or a subclass whose own classes (up to the builtin) define no constructor: the
    standard library's (``OrderedDict``, ``defaultdict``, ``Counter``) store what they are given."""
    for base in info.mro:
        if base.fullname in FREEZABLE_CONTAINERS:
            return True
        if base.module_name.partition(".")[0] in NEVER_STATIC_PACKAGES:
            continue
        if "__init__" in base.names or "__new__" in base.names:
            return False
    return False


def _judge_expression(api: TypeChecker, expr: Expression, deps: set[str], freeze: bool = True) -> str | None:
    t = expression_type(api, expr, None)
    return judge(t, freeze=freeze, deps=deps) if t is not None else None


def expression_type(api: TypeChecker, expr: Expression, context: Type | None) -> Type | None:
    """Infer ``expr`` without touching mypy's type map or its error list (mypy checks it again right after)."""
    return checked_type(api, expr, context)[0]


def checked_type(api: TypeChecker, expr: Expression, context: Type | None) -> tuple[Type | None, bool]:
    """``expression_type`` and whether mypy found an error in ``expr`` (it reports it itself: one is enough)."""
    with (
        quiet(api) as errors,
        local_type_map(api),
        throwaway_frame(api.binder),  # no narrowing leaks (walrus)
    ):
        inferred = api.get_expression_type(expr, context)
    return inferred, errors.has_new_errors()
