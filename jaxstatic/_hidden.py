"""Decorators that hide ``Static`` parameters, found when a transform first reads a function's parameters.

A decorator that returns ``def wrapper(*args, **kwargs)`` without ``functools.wraps`` shows jaxstatic a signature
with no ``Static`` parameter: the wrapped function's ``Static`` values are then traced as arrays, silently until its
body needs a concrete value. This module finds the function behind such a wrapper and says so twice: a
``HiddenStaticWarning`` at the first call, and a note on JAX's tracer errors raised inside the traced body.

What counts as hidden, so that a warning is never a false alarm:

* the signature the transform reads declares no ``Static`` parameter (with ``__wrapped__``, jaxstatic reads the
  wrapped function's, so ``functools.wraps`` wrappers are never suspects);
* the wrapper (a function, a ``functools.partial`` of one, a bound method, or an object whose class defines
  ``__call__``) spreads its own ``*args`` or ``**kwargs`` into a call (``CALL_FUNCTION_EX`` in its bytecode), and the
  same statement loads a callable it can reach by name: a closure cell, an argument bound by ``partial``, or an
  attribute of ``self``;
* that callable declares ``Static`` parameters (read through ``__func__``, ``__wrapped__`` and ``partial``), or is
  itself such a wrapper (stacked decorators, followed at most ``_MAX_DEPTH`` deep).

A closure that calls some other jitted function without spreading its own ``*args``/``**kwargs`` is not a wrapper.

Cost: nothing on the cache-hit path, nothing at decoration. At the first call, nothing more than two attribute reads
when the signature shows a ``Static`` parameter or has no ``*args``/``**kwargs`` (the common cases); otherwise one
pass over the wrapper's bytecode (``benchmarks/hidden.py``: a few microseconds, against milliseconds of tracing).
"""

from __future__ import annotations

import dataclasses
import dis
import functools
import inspect
import sys
import types
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any, TypeVar

import jax
from typing_extensions import ParamSpec

from ._annotations import find_static_params
from ._errors import HiddenStaticWarning, JaxstaticError, hidden_static_message, hidden_static_note

_P = ParamSpec("_P")
_R = TypeVar("_R")

TRACER_ERRORS = (jax.errors.ConcretizationTypeError, jax.errors.TracerBoolConversionError,
                 jax.errors.TracerIntegerConversionError, jax.errors.TracerArrayConversionError)
"""JAX's errors for a traced value used where Python needs a concrete one: what a hidden ``Static`` leads to."""

_MAX_DEPTH = 8  # stacked wrappers followed before giving up (silently)
_MAX_UNWRAP = 100  # __wrapped__/partial/method links followed; a cycle must not hang the first call
_VARARGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
_NOT_A_CANDIDATE = None  # stands for ``self`` among a method's bound arguments
_BOUNDARIES = ("STORE_", "POP_TOP", "RETURN_", "JUMP_", "POP_JUMP_")  # the end of one statement's loads


@dataclasses.dataclass(frozen=True)
class Hidden:
    """A function whose ``Static`` parameters a chain of wrappers hides from a transform."""

    decorators: tuple[str, ...]  # outermost first, as written after ``@``: ``log_calls``
    wrapper: str  # what the transform sees: ``log_calls.<locals>.wrapper(*args, **kwargs)``
    inner: str  # the function that declares the Static parameters
    params: tuple[str, ...]  # its Static parameters, ``*args``/``**kwargs`` for variadic ones
    target: Callable[..., Any]  # the inner callable, to bind a call's values to its parameters
    class_based: bool  # a wrapper in the chain is an object with ``__call__``


def warn_if_hidden(fn: Callable[..., Any], static: Collection[str], transform: str = "jaxstatic.jit") -> None:
    """Issue ``HiddenStaticWarning`` when ``fn`` hides another function's ``Static`` parameters.

    Called once per decorated function, where its layout is read; ``static`` are the parameters the transform
    already treats as static (any at all: nothing is hidden). The warning points at the user's call.
    """
    if static:
        return
    hidden = find(fn)
    if hidden is not None:
        message = hidden_static_message(transform, hidden.inner, hidden.params, hidden.decorators, hidden.wrapper,
                                        hidden.class_based)
        warnings.warn(HiddenStaticWarning(message), stacklevel=_user_stacklevel())


def explaining(fn: Callable[_P, _R], static: Collection[str], transform: str = "jaxstatic.jit") -> Callable[_P, _R]:
    """What the traced body calls: ``fn`` itself (no cost) unless it hides ``Static`` parameters; then ``fn`` with
    ``explain_tracer_error`` on JAX's tracer errors. ``static`` as for ``warn_if_hidden``."""
    hidden = None if static else find(fn)
    if hidden is None:
        return fn

    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return fn(*args, **kwargs)
        except TRACER_ERRORS as err:
            explain_tracer_error(err, hidden, args, kwargs, transform)
            raise

    return call


