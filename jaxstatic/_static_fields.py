"""Which fields of a ``jaxstatic.dataclass`` are static: those annotated ``Static[...]`` at their top level.

Annotations are read with ``typing.get_type_hints(include_extras=True)``, which resolves postponed annotations
(``from __future__ import annotations``), forward references and inherited fields, each in its own module. A class
defined inside a function cannot be named that way; then only the outermost part of each annotation is evaluated,
which is all that decides whether it is ``Static[...]``.
"""

from __future__ import annotations

import ast
import inspect
import sys
import typing
from collections.abc import Sequence
from typing import Any, Final, get_origin

import typing_extensions

from ._annotations import STATIC, is_static_annotation
from ._errors import AnnotationError


def _declaring_class(cls: type, name: str) -> type:
    return next(c for c in cls.__mro__ if name in inspect.get_annotations(c))


def static_names(cls: type, names: Sequence[str]) -> tuple[str, ...] | None:
    """The static ones among the fields ``names``; None while a forward reference cannot be resolved."""
    try:
        hints = typing.get_type_hints(cls, localns={cls.__name__: cls}, include_extras=True)
    except NameError:
        return None
    except Exception as err:  # a malformed annotation: say which class and why
        raise AnnotationError(f"{cls.__qualname__}: cannot read its annotations ({type(err).__name__}: {err}). "
                              "jaxstatic reads annotations to find Static fields; fix the annotation.") from err
    return tuple(n for n in names if is_static_annotation(hints.get(n)))


def static_names_by_head(cls: type, names: Sequence[str]) -> tuple[str, ...]:
    """When some annotation names a class that cannot be resolved (one defined in a function, under
    ``from __future__ import annotations``): only an annotation's outermost part decides whether it is
    ``Static[...]``, so that part alone is evaluated. ``list[Layer]`` is a child even when ``Layer`` is unknown."""
    out = []
    for name in names:
        owner = _declaring_class(cls, name)
        scope = {**vars(sys.modules[owner.__module__]), **vars(owner), cls.__name__: cls}
        hint = inspect.get_annotations(owner)[name]
        if _is_static_text(hint, scope, cls, name) if isinstance(hint, str) else is_static_annotation(hint):
            out.append(name)
    return tuple(out)


def _is_static_text(text: str, scope: dict[str, Any], cls: type, name: str) -> bool:
    try:
        return is_static_annotation(eval(text, scope))
    except NameError:
        pass
    node = ast.parse(text, mode="eval").body
    if not isinstance(node, ast.Subscript):
        return False  # a bare name: a class defined out of reach, never Static[...]
    try:
        head = eval(ast.unparse(node.value), scope)
        if get_origin(head) is None and head in _ANNOTATED:  # Annotated[T, STATIC] written out
            meta = node.slice.elts[1:] if isinstance(node.slice, ast.Tuple) else []
            return any(eval(ast.unparse(m), scope) is STATIC for m in meta)
    except NameError as err:
        raise AnnotationError(
            f"{cls.__qualname__}: cannot resolve {err.name!r} in the annotation of field {name!r} ({text}), so "
            f"jaxstatic cannot tell whether the field is Static. Define {err.name!r} at module level."
        ) from None
    return is_static_annotation(head)


_ANNOTATED: Final = (typing.Annotated, typing_extensions.Annotated)

__all__ = ["static_names", "static_names_by_head"]
