"""Exception classes and the builders of their messages. Each class is a ``TypeError`` (or ``RuntimeError``)
subclass, exported from ``jaxstatic`` (``HiddenStaticWarning`` and ``StaticTypeWarning`` are warnings, subclasses of
``UserWarning``); each message names the function, the parameter, the path inside the value, what was found and the fix.

Where ``jax.jit`` raises another class for the same mistake, jaxstatic's error is an instance of that class too, so
code that catches JAX's keeps working: ``OptionError`` and ``NonStaticValueError`` are also ``ValueError``s (JAX's
class for a bad ``static_argnums``, an unknown argname, a static and donated name, a static value that cannot be
hashed or compared)."""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import jax
import numpy as np

from . import _freeze, _keys
from ._modules import holds_other_values, is_module, mixed, module_around, split_fix
from ._public import name_as_exported


class JaxstaticError(Exception):
    """Base of every error raised by jaxstatic."""


class AnnotationError(JaxstaticError, TypeError):
    """An annotation is not a type, so jaxstatic cannot tell which parameters (or fields) are static."""


class NonStaticValueError(JaxstaticError, TypeError, ValueError):
    """A value bound to a ``Static`` parameter is not static-hashable (an array, an unhashable object, one whose
    ``__eq__`` raises). Also a ``ValueError``, as ``jax.jit``'s error for a non-hashable static argument is."""


class NonArrayArgumentError(JaxstaticError, TypeError):
    """A function, string or other non-array was given to a parameter that is not ``Static``."""


class StaticMismatchError(JaxstaticError, TypeError):
    """An ahead-of-time compiled function was called with static values other than those it was compiled for; or a
    closure sharing its programs with equal closures traced after its closed-over values changed."""


class RetraceError(JaxstaticError, RuntimeError):
    """A function was traced more often than its ``max_traces`` allows."""


class OptionError(JaxstaticError, TypeError, ValueError):
    """An option given to a transform (``donate_argnums``, ``static_argnames``, ``in_axes``, ``max_traces``, ...)
    does not fit the function; raised when the transform is applied, not at the first call. Also a ``ValueError``,
    the class ``jax.jit`` raises for most of these."""


class HiddenStaticWarning(UserWarning):
    """A decorator below a jaxstatic transform hides the ``Static`` parameters of the function it wraps, so they
    are traced as arrays. ``warnings.filterwarnings("error", category=HiddenStaticWarning)`` makes it an error."""


class StaticTypeWarning(UserWarning):
    """A static value is not an instance of ``T`` of its ``Static[T]`` annotation (a list given to a
    ``Static[float]``). It is used as it is, so the body may fail inside JAX or compute something else. Issued once
    per function and parameter, on a cache miss; ``warnings.filterwarnings("error", category=StaticTypeWarning)``
    makes it an error."""


class MissingArgumentError(JaxstaticError, TypeError):
    """A call left to its default a parameter that the transform needs as an argument (the one ``grad``
    differentiates)."""


class RuleError(JaxstaticError, TypeError):
    """A ``custom_vjp``/``custom_jvp`` rule is missing, or does not fit the function it differentiates (its
    signature, or the cotangents it returns)."""


def option_error(option: str, function: str | None, problem: str, fix: str) -> OptionError:
    """``jaxstatic: donate_argnames of step names 'parms', which is not a parameter of step(params, batch). Name
    one of its parameters.``"""
    where = f"{option} of {function}" if function is not None else option
    return OptionError(f"jaxstatic: {where} {problem}. {fix}")


def closure_changed_error(name: str, where: str, changes: tuple[str, ...]) -> StaticMismatchError:
    """A function shared with functions of the same code closing over equal values, whose closed-over values
    changed after the transform was made (``_closures``)."""
    return StaticMismatchError(
        f"{name} (defined at {where}) shares its programs with functions of the same code that closed over equal "
        f"values when the transform was made, but its own changed since: {'; '.join(changes)}. A closure's values "
        "are read when the transform is made, as a Static parameter's are at each call: apply the transform after "
        "changing them, or copy a value before changing it; or make it a Static parameter "
        "(docs/migration.md#a-config-held-in-a-closure).")


