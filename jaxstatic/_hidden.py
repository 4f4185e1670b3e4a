"""Decorators that hide ``Static`` parameters, found where a transform reads a function's parameters.

A decorator that returns ``def wrapper(*args, **kwargs)`` without ``functools.wraps`` shows jaxstatic a signature
with no ``Static`` parameter: the wrapped function's ``Static`` values are then traced as arrays, silently until its
body needs a concrete value. This module finds the function behind such a wrapper and says so twice: a
``HiddenStaticWarning`` where the transform reads the layout (the first call, or the decoration when options name
parameters), and a note on JAX's tracer errors raised by those parameters inside the traced body.

What counts as hidden, so that a warning is never a false alarm:

* the signature the transform reads declares no ``Static`` parameter (with ``__wrapped__``, jaxstatic reads the
  wrapped function's, so ``functools.wraps`` wrappers are never suspects);
* the wrapper (a function, a ``functools.partial`` of one, a bound method, or an object whose class defines
  ``__call__``) spreads its own ``*args`` or ``**kwargs`` into a call (``CALL_FUNCTION_EX`` in its bytecode), and the
  same statement loads a callable it can reach by name: a closure cell, an argument bound by ``partial``, or an
  attribute of ``self``;
* that callable declares ``Static`` parameters the spread values can reach (not those filled by arguments written
  before ``*args`` or by keywords written out), read through ``__func__``, ``__wrapped__`` and ``partial``; or it is
  itself such a wrapper (stacked decorators, followed at most ``_MAX_DEPTH`` deep).

A closure that calls some other jitted function without spreading its own ``*args``/``**kwargs`` is not a wrapper.
The bytecode patterns read are the same on Python 3.10 to 3.13.

Cost: nothing on the cache-hit path. Where the layout is read, a few attribute reads when the signature shows a
``Static`` parameter or takes no ``*args``/``**kwargs``; otherwise one pass over the wrapper's bytecode (remembered
per code object) and one annotation read per function it forwards to, the read jaxstatic does for any function
(``benchmarks/hidden.py``: unchanged for such functions; for a hiding wrapper, which warns, reading its layout
costs about 2-3x, a fraction of a millisecond against the tens of its first trace).
"""

from __future__ import annotations

import dataclasses
import dis
import functools
import inspect
import re
import sys
import types
import warnings
import weakref
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any, TypeVar

import jax
from typing_extensions import ParamSpec

from . import _lazy
from ._annotations import MAX_UNWRAP, StaticParams, find_static_params, inner, unwrap
from ._errors import (
    HiddenStaticWarning,
    JaxstaticError,
    NonArrayArgumentError,
    hidden_non_array_error,
    hidden_static_message,
    hidden_static_note,
)

_P = ParamSpec("_P")
_R = TypeVar("_R")

TRACER_ERRORS = (jax.errors.ConcretizationTypeError, jax.errors.TracerBoolConversionError,
                 jax.errors.TracerIntegerConversionError, jax.errors.TracerArrayConversionError)
"""JAX's errors for a traced value used where Python needs a concrete one: what a hidden ``Static`` leads to."""

_MAX_DEPTH = 8  # stacked wrappers followed before giving up (silently)
_VARARGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
_SPELLED_STATIC = re.compile(r"\s*(?:\w+\.)*Static\[")
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
    already treats as static (any at all: nothing is hidden). The warning points at the user's line: the
    decoration, or the first call. Through a stack of transforms (``js.jit(js.vmap(log_calls(g)))``) the first to
    read a layout warns, naming the transform right above the decorator: the one to apply below it. Once per
    decorated function and transform: ``js.grad(g)`` after ``js.vmap(g)`` warns again.
    """
    if static:
        return
    hidden = find(fn)
    if hidden is None:
        return
    hider, owner = _hider(fn)
    if owner is not None:  # the transform applied right above the decorator, whose fix it is
        transform = f"jaxstatic.{owner._transform_name}"
    try:
        warned = _warned.setdefault(hider, set())
        if transform in warned:
            return
        warned.add(transform)
    except TypeError:  # not weakly referable: warn each time its layout is read
        pass
    message = hidden_static_message(transform, hidden.inner, hidden.params, hidden.decorators, hidden.wrapper,
                                    hidden.class_based)
    warnings.warn(HiddenStaticWarning(message), stacklevel=user_stacklevel())


def explaining(fn: Callable[_P, _R], static: Collection[str], transform: str = "jaxstatic.jit") -> Callable[_P, _R]:
    """What the traced body calls: ``fn`` itself (no cost) unless it hides ``Static`` parameters; then ``fn`` with
    ``explain_tracer_error`` on JAX's tracer errors. ``static`` as for ``warn_if_hidden``."""
    hidden = None if static or _is_transform(fn) else find(fn)
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


