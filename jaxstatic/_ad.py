"""``grad``, ``value_and_grad``, ``checkpoint``/``remat``, ``custom_vjp`` and ``custom_jvp``: JAX's autodiff
transforms with static parameters declared by ``Static[...]`` and undifferentiated ones by ``NoDiff[...]``.

Design: as for ``jit``, one JAX program per frozen static key (``_parts.Programs``), each JAX's own transform of a body whose
static values are fixed. Static values never reach JAX, so they need not be hashable, and ``argnums`` never has to
count around them: options naming parameters are resolved to names at decoration and re-indexed, by name, onto each
program's arguments. None of these transforms counts traces: under ``js.jit`` the jit counts them, once per static
value; alone, JAX's transform runs on every call (as ``jax.grad`` does), but the program of equal static values is
built once. Cost on a cache hit under ``js.jit``: none, since the jit's program holds the whole transform.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import numbers
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal, Protocol, TypeVar, overload

import jax
from typing_extensions import ParamSpec

from . import _options
from ._custom import CustomJVPFunction, CustomVJPFunction
from ._errors import missing_argument_error, missing_extra_error, option_error
from ._miss import is_traceable
from ._parts import KeyState
from ._plan import Layout, Plan
from ._transform import StaticFunction

_P = ParamSpec("_P", contravariant=True)  # type: ignore[misc]  # a callable's parameters: see _transform
_R = TypeVar("_R")
_R_co = TypeVar("_R_co", covariant=True)
_G = TypeVar("_G", contravariant=True)
_X = TypeVar("_X")

_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GradOptions(_options.Options):
    """``js.grad``'s and ``js.value_and_grad``'s options (``_options.Options``): the differentiated parameters as
    given, resolved to names once the Static ones are known (``GradFunction._resolve``); ``has_aux``,
    ``holomorphic`` and ``allow_int`` are ``jax.grad``'s, passed on as they are where given."""

    argnums: int | Sequence[int] | None = None
    argnames: str | Sequence[str] | None = None


class GradFunction(StaticFunction[_P, _R]):
    """A function differentiated by ``jaxstatic.grad``. Call it like the function it wraps; it returns the gradient
    with respect to the differentiated parameter(s) (a tuple when ``argnums``/``argnames`` is a sequence)."""

    _transform_name = "grad"
    _counts_traces = False
    _jax_transform: Callable[..., Any] = staticmethod(jax.grad)  # what differentiates the body
    _options_type: ClassVar[type[_options.Options]] = GradOptions
    _opts: GradOptions

    def __init__(self, fn: Callable[_P, Any], *, argnums: int | Sequence[int] | None = None,
                 argnames: str | Sequence[str] | None = None, has_aux: bool = False, holomorphic: bool = False,
                 allow_int: bool = False) -> None:
        # derived from argnums/argnames once the Static parameters are known (``_resolve``):
        self._diff: tuple[str | int, ...] = ()  # parameter names, and *args extras by position among them
        self._single = True
        # jax.grad's options reach JAX where given (False is JAX's default for each): a subclass over another of
        # JAX's transforms (jax.hessian takes no allow_int) needs no __init__ of its own
        given = {"has_aux": has_aux, "holomorphic": holomorphic, "allow_int": allow_int}
        super().__init__(fn, {"argnums": argnums, "argnames": argnames,
                              **{name: value for name, value in given.items() if value is not False}})

    def _checks_at_decoration(self) -> bool:
        return self._opts.argnums is not None or self._opts.argnames is not None

    def _resolve(self, layout: Layout) -> None:
        """Which parameters are differentiated, by name: ``argnums``/``argnames``, or the first one that is
        neither Static nor NoDiff; never a Static or NoDiff one."""
        function, signature = self._name, layout.signature
        argnums, argnames = self._opts.argnums, self._opts.argnames
        if argnums is not None and argnames is not None:
            raise option_error("argnums/argnames", function, f"are both given ({argnums!r} and {argnames!r})",
                               "Name the differentiated parameters one way.")
        names: tuple[str | int, ...]
        if argnums is not None:
            option, self._single = "argnums", isinstance(argnums, numbers.Integral)
            names = _options.argnums_into_varargs(function, signature, argnums, option)
            varargs = [n for n, p in signature.parameters.items() if p.kind is p.VAR_POSITIONAL]
            _options.check_not_static(function, varargs if any(type(n) is int for n in names) else (),
                                      layout.static, option)
        elif argnames is not None:
            option, self._single = "argnames", isinstance(argnames, str)
            names = _options.check_argnames(function, signature, argnames, option)
        else:
            option, names = "argnums", _first_differentiable(layout)
        _options.check_not_static(function, [n for n in names if isinstance(n, str)], layout.static, option)
        for name in names:
            if isinstance(name, str) and name in layout.nodiff:
                raise option_error(option, function, f"names {name!r}, which is NoDiff (traced, never "
                                   "differentiated)", f"Drop {name!r} from {option}, or remove its NoDiff mark.")
        self._diff = names

    def _build(self, plan: Plan, body: Callable[..., Any], state: KeyState) -> Callable[..., Any]:
        named = [name for name, src in plan.dynamics if src.kind not in ("varpos", "varkw")]
        extras = next((plan.nargs - src.index for _, src in plan.dynamics if src.kind == "varpos"), 0)
        for name in self._diff:
            if isinstance(name, str) and name not in named:
                raise missing_argument_error(self._transform_name, self._name, name)
            if isinstance(name, int) and name >= extras:
                raise missing_extra_error(self._transform_name, self._name, self._varargs(), name, extras)
        # a *args extra by its position among them: they follow the named values, one argument each
        argnums = tuple(named.index(n) if isinstance(n, str) else len(named) + n for n in self._diff)
        program = self._jax_transform(body, argnums=argnums[0] if self._single else argnums, **self._opts.jax)
        return functools.partial(_checked_call, program, frozenset(argnums))


    def _varargs(self) -> str:
        return next(n for n, p in self._signature().parameters.items() if p.kind is p.VAR_POSITIONAL)


