"""``Static[T]``: mark a parameter static where it is declared, and find those marks again.

``Static[T]`` is a PEP 593 ``Annotated`` alias, so to a type checker ``n: Static[int]`` is just ``n: int``. The mark is
read with ``typing.get_type_hints(..., include_extras=True)`` through ``__wrapped__`` chains, so decorators built
with ``functools.wraps`` keep it visible.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import dataclasses
import functools
import inspect
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Final, TypeAlias, TypeVar, get_args, get_origin

import typing_extensions

from . import _lazy
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
DONATE = _Marker("DONATE")
"""The marker inside ``Donate[T]``, which is ``Annotated[T, DONATE]``."""

if TYPE_CHECKING:
    Static: TypeAlias = Annotated[_T, STATIC]
    NoDiff: TypeAlias = Annotated[_T, NODIFF]
    Donate: TypeAlias = Annotated[_T, DONATE]
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

    class Donate:
        """``Donate[T]``: a dynamic parameter of type ``T`` whose buffers ``jaxstatic.jit`` and ``jaxstatic.pmap``
        donate to the computation (``donate_argnames``): the caller's arrays are deleted by the call, and their
        memory reused for the result. Use the value the function returns, not the one passed in."""

        def __class_getitem__(cls, item: object) -> object:
            return Annotated[item, DONATE]


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


_Kind = inspect.Parameter


def call_signature(fn: Callable[..., Any]) -> inspect.Signature:
    """The signature a call of ``fn`` binds by. ``inspect.signature`` reads a ``functools.wraps`` wrapper as the
    function it wraps, right for ``wrapper(*args, **kwargs)``; a wrapper that takes parameters of its own
    (``Concatenate[float, P]``: ``wrapper(scale, *args, **kwargs)``) is called with them too. Such a wrapper binds
    by its own positional parameters, then the wrapped function's in place of its ``*args`` and ``**kwargs`` (its
    keyword-only ones are left out: a wrapper's own, beartype's among them, that callers do not pass); a wrapper
    without both is called by its own signature alone, as ``jax.jit`` calls it."""
    signature = _lazy.signature(fn)
    if not isinstance(fn, types.FunctionType) or getattr(fn, "__wrapped__", None) is None or (
            "__signature__" in fn.__dict__):
        return signature
    own = list(_lazy.signature(fn, follow_wrapped=False).parameters.values())
    kinds = [p.kind for p in own]
    if kinds == [_Kind.VAR_POSITIONAL, _Kind.VAR_KEYWORD]:
        return signature
    if _Kind.VAR_POSITIONAL not in kinds or _Kind.VAR_KEYWORD not in kinds:
        return inspect.Signature(own)
    wrapped = list(signature.parameters.values())
    before = [p for p in own if p.kind in (_Kind.POSITIONAL_ONLY, _Kind.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is _Kind.POSITIONAL_ONLY for p in wrapped):  # Concatenate's parameters come first, by position
        before = [p.replace(kind=_Kind.POSITIONAL_ONLY) for p in before]
    if not before:  # keyword-only ones alone are the wrapper's own business (beartype's hidden defaults)
        return signature
    merged = [*before, *wrapped]
    try:
        return inspect.Signature(merged)
    except ValueError:  # names taken twice, or an order Python refuses: the wrapper's own parameters alone
        return inspect.Signature(own)


# -- reading annotations that may not resolve -------------------------------------------------------------------
#
# Staticness is decided by an annotation's outermost part alone, so an annotation whose inner type cannot be
# resolved (``Static[Real]`` with ``Real`` imported only under ``if TYPE_CHECKING:``, or a class defined later in
# the enclosing function) is still ``Static``; only the ``StaticTypeWarning`` check of its ``T`` is skipped. When
# the outermost part itself names something undefined (a bare ``Decimal``, ``Float[Array, "n"]`` from a
# TYPE_CHECKING-only import) it may be a class or an alias of ``Static[...]``: spelled ``Static``, ``NoDiff``
# or ``Annotated[..., STATIC]`` it is read as written; otherwise it is read as not ``Static`` (as ``jax.jit``
# reads every parameter) -- once the reader can no longer wait for it to be defined.


class _Undecided(AnnotationError):
    """Raised while reading may still wait (``deferring()``): an annotation's outermost name is not defined yet."""


_deferring: contextvars.ContextVar[bool] = contextvars.ContextVar("jaxstatic_deferring", default=False)


@contextlib.contextmanager
def deferring() -> Iterator[None]:
    """Read annotations that may name something defined later (at decoration): an outermost name that is not
    defined raises ``_Undecided`` instead of being read as not ``Static``, so the caller reads again later."""
    token = _deferring.set(True)
    try:
        yield
    finally:
        _deferring.reset(token)


