"""``[jaxstatic-donated]``: a value passed to a donated parameter and read again before it is rebound.

A call consumes what it donates: ``new = step(params, batch)`` deletes ``params``' buffers, and a later read of
``params`` fails at run time ("Array has been deleted"). The signature says which parameters are consumed: those
declared ``Donate[...]`` (kept by mypy as the alias), or named by ``donate_argnums``/``donate_argnames`` where plain
``jax.jit`` is applied (``mark``, carried in the returned type's ``extra_attrs`` as ``_plain_jit`` carries the static
ones). At each such call, a plain name or attribute path given to a donated parameter is followed through the rest
of the enclosing function (``_flow``); the first read before a rebinding is reported there, naming the call.
"""

from __future__ import annotations

from typing import Final

from mypy.checker import TypeChecker
from mypy.nodes import (
    ARG_STAR,
    ARG_STAR2,
    ArgKind,
    CallExpr,
    Expression,
    IntExpr,
    ListExpr,
    MemberExpr,
    MypyFile,
    RefExpr,
    StrExpr,
    TupleExpr,
    TypeAlias,
    UnaryExpr,
)
from mypy.plugin import CheckerPluginInterface
from mypy.types import (
    CallableType,
    Instance,
    LiteralType,
    Parameters,
    TupleType,
    Type,
    TypeAliasType,
    get_proper_type,
)

from . import _messages
from ._calls import as_callable, callee_name, map_arguments
from ._chain import report
from ._compat import EXTRA_ATTRS_CACHED
from ._errorcodes import DONATED
from ._flow import body_of, key_of, reads_after
from ._fullnames import (
    DONATE_ALIAS,
    PLAIN_DONATED_NAMES,
    PLAIN_STATIC_FUN,
    PLAIN_STATIC_MODULE,
    STAGING_METHODS,
)

__all__ = ["check_call", "check_plain", "consumes", "has_donate", "mark", "mark_parameters"]

_MAX_ALIAS_CHAIN: Final = 16


def _is_donate(t: Type) -> bool:
    for _ in range(_MAX_ALIAS_CHAIN):
        if not isinstance(t, TypeAliasType) or t.alias is None:
            return False
        if t.alias.fullname == DONATE_ALIAS:
            return True
        t = t._expand_once()
    return False


def has_donate(sig: CallableType) -> bool:
    """The fast path, run for every call mypy checks: a ``Donate[...]`` parameter at the top level."""
    for t in sig.arg_types:  # noqa: SIM110 -- a loop beats any(<genexpr>) here
        if isinstance(t, TypeAliasType) and _is_donate(t):
            return True
    return False


def consumes(fullname: str) -> bool:
    """Whether calling the method ``fullname`` runs the program (``lower``, ``trace`` and ``eval_shape`` of a
    jaxstatic function take the same arguments, and only read their shapes)."""
    return not (fullname.startswith("jaxstatic.") and fullname.rpartition(".")[2] in STAGING_METHODS)


def check_call(api: CheckerPluginInterface, sig: CallableType, call: CallExpr) -> None:
    """A call of a function whose signature declares ``Donate[...]`` parameters."""
    donated = {i for i, t in enumerate(sig.arg_types) if _is_donate(t)}
    _check(api, sig, call, donated, call.args, call.arg_kinds, call.arg_names)


def _check(api: CheckerPluginInterface, sig: CallableType, call: CallExpr, donated: set[int],
           args: list[Expression], kinds: list[ArgKind], names: list[str | None]) -> None:
    if not donated or not isinstance(api, TypeChecker):
        return
    formal_to_actual = map_arguments(sig, kinds, names)
    if formal_to_actual is None or sum(map(len, formal_to_actual)) != len(args):
        return
    scope = api.scope
    current = getattr(scope, "current_function", None) or getattr(scope, "top_function", None)
    body = body_of(current() if current is not None else None, api.tree.defs)
    if body is None:
        return
    for formal in sorted(donated):
        for actual in formal_to_actual[formal]:
            if kinds[actual] in (ARG_STAR, ARG_STAR2):
                continue
            key = key_of(args[actual])
            if key is None:
                continue
            read = reads_after(body, call, key)
            if read is not None:
                message = _messages.read_after_donation(".".join(key), callee_name(call, sig), call.line,
                                                        read.later_iteration)
                report(api, message, read.node, DONATED)


# -- plain jax.jit ----------------------------------------------------------------------------------------------