class ValueAndGradFunction(GradFunction[_P, _R]):
    """A function transformed by ``jaxstatic.value_and_grad``: calls return ``(value, gradient)``, and
    ``((value, aux), gradient)`` with ``has_aux``."""

    _transform_name = "value_and_grad"
    _jax_transform = staticmethod(jax.value_and_grad)


def _first_differentiable(layout: Layout) -> tuple[str | int, ...]:
    """The first parameter neither Static nor NoDiff; else the first ``*args`` extra, as ``jax.grad`` takes
    argument 0 of ``def f(*args)`` and of every ``wrapper(*args, **kwargs)``."""
    for name, p in layout.signature.parameters.items():
        if name not in layout.static and name not in layout.nodiff and p.kind not in _VARIADIC:
            return (name,)
    for name, p in layout.signature.parameters.items():
        if p.kind is p.VAR_POSITIONAL and name not in layout.static and name not in layout.nodiff:
            return (0,)
    raise option_error("argnums", layout.function, "has no parameter to differentiate by default: every parameter "
                       "is Static, NoDiff or variadic", "Give argnums/argnames, or leave a parameter unmarked.")


def _checked_call(program: Callable[..., Any], diff: frozenset[int], *dyn: Any, **dynkw: Any) -> Any:
    """JAX's grad leaves the other arguments alone, so a string given to one of them would reach the function; a
    ``TypeError`` here becomes the same ``NonArrayArgumentError`` as ``js.jit``'s. Cost: one flatten per argument
    when the program runs, which under ``js.jit`` is at trace time only."""
    others = [v for i, v in enumerate(dyn) if i not in diff]
    if not all(map(is_traceable, jax.tree_util.tree_leaves((others, dynkw)))):
        raise TypeError("a non-array value given to a dynamic parameter")
    return program(*dyn, **dynkw)


