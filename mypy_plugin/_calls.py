"""Check ``[jaxstatic-unhashable]`` at call sites: the value bound to a ``Static[...]`` parameter must be static.

The check runs in signature hooks, which mypy calls once per call before it checks the arguments, with the callee's
declared signature (for methods, already bound; for a transform's wrapper such as ``JitFunction.__call__``, with
its ``ParamSpec`` filled in, whatever the wrapper class). Values are judged as the runtime will see them
(``_values``), in a throw-away type map.
"""

from __future__ import annotations

from collections.abc import Sequence

from mypy.argmap import map_actuals_to_formals
from mypy.checker import TypeChecker
from mypy.erasetype import erase_typevars
from mypy.nodes import (
    ARG_STAR,
    ARG_STAR2,
    GDEF,
    ArgKind,
    CallExpr,
    Decorator,
    Expression,
    FuncDef,
    MemberExpr,
    NameExpr,
    RefExpr,
    SuperExpr,
    TypeInfo,
)
from mypy.plugin import CheckerPluginInterface
from mypy.subtypes import find_member, is_subtype
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    Overloaded,
    Type,
    TypeOfAny,
    TypeType,
    TypeVarType,
    get_proper_type,
)

from . import _deps, _messages, _splats
from ._chain import report
from ._errorcodes import UNHASHABLE
from ._fullnames import BOUND_METHOD, DATACLASS_REPLACE, FUNCTOOLS_PARTIAL, PARTIAL_ATTR
from ._hashability import judge
from ._markers import has_static as _has_static, is_static
from ._records import converted_field, is_pytree_dataclass
from ._values import checked_type, expression_type, judge_value

__all__ = [
    "as_callable",
    "callee_name",
    "check_bound_self",
    "check_call",
    "check_construction_through_type",
    "expression_type",
    "has_static",
    "map_arguments",
    "named_after_callee",
    "value_reason",
]


def has_static(sig: CallableType) -> bool:
    return _has_static(sig.arg_types)


def as_callable(t: Type) -> CallableType | None:
    """The signature a value of type ``t`` is called with, when it is one plain signature."""
    p = get_proper_type(t)
    if isinstance(p, CallableType):
        return p
    if isinstance(p, Instance):
        partial = p.extra_attrs.attrs.get(PARTIAL_ATTR) if p.extra_attrs else None
        if partial is not None:
            return as_callable(partial)
        call = find_member("__call__", p, p, is_operator=True)
        if call is not None:
            c = get_proper_type(call)
            return c if isinstance(c, CallableType) else None
    return None


def check_call(
    api: CheckerPluginInterface, sig: CallableType, call: CallExpr, skip: int = 0
) -> None:
    """Check the arguments of ``call`` (after the first ``skip``) against the Static parameters of ``sig``."""
    if not isinstance(api, TypeChecker):
        return
    args, kinds, names = call.args[skip:], call.arg_kinds[skip:], call.arg_names[skip:]
    types = _splats.star_types(api, args, kinds)
    formal_to_actual = map_arguments(sig, kinds, names, types)
    if formal_to_actual is None:
        return
    if _is_overload_item(sig) and not _chosen_overload_item(api, sig, call, skip):
        return
    for formal, actuals in enumerate(formal_to_actual):
        declared = sig.arg_types[formal]
        if not is_static(declared):
            continue
        for actual in actuals:
            if kinds[actual] not in (ARG_STAR, ARG_STAR2):
                _check_argument(api, sig, formal, args[actual], declared, call)
            elif types is not None:  # ``f(*xs)``, ``f(**kw)``: judged where the splat says exactly what lands here
                spread = _splats.given(sig.arg_kinds, sig.arg_names, formal, actual, args, kinds, formal_to_actual, types)
                for value in spread:
                    if isinstance(value, Expression):
                        _check_argument(api, sig, formal, value, declared, call)
                    else:
                        _check_splatted(api, sig, formal, args[actual], value, declared, call)


def check_partial_creation(api: CheckerPluginInterface, call: CallExpr) -> None:
    """``functools.partial(f, ...)``: the arguments bound now meet ``f``'s Static parameters now."""
    if not call.args or not isinstance(api, TypeChecker) or _plainly_no_static(call.args[0]):
        return
    fun_type = expression_type(api, call.args[0], None)
    fun = as_callable(fun_type) if fun_type is not None else None
    if fun is not None and has_static(fun):
        check_call(api, fun, call, skip=1)


def _plainly_no_static(fun: Expression) -> bool:
    """``fun`` names a module-level function whose declared signature has no Static parameter: the common
    ``partial(helper, ...)`` is settled without inferring anything (a decorated or generic function is not)."""
    node = fun.node if isinstance(fun, NameExpr) and fun.kind == GDEF else None
    sig = node.type if isinstance(node, FuncDef) else None
    return isinstance(sig, CallableType) and not sig.variables and not has_static(sig)


