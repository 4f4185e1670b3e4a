"""``static_argnames`` / ``static_argnums`` given to plain ``jax.jit`` and to jaxstatic's transforms.

* Names and positions are read from the option's type, so a bare string, a tuple and a ``Final`` constant
  (``NAMES: Final = ("config",)``) all count, and ``js.static_argnames(f)``/``js.static_argnums(f)`` are read
  from ``f``'s ``Static`` parameters; a value mypy cannot tell (built at run time) is not read.
* A name or position that matches no parameter fails when the transform is applied (jax raises ``ValueError``
  unless the function takes ``**kwargs``/``*args``; jaxstatic raises ``OptionError`` always, ``*args`` and
  ``**kwargs`` themselves included): ``[jaxstatic-argnames]``.
* Plain jax: the declared type of each parameter named must be hashable as it is (JAX freezes nothing).
* jaxstatic: the parameters named are static as ``Static[...]`` ones are, so they are marked so in the wrapper's
  ``ParamSpec`` and its call sites are checked like any other.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import (
    ARG_POS,
    ARG_STAR,
    ARG_STAR2,
    GDEF,
    AssignmentStmt,
    CallExpr,
    Context,
    Decorator,
    Expression,
    IntExpr,
    ListExpr,
    MemberExpr,
    NameExpr,
    RefExpr,
    StrExpr,
    TupleExpr,
    TypeAlias,
    UnaryExpr,
    Var,
)
from mypy.plugin import CheckerPluginInterface, FunctionContext, MethodContext
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
from ._calls import as_callable, expression_type
from ._chain import report
from ._errorcodes import ARGNAMES, UNHASHABLE
from ._fullnames import (
    FUNCTOOLS_PARTIAL,
    JAX_JIT,
    JAX_STATIC_OPTIONS,
    STATIC_ALIAS,
    STATIC_ARGNAMES,
    STATIC_ARGNUMS,
)
from ._hashability import judge
from ._markers import is_static
from ._spellings import transform_of

NAMES = frozenset({"static_argnames", "nondiff_argnames"})
"""Options naming parameters that become static: jit's, and custom_vjp/custom_jvp's (static there, as in JAX)."""
NUMS = frozenset({"static_argnums", "nondiff_argnums", "static_broadcasted_argnums"})
"""The same by position (``static_broadcasted_argnums``: pmap's)."""


# --- plain jax.jit -----------------------------------------------------------------------------------------------


def check_jax_jit_call(api: CheckerPluginInterface, sig: CallableType, call: CallExpr) -> None:
    """``jax.jit(f, static_argnames=...)``: called once per item of jax.jit's overload, act on the one with ``fun``."""
    if not sig.arg_kinds or sig.arg_kinds[0] != ARG_POS:
        return
    if not call.args or call.arg_kinds[0] != ARG_POS or not isinstance(api, TypeChecker):
        return
    fun_type = expression_type(api, call.args[0], None)
    fun = as_callable(fun_type) if fun_type is not None else None
    if fun is not None and not fun.is_ellipsis_args:
        _check_jax(api, fun, call, call.args[0])


def check_jax_jit_decorator(api: CheckerPluginInterface, dec: Decorator) -> None:
    """``@functools.partial(jax.jit, static_argnames=...)`` or ``@jax.jit(static_argnames=...)`` over a function."""
    original = dec.func.type
    if not isinstance(original, CallableType) or not isinstance(api, TypeChecker):
        return
    for through_partial in (True, False):
        options = options_of(dec, through_partial=through_partial, api=api)
        if options is not None:
            _check_jax(api, original, options)


def check_jax_applied(
    api: CheckerPluginInterface, ctx: FunctionContext | MethodContext, options: CallExpr | None
) -> None:
    """``jax.jit(static_argnames=...)(f)``, ``partial(jax.jit, static_argnames=...)(f)``: checked as
    ``jax.jit(f, static_argnames=...)`` is."""
    if options is None or not ctx.arg_types or not ctx.arg_types[0] or not ctx.args[0]:
        return
    fun = as_callable(ctx.arg_types[0][0])
    if fun is not None and not fun.is_ellipsis_args and isinstance(api, TypeChecker):
        _check_jax(api, fun, options, ctx.args[0][0])


def options_of(
    context: object, *, through_partial: bool, api: CheckerPluginInterface | None = None
) -> CallExpr | None:
    """The call holding ``jax.jit``'s options when a function is being jitted in ``context``: the decorator
    ``@jax.jit(...)``/``@partial(jax.jit, ...)``, or the callee of ``jax.jit(...)(f)``/``partial(jax.jit, ...)(f)``.
    With ``api``, a decorator ``@jit_static`` naming a module variable assigned such a call once counts too."""
    if isinstance(context, Decorator):
        held = [_held_call(api, d) for d in context.decorators] if api is not None else []
        candidates = [d for d in context.decorators if isinstance(d, CallExpr)] + [h for h in held if h is not None]
    elif isinstance(context, CallExpr) and isinstance(context.callee, CallExpr):
        candidates = [context.callee]
    else:
        return None
    for d in candidates:
        if through_partial and refers_to(d, {FUNCTOOLS_PARTIAL}) and d.args and refers_to(d.args[0], JAX_STATIC_OPTIONS):
            return d
        if not through_partial and refers_to(d, JAX_JIT) and ARG_POS not in d.arg_kinds:
            return d
    return None


def _check_jax(
    api: TypeChecker, fun: CallableType, call: CallExpr, written: Expression | None = None
) -> None:
    function = _function_name(fun, written)
    for index, where in _resolve(api, fun, call, lenient=True, written=written):
        reason = judge(fun.arg_types[index], freeze=False)
        if reason is not None:
            name = fun.arg_names[index] or f"#{index}"
            report(api, _messages.not_hashable(name, function, reason), where, UNHASHABLE)


# --- jaxstatic transforms ----------------------------------------------------------------------------------------


def mark_static(ctx: FunctionContext, options: CallExpr | None, returned: Type) -> Type | None:
    """``returned`` with the parameters named in ``options`` (and a generic function's ``Static`` ones) marked
    ``Static`` in its ``ParamSpec`` arguments; ``None`` when nothing changes."""
    api = ctx.api
    if not ctx.arg_types or not ctx.arg_types[0] or not isinstance(api, TypeChecker):
        return None
    fun = as_callable(ctx.arg_types[0][0])
    if fun is None or fun.is_ellipsis_args:
        return None
    # A generic function's ``Static[T]`` loses its mark when mypy binds the ``ParamSpec`` (``T`` is solved against
    # the wrapper's own type variables): marked again, so its call sites judge the value given.
    names = {n for n, t in zip(fun.arg_names, fun.arg_types) if is_static(t)} if fun.variables else set()
    if options is not None:
        written = ctx.args[0][0] if ctx.args[0] else None
        names |= {fun.arg_names[i] for i, _ in _resolve(api, fun, options, lenient=False, written=written)}
    alias = _static_alias(api)
    ret = get_proper_type(returned)
    if not names or alias is None or not isinstance(ret, Instance):
        return None
    args = [_mark(a, names, alias) for a in ret.args]
    return ret.copy_modified(args=args)


def options_call(ctx: FunctionContext, transform_names: set[str]) -> CallExpr | None:
    """The call that holds the transform's options: ``jit(f, ...)``, ``@jit(...)``, ``jit(...)(f)``."""
    context = ctx.context
    if isinstance(context, Decorator):
        return next(
            (d for d in context.decorators if isinstance(d, CallExpr) and transform_of(d) in transform_names),
            None,
        )
    if isinstance(context, CallExpr):
        if isinstance(context.callee, CallExpr) and refers_to(context.callee, transform_names):
            return context.callee
        return context
    return None


def _mark(t: Type, names: set[str | None], alias: TypeAlias) -> Type:
    p = get_proper_type(t)
    if not isinstance(p, Parameters):
        return t
    types = [
        TypeAliasType(alias, [a]) if n in names and not is_static(a) else a
        for n, a in zip(p.arg_names, p.arg_types)
    ]
    return p.copy_modified(arg_types=types)


def _static_alias(api: TypeChecker) -> TypeAlias | None:
    module, _, name = STATIC_ALIAS.rpartition(".")
    tree = api.modules.get(module)
    sym = tree.names.get(name) if tree is not None else None
    return sym.node if sym is not None and isinstance(sym.node, TypeAlias) else None


# --- reading the options -----------------------------------------------------------------------------------------


def _resolve(
    api: TypeChecker,
    fun: CallableType,
    call: CallExpr,
    *,
    lenient: bool,
    written: Expression | None = None,
    quiet: bool = False,
) -> list[tuple[int, Context]]:
    """The parameter indices ``call``'s options name, reporting those that name none.

    ``lenient`` is jax's rule: unknown names are accepted when ``fun`` takes ``**kwargs``, positions past the end
    when it takes ``*args``. ``quiet``: report nothing (the options were judged where they were written).
    """
    found: list[tuple[int, Context]] = []
    function = _function_name(fun, written)
    named = [n for n, k in zip(fun.arg_names, fun.arg_kinds) if n and not k.is_star()]
    positional = [i for i, k in enumerate(fun.arg_kinds) if k.is_positional() and k != ARG_STAR]
    shown = [fun.arg_names[i] or f"#{i}" for i in positional]
    for option, value in zip(call.arg_names, call.args):
        if option in NAMES:
            for name in _strings(api, value) or []:
                index = _index_by_name(fun, name)
                if index is not None:
                    found.append((index, value))
                elif name not in named and not (lenient and ARG_STAR2 in fun.arg_kinds) and not quiet:
                    report(api, _messages.unknown_name(option, name, function, named), value, ARGNAMES)
        elif option in NUMS:
            for number in _ints(api, value) or []:
                if -len(positional) <= number < len(positional):
                    found.append((positional[number], value))
                elif not (lenient and ARG_STAR in fun.arg_kinds) and not quiet:
                    report(api, _messages.unknown_position(option, number, function, shown), value, ARGNAMES)
    return found


def resolve_quietly(api: TypeChecker, fun: CallableType, call: CallExpr) -> list[int]:
    """The indices of the parameters plain ``jax.jit``'s options in ``call`` make static, reporting nothing."""
    return [index for index, _ in _resolve(api, fun, call, lenient=True, quiet=True)]


def _strings(api: TypeChecker, expr: Expression) -> list[str] | None:
    if isinstance(expr, StrExpr):
        return [expr.value]
    if isinstance(expr, CallExpr) and refers_to(expr, {STATIC_ARGNAMES}):
        fun = _read_from(api, expr)
        return None if fun is None else [str(n) for n, t in zip(fun.arg_names, fun.arg_types) if is_static(t)]
    if isinstance(expr, (TupleExpr, ListExpr)) and all(isinstance(i, StrExpr) for i in expr.items):
        return [i.value for i in expr.items if isinstance(i, StrExpr)]
    values = _literals(expression_type(api, expr, None))
    return [v for v in values if isinstance(v, str)] if values is not None else None


def _ints(api: TypeChecker, expr: Expression) -> list[int] | None:
    if isinstance(expr, IntExpr):
        return [expr.value]
    if isinstance(expr, UnaryExpr) and expr.op == "-" and isinstance(expr.expr, IntExpr):
        return [-expr.expr.value]
    if isinstance(expr, CallExpr) and refers_to(expr, {STATIC_ARGNUMS}):
        fun = _read_from(api, expr)
        positional = [t for t, k in zip(fun.arg_types, fun.arg_kinds) if k.is_positional() and k != ARG_STAR] if fun else None
        return None if positional is None else [i for i, t in enumerate(positional) if is_static(t)]
    if isinstance(expr, (TupleExpr, ListExpr)):
        items = [_ints(api, item) for item in expr.items]
        return None if any(i is None for i in items) else [n for i in items for n in i or []]
    values = _literals(expression_type(api, expr, None))
    return [v for v in values if isinstance(v, int) and not isinstance(v, bool)] if values else None


def _read_from(api: TypeChecker, call: CallExpr) -> CallableType | None:
    """The signature ``js.static_argnames(f)``/``js.static_argnums(f)`` reads its answer from: ``f``'s."""
    if len(call.args) != 1 or call.arg_kinds[0] != ARG_POS:
        return None
    fun_type = expression_type(api, call.args[0], None)
    fun = as_callable(fun_type) if fun_type is not None else None
    return fun if fun is not None and not fun.is_ellipsis_args else None


def _literals(t: Type | None, depth: int = 0) -> list[object] | None:
    """The literal values a type pins down (``tuple[Literal['a'], Literal['b']]``), or ``None``."""
    p = get_proper_type(t) if t is not None else None
    if isinstance(p, Instance) and p.last_known_value is not None:
        p = p.last_known_value
    if isinstance(p, LiteralType):
        return [p.value]
    if isinstance(p, TupleType) and depth < 2:
        items = [_literals(i, depth + 1) for i in p.items]
        return None if any(i is None for i in items) else [v for i in items for v in i or []]
    return None


def _index_by_name(fun: CallableType, name: str) -> int | None:
    for i, (n, kind) in enumerate(zip(fun.arg_names, fun.arg_kinds)):
        if n == name and kind not in (ARG_STAR, ARG_STAR2):
            return i
    return None


def _held_call(api: CheckerPluginInterface, expr: Expression) -> CallExpr | None:
    """``functools.partial(jax.jit, ...)`` when ``expr`` names a variable of this module assigned it once, at the
    top level (``jit_static = partial(jax.jit, static_argnames="mode")``; ``@jit_static``). Variables of other
    modules are not read: their definitions are gone when they come from mypy's cache."""
    var = expr.node if isinstance(expr, NameExpr) and expr.kind == GDEF else None
    if not isinstance(var, Var) or not isinstance(api, TypeChecker):
        return None
    held = get_proper_type(var.type)
    if not isinstance(held, Instance) or held.type.fullname != FUNCTOOLS_PARTIAL:
        return None
    if var.fullname != f"{api.tree.fullname}.{var.name}":
        return None
    assigned = [
        stmt.rvalue
        for stmt in api.tree.defs
        if isinstance(stmt, AssignmentStmt) and any(isinstance(lv, NameExpr) and lv.node is var for lv in stmt.lvalues)
    ]
    return assigned[0] if len(assigned) == 1 and isinstance(assigned[0], CallExpr) else None


def refers_to(expr: Expression, names: set[str] | frozenset[str]) -> bool:
    if isinstance(expr, CallExpr):
        expr = expr.callee
    return isinstance(expr, RefExpr) and expr.fullname in names


def _function_name(fun: CallableType, written: Expression | None = None) -> str:
    """The function's name; for a transformed object (whose signature is its ``__call__``), the name it is
    written with: ``f`` in ``jit(f)``, ``vmap(jit(f))``."""
    name = (fun.name or "function").split(" of ")[0]
    while isinstance(written, CallExpr) and written.args:
        written = written.args[0]
    if name == "__call__" and isinstance(written, (NameExpr, MemberExpr)):
        return written.name
    return name