def explain_tracer_error(err: Exception, hidden: Hidden, args: tuple[Any, ...], kwargs: Mapping[str, Any],
                         transform: str = "jaxstatic.jit") -> None:
    """Add a note to JAX's tracer error ``err``, raised while tracing ``args``/``kwargs`` through ``hidden``'s
    wrappers, when one of the hidden ``Static`` parameters received a tracer. The exception keeps its type."""
    traced = _traced_params(hidden, args, kwargs)
    if traced:
        _add_note(err, hidden_static_note(transform, hidden.inner, traced, hidden.decorators, hidden.class_based))


def find(fn: Callable[..., Any]) -> Hidden | None:
    """The function whose ``Static`` parameters ``fn`` hides, or ``None`` when nothing is hidden."""
    found = _search(fn, _MAX_DEPTH)
    if found is None or _static_params(fn):
        return None
    chain, target, params = found
    return Hidden(
        decorators=tuple(w.decorator for w in chain),
        wrapper=f"{chain[0].qualname}{_signature(fn)}",
        inner=_name(target),
        params=params,
        target=target,
        class_based=any(w.class_based for w in chain),
    )


@dataclasses.dataclass(frozen=True)
class _Wrapper:
    """A callable that spreads its ``*args``/``**kwargs`` into calls: its code and what that code reaches by name."""

    qualname: str
    code: types.CodeType
    reachable: dict[str, Any]  # closure cells, arguments bound by partial, and attributes of ``self``
    class_based: bool

    @classmethod
    def of(cls, fn: Any) -> _Wrapper | None:
        fn, bound, keywords, receiver = _unwrap(fn)
        class_based = not isinstance(fn, types.FunctionType)
        if class_based:  # an object with __call__: bind the object itself as ``self``
            call = getattr(type(fn), "__call__", None)
            if not isinstance(call, types.FunctionType):
                return None
            fn, bound, receiver = call, (fn, *bound), fn
        code = fn.__code__
        if not code.co_flags & _VARARGS:
            return None
        reachable: dict[str, Any] = {}
        if receiver is not None and bound and bound[0] is receiver:  # ``self.fn``; ``self`` itself is no candidate
            reachable.update(getattr(receiver, "__dict__", {}))
            bound = (_NOT_A_CANDIDATE, *bound[1:])
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            try:
                reachable[name] = cell.cell_contents
            except ValueError:  # a cell not filled yet
                continue
        reachable.update(zip(code.co_varnames[:code.co_argcount], bound))
        reachable.update(keywords)
        return cls(fn.__qualname__, code, reachable, class_based)

    @property
    def decorator(self) -> str:
        """The name written after ``@``: ``log_calls`` for ``log_calls.<locals>.wrapper``, ``Logged`` for
        ``Logged.__call__``."""
        name = self.qualname.split(".<locals>.")[0]
        return name.removesuffix(".__call__")

    def forwarded(self) -> Iterator[Any]:
        """The reachable callables that a statement spreading this wrapper's own varargs loads, in code order."""
        for name in _forwarding_loads(self.code):
            value = self.reachable.get(name)
            if value is not None and callable(value) and not isinstance(value, type):
                yield value


def _unwrap(fn: Any) -> tuple[Any, tuple[Any, ...], dict[str, Any], Any]:
    """``_annotations.unwrap``'s walk, keeping what ``partial`` and bound methods pass first to the function."""
    bound: tuple[Any, ...] = ()
    keywords: dict[str, Any] = {}
    receiver = None
    for _ in range(_MAX_UNWRAP):
        if isinstance(fn, functools.partial):
            bound, keywords, fn = (*fn.args, *bound), {**fn.keywords, **keywords}, fn.func
        elif inspect.ismethod(fn):
            bound, receiver, fn = (fn.__self__, *bound), fn.__self__, fn.__func__
        elif (wrapped := getattr(fn, "__wrapped__", None)) is not None:
            bound, keywords, receiver, fn = (), {}, None, wrapped
        else:
            break
    return fn, bound, keywords, receiver