class CheckpointFunction(StaticFunction[_P, _R]):
    """A function rematerialized by ``jaxstatic.checkpoint``. Call it like the function it wraps."""

    _transform_name = "checkpoint"
    _counts_traces = False
    # its record is the base one: static_argnums/static_argnames are its fields, prevent_cse and policy JAX's

    def __init__(self, fn: Callable[_P, _R], *, prevent_cse: bool = True, policy: Callable[..., bool] | None = None,
                 static_argnums: int | Sequence[int] | None = None,
                 static_argnames: str | Sequence[str] | None = None) -> None:
        options: dict[str, Any] = {"prevent_cse": prevent_cse, "policy": policy}
        if static_argnums is not None:
            options["static_argnums"] = static_argnums
        if static_argnames is not None:
            options["static_argnames"] = static_argnames
        super().__init__(fn, options)

    def _build(self, plan: Plan, body: Callable[..., Any], state: KeyState) -> Callable[..., Any]:
        return jax.checkpoint(body, **self._opts.jax)


class _First(Protocol[_P, _G, _R_co]):
    """A function as a type checker reads it for ``grad``: its own parameters, names included (the first
    signature), and the type of its first parameter (the second), the one ``argnums=0`` differentiates. Every
    checker solves both from one function, so the gradient has a type and the gradient function keeps the names
    (``grad_fn(params=p, x=x)``)."""

    @overload
    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R_co: ...
    @overload
    def __call__(self, first: _G, /, *args: Any, **kwargs: Any) -> Any: ...


class _Second(Protocol[_P, _G, _R_co]):
    """As ``_First``, for ``argnums=1``: a loss whose config comes first."""

    @overload
    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R_co: ...
    @overload
    def __call__(self, first: Any, second: _G, /, *args: Any, **kwargs: Any) -> Any: ...


# Without argnums/argnames the gradient's type is the first parameter's: right whenever the first parameter is the
# one differentiated. The parameter differentiated by default is the first one neither Static nor NoDiff, and
# Static[C] is C to a type checker, so for ``loss(cfg: Static[C], params, x)`` say ``argnums=1``, typed the same
# way; the mypy plugin reads the marks and gives the exact type either way (jaxstatic_mypy's _gradients). Other
# argnums and argnames give Any. With has_aux, the aux keeps the function's type. A call without options matches
# one overload only: with two, mypy types a function with an Any among its parameters (Static[Any]) as Any. The
# first signature takes a plain Callable: mypy's functools.partial reads a transform by its first signature.
@overload
def grad(fn: Callable[_P, Any], /, *, argnums: None = None, argnames: str | Sequence[str], has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False) -> GradFunction[_P, Any]: ...
@overload
def grad(fn: _First[_P, _G, Any], /, *, argnums: Literal[0] | None = None, argnames: None = None,
         has_aux: Literal[False] = False, holomorphic: bool = False,
         allow_int: bool = False) -> GradFunction[_P, _G]: ...
@overload
def grad(fn: _First[_P, _G, tuple[Any, _X]], /, *, argnums: Literal[0] | None = None,
         argnames: None = None, has_aux: Literal[True], holomorphic: bool = False,
         allow_int: bool = False) -> GradFunction[_P, tuple[_G, _X]]: ...
@overload
def grad(fn: _Second[_P, _G, Any], /, *, argnums: Literal[1], argnames: None = None,
         has_aux: Literal[False] = False, holomorphic: bool = False,
         allow_int: bool = False) -> GradFunction[_P, _G]: ...
@overload
def grad(fn: _Second[_P, _G, tuple[Any, _X]], /, *, argnums: Literal[1], argnames: None = None,
         has_aux: Literal[True], holomorphic: bool = False,
         allow_int: bool = False) -> GradFunction[_P, tuple[_G, _X]]: ...
@overload
def grad(fn: Callable[_P, Any], /, *, argnums: int | Sequence[int], argnames: None = None, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False) -> GradFunction[_P, Any]: ...
@overload
def grad(fn: None = None, /, *, argnums: int | Sequence[int] | None = None,
         argnames: str | Sequence[str] | None = None, has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False) -> Callable[[Callable[_P, Any]], GradFunction[_P, Any]]: ...
