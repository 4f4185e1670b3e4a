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
    ARG_POS,
    ARG_STAR,
    ARG_STAR2,
    LDEF,
    ArgKind,
    CallExpr,
    Expression,
    IntExpr,
    ListExpr,
    MemberExpr,
    MypyFile,
    NameExpr,
    RefExpr,
    Statement,
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
from ._flow import body_of, key_of, made_once, reads_after
from ._fullnames import (
    DONATE_ALIAS,
    DONATING_TRANSFORMS,
    FUNCTOOLS_PARTIAL,
    JAX_JIT,
    PLAIN_DONATED_NAMES,
    PLAIN_STATIC_FUN,
    PLAIN_STATIC_MODULE,
    STAGING_METHODS,
)

__all__ = ["check_call", "check_local", "check_plain", "consumes", "has_donate", "mark", "mark_parameters"]

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
    actuals = [a for formal in sorted(donated) for a in formal_to_actual[formal] if kinds[a] not in (ARG_STAR, ARG_STAR2)]
    _follow(api, call, [args[a] for a in actuals], callee_name(call, sig))


def _body(api: TypeChecker) -> list[Statement] | None:
    """The statements of the function (or module) the call being checked is made in."""
    scope = api.scope
    current = getattr(scope, "current_function", None) or getattr(scope, "top_function", None)
    return body_of(current() if current is not None else None, api.tree.defs)


def _follow(api: TypeChecker, call: CallExpr, given: list[Expression], callee: str) -> None:
    """Report the first read after ``call`` of each value in ``given`` (the arguments it donates)."""
    body = _body(api)
    if body is None:
        return
    for arg in given:
        key = key_of(arg)
        read = reads_after(body, call, key) if key is not None else None
        if key is not None and read is not None:
            message = _messages.read_after_donation(".".join(key), callee, call.line, read.later_iteration)
            report(api, message, read.node, DONATED)


# -- a function jitted in the function that calls it ------------------------------------------------------------


def check_local(api: CheckerPluginInterface, call: CallExpr) -> None:
    """``update(state)`` where ``update = jax.jit(update_fn, donate_argnums=0)`` was made above it in the same
    function, from a function whose parameters its type does not name (a parameter, ``Callable[[S], S]``): the
    donation is read from the call that made ``update``, by position (or by name, for a keyword argument)."""
    callee = call.callee
    if not isinstance(callee, NameExpr) or callee.kind != LDEF or not isinstance(api, TypeChecker):
        return
    body = _body(api)
    made = made_once(body, callee.name, call) if body is not None else None
    options = _jit_options(made) if isinstance(made, CallExpr) else None
    if options is None or any(k.is_star() for k in call.arg_kinds):
        return
    positional = [a for a, k in zip(call.args, call.arg_kinds) if k == ARG_POS]
    given: list[Expression] = []
    for name, value in zip(options.arg_names, options.args):
        for item in (_literal(value) or ()) if name in ("donate_argnums", "donate_argnames") else ():
            if name == "donate_argnums" and isinstance(item, int) and 0 <= item < len(positional):
                given.append(positional[item])  # a negative position counts from the end of a signature unknown here
            elif name == "donate_argnames" and isinstance(item, str) and item in call.arg_names:
                given.append(call.args[call.arg_names.index(item)])
    _follow(api, call, given, callee.name)


def _jit_options(made: CallExpr) -> CallExpr | None:
    """The call holding the options of ``jax.jit(f, ...)``, ``js.jit(f, ...)``, ``jax.jit(...)(f)`` or
    ``partial(jax.jit, ...)(f)``."""
    jits = JAX_JIT | DONATING_TRANSFORMS
    if _names(made.callee, jits) and made.arg_kinds[:1] == [ARG_POS]:
        return made
    outer = made.callee
    if not isinstance(outer, CallExpr) or len(made.args) != 1:
        return None
    if _names(outer.callee, jits) and ARG_POS not in outer.arg_kinds:
        return outer
    if _names(outer.callee, {FUNCTOOLS_PARTIAL}) and outer.args and _names(outer.args[0], jits):
        return outer
    return None


def _names(expr: Expression, fullnames: frozenset[str] | set[str]) -> bool:
    return isinstance(expr, RefExpr) and expr.fullname in fullnames


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
    if attrs is None or PLAIN_DONATED_NAMES not in attrs:
        check_local(api, call)  # made from a function whose parameters its type does not name
        return
    if not isinstance(api, TypeChecker):
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