def mark(api: CheckerPluginInterface, returned: Type, fun_type: Type, options: CallExpr | None) -> Type | None:
    """``returned`` (a ``jax.jit``'s type) carrying the names ``donate_argnums``/``donate_argnames`` give."""
    ret, fun = get_proper_type(returned), as_callable(fun_type)
    if options is None or fun is None or not isinstance(ret, Instance) or not isinstance(api, TypeChecker):
        return None
    names = sorted(_donated_names(fun, options))
    if not names:
        return None
    str_type = api.named_generic_type("builtins.str", [])
    held = TupleType([LiteralType(n, str_type) for n in names], api.named_generic_type("builtins.tuple", [str_type]))
    marked = ret.copy_with_extra_attr(PLAIN_DONATED_NAMES, held)
    attrs = ret.extra_attrs.attrs if ret.extra_attrs else {}
    if PLAIN_STATIC_FUN not in attrs:
        marked = marked.copy_with_extra_attr(PLAIN_STATIC_FUN, fun)
    if PLAIN_STATIC_MODULE not in attrs:
        marked = marked.copy_with_extra_attr(PLAIN_STATIC_MODULE, LiteralType(api.tree.fullname, str_type))
    return marked


def mark_parameters(api: CheckerPluginInterface, returned: Type, fun_type: Type,
                    options: CallExpr | None) -> Type | None:
    """``returned`` (``js.jit``'s or ``js.pmap``'s type, generic in the function's parameters) with the parameters
    ``donate_argnums``/``donate_argnames`` name written ``Donate[...]``: its calls are then checked as those of a
    function declaring them, in this module and in any that imports it (the type is what mypy's cache keeps)."""
    ret, fun = get_proper_type(returned), as_callable(fun_type)
    if options is None or fun is None or not isinstance(ret, Instance) or not isinstance(api, TypeChecker):
        return None
    names = _donated_names(fun, options)
    module, _, name = DONATE_ALIAS.rpartition(".")
    tree = api.modules.get(module)
    sym = tree.names.get(name) if tree is not None else None
    alias = sym.node if sym is not None else None
    if not names or not isinstance(alias, TypeAlias):
        return None
    return ret.copy_modified(args=[_marked(a, names, alias) for a in ret.args])


def _marked(t: Type, names: set[str], alias: TypeAlias) -> Type:
    p = get_proper_type(t)
    if not isinstance(p, Parameters):
        return t
    types = [TypeAliasType(alias, [a]) if n in names and not _is_donate(a) else a
             for n, a in zip(p.arg_names, p.arg_types)]
    return p.copy_modified(arg_types=types)


def _literal(expr: Expression) -> list[object] | None:
    if isinstance(expr, (TupleExpr, ListExpr)):
        items = [_literal(e) for e in expr.items]
        return None if any(i is None or len(i) != 1 for i in items) else [i[0] for i in items if i]
    if isinstance(expr, IntExpr):
        return [expr.value]
    if isinstance(expr, UnaryExpr) and expr.op == "-" and isinstance(expr.expr, IntExpr):
        return [-expr.expr.value]
    if isinstance(expr, StrExpr):
        return [expr.value]
    return None


def _donated_names(fun: CallableType, options: CallExpr) -> set[str]:
    """The parameter names an options call donates, when its values are literals (otherwise none: silent)."""
    positional = [n for n, k in zip(fun.arg_names, fun.arg_kinds) if k.is_positional() and n is not None]
    out: set[str] = set()
    for name, value in zip(options.arg_names, options.args):
        items = _literal(value) if name in ("donate_argnums", "donate_argnames") else None
        for item in items or ():
            if name == "donate_argnums" and isinstance(item, int) and -len(positional) <= item < len(positional):
                out.add(positional[item])
            elif name == "donate_argnames" and isinstance(item, str):
                out.add(item)
    return out


def check_plain(api: CheckerPluginInterface, receiver: Type, call: CallExpr) -> None:
    """A call of a value ``mark`` marked."""
    p = get_proper_type(receiver)
    attrs = p.extra_attrs.attrs if isinstance(p, Instance) and p.extra_attrs else None
    if attrs is None or PLAIN_DONATED_NAMES not in attrs or not isinstance(api, TypeChecker):
        return
    where = get_proper_type(attrs.get(PLAIN_STATIC_MODULE))
    if not EXTRA_ATTRS_CACHED and not (isinstance(where, LiteralType) and where.value == api.tree.fullname):
        return  # a cached run would not see the mark: say nothing on this run either
    fun, held = get_proper_type(attrs.get(PLAIN_STATIC_FUN)), get_proper_type(attrs[PLAIN_DONATED_NAMES])
    callee = call.callee
    method = isinstance(callee, MemberExpr) and not (isinstance(callee.expr, RefExpr)
                                                     and isinstance(callee.expr.node, MypyFile))
    if not isinstance(fun, CallableType) or not isinstance(held, TupleType) or method:
        return  # a method of a class: what jax binds first is not followed (a module's function is: ``S.step``)
    names = {t.value for t in map(get_proper_type, held.items) if isinstance(t, LiteralType)}
    donated = {i for i, n in enumerate(fun.arg_names) if n in names}
    _check(api, fun, call, donated, call.args, call.arg_kinds, call.arg_names)
