"""How a jaxstatic function and its programs are named: in errors and reports, and to JAX.

One place for the names, so that the general path's body (``_body``) and the exact-key lane's (``_lane``) give JAX
the same: the program's name (``jit_loss`` in profiles and HLO dumps), the user's qualified name, and a stub of the
user's function (``__wrapped__``) from which JAX's debug info reads the file, line and parameter names.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from typing import Any


def display_name(fn: Callable[..., Any]) -> str:
    """``Model.apply``: the qualified name without ``<locals>`` scopes, as errors and reports print it; a
    ``functools.partial`` without a name of its own by its function's (``loss`` for ``partial(loss, n=2)``)."""
    fn = _unpartial(fn)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if name is None:  # a callable instance
        name = type(fn).__qualname__
    return str(name).rpartition("<locals>.")[2]


def _unpartial(fn: Any) -> Any:
    """The function a ``functools.partial`` (nested ones too) applies, where the partial has no name of its own."""
    for _ in range(64):
        if not isinstance(fn, functools.partial) or getattr(fn, "__name__", None) is not None:
            break
        fn = fn.func
    return fn


def wrapper_names(fn: Callable[..., Any]) -> dict[str, str]:
    """``__name__`` and ``__qualname__`` for a transform of a ``functools.partial`` without a name of its own: its
    function's, as ``jax.jit(partial(f, ...))`` is named ``f`` (``functools.update_wrapper`` finds none to copy)."""
    inner = _unpartial(fn)
    if inner is fn:
        return {}
    names = {attr: getattr(inner, attr, None) for attr in ("__name__", "__qualname__")}
    return {attr: str(name) for attr, name in names.items() if name is not None}


def program_name(fn: Any) -> str:
    """The name JAX gives a program of ``fn`` (``jit_loss`` for ``functools.partial(loss, n=2)``), as its own
    ``fun_name`` does, so that profiles and HLO dumps show the user's name."""
    for _ in range(64):
        name = getattr(fn, "__name__", None)
        if name is not None:
            return str(name)
        if not isinstance(fn, functools.partial):
            break
        fn = fn.func
    return "<unnamed function>"


def debug_stub(fn: Callable[..., Any]) -> Callable[..., Any] | None:
    """What a program's body gives JAX as its ``__wrapped__``, from which JAX reads the user's name, file and line:
    a function of ``fn``'s code, name and module that holds nothing of ``fn``'s (no closure values, defaults or
    globals), so that a program never keeps the function, nor the arrays it captured, alive."""
    try:
        target: Any = inspect.unwrap(fn)  # where JAX would read them: the innermost function
    except ValueError:  # a __wrapped__ cycle
        return None
    target = getattr(target, "__func__", target)  # a bound method: its function
    if not isinstance(target, types.FunctionType):
        call = inspect.getattr_static(type(target), "__call__", None)
        if not isinstance(call, types.FunctionType):
            return None
        target = call
    code = target.__code__
    stub = types.FunctionType(code, {}, target.__name__, None, tuple(types.CellType() for _ in code.co_freevars))
    stub.__qualname__, stub.__module__ = target.__qualname__, target.__module__
    return stub


def name_program(body: Callable[..., Any], fn: Callable[..., Any], function: str,
                 signature: inspect.Signature) -> None:
    """Name the body JAX traces after the user's ``fn`` (shown as ``function``), with the parameters it takes:
    JAX reads ``__name__`` for the program, and ``__wrapped__`` and ``__signature__`` for its debug info."""
    body.__name__ = program_name(fn)
    body.__qualname__ = function
    stub = debug_stub(fn)
    if stub is not None:  # JAX's debug info: the user's name, file and line
        body.__wrapped__ = stub  # type: ignore[attr-defined]
    body.__signature__ = signature  # type: ignore[attr-defined]


__all__ = ["debug_stub", "display_name", "name_program", "program_name", "wrapper_names"]