def read_hint(annotation: Any, globalns: dict[str, Any], localns: Mapping[str, Any] | None) -> tuple[Any, bool]:
    """``annotation`` resolved as ``typing.get_type_hints`` resolves it (a type alias at its top expanded), and
    True; when a name in it is not defined, ``Annotated[Any, <its top-level markers>]`` (``Any`` without any), and
    whether its outermost part decided that (False: that part names something undefined). ``annotation`` is a
    value, a string, or (Python 3.14) a ``ForwardRef`` or a value holding some."""
    annotation = _lazy.forward_text(annotation)
    shim = types.SimpleNamespace(__annotations__={"_": annotation})
    try:
        hint = typing.get_type_hints(shim, globalns, localns, include_extras=True)["_"]
    except (NameError, AttributeError):
        pass
    else:
        return expanded(hint), True  # NameError: an alias whose value cannot be read, for the caller to report
    markers = _outer_markers(annotation, globalns, localns)
    if not markers:
        return Any, markers is not None
    params = (Any, *markers)
    return Annotated[params], True


def _outer_markers(annotation: Any, globalns: dict[str, Any],
                   localns: Mapping[str, Any] | None) -> tuple[_Marker, ...] | None:
    """The markers at the top of an annotation that does not resolve, from its outermost part; None when that
    part names something undefined that is not spelled ``Static``, ``NoDiff`` or ``Annotated``."""
    if not isinstance(annotation, str):
        return _markers(expanded(annotation))
    try:
        node = ast.parse(annotation.strip(), mode="eval").body
    except SyntaxError:
        return ()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a string inside the string
        return _outer_markers(node.value, globalns, localns)
    if isinstance(node, (ast.Name, ast.Attribute)):
        return None  # a name that is not defined: a class, or perhaps an alias of Static[...]
    if not isinstance(node, ast.Subscript):
        return ()  # ``X | None`` and the like: not Static at its top
    head = _evaluate(node.value, globalns, localns)
    spelled = _last_name(node.value)
    if head is Static or (head is _UNDEFINED and spelled == "Static"):
        return (STATIC,)
    if head is NoDiff or (head is _UNDEFINED and spelled == "NoDiff"):
        return (NODIFF,)
    if head is Donate or (head is _UNDEFINED and spelled == "Donate"):
        return (DONATE,)
    if head in _ANNOTATED or (head is _UNDEFINED and spelled == "Annotated"):
        metadata = node.slice.elts[1:] if isinstance(node.slice, ast.Tuple) else []
        return tuple(m for m in (_metadata_marker(n, globalns, localns) for n in metadata) if m is not None)
    if head is _UNDEFINED:
        return None  # ``Float[Array, "n"]`` with ``Float`` undefined, or a generic alias of Static[...]
    return _markers(expanded(head))  # a generic alias of Static[...] (``StaticList[Foo]``)


_UNDEFINED: Final = object()


def _evaluate(node: ast.expr, globalns: dict[str, Any], localns: Mapping[str, Any] | None) -> Any:
    try:
        return eval(ast.unparse(node), globalns, dict(localns or {}))  # the user's own annotation text
    except (NameError, AttributeError):
        return _UNDEFINED
    except Exception:
        return None


def _last_name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _metadata_marker(node: ast.expr, globalns: dict[str, Any], localns: Mapping[str, Any] | None) -> _Marker | None:
    value = _evaluate(node, globalns, localns)
    if value is _UNDEFINED:
        return {"STATIC": STATIC, "NODIFF": NODIFF}.get(_last_name(node) or "")
    return value if isinstance(value, _Marker) else None  # STATIC, NODIFF or DONATE


def expanded(hint: Any) -> Any:
    """``hint`` with a type alias at its top replaced by its value, as many times as it takes: ``type StaticInt =
    Static[int]`` (or ``TypeAliasType``) makes ``n: StaticInt`` a ``Static[int]``, and ``StaticList[int]`` of a
    generic alias its value with ``int`` put in. Only the top: ``list[StaticInt]`` is a list. An alias whose value
    names something not defined yet raises ``NameError`` below Python 3.14 (whether it is Static cannot be known);
    on 3.14 that name is a ``ForwardRef``."""
    for _ in range(MAX_UNWRAP):
        origin = get_origin(hint)
        if _lazy.is_alias(hint):
            hint = _lazy.alias_value(hint)
        elif _lazy.is_alias(origin):
            value = _lazy.alias_value(origin)
            try:
                hint = value[get_args(hint)]
            except TypeError:  # the value takes no parameters of its own (``Annotated[Any, STATIC]``)
                hint = value
        else:
            return hint
    return hint