# The hiding wrappers already warned about, with the transforms named: each transform's fix is its own (a vmap
# that maps the hidden value fails otherwise than a grad that traces it), so each warns once.
_warned: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


def is_transform_object(fn: object) -> bool:
    """Whether ``fn`` is a jaxstatic transform itself: its class (never its instance, whose attributes a wrapped
    function's may have joined) carries ``StaticFunction``'s mark. Read from the class so that this module needs no
    import of ``_transform``, which imports it."""
    return getattr(type(fn), "_jaxstatic_transform_", False) is True


def _hider(fn: Any) -> tuple[Any, Any]:
    """The end of ``fn``'s ``__wrapped__`` links (the hiding wrapper, through transforms and ``functools.wraps``
    wrappers), and the last jaxstatic transform on the way, or ``None``."""
    owner = None
    for _ in range(MAX_UNWRAP):
        if is_transform_object(fn):
            owner = fn
        wrapped = getattr(fn, "__wrapped__", None)
        if wrapped is None:
            break
        fn = wrapped
    return fn, owner


def _is_transform(fn: Any) -> bool:
    """Whether ``fn`` is a jaxstatic transform (reached through ``partial``, bound methods and ``__wrapped__``)."""
    for _ in range(MAX_UNWRAP):
        if is_transform_object(fn):
            return True
        if (fn := inner(fn)) is None:
            return False
    return False


def non_array_error(fn: Callable[..., Any], static: Collection[str], transform: str, args: tuple[Any, ...],
                    kwargs: Mapping[str, Any], leaf: object) -> NonArrayArgumentError | None:
    """The error for a non-array ``leaf`` of this call that JAX was given because ``fn`` hides the ``Static``
    parameter it was passed to, named by that parameter; ``None`` when the leaf is not under a hidden parameter.
    A warning can be filtered out; this error carries the diagnosis itself. Called on the error path only."""
    hidden = None if static else find(fn)
    if hidden is None:
        return None
    owner = _hider(fn)[1]
    transform = f"jaxstatic.{owner._transform_name}" if owner is not None else transform
    try:
        bound = _lazy.signature(hidden.target).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return None
    for param in hidden.params:
        name = param.lstrip("*")
        for path, value in jax.tree_util.tree_flatten_with_path(bound.get(name))[0]:
            if value is leaf:
                where = name + jax.tree_util.keystr(path)
                return hidden_non_array_error(transform, hidden.inner, name, where, leaf, hidden.decorators,
                                              hidden.class_based)
    return None