def retrace_limit_error(function: str, max_traces: int, number: int, why: str | None) -> RetraceError:
    """``f needs trace #3, because n: 2 -> 3, but max_traces=2 allows at most 2 traces. Mark a parameter ...``: the
    trace refused, why it is needed (``why``, the changes a retrace explanation lists) and the fixes."""
    allowed = "no trace at all" if max_traces == 0 else f"at most {max_traces} trace{'s' * (max_traces != 1)}"
    because = f", because {why}" if why else ""
    return RetraceError(
        f"{function} needs trace #{number}{because}, but max_traces={max_traces} allows {allowed}. Mark a "
        "parameter Static only if it takes few values, keep shapes and dtypes fixed, or raise max_traces."
    )


def unknown_options_error(transform: str, function: str, unknown: set[str], known: frozenset[str]) -> OptionError:
    close = {u: difflib.get_close_matches(u, sorted(known), n=1) for u in sorted(unknown)}
    hints = "".join(f" (did you mean {c[0]!r} for {u!r}?)" for u, c in close.items() if c)
    return OptionError(f"jaxstatic.{transform}({function}): unknown option(s) {sorted(unknown)}{hints}; it accepts "
                       f"{sorted(known)}.")


UNHASHABLE = "Non-hashable static arguments are not supported."
"""``jax.jit``'s and ``jax.pmap``'s own words for a static value that cannot be hashed, in every transform's message
(``non_static_error``), so that a search for JAX's error finds jaxstatic's too."""


def non_static_error(function: str, param: str, value: Any) -> NonStaticValueError:
    """The error a user sees when ``value`` is bound to the Static parameter ``param`` of ``function``."""
    culprit = find_unfreezable(value)
    where = param + culprit.path
    if culprit.cycle_to is not None:
        return NonStaticValueError(
            f"{function}(): parameter {param!r} is Static, but {where} is {param}{culprit.cycle_to} itself: a value "
            "that contains itself has no finite key, so it cannot be static. Break the cycle (refer to the "
            "container by a name or an index), or pass it through a parameter that is not Static."
        )
    leaf = culprit.leaf
    module = module_around(value, leaf, param) if _freeze.is_array(leaf) else None
    fix = _static_fix(leaf) if module is None else (
        f"{mixed(*module)}, so it cannot be static as a whole. "
        + (split_fix(module[0], dynamic=False) if holds_other_values(module[1]) else
           "Pass it through a parameter that is not Static, where its arrays are traced."))
    return NonStaticValueError(
        f"{function}(): parameter {param!r} is Static, but {where} is a {_freeze.type_name(leaf)}, which cannot be "
        f"static: {why_not_static(leaf)}. {UNHASHABLE} {fix}"
    )


def uncomparable_error(function: str, param: str, value: Any, err: Exception) -> NonStaticValueError:
    """A static value whose ``__eq__`` raised when it was compared with the key of an earlier call."""
    error = NonStaticValueError(
        f"{function}(): parameter {param!r} is Static, but comparing its value (a {_freeze.type_name(value)}) with "
        f"an earlier static value raised {type(err).__name__}: {err}. A static value must be comparable with ==: "
        "make its __eq__ return a bool, or pass it through a parameter that is not Static.")
    error.__cause__ = err
    return error


def check_static(function: str, param: str, value: Any) -> Any:
    """``freeze(value)``, raising the user-facing error."""
    try:
        return _freeze.freeze(value)
    except _freeze.Unfreezable:
        raise non_static_error(function, param, value) from None


def why_not_static(leaf: Any) -> str:
    if isinstance(leaf, jax.core.Tracer):
        return "it is traced by an enclosing transformation, so its value is only known at run time"
    if isinstance(leaf, jax.Array):
        return "a jax.Array is not hashable, and its value is only known at run time"
    if isinstance(leaf, np.ndarray):
        return "a numpy array is not hashable, since its contents can change in place"
    if getattr(type(leaf), "__hash__", None) is None:
        params = getattr(type(leaf), "__dataclass_params__", None)
        if params is not None and not params.frozen:
            return "it is a dataclass with eq=True and frozen=False, so Python sets its __hash__ to None"
        return "its class sets __hash__ = None"
    try:
        hash(leaf)
    except Exception as err:
        return f"hashing it fails ({err})"
    return "it cannot be frozen"