def grad(fn: Callable[_P, Any] | None = None, /, *, argnums: int | Sequence[int] | None = None,
         argnames: str | Sequence[str] | None = None, has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False) -> Any:
    """``jax.grad`` with ``Static`` parameters passed through untouched and ``NoDiff`` ones never differentiated.

    The differentiated parameters are ``argnums`` (positions, as in ``jax.grad``) or ``argnames`` (names), else the
    first parameter that is neither ``Static`` nor ``NoDiff`` (else the first ``*args`` extra, as ``jax.grad``
    differentiates argument 0 of ``def f(*args)``); an int or a name gives one gradient, a sequence a
    tuple, as in ``jax.grad``. Naming a ``Static`` or ``NoDiff`` parameter, or none, is an ``OptionError`` when
    ``grad`` is applied. ``has_aux``, ``holomorphic`` and ``allow_int`` are ``jax.grad``'s.
    """
    if fn is None:
        return functools.partial(grad, argnums=argnums, argnames=argnames, has_aux=has_aux, holomorphic=holomorphic,
                                 allow_int=allow_int)
    return GradFunction(fn, argnums=argnums, argnames=argnames, has_aux=has_aux, holomorphic=holomorphic,
                        allow_int=allow_int)


@overload
def value_and_grad(fn: Callable[_P, _R], /, *, argnums: None = None, argnames: str | Sequence[str],
                   has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False) -> ValueAndGradFunction[_P, tuple[_R, Any]]: ...
@overload
def value_and_grad(fn: _First[_P, _G, _R], /, *, argnums: Literal[0] | None = None,
                   argnames: None = None, has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False) -> ValueAndGradFunction[_P, tuple[_R, _G]]: ...
@overload
def value_and_grad(fn: _Second[_P, _G, _R], /, *, argnums: Literal[1], argnames: None = None,
                   has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False) -> ValueAndGradFunction[_P, tuple[_R, _G]]: ...
@overload
def value_and_grad(fn: Callable[_P, _R], /, *, argnums: int | Sequence[int], argnames: None = None,
                   has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False) -> ValueAndGradFunction[_P, tuple[_R, Any]]: ...
@overload
def value_and_grad(fn: None = None, /, *, argnums: int | Sequence[int] | None = None,
                   argnames: str | Sequence[str] | None = None, has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False) -> Callable[[Callable[_P, _R]], ValueAndGradFunction[_P, tuple[_R, Any]]]: ...
def value_and_grad(fn: Callable[_P, _R] | None = None, /, *, argnums: int | Sequence[int] | None = None,
                   argnames: str | Sequence[str] | None = None, has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False) -> Any:
    """``jax.value_and_grad`` with ``Static`` and ``NoDiff`` parameters, as ``jaxstatic.grad``: calls return
    ``(value, gradient)``."""
    if fn is None:
        return functools.partial(value_and_grad, argnums=argnums, argnames=argnames, has_aux=has_aux,
                                 holomorphic=holomorphic, allow_int=allow_int)
    return ValueAndGradFunction(fn, argnums=argnums, argnames=argnames, has_aux=has_aux, holomorphic=holomorphic,
                                allow_int=allow_int)


@overload
def checkpoint(fn: Callable[_P, _R], /, *, prevent_cse: bool = True, policy: Callable[..., bool] | None = None,
               static_argnums: int | Sequence[int] | None = None,
               static_argnames: str | Sequence[str] | None = None) -> CheckpointFunction[_P, _R]: ...
@overload
def checkpoint(fn: None = None, /, *, prevent_cse: bool = True, policy: Callable[..., bool] | None = None,
               static_argnums: int | Sequence[int] | None = None, static_argnames: str | Sequence[str] | None = None
               ) -> Callable[[Callable[_P, _R]], CheckpointFunction[_P, _R]]: ...