def find(fn: Callable[..., Any]) -> Hidden | None:
    """The function whose ``Static`` parameters ``fn`` hides, or ``None`` when nothing is hidden. ``fn`` itself
    shows no ``Static`` parameter: the callers know, from the layout they read."""
    found = _search(fn, _MAX_DEPTH)
    if found is None:
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
            call = inspect.getattr_static(type(fn), "__call__", None)
            if not isinstance(call, types.FunctionType):
                return None
            fn, bound, receiver = call, (fn, *bound), fn
        code = fn.__code__
        if not code.co_flags & _VARARGS:
            return None
        reachable: dict[str, Any] = {}
        if receiver is not None and bound and bound[0] is receiver:  # ``self.fn``
            reachable.update(getattr(receiver, "__dict__", {}))
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            try:
                reachable[name] = cell.cell_contents
            except ValueError:  # a cell not filled yet
                continue
        positional = code.co_varnames[:code.co_argcount]
        reachable.update(zip(positional, bound))
        reachable.update(keywords)
        if receiver is not None and bound and bound[0] is receiver:
            reachable.pop(positional[0], None)  # ``self`` itself is no candidate
        return cls(fn.__qualname__, code, reachable, class_based)

    @property
    def decorator(self) -> str:
        """The name written after ``@``: ``log_calls`` for ``log_calls.<locals>.wrapper``, ``Logged`` for
        ``Logged.__call__``."""
        name = self.qualname.split(".<locals>.")[0]
        return name.removesuffix(".__call__")

    def forwarded(self) -> Iterator[tuple[Any, _Forward]]:
        """The reachable callables loaded by a call that spreads this wrapper's own varargs, in code order."""
        for forward in _forwards(self.code):
            for name in forward.loads:
                value = self.reachable.get(name)
                if value is not None and callable(value) and not isinstance(value, type):
                    yield value, forward


@dataclasses.dataclass(frozen=True)
class _Forward:
    """One call that spreads the wrapper's own ``*args`` and/or ``**kwargs``, as its bytecode shows it."""

    loads: tuple[str, ...]  # the names its statement loads, the callee among them
    args: bool  # spreads ``*args``
    kwargs: bool  # spreads ``**kwargs``
    prefix: int  # positional arguments written before ``*args``: they fill the callee's first parameters
    named: frozenset[str]  # keywords written out: ``fn(*args, n=3)``

    def feeds(self, p: inspect.Parameter, index: int) -> bool:
        """Whether the spread values can reach parameter ``p``, at ``index`` in the callee's signature."""
        if p.name in self.named:
            return False
        if p.kind is p.VAR_POSITIONAL:
            return self.args
        if p.kind is p.VAR_KEYWORD:
            return self.kwargs
        by_position = self.args and p.kind is not p.KEYWORD_ONLY and index >= self.prefix
        return by_position or (self.kwargs and p.kind is not p.POSITIONAL_ONLY)


def _unwrap(fn: Any) -> tuple[Any, tuple[Any, ...], dict[str, Any], Any]:
    """``_annotations.unwrap``'s walk, keeping what ``partial`` and bound methods pass first to the function."""
    bound: tuple[Any, ...] = ()
    keywords: dict[str, Any] = {}
    receiver = None
    for _ in range(MAX_UNWRAP):
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
def _forwards(code: types.CodeType) -> tuple[_Forward, ...]:
    """The calls in ``code`` that spread its own ``*args`` or ``**kwargs`` (``CALL_FUNCTION_EX``).

    A call's statement is approximated by the instructions since the last store, pop, return or jump: enough for
    ``return fn(*args, **kwargs)`` and ``out = self.fn(x, *args)``; anything subtler is missed, never invented.
    ``BUILD_LIST n`` just before ``*args`` is loaded means ``n`` positional arguments are written before it."""
    own_args, own_kwargs = _own_varargs(code)
    found: list[_Forward] = []
    loads: dict[str, None] = {}
    consts: set[str] = set()
    spread_args = spread_kwargs = False
    prefix = 0
    previous = None
    for ins in dis.get_instructions(code):
        if ins.opname == "CALL_FUNCTION_EX" or ins.opname.startswith(_BOUNDARIES):
            if ins.opname == "CALL_FUNCTION_EX" and (spread_args or spread_kwargs):
                callees = tuple(n for n in loads if n not in (own_args, own_kwargs))
                found.append(_Forward(callees, spread_args, spread_kwargs, prefix, frozenset(consts)))
            loads, consts, spread_args, spread_kwargs, prefix = {}, set(), False, False, 0
        elif ins.opname == "LOAD_CONST":
            consts.update(_names(ins.argval))
        elif ins.opname.startswith("LOAD_"):
            names = _names(ins.argval)
            loads.update(dict.fromkeys(names))
            if own_args in names:
                spread_args = True
                prefix = 0
                if previous is not None and previous.opname == "BUILD_LIST":
                    prefix = previous.arg or 0
            spread_kwargs = spread_kwargs or own_kwargs in names
        previous = ins
    return tuple(found)