def _static_fix(leaf: Any) -> str:
    if isinstance(leaf, jax.core.Tracer):
        return "Pass it through a parameter that is not Static."
    if _freeze.is_array(leaf):
        if np.ndim(leaf) == 0:
            return ("Pass it through a parameter that is not Static, or, if it truly is a constant, pass a Python "
                    "scalar instead (int(x), float(x) or x.item()).")
        return ("Pass it through a parameter that is not Static, or, if it truly is a constant, convert it to a "
                "tuple (tuple(x.tolist())).")
    params = getattr(type(leaf), "__dataclass_params__", None)
    if params is not None and not params.frozen:
        return "Make it hashable with @dataclass(frozen=True), or pass it through a parameter that is not Static."
    return ("Make it hashable (define __hash__ and __eq__, or use a tuple/frozen dataclass), or pass it through a "
            "parameter that is not Static.")


def non_array_error(function: str, param: str, where: str, leaf: object,
                    in_var_keyword: bool, value: Any = None) -> NonArrayArgumentError:
    """The error for a value JAX cannot trace (``leaf``, at ``where``) given to the non-Static parameter ``param``
    (whose value is ``value``).

    Inside a dynamic ``**kwargs`` the fix is a parameter of its own: marking ``**kwargs`` Static would make the
    arrays passed beside it static too. Inside an Equinox module that also holds arrays, Static is no fix either.
    """
    found = _found(where, leaf)
    module = module_around(value, leaf, param)
    if module is not None:
        return NonArrayArgumentError(
            f"{function}(): parameter {param!r} is not Static, so its value is traced as an array, but {found}. "
            f"{mixed(*module)}, so it can be neither traced nor static as a whole. {split_fix(module[0], dynamic=True)}"
        )
    if not in_var_keyword:
        return NonArrayArgumentError(
            f"{function}(): parameter {param!r} is not Static, so its value is traced as an array, but {found}. "
            f"Mark it static where it is declared ({param}: Static[...]), or pass an array."
        )
    match = re.match(r"\[(['\"])(.+?)\1\]", where[len(param):]) if where.startswith(param) else None
    name = match.group(2) if match else where
    return NonArrayArgumentError(
        f"{function}(): parameter {param!r} collects extra keyword arguments and is not Static, so they are traced "
        f"as arrays, but {found}. Declare {name} as a parameter of its own, marked Static ({name}: Static[...]), "
        f"rather than marking **{param} Static, which would make the arrays passed beside it static too; or pass an "
        "array."
    )


def _found(where: str, leaf: object) -> str:
    """``cfg['act'] is a function``; a class (a dtype class such as ``jnp.int32``) by its name; another callable
    with a name (``jnp.tanh``, ``len``) as a function, with its type."""
    if isinstance(leaf, type):
        return f"{where} is the class {_freeze.class_name(leaf)}"
    kind = _freeze.type_name(leaf)
    name = getattr(leaf, "__name__", None)
    if callable(leaf) and kind != "function" and isinstance(name, str):  # jnp.tanh, len, np.sin: named as functions
        return f"{where} is a function ({name}, a {kind})"
    return f"{where} is a {kind}"


# -- finding what cannot be static: the value walked again, this time with paths


@dataclasses.dataclass(frozen=True)
class Culprit:
    path: str  # inside the value, as errors print it: "['weights'][0]"
    leaf: Any
    cycle_to: str | None = None  # the path of the container that ``leaf`` is (a value that contains itself)


def find_unfreezable(value: Any) -> Culprit:
    """The first part of ``value`` that cannot be static, depth first (explicit stack, cycles detected)."""
    open_paths: dict[int, str] = {}
    stack: list[tuple[Iterator[tuple[str, Any]], int | None]] = [(iter((("", value),)), None)]
    while stack:
        it, _ = stack[-1]
        for path, child in it:
            steps = _steps(child)
            if steps is None:
                try:
                    _freeze.freeze(child)
                except _freeze.Unfreezable:
                    return Culprit(path, child)
                continue
            if id(child) in open_paths:
                return Culprit(path, child, open_paths[id(child)])
            open_paths[id(child)] = path
            stack.append((_under(path, steps), id(child)))
            break
        else:
            vid = stack.pop()[1]
            if vid is not None:
                del open_paths[vid]
    return Culprit("", value)


def _freezes(value: Any) -> bool:
    try:
        _freeze.freeze(value)
    except _freeze.Unfreezable:
        return False
    return True