def check_bound_self(api: CheckerPluginInterface, receiver: Type, call: CallExpr) -> None:
    """``model.apply(x)`` where ``apply`` declares ``self: Static[...]``: mypy binds ``model`` before any hook sees
    the call, so the receiver is judged here, as the value the transform will key on."""
    callee = call.callee
    owner = get_proper_type(receiver)
    if not isinstance(callee, MemberExpr) or not isinstance(owner, Instance) or not isinstance(api, TypeChecker):
        return
    if owner.type.has_base(BOUND_METHOD):  # the call of a bound transformed method: judge the object it is bound to
        bound_to = api.lookup_type_or_none(callee.expr)
        owner = get_proper_type(bound_to) if bound_to is not None else owner
        if not isinstance(owner, Instance):
            return
    sym = owner.type.get(callee.name)
    node = sym.node if sym is not None else None
    func = node.func if isinstance(node, Decorator) else node
    if not isinstance(func, FuncDef) or func.is_static or func.is_class:
        return
    sig = func.type
    if isinstance(sig, CallableType) and sig.arg_types and is_static(sig.arg_types[0]):
        _check_argument(api, sig, 0, callee.expr, sig.arg_types[0], call)


def check_construction_through_type(api: CheckerPluginInterface, call: CallExpr) -> None:
    """``kind(...)`` with ``kind: type[Model]``, ``cls(...)`` in a classmethod: mypy applies no signature hook to a
    call of a ``type[...]`` value, so the constructor's Static fields are checked here (a call that names the class
    itself was checked by the signature hook)."""
    if not isinstance(api, TypeChecker) or (isinstance(call.callee, RefExpr) and isinstance(call.callee.node, TypeInfo)):
        return
    callee = api.lookup_type_or_none(call.callee)
    sig = get_proper_type(callee) if callee is not None else None  # mypy stores the constructor it called
    if isinstance(sig, TypeType):
        sig = get_proper_type(api.expr_checker.analyze_type_type_callee(sig.item, call))
    if isinstance(sig, CallableType) and sig.is_type_obj() and has_static(sig):
        check_call(api, sig, call)


def check_super_call(api: CheckerPluginInterface, call: CallExpr) -> None:
    """``super().apply(...)``: mypy applies no signature hook without a fully qualified name; check it here."""
    if not isinstance(api, TypeChecker):
        return
    callee = api.lookup_type_or_none(call.callee)
    sig = as_callable(callee) if callee is not None else None
    if sig is not None and has_static(sig):
        check_call(api, sig, call)


def _check_argument(
    api: TypeChecker,
    sig: CallableType,
    formal: int,
    arg: Expression,
    declared: Type,
    call: CallExpr,
) -> None:
    owner = _constructed_pytree(sig, call)
    if owner is not None and converted_field(owner, str(sig.arg_names[formal])):
        return  # ``field(converter=...)``: the value stored is the converter's result, not this argument
    reason = value_reason(api, arg, declared)
    if reason is not None:
        _report(api, sig, formal, reason, arg, call, owner)


def _report(
    api: TypeChecker, sig: CallableType, formal: int, reason: str, arg: Expression, call: CallExpr,
    owner: TypeInfo | None,
) -> None:
    name = sig.arg_names[formal]
    kind = sig.arg_kinds[formal]
    shown = f"*{name}" if kind == ARG_STAR else f"**{name}" if kind == ARG_STAR2 else name
    if owner is not None:
        message = _messages.static_field(str(shown), owner.name, reason)
    else:
        message = _messages.cannot_be_static(str(shown), callee_name(call, sig), reason)
    report(api, message, arg, UNHASHABLE)


def _check_splatted(
    api: TypeChecker, sig: CallableType, formal: int, splat: Expression, value: Type, declared: Type, call: CallExpr
) -> None:
    """A value known by its type only (an item of a typed ``*args``/``**kwargs``), reported at the splat."""
    if not is_subtype(value, erase_typevars(declared)):
        return  # mypy reports the wrong type itself
    deps: set[str] = set()
    reason = judge(value, freeze=True, deps=deps)
    _deps.record(api, deps)
    if reason is not None:
        _report(api, sig, formal, reason, splat, call, _constructed_pytree(sig, call))


def value_reason(api: TypeChecker, arg: Expression, declared: Type, *, freeze: bool = True) -> str | None:
    """Why the value ``arg`` gives a parameter declared ``declared`` cannot be static (``freeze=False``: does not
    hash as it is), or ``None``; ``None`` too for a value of the wrong type, which mypy reports itself (one error is
    enough) or cannot see."""
    in_context, mypy_reports = checked_type(api, arg, declared)
    if in_context is None or mypy_reports or not is_subtype(in_context, erase_typevars(declared)):
        return None
    deps: set[str] = set()
    reason = judge_value(api, arg, deps, freeze=freeze)
    _deps.record(api, deps)
    return reason