@functools.lru_cache(maxsize=256)
def _forwarding_loads(code: types.CodeType) -> tuple[str, ...]:
    """Names loaded by the statements of ``code`` that spread its own ``*args`` or ``**kwargs`` into a call.

    A statement is approximated by the instructions since the last store, pop, return or jump: enough for
    ``return fn(*args, **kwargs)`` and ``out = self.fn(x, *args)``; anything subtler is missed, never invented."""
    own = _own_varargs(code)
    found: dict[str, None] = {}
    window: dict[str, None] = {}
    for ins in dis.get_instructions(code):
        if ins.opname == "CALL_FUNCTION_EX":
            if any(name in window for name in own):
                found.update(window)
            window = {}
        elif ins.opname.startswith(_BOUNDARIES):
            window = {}
        elif ins.opname.startswith("LOAD_") and ins.opname != "LOAD_CONST":
            window.update(dict.fromkeys(_names(ins.argval)))
    return tuple(n for n in found if n not in own)


def _own_varargs(code: types.CodeType) -> tuple[str, ...]:
    index = code.co_argcount + code.co_kwonlyargcount
    own = []
    for flag in (inspect.CO_VARARGS, inspect.CO_VARKEYWORDS):
        if code.co_flags & flag:
            own.append(code.co_varnames[index])
            index += 1
    return tuple(own)


def _names(argval: Any) -> tuple[str, ...]:
    """The names an instruction loads (Python 3.13 loads two locals in one instruction)."""
    if isinstance(argval, str):
        return (argval,)
    if isinstance(argval, tuple):
        return tuple(a for a in argval if isinstance(a, str))
    return ()


def _search(fn: Any, depth: int, outer: tuple[Any, ...] = ()) -> tuple[tuple[_Wrapper, ...], Any,
                                                                      tuple[str, ...]] | None:
    """The wrappers from ``fn`` down to the first forwarded callable that declares ``Static`` parameters."""
    wrapper = _Wrapper.of(fn)
    if wrapper is None:
        return None
    path = (*outer, fn)
    for candidate in wrapper.forwarded():
        if any(candidate is seen for seen in path):  # a wrapper forwarding to itself, or to one above it
            continue
        params = _static_params(candidate)
        if params:
            return (wrapper,), candidate, params
        deeper = _search(candidate, depth - 1, path) if depth > 1 else None
        if deeper is not None:
            return (wrapper, *deeper[0]), deeper[1], deeper[2]
    return None


def _static_params(fn: Any) -> tuple[str, ...]:
    """``fn``'s ``Static`` parameters in signature order; none when they cannot be read (never a false alarm)."""
    try:
        static = find_static_params(fn, _name(fn))
        parameters = inspect.signature(fn).parameters.values()
    except (JaxstaticError, TypeError, ValueError):
        return ()
    out = []
    for p in parameters:
        if p.name in static.names:
            out.append(p.name)
        elif p.kind is p.VAR_POSITIONAL and static.var_positional:
            out.append(f"*{p.name}")
        elif p.kind is p.VAR_KEYWORD and static.var_keyword:
            out.append(f"**{p.name}")
    return tuple(out)


def _traced_params(hidden: Hidden, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[str, ...]:
    """The hidden ``Static`` parameters that received tracers; all of them when the call does not bind."""
    try:
        bound = inspect.signature(hidden.target).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return hidden.params
    traced = []
    for param in hidden.params:
        value = bound.get(param.lstrip("*"))
        values = value.values() if isinstance(value, dict) else value if isinstance(value, tuple) else (value,)
        if any(isinstance(v, jax.core.Tracer) for v in values):
            traced.append(param)
    return tuple(traced)


def _add_note(err: Exception, note: str) -> None:
    if sys.version_info >= (3, 11):
        err.add_note(note)
    elif err.args and isinstance(err.args[0], str):  # 3.10: no notes; the message is the first argument
        err.args = (f"{err.args[0]}\n{note}", *err.args[1:])


def _name(fn: Any) -> str:
    """``Model.apply``: the qualified name of what ``fn`` unwraps to, without ``<locals>`` scopes."""
    target = _unwrap(fn)[0]
    name = getattr(target, "__qualname__", None) or getattr(type(target), "__qualname__", None) or repr(target)
    return str(name).rpartition("<locals>.")[2]


def _signature(fn: Any) -> str:
    """``(*args, **kwargs)``: the parameters without their annotations, which say nothing here."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return "(...)"
    bare = [p.replace(annotation=p.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=bare, return_annotation=sig.empty))


def _user_stacklevel() -> int:
    """``warnings.warn``'s ``stacklevel`` for the first frame outside jaxstatic, counted from our caller: the user's
    call, however deep the transform's own frames are (generated dispatchers have no ``__name__``)."""
    frame, level = sys._getframe(2), 2
    while frame.f_back is not None and _internal(frame):
        frame, level = frame.f_back, level + 1
    return level


def _internal(frame: types.FrameType) -> bool:
    module = frame.f_globals.get("__name__")
    return module is None or module == "jaxstatic" or str(module).startswith("jaxstatic.")
