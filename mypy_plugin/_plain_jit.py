"""Call sites of functions compiled by plain ``jax.jit(static_argnames=...)``: the values must hash as they are.

JAX freezes nothing: a static argument is hashed as given, so ``step(x, {"lr": 0.1})`` fails at run time with
"Non-hashable static arguments are not supported" even when ``cfg`` is declared ``Any`` (the declared type, checked
where ``jax.jit`` is applied, cannot tell). The parameters ``jax.jit`` makes static are known only where it is
applied, so the plugin writes them into the type ``jax.jit`` returns (``mark``): entries of the instance's
``extra_attrs`` (the names, the function, the module), as mypy's own ``functools.partial`` support keeps the bound
signature, so the mark follows the value into variables and across modules. A call of a marked value (``check``) judges each static argument's value,
tuple literals item by item, by plain ``hash()``.

Before mypy 1.18 the cache drops the mark (``_compat.EXTRA_ATTRS_CACHED``), so a module that uses a jitted function
from a cached module would be checked on a cold run and not on the next: there, only calls in the module that
applied ``jax.jit`` are checked, so that every run gives the same errors.

Spellings marked: ``jax.jit(f, static_argnames=...)``, ``jax.jit(static_argnames=...)(f)`` and
``functools.partial(jax.jit, static_argnames=...)(f)``, as calls or as decorators. A method called through an
instance gets the instance first, as at run time; with the stubs, their ``__get__`` makes a new type without the
mark, so such calls are not checked there.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from mypy.checker import TypeChecker
from mypy.nodes import (
    ARG_NAMED_OPT,
    ARG_POS,
    ARG_STAR,
    ARG_STAR2,
    ArgKind,
    CallExpr,
    Decorator,
    Expression,
    MemberExpr,
    Var,
)
from mypy.plugin import CheckerPluginInterface
from mypy.types import CallableType, Instance, LiteralType, TupleType, Type, get_proper_type

from . import _messages
from ._argnames import refers_to, resolve_quietly
from ._calls import as_callable, callee_name, has_static, map_arguments, value_reason
from ._chain import report
from ._compat import EXTRA_ATTRS_CACHED
from ._errorcodes import UNHASHABLE
from ._fullnames import (
    JAX_PMAP,
    JIT_WRAPPED,
    PLAIN_STATIC_BY,
    PLAIN_STATIC_FUN,
    PLAIN_STATIC_MODULE,
    PLAIN_STATIC_NAMES,
)
from ._hashability import judge
from ._markers import is_static
from ._values import judge_value

__all__ = ["check", "mark", "mark_partial"]


def mark(api: CheckerPluginInterface, returned: Type, fun_type: Type, options: CallExpr | None) -> Type | None:
    """``returned`` (a jitted function's type) carrying the static parameters ``options`` names, or ``None`` when
    there is nothing to carry."""
    ret = get_proper_type(returned)
    fun = as_callable(fun_type)
    if (options is None or fun is None or fun.is_ellipsis_args or not isinstance(ret, Instance)
            or ret.type.fullname not in JIT_WRAPPED or not isinstance(api, TypeChecker)):
        return None
    names = sorted({str(fun.arg_names[i]) for i in resolve_quietly(api, fun, options) if fun.arg_names[i]})
    if not names:
        return None
    str_type = api.named_generic_type("builtins.str", [])
    held = TupleType([LiteralType(n, str_type) for n in names], api.named_generic_type("builtins.tuple", [str_type]))
    marked = ret.copy_with_extra_attr(PLAIN_STATIC_NAMES, held).copy_with_extra_attr(PLAIN_STATIC_FUN, fun)
    by = "jax.pmap" if refers_to(options, JAX_PMAP) or (options.args and refers_to(options.args[0], JAX_PMAP)) else ""
    marked = marked.copy_with_extra_attr(PLAIN_STATIC_BY, LiteralType(by or "jax.jit", str_type))
    return marked.copy_with_extra_attr(PLAIN_STATIC_MODULE, LiteralType(api.tree.fullname, str_type))


def check(api: CheckerPluginInterface, receiver: Type, call: CallExpr, *, static_checked: bool) -> None:
    """A call of a value ``mark`` marked: each argument bound to a static parameter must hash as it is.

    ``static_checked``: the call's signature (the stubs') has ``Static[...]`` parameters, whose values the call-site
    check judges by jaxstatic's rule; for those only what that rule accepts and ``hash()`` does not is said here.
    """
    p = get_proper_type(receiver)
    attrs = p.extra_attrs.attrs if isinstance(p, Instance) and p.extra_attrs else None
    if attrs is None or PLAIN_STATIC_NAMES not in attrs or not isinstance(api, TypeChecker):
        return
    if not EXTRA_ATTRS_CACHED and _module_of(attrs) != api.tree.fullname:
        return  # a cached run would not see the mark: say nothing on this run either
    bound = _bound_to(api, call)
    if bound is _UNKNOWN:
        return
    marked = _marked(attrs)
    if marked is None:
        return
    fun, _ = marked
    args, kinds, arg_names = call.args, call.arg_kinds, call.arg_names
    if isinstance(bound, Expression):  # ``model.step(x, cfg)``: jax passes ``model`` first, as a method gets it
        args, kinds, arg_names = [bound, *args], [ARG_POS, *kinds], [None, *arg_names]
    _check_values(api, attrs, _Arguments(args, kinds, arg_names), callee_name(call, fun), static_checked)


def mark_partial(api: CheckerPluginInterface, call: CallExpr, bound_from: Type, returned: Type) -> Type | None:
    """``functools.partial(step, ...)`` of a value ``mark`` marked (or of such a partial, at any depth): the
    arguments bound now are judged now, and the partial carries the mark, with the parameters left to bind."""
    source, ret = get_proper_type(bound_from), get_proper_type(returned)
    attrs = source.extra_attrs.attrs if isinstance(source, Instance) and source.extra_attrs else None
    if attrs is None or not isinstance(ret, Instance) or not isinstance(api, TypeChecker):
        return None
    if not EXTRA_ATTRS_CACHED and _module_of(attrs) != api.tree.fullname:
        return None  # as in ``check``: every run says the same
    marked = _marked(attrs)
    if marked is None:
        return None
    fun, _ = marked
    bound = _Arguments(call.args[1:], call.arg_kinds[1:], call.arg_names[1:])
    through = as_callable(source)  # with the stubs: Static parameters there were judged by jaxstatic's rule
    _check_values(api, attrs, bound, callee_name(call, fun), through is not None and has_static(through))
    left = _left_to_bind(fun, bound)
    if left is None:
        return None
    for key in (PLAIN_STATIC_NAMES, PLAIN_STATIC_MODULE, PLAIN_STATIC_BY):
        if key in attrs:
            ret = ret.copy_with_extra_attr(key, attrs[key])
    return ret.copy_with_extra_attr(PLAIN_STATIC_FUN, left)


class _Arguments(NamedTuple):
    exprs: list[Expression]
    kinds: list[ArgKind]
    names: list[str | None]


def _marked(attrs: dict[str, Type]) -> tuple[CallableType, set[str]] | None:
    """The function ``mark`` kept and the names of its static parameters."""
    fun, held = get_proper_type(attrs.get(PLAIN_STATIC_FUN)), get_proper_type(attrs.get(PLAIN_STATIC_NAMES))
    if not isinstance(fun, CallableType) or not isinstance(held, TupleType) or PLAIN_STATIC_MODULE not in attrs:
        return None
    names = {n.value for n in map(get_proper_type, held.items) if isinstance(n, LiteralType)}
    return fun, {n for n in names if isinstance(n, str)}


def _left_to_bind(fun: CallableType, bound: _Arguments) -> CallableType | None:
    """``fun``'s parameters after a ``partial`` bound ``bound``: those bound by position are gone, those bound by
    keyword may be given again (as ``functools.partial`` allows)."""
    formal_to_actual = map_arguments(fun, bound.kinds, bound.names)
    if formal_to_actual is None:
        return None
    kinds, keep = [], []
    for formal, actuals in enumerate(formal_to_actual):
        kind = fun.arg_kinds[formal]
        if actuals and not kind.is_star():
            if any(bound.kinds[a] in (ARG_POS, ARG_STAR) for a in actuals):
                continue
            kind = ARG_NAMED_OPT
        keep.append(formal)
        kinds.append(kind)
    return fun.copy_modified(
        arg_types=[fun.arg_types[i] for i in keep], arg_kinds=kinds, arg_names=[fun.arg_names[i] for i in keep]
    )


def _check_values(
    api: TypeChecker, attrs: dict[str, Type], given: _Arguments, callee: str, static_checked: bool
) -> None:
    marked = _marked(attrs)
    if marked is None:
        return
    fun, names = marked
    by = get_proper_type(attrs.get(PLAIN_STATIC_BY))
    transform = by.value if isinstance(by, LiteralType) and isinstance(by.value, str) else "jax.jit"
    args, kinds = given.exprs, given.kinds
    formal_to_actual = map_arguments(fun, kinds, given.names) or []
    if sum(map(len, formal_to_actual)) != len(args):
        return  # arguments the function does not take: it fails at run time whatever their values
    for formal, actuals in enumerate(formal_to_actual):
        declared = fun.arg_types[formal]
        if fun.arg_names[formal] not in names or judge(declared, freeze=False) is not None:
            continue  # not static, or its declared type was reported where jax.jit was applied
        for actual in actuals:
            if kinds[actual] in (ARG_STAR, ARG_STAR2):
                continue  # ``f(*xs)``: which value lands where is unknown
            arg = args[actual]
            if static_checked and is_static(declared) and judge_value(api, arg, set()) is not None:
                continue  # said by the call-site check
            reason = value_reason(api, arg, declared, freeze=False)
            if reason is not None:
                message = _messages.not_hashable_value(str(fun.arg_names[formal]), callee, reason, transform)
                report(api, message, arg, UNHASHABLE)


def _module_of(attrs: dict[str, Type]) -> object:
    where = get_proper_type(attrs.get(PLAIN_STATIC_MODULE))
    return where.value if isinstance(where, LiteralType) else None


_UNKNOWN: Final = object()


def _bound_to(api: TypeChecker, call: CallExpr) -> Expression | object | None:
    """What jax passes before the call's own arguments: ``obj`` in ``obj.step(...)`` when ``step`` is set in the body
    of ``obj``'s class (decorated, or assigned there), since jax's jitted function binds like a method; ``None``
    when nothing is (a function, a static method, an attribute set on the instance in ``__init__``); ``_UNKNOWN``
    for a class method."""
    callee = call.callee
    if not isinstance(callee, MemberExpr):
        return None
    owner = get_proper_type(api.lookup_type_or_none(callee.expr))
    sym = owner.type.get(callee.name) if isinstance(owner, Instance) else None
    node = sym.node if sym is not None else None
    if isinstance(node, Decorator):
        return _UNKNOWN if node.func.is_class else None if node.func.is_static else callee.expr
    if isinstance(node, Var) and node.is_initialized_in_class and not node.is_staticmethod:
        return _UNKNOWN if node.is_classmethod else callee.expr
    return None
