"""``Static[T]``: mark a parameter static where it is declared, and find those marks again.

``Static[T]`` is a PEP 593 ``Annotated`` alias, so to a type checker ``n: Static[int]`` is just ``n: int``. The mark is
read with ``typing.get_type_hints(..., include_extras=True)`` through ``__wrapped__`` chains, so decorators built
with ``functools.wraps`` keep it visible.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any, TypeAlias, TypeVar, get_args, get_origin

from ._errors import AnnotationError

_T = TypeVar("_T")


class _StaticMarker:
    """The metadata object inside ``Static[T]``; one instance, compared by identity."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "jaxstatic.STATIC"

    def __reduce__(self) -> str:
        return "STATIC"


STATIC = _StaticMarker()

Static: TypeAlias = Annotated[_T, STATIC]
"""``Static[T]`` marks a parameter of type ``T`` as static for ``jaxstatic.jit`` and the other transforms."""


def is_static_annotation(hint: object) -> bool:
    """True when ``hint`` is ``Static[...]`` at its top level (``Optional[Static[int]]`` is not)."""
    if get_origin(hint) is not Annotated:
        return False
    return any(meta is STATIC for meta in get_args(hint)[1:])


@dataclasses.dataclass(frozen=True)
class StaticParams:
    """Which parameters of one function are static, by kind."""

    names: frozenset[str]
    var_positional: bool  # ``*args: Static[T]``
    var_keyword: bool  # ``**kwargs: Static[T]``


def unwrap(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Follow ``__wrapped__`` (``functools.wraps``) and ``functools.partial`` to the function that declares types."""
    while True:
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif inspect.ismethod(fn):
            fn = fn.__func__
        elif (wrapped := getattr(fn, "__wrapped__", None)) is not None:
            fn = wrapped
        else:
            return fn


def _hints(fn: Callable[..., Any], qualname: str) -> dict[str, Any]:
    target = unwrap(fn)
    try:
        return typing.get_type_hints(target, include_extras=True)
    except NameError as err:
        raise AnnotationError(
            f"{qualname}: cannot resolve the annotation {err.name!r} ({err}). jaxstatic reads annotations to find "
            f"Static parameters; define {err.name!r} before the first call, or import it at module level "
            "(not only under `if TYPE_CHECKING:`)."
        ) from None
    except Exception as err:  # a malformed annotation: say which function and why
        raise AnnotationError(
            f"{qualname}: cannot read its annotations ({type(err).__name__}: {err}). jaxstatic reads annotations "
            "to find Static parameters; fix the annotation, or give static_argnames= explicitly."
        ) from err


def _declares_annotations(fn: Callable[..., Any]) -> bool:
    target = unwrap(fn)
    return bool(getattr(target, "__annotations__", None))


def find_static_params(fn: Callable[..., Any], qualname: str) -> StaticParams:
    """Read ``fn``'s annotations and return its ``Static`` parameters.

    Raises ``AnnotationError`` (naming the function and the annotation) when an annotation cannot be resolved;
    callers resolve lazily, at the first call, so that forward references to later classes work.
    """
    if not _declares_annotations(fn):
        return StaticParams(frozenset(), False, False)
    hints = _hints(fn, qualname)
    sig = inspect.signature(fn)
    names: set[str] = set()
    var_pos = var_kw = False
    for p in sig.parameters.values():
        if not is_static_annotation(hints.get(p.name)):
            continue
        if p.kind is p.VAR_POSITIONAL:
            var_pos = True
        elif p.kind is p.VAR_KEYWORD:
            var_kw = True
        else:
            names.add(p.name)
    return StaticParams(frozenset(names), var_pos, var_kw)





def _qualname(fn: Callable[..., Any]) -> str:
    return getattr(unwrap(fn), "__qualname__", None) or repr(fn)


def static_argnames(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The names of ``fn``'s ``Static`` parameters, for ``jax.jit(fn, static_argnames=...)`` and friends.

    Plain JAX needs each static value to be hashable itself: a ``dict`` config needs ``jaxstatic.jit``.
    """
    params = find_static_params(fn, _qualname(fn))
    return tuple(n for n in inspect.signature(fn).parameters if n in params.names)


def static_argnums(fn: Callable[..., Any]) -> tuple[int, ...]:
    """The positions of ``fn``'s positional ``Static`` parameters, for ``static_argnums=``/``static_broadcasted_argnums=``."""
    params = find_static_params(fn, _qualname(fn))
    positional = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return tuple(i for i, n in enumerate(positional) if n in params.names)


__all__ = ["STATIC", "Static", "StaticParams", "find_static_params", "is_static_annotation", "static_argnames",
           "static_argnums", "unwrap"]