def checkpoint(fn: Callable[_P, _R] | None = None, /, *, prevent_cse: bool = True,
               policy: Callable[..., bool] | None = None, static_argnums: int | Sequence[int] | None = None,
               static_argnames: str | Sequence[str] | None = None) -> Any:
    """``jax.checkpoint`` (``jax.remat``): ``Static`` parameters are its static arguments, closed over per static
    value, so a dict config works; ``static_argnums``/``static_argnames`` add to them. ``policy`` and
    ``prevent_cse`` are ``jax.checkpoint``'s."""
    if fn is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums,
                                 static_argnames=static_argnames)
    return CheckpointFunction(fn, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums,
                              static_argnames=static_argnames)


remat = checkpoint
"""``jaxstatic.checkpoint`` under its other name, as ``jax.remat`` is ``jax.checkpoint``."""


@overload
def custom_vjp(fn: Callable[_P, _R], /, *, nondiff_argnums: int | Sequence[int] = (),
               nondiff_argnames: str | Sequence[str] = ()) -> CustomVJPFunction[_P, _R]: ...
@overload
def custom_vjp(fn: None = None, /, *, nondiff_argnums: int | Sequence[int] = (),
               nondiff_argnames: str | Sequence[str] = ()) -> Callable[[Callable[_P, _R]], CustomVJPFunction[_P, _R]]: ...
def custom_vjp(fn: Callable[_P, _R] | None = None, /, *, nondiff_argnums: int | Sequence[int] = (),
               nondiff_argnames: str | Sequence[str] = ()) -> Any:
    """``jax.custom_vjp`` whose ``nondiff_argnums`` are the ``Static`` and ``NoDiff`` parameters.

    Static values (``nondiff_argnums``/``nondiff_argnames`` add to them) follow the static-hashable rule, so a dict
    config works. Rules take JAX's documented positions: ``f.defvjp(fwd, bwd)``, where ``fwd`` takes the same
    parameters as ``f`` and returns ``(output, residuals)``, and ``bwd(*nondiff, residuals, g)`` takes the Static
    and NoDiff values in signature order and returns one cotangent per other parameter. NoDiff values are traced:
    JAX refuses tracers among ``nondiff_argnums``, so jaxstatic passes them as ordinary inputs, carries them to
    ``bwd`` beside the residuals, and gives them a zero cotangent.
    """
    if fn is None:
        return functools.partial(custom_vjp, nondiff_argnums=nondiff_argnums, nondiff_argnames=nondiff_argnames)
    return CustomVJPFunction(fn, nondiff_argnums=nondiff_argnums, nondiff_argnames=nondiff_argnames)


@overload
def custom_jvp(fn: Callable[_P, _R], /, *, nondiff_argnums: int | Sequence[int] = (),
               nondiff_argnames: str | Sequence[str] = ()) -> CustomJVPFunction[_P, _R]: ...
@overload
def custom_jvp(fn: None = None, /, *, nondiff_argnums: int | Sequence[int] = (),
               nondiff_argnames: str | Sequence[str] = ()) -> Callable[[Callable[_P, _R]], CustomJVPFunction[_P, _R]]: ...
def custom_jvp(fn: Callable[_P, _R] | None = None, /, *, nondiff_argnums: int | Sequence[int] = (),
               nondiff_argnames: str | Sequence[str] = ()) -> Any:
    """``jax.custom_jvp`` whose ``nondiff_argnums`` are the ``Static`` and ``NoDiff`` parameters.

    ``f.defjvp(jvp)`` with ``jvp(*nondiff, primals, tangents)``: the Static and NoDiff values in signature order,
    then tuples of the other parameters' primals and tangents; it returns ``(output, output_tangent)``. NoDiff
    values are traced; their tangents are dropped, so nothing is differentiated through them.
    """
    if fn is None:
        return functools.partial(custom_jvp, nondiff_argnums=nondiff_argnums, nondiff_argnames=nondiff_argnames)
    return CustomJVPFunction(fn, nondiff_argnums=nondiff_argnums, nondiff_argnames=nondiff_argnames)


__all__ = ["CheckpointFunction", "CustomJVPFunction", "CustomVJPFunction", "GradFunction", "GradOptions",
           "ValueAndGradFunction", "checkpoint", "custom_jvp", "custom_vjp", "grad", "remat", "value_and_grad"]