def _under(path: str, steps: list[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
    return ((path + step, child) for step, child in steps)


def _steps(value: Any) -> list[tuple[str, Any]] | None:
    """A container's children with the path step to each (keys and set items add none), or None for a leaf."""
    t = type(value)
    how, extra = (_freeze.CONTAINER, t) if t in (dict, list, tuple, set, frozenset) else _freeze.class_info(t)
    if t is slice:
        return [(".start", value.start), (".stop", value.stop), (".step", value.step)]
    record = how is _freeze.RECORD
    if record or is_module(value):
        names = extra if record else [f.name for f in dataclasses.fields(value)]
        fields = [(f".{name}", getattr(value, name, None)) for name in names]
        try:
            hash(value)
        except Exception:  # a frozen dataclass holding an array: name the array, else the record
            return fields if not all(map(_freezes, (child for _, child in fields))) else None
        return fields if record else None
    if how is not _freeze.CONTAINER:
        return None
    steps: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        if isinstance(value, defaultdict):
            steps.append((".default_factory", value.default_factory))
        for k, v in value.items():
            steps += [("", k), (f"[{_keys.safe_repr(k)}]", v)]
    elif isinstance(value, (list, tuple)):
        steps += [(f"[{i}]", v) for i, v in enumerate(value)]
    else:
        steps += [("", v) for v in value]
    attrs = getattr(value, "__dict__", None) or {}
    return steps + [(f".{name}", v) for name, v in attrs.items()]


def hidden_static_message(transform: str, inner: str, params: tuple[str, ...], decorators: tuple[str, ...],
                          wrapper: str, class_based: bool) -> str:
    """``jaxstatic.jit cannot see the Static parameter 'n' of g: decorator log_calls hides it behind
    log_calls.<locals>.wrapper(*args, **kwargs), which has no __wrapped__, so 'n' is traced as an array. ...``"""
    names, one = ", ".join(map(repr, params)), len(params) == 1
    return (f"{transform} cannot see the Static parameter{'' if one else 's'} {names} of {inner}: "
            f"{_hiders(decorators)} {'it' if one else 'them'} behind {wrapper}, which has no __wrapped__, "
            f"so {names} {'is' if one else 'are'} traced as {'an array' if one else 'arrays'}. "
            f"{_hidden_fix(transform, decorators, class_based)}")


def hidden_static_note(transform: str, inner: str, params: tuple[str, ...], decorators: tuple[str, ...],
                       class_based: bool) -> str:
    """The note on JAX's tracer errors: ``'n' is declared Static in g, but decorator log_calls hides it, ...``"""
    names, one = ", ".join(map(repr, params)), len(params) == 1
    return (f"{names} {'is' if one else 'are'} declared Static in {inner}, but {_hiders(decorators)} "
            f"{'it' if one else 'them'}, so {transform} traced {'it as an array' if one else 'them as arrays'}. "
            f"{_hidden_fix(transform, decorators, class_based)}")


def hidden_non_array_error(transform: str, inner: str, param: str, where: str, leaf: object,
                           decorators: tuple[str, ...], class_based: bool) -> NonArrayArgumentError:
    """A non-array given to a ``Static`` parameter that a decorator hides: the cause is the decorator, not the
    parameter, so the fix is the decorator's. ``g(): parameter 'cfg' is declared Static, but decorator log_calls
    hides it, so jaxstatic.jit traces it as an array, and cfg['act'] is a function, which cannot be traced. ...``"""
    return NonArrayArgumentError(
        f"{inner}(): parameter {param!r} is declared Static, but {_hiders(decorators)} it, so {transform} traces it "
        f"as an array, and {_found(where, leaf)}, which cannot be traced. "
        f"{_hidden_fix(transform, decorators, class_based)}")


def static_type_message(function: str, param: str, declared: str, value: str, reason: str) -> str:
    """``clip(): parameter 'l2_norm_clip' is declared Static[float], but got [1.0, 2.0] (list is neither float or
    int). ...``; ``reason`` is the type checker's."""
    return (f"{function}(): parameter {param!r} is declared Static[{declared}], but got {value} ({reason}). "
            "jaxstatic compiles for the value as it is, so the body may fail inside JAX or compute something else. "
            f"Pass a value of type {declared}, or correct the annotation.")


def _hiders(decorators: tuple[str, ...]) -> str:
    if len(decorators) == 1:
        return f"decorator {decorators[0]} hides"
    return f"decorators {', '.join(decorators)} hide"


def _hidden_fix(transform: str, decorators: tuple[str, ...], class_based: bool) -> str:
    each = "the wrapper" if len(decorators) == 1 else "each wrapper"
    in_class = " (functools.update_wrapper(self, fn) in a class)" if class_based else ""
    return f"Decorate {each} with @functools.wraps(fn){in_class}, or apply {transform} below @{decorators[-1]}."
def missing_argument_error(transform: str, function: str, name: str) -> MissingArgumentError:
    """``loss(): jaxstatic.grad differentiates 'params', but this call leaves it to its default ...``"""
    return MissingArgumentError(
        f"{function}(): jaxstatic.{transform} differentiates parameter {name!r}, but this call leaves it to its "
        f"default. Pass {name} in the call, or differentiate another parameter (argnums/argnames)."
    )


def missing_extra_error(transform: str, function: str, varargs: str, index: int, given: int) -> MissingArgumentError:
    """``f(): jaxstatic.grad differentiates args[0], but this call passes no values to *args ...``"""
    passed = f"only {given} value{'s' if given != 1 else ''}" if given else "no values"
    return MissingArgumentError(
        f"{function}(): jaxstatic.{transform} differentiates {varargs}[{index}], but this call passes {passed} to "
        f"*{varargs}. Pass at least {index + 1}, or differentiate another parameter (argnums/argnames)."
    )


def missing_rule_error(transform: str, function: str, define: str) -> RuleError:
    return RuleError(f"{function}(): jaxstatic.{transform} has no rule yet. Call {function}.{define} before calling "
                     "it, as with jax." + transform + ".")


def rule_not_callable_error(transform: str, function: str, rule: str, value: object) -> RuleError:
    return RuleError(f"jaxstatic.{transform} of {function}: its {rule} rule is {value!r} (a "
                     f"{type(value).__qualname__}), not a function. Pass a function.")


def rule_signature_error(transform: str, function: str, rule: str, signature: str, call: str, why: str,
                         fix: str) -> RuleError:
    """``jaxstatic.custom_vjp of loss: its bwd rule bwd(res, g) does not fit the call bwd(cfg, residuals, g) (too
    many positional arguments). bwd takes the Static and NoDiff parameters first ('cfg', in signature order) ...``"""
    return RuleError(f"jaxstatic.{transform} of {function}: its {rule} rule {signature} does not fit the call "
                     f"{call} ({why}). {fix}")


def rule_output_error(transform: str, function: str, rule: str, got: str, expected: str) -> RuleError:
    """``jaxstatic.custom_vjp of loss: its bwd rule returned a tuple of 3, but loss has 2 differentiable ...``"""
    return RuleError(f"jaxstatic.{transform} of {function}: its {rule} rule returned {got}, but {expected}.")
# ---------------------------------------------------------------------------------------------------------------
# Message builders for jaxstatic.dataclass.


def static_field_message(owner: str, field: str, where: str, found: str, reason: str, when: str = "") -> str:
    """``MLP(): field 'activation' is Static, but MLP.activation['w'] is a jax.Array ...``"""
    return (
        f"{owner}(): field {field!r} is Static, but {where} is a {found}{when}, which cannot be static: {reason}. "
        "Drop Static[...] from the field to make it a traced child, or store a static-hashable value there "
        "(hashable, or a builtin container of hashable values)."
    )


def unset_field_message(owner: str, field: str) -> str:
    """A field that ``__init__`` did not assign and that has no default or class attribute."""
    return (f"{owner}(): field {field!r} has no value: {owner}.__init__ did not assign it, and it has no default "
            f"or class attribute. Assign self.{field} = ... in __init__, or give the field a default.")


def unhashable_instance_message(owner: str, where: str, found: str, mutable: bool = False) -> str:
    """Why a jaxstatic dataclass instance has no hash (an array in it, or a static container that can change in
    place), and what to do instead."""
    if mutable:
        return (f"unhashable {owner}: {where} is a {found}, which can change in place, so the instance has no fixed "
                "hash and cannot be a static value. Store a tuple or frozenset there, or pass the instance to a "
                "parameter that is not Static.")
    return (
        f"unhashable {owner}: {where} is a {found}. An instance holding arrays is a pytree: it compares by value "
        "but has no hash, so it cannot be a static value. Pass it to a parameter that is not Static, where its "
        "arrays are traced and its Static fields still select the program."
    )


name_as_exported(globals())  # last, so that every class _public.ERRORS declares here is defined
