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
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias, TypeVar, get_args, get_origin

from ._errors import AnnotationError

_T = TypeVar("_T")


class _Marker:
    """The metadata object inside ``Static[T]`` or ``NoDiff[T]``; one instance each, compared by identity."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"jaxstatic.{self._name}"

    def __reduce__(self) -> str:
        return self._name


STATIC = _Marker("STATIC")
"""The marker inside ``Static[T]``, which is ``Annotated[T, STATIC]``: write ``Annotated[T, jaxstatic.STATIC]`` where
an alias cannot be used (beside other metadata, ``Annotated[int, STATIC, "doc"]``)."""
NODIFF = _Marker("NODIFF")
"""The marker inside ``NoDiff[T]``, which is ``Annotated[T, NODIFF]``."""

if TYPE_CHECKING:
    Static: TypeAlias = Annotated[_T, STATIC]
    NoDiff: TypeAlias = Annotated[_T, NODIFF]
else:

    class Static:
        """``Static[T]``: a parameter of type ``T`` that jaxstatic's transforms treat as static.

        ``Static[T]`` is ``typing.Annotated[T, jaxstatic.STATIC]``, so to a type checker ``n: Static[int]`` is an
        ``int``. ``jaxstatic.jit`` compiles one program per distinct static value (equal values share it, strictly:
        ``1``, ``1.0`` and ``True`` do not); the value may be anything hashable, or a ``dict``, ``list``, ``tuple``
        or ``set`` of such values, which jaxstatic freezes. ``jaxstatic.vmap`` never maps it, ``jaxstatic.grad``
        never differentiates it. The mark must be at the top of the annotation (``Static[Optional[int]]``).
        """

        def __class_getitem__(cls, item: object) -> object:
            return Annotated[item, STATIC]

    class NoDiff:
        """``NoDiff[T]``: a traced (dynamic) parameter that ``jaxstatic.grad`` and friends never differentiate.

        ``NoDiff[T]`` is ``typing.Annotated[T, jaxstatic.NODIFF]``. Unlike ``Static``, its value is traced, so it
        may be an array; unlike an ordinary parameter, ``argnums`` may not name it and it gets no gradient.
        """

        def __class_getitem__(cls, item: object) -> object:
            return Annotated[item, NODIFF]


def _has_marker(hint: object, marker: _Marker) -> bool:
    if get_origin(hint) is not Annotated:
        return False
    return any(meta is marker for meta in get_args(hint)[1:])


def is_static_annotation(hint: object) -> bool:
    """True when ``hint`` is ``Static[...]`` at its top level (``Optional[Static[int]]`` is not)."""
    return _has_marker(hint, STATIC)


def is_nodiff_annotation(hint: object) -> bool:
    """True when ``hint`` is ``NoDiff[...]`` at its top level."""
    return _has_marker(hint, NODIFF)


@dataclasses.dataclass(frozen=True)
class StaticParams:
    """Which parameters of one function are static, by kind."""

    names: frozenset[str]
    var_positional: bool  # ``*args: Static[T]``
    var_keyword: bool  # ``**kwargs: Static[T]``
    nodiff: frozenset[str] = frozenset()  # ``NoDiff[T]`` parameters


MAX_UNWRAP = 100  # links followed through wrappers: a cycle (``f.__wrapped__ = f``) must not hang


def inner(fn: Any) -> Any:
    """The callable ``fn`` wraps, one link down: a ``functools.partial``'s function, a bound method's function, or
    ``__wrapped__`` (``functools.wraps``); ``None`` at the end of the chain."""
    if isinstance(fn, functools.partial):
        return fn.func
    if inspect.ismethod(fn):
        return fn.__func__
    return getattr(fn, "__wrapped__", None)


def unwrap(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Follow ``inner`` links to the function that declares types; a callable instance declares them on its
    class's ``__call__``."""
    for _ in range(MAX_UNWRAP):
        if (link := inner(fn)) is not None:
            fn = link
        elif not inspect.isroutine(fn) and not isinstance(fn, type) and callable(fn):
            fn = type(fn).__call__
        else:
            break
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


def find_static_params(fn: Callable[..., Any], qualname: str,
                       signature: inspect.Signature | None = None) -> StaticParams:
    """Read ``fn``'s annotations and return its ``Static`` (and ``NoDiff``) parameters.

    Raises ``AnnotationError`` (naming the function and the annotation) when an annotation cannot be resolved;
    callers resolve lazily, at the first call, so that forward references to later classes work.
    """
    if not _declares_annotations(fn):
        return StaticParams(frozenset(), False, False)
    hints = _hints(fn, qualname)
    names: set[str] = set()
    nodiff: set[str] = set()
    var_pos = var_kw = False
    for p in (signature or inspect.signature(fn)).parameters.values():
        hint = hints.get(p.name)
        if get_origin(hint) is not Annotated:
            continue
        if is_nodiff_annotation(hint):
            nodiff.add(p.name)
        if not is_static_annotation(hint):
            continue
        if p.kind is p.VAR_POSITIONAL:
            var_pos = True
        elif p.kind is p.VAR_KEYWORD:
            var_kw = True
        else:
            names.add(p.name)
    return StaticParams(frozenset(names), var_pos, var_kw, frozenset(nodiff))


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


__all__ = ["NODIFF", "STATIC", "NoDiff", "Static", "StaticParams", "find_static_params", "is_nodiff_annotation", "is_static_annotation", "static_argnames",
           "static_argnums", "unwrap"]
