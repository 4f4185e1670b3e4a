"""Which fields of a ``jaxstatic.dataclass`` are static: those annotated ``Static[...]`` at their top level.

Annotations are read with ``typing.get_type_hints(include_extras=True)``, which resolves postponed annotations
(``from __future__ import annotations``), forward references and inherited fields, each in its own module. When one
does not resolve (a type imported only under ``if TYPE_CHECKING:``, a class defined inside a function), each field is
read by itself and, if it still does not resolve, by its outermost part (``_annotations.read_hint``), which is all
that decides whether it is ``Static[...]``: ``Static[Real]`` is static, ``list[Layer]`` a child, whatever ``Real``
and ``Layer`` are. On Python 3.14 the fields' annotations are read lazily (``_lazy``), so a class whose annotations
name a later or ``TYPE_CHECKING``-only class is made as ``dataclasses.dataclass`` makes it. A type alias at the top
of a field's annotation (``type StaticInt = Static[int]``) is read through to its value.
"""

from __future__ import annotations

import sys
import typing
from collections.abc import Sequence

from . import _lazy
from ._annotations import expanded, is_static_annotation, read_hint
from ._errors import AnnotationError


def _declaring_class(cls: type, name: str) -> type:
    return next(c for c in cls.__mro__ if name in _lazy.annotations_of(c))


def static_names(cls: type, names: Sequence[str], final: bool) -> tuple[str, ...] | None:
    """The static ones among the fields ``names``. None, unless ``final``, while an annotation's outermost part
    names something not defined yet (an alias of ``Static[...]`` may be defined further down the module); when
    ``final`` (the first instance is being built), such a field is a child."""
    hints: dict[str, typing.Any] | None
    try:
        hints = {n: expanded(h) for n, h in
                 typing.get_type_hints(cls, localns={cls.__name__: cls}, include_extras=True).items()}
    except (NameError, AttributeError):
        hints = _hints_by_field(cls, names, final)
    except Exception as err:
        raise _malformed(cls, err) from err
    if hints is None:
        return None
    return tuple(n for n in names if is_static_annotation(hints.get(n)))


def _hints_by_field(cls: type, names: Sequence[str], final: bool) -> dict[str, typing.Any] | None:
    hints = {}
    for name in names:
        owner = _declaring_class(cls, name)
        globalns = getattr(sys.modules.get(owner.__module__), "__dict__", {})
        try:
            hints[name], decided = read_hint(_lazy.annotations_of(owner)[name], globalns,
                                             {**vars(owner), cls.__name__: cls})
        except NameError as err:  # a type alias at its top whose value names something not defined
            if not final:
                return None
            raise AnnotationError(
                f"{cls.__qualname__}: the annotation of field {name!r} is a type alias whose value cannot be "
                f"evaluated ({err}), so jaxstatic cannot tell whether it is Static. Define what the alias names "
                "before the first instance is made, or write Static[...] in the annotation itself.") from err
        except Exception as err:
            raise _malformed(cls, err) from err
        if not decided and not final:
            return None
    return hints


def _malformed(cls: type, err: Exception) -> AnnotationError:
    """An annotation that is not a type: say which class and why."""
    return AnnotationError(f"{cls.__qualname__}: cannot read its annotations ({type(err).__name__}: {err}). "
                           "jaxstatic reads annotations to find Static fields; fix the annotation.")


__all__ = ["static_names"]