def _own_varargs(code: types.CodeType) -> tuple[str | None, str | None]:
    """The names of ``code``'s own ``*args`` and ``**kwargs``, ``None`` for those it does not take."""
    index = code.co_argcount + code.co_kwonlyargcount
    args = kwargs = None
    if code.co_flags & inspect.CO_VARARGS:
        args = code.co_varnames[index]
        index += 1
    if code.co_flags & inspect.CO_VARKEYWORDS:
        kwargs = code.co_varnames[index]
    return args, kwargs


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
    for candidate, forward in wrapper.forwarded():
        if any(candidate is seen for seen in path):  # a wrapper forwarding to itself, or to one above it
            continue
        params = _static_params(candidate, forward)
        if params:
            return (wrapper,), candidate, params
        deeper = _search(candidate, depth - 1, path) if depth > 1 else None
        if deeper is not None:
            return (wrapper, *deeper[0]), deeper[1], deeper[2]
    return None


def _static_params(fn: Any, forward: _Forward) -> tuple[str, ...]:
    """``fn``'s ``Static`` parameters that ``forward`` fills from the wrapper's varargs, in signature order; none
    when they cannot be read (never a false alarm)."""
    try:
        parameters = list(_lazy.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return ()
    try:
        found = find_static_params(fn, _name(fn))
    except JaxstaticError:  # an annotation that resolves only later (a class defined below): read its text
        found = _spelled_static(fn, parameters)
    out = []
    for index, p in enumerate(parameters):
        if not forward.feeds(p, index):
            continue
        if p.kind is p.VAR_POSITIONAL:
            out += [f"*{p.name}"] if found.var_positional else []
        elif p.kind is p.VAR_KEYWORD:
            out += [f"**{p.name}"] if found.var_keyword else []
        elif p.name in found.names:
            out.append(p.name)
    return tuple(out)


def _spelled_static(fn: Any, parameters: list[inspect.Parameter]) -> StaticParams:
    """The parameters whose annotation is written ``Static[...]`` (``js.Static[...]``), from its text alone."""
    spelled = {n for n, a in _lazy.annotation_texts(unwrap(fn)).items() if _SPELLED_STATIC.match(a)}
    kinds = {p.kind for p in parameters if p.name in spelled}
    return StaticParams(frozenset(spelled), inspect.Parameter.VAR_POSITIONAL in kinds,
                        inspect.Parameter.VAR_KEYWORD in kinds)


def _traced_params(hidden: Hidden, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[str, ...]:
    """The hidden ``Static`` parameters that received tracers; all of them when the call does not bind."""
    try:
        bound = _lazy.signature(hidden.target).bind(*args, **kwargs).arguments
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
        sig = _lazy.signature(fn)
    except (TypeError, ValueError):
        return "(...)"
    bare = [p.replace(annotation=p.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=bare, return_annotation=sig.empty))


def user_stacklevel() -> int:
    """``warnings.warn``'s ``stacklevel`` for the first frame outside jaxstatic, counted from our caller: the user's
    call, however deep the transform's own frames are (generated dispatchers have no ``__name__``)."""
    frame, level = sys._getframe(2), 2
    while frame.f_back is not None and _internal(frame):
        frame, level = frame.f_back, level + 1
    return level


def _internal(frame: types.FrameType) -> bool:
    """jaxstatic's frames, and JAX's: a transform inside another reads its layout while the outer one traces, so
    the user's line is above JAX's tracing machinery too (a user's own function JAX traces stops the walk)."""
    module = frame.f_globals.get("__name__")
    return module is None or str(module).split(".", 1)[0] in ("jaxstatic", "jax", "jaxlib")