def _constructed_pytree(sig: CallableType, call: CallExpr) -> TypeInfo | None:
    """The class when ``sig`` builds a ``jaxstatic.dataclass`` (``dataclasses.replace`` too: it runs ``__init__``
    again): its Static parameters are its fields."""
    replace = isinstance(call.callee, RefExpr) and call.callee.fullname == DATACLASS_REPLACE
    if not sig.is_type_obj() and not replace:
        return None
    made = get_proper_type(sig.ret_type)
    if isinstance(made, TypeVarType):  # ``cls(...)``: ``type[Self]``
        made = get_proper_type(made.upper_bound)
    return made.type if isinstance(made, Instance) and is_pytree_dataclass(made.type) else None


def callee_name(call: CallExpr, sig: CallableType) -> str:
    """The name the user wrote for the function: ``f`` in ``f(...)``, ``partial(f, ...)``, ``jit(jit(f))(...)``."""
    callee: Expression = call.callee
    if isinstance(callee, RefExpr) and callee.fullname == FUNCTOOLS_PARTIAL and call.args:
        callee = call.args[0]
    for _ in range(8):  # ``jit(f)(...)``, ``jit(jit(f))(...)``, ``partial(jit(f), ...)``: name ``f``
        if not (isinstance(callee, CallExpr) and callee.args):
            break
        callee = callee.args[0]
    if isinstance(callee, (NameExpr, MemberExpr, SuperExpr)):
        return callee.name
    return (sig.name or "function").split(" of ")[0]


def named_after_callee(sig: CallableType, call: CallExpr) -> CallableType:
    """A transform's wrapper called (``step(x, n)``, ``jit(f)(x, n)``): mypy names the signature after the method it
    calls (``"__call__" of "StaticFunction"``) in its own errors; named after the function written instead, as a
    plain call of that function would be (``Argument 2 to "step"``)."""
    name = callee_name(call, sig)
    return sig if name.startswith("__call__") else sig.copy_modified(name=name)


def map_arguments(
    sig: CallableType, kinds: list[ArgKind], names: Sequence[str | None], types: list[Type | None] | None = None
) -> list[list[int]] | None:
    """Which arguments go to which parameter; ``types``: the splats' types, so that a fixed-length tuple or a
    ``TypedDict`` is spread exactly."""

    def actual_type(i: int) -> Type:
        known = types[i] if types is not None else None
        return known if known is not None else AnyType(TypeOfAny.special_form)

    try:
        return map_actuals_to_formals(kinds, names, sig.arg_kinds, sig.arg_names, actual_type)
    except Exception:  # a malformed call: mypy reports it; stay silent
        return None


def _is_overload_item(sig: CallableType) -> bool:
    definition = sig.definition
    if isinstance(definition, Decorator):
        definition = definition.func
    return isinstance(definition, FuncDef) and definition.is_overload


def _chosen_overload_item(api: TypeChecker, sig: CallableType, call: CallExpr, skip: int) -> bool:
    """True when ``sig`` is the first item of its overload that accepts the call's argument types.

    That is the item mypy picks; a later item that would also accept the call never applies. When the callee's
    type is no longer overloaded, mypy has picked ``sig`` already.
    """
    callee = api.lookup_type_or_none(call.callee)
    overloaded = get_proper_type(callee) if callee is not None else None
    if not isinstance(overloaded, Overloaded):
        return True  # mypy already narrowed the callee to this one item (e.g. a jitted object's ``__call__``)
    args, kinds, names = call.args[skip:], call.arg_kinds[skip:], call.arg_names[skip:]
    types = [expression_type(api, a, None) for a in args]
    for item in overloaded.items:
        if _accepts(item, types, kinds, names):
            return item.definition is sig.definition
    return False


def _accepts(
    item: CallableType, types: list[Type | None], kinds: list[ArgKind], names: Sequence[str | None]
) -> bool:
    formal_to_actual = map_arguments(item, kinds, names)
    if formal_to_actual is None:
        return False
    mapped = {a for actuals in formal_to_actual for a in actuals}
    if len(mapped) != len(types):
        return False
    for formal, actuals in enumerate(formal_to_actual):
        if not actuals and item.arg_kinds[formal].is_required():
            return False
        for a in actuals:
            t = types[a]
            if t is None or kinds[a] in (ARG_STAR, ARG_STAR2):
                continue
            if not is_subtype(t, erase_typevars(item.arg_types[formal])):
                return False
    return True