def _markers(hint: object) -> tuple[_Marker, ...]:
    if get_origin(hint) is not Annotated:
        return ()
    return tuple(m for m in get_args(hint)[1:] if isinstance(m, _Marker))


_ANNOTATED: Final = (typing.Annotated, typing_extensions.Annotated)


def function_hints(fn: Callable[..., Any], qualname: str) -> dict[str, Any]:
    """The annotations of the function behind ``fn``, resolved; one that does not resolve is read by its outermost
    part (``read_hint``). Raises ``_Undecided`` under ``deferring()`` when an outermost name is not defined yet,
    and ``AnnotationError`` for an annotation that is not a type at all. Each reader reads them once per function,
    for what it alone needs: the ``Static``/``NoDiff`` parameters (``find_static_params``, for ``_plan.Layout``),
    the ``Donate`` marks (``_donate.declared``), the ``T`` of each ``Static[T]`` (``_typecheck``)."""
    target = unwrap(fn)
    try:
        # typing_extensions' reading: Python 3.10's own wraps `n: Static[int] = None` in Optional, hiding Static
        return {name: expanded(hint) for name, hint in
                typing_extensions.get_type_hints(target, include_extras=True).items()}
    except (NameError, AttributeError):
        pass
    except Exception as err:
        raise _malformed(qualname, err) from err
    globalns = getattr(target, "__globals__", {})
    hints = {}
    for name, annotation in _lazy.annotations_of(target).items():
        try:
            hints[name], decided = read_hint(annotation, globalns, None)
        except NameError as err:  # a type alias at its top whose value names something not defined
            if _deferring.get():
                raise _Undecided(f"{qualname}: the annotation of {name!r} names something not defined yet.") from err
            raise _unreadable_alias(qualname, name, err) from err
        except Exception as err:
            raise _malformed(qualname, err) from err
        if not decided and _deferring.get():
            text = _lazy.forward_text(annotation)
            raise _Undecided(f"{qualname}: the annotation of {name!r} ({text}) names something not defined yet.")
    return hints


def _unreadable_alias(qualname: str, name: str, err: NameError) -> AnnotationError:
    """A type alias at the top of an annotation whose value cannot be read: whether it is Static is unknown."""
    return AnnotationError(
        f"{qualname}: the annotation of parameter {name!r} is a type alias whose value cannot be evaluated ({err}), "
        "so jaxstatic cannot tell whether it is Static. Define what the alias names before the first call, or "
        "write Static[...] in the annotation itself.")


def _malformed(qualname: str, err: Exception) -> AnnotationError:
    """An annotation that is not a type: say which function and why."""
    return AnnotationError(
        f"{qualname}: cannot read its annotations ({type(err).__name__}: {err}). jaxstatic reads annotations "
        "to find Static parameters; fix the annotation, or give static_argnames= explicitly.")


def _declares_annotations(fn: Callable[..., Any]) -> bool:
    return _lazy.declares(unwrap(fn))


def find_static_params(fn: Callable[..., Any], qualname: str,
                       signature: inspect.Signature | None = None) -> StaticParams:
    """Read ``fn``'s annotations and return its ``Static`` (and ``NoDiff``) parameters.

    An annotation that does not resolve is read by its outermost part (``read_hint``): ``Static[Undefined]`` is
    static, a bare undefined name is not. Callers read at the first call, or at decoration under ``deferring()``,
    so that a forward reference to a later alias is found.
    """
    if not _declares_annotations(fn):
        return StaticParams(frozenset(), False, False)
    hints = function_hints(fn, qualname)
    names: set[str] = set()
    nodiff: set[str] = set()
    var_pos = var_kw = False
    for p in (signature or _lazy.signature(fn)).parameters.values():
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
    return tuple(n for n in _lazy.signature(fn).parameters if n in params.names)


def static_argnums(fn: Callable[..., Any]) -> tuple[int, ...]:
    """The positions of ``fn``'s positional ``Static`` parameters, for ``static_argnums=``/``static_broadcasted_argnums=``."""
    params = find_static_params(fn, _qualname(fn))
    positional = [p.name for p in _lazy.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return tuple(i for i, n in enumerate(positional) if n in params.names)


__all__ = ["NODIFF", "STATIC", "NoDiff", "Static", "StaticParams", "deferring", "find_static_params",
           "expanded", "function_hints", "is_nodiff_annotation", "is_static_annotation", "read_hint", "static_argnames",
           "static_argnums", "unwrap"]
