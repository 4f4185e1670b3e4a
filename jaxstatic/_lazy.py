"""Annotations as the running Python keeps them, read in one place.

Below Python 3.14 a function's annotations are evaluated when it is defined (or kept as strings under ``from
__future__ import annotations``). From 3.14 (PEP 649/749) they are evaluated when first read, and reading
``__annotations__`` evaluates every name in them: one imported only under ``if TYPE_CHECKING:`` raises ``NameError``
though the standard library (dataclasses, ``inspect``, ``annotationlib``) copes. So annotations are read here in
``annotationlib``'s FORWARDREF format, where a name not defined yet is a ``ForwardRef`` and everything else is the
value, and never through ``__annotations__``. The readers above (``_annotations``) decide staticness from an
annotation's head, so a ``Static[Cfg]`` whose ``Cfg`` is not defined is still ``Static``.

Type aliases (``type StaticInt = Static[int]``, 3.12+, and ``typing_extensions.TypeAliasType`` on every Python) keep
their value lazily too; ``alias_value`` reads it the same way.
"""

from __future__ import annotations

import inspect
import sys
import typing
from typing import Any, Final

import typing_extensions

LAZY: Final = sys.version_info >= (3, 14)
"""Whether annotations are evaluated lazily (PEP 649): Python 3.14 and later."""

if sys.version_info >= (3, 14):
    import annotationlib

    ForwardRef: Any = annotationlib.ForwardRef

    def annotations_of(obj: Any) -> dict[str, Any]:
        """``obj``'s own annotations, a name not defined yet kept as a ``ForwardRef``: evaluating nothing that is
        not defined (cost: one call of the function's ``__annotate__`` per read; callers read once per function)."""
        return dict(annotationlib.get_annotations(obj, format=annotationlib.Format.FORWARDREF))

    def annotation_texts(obj: Any) -> dict[str, str]:
        """``obj``'s annotations as written in the source (annotationlib's STRING format)."""
        return dict(annotationlib.get_annotations(obj, format=annotationlib.Format.STRING))

    def signature(obj: Any, *, follow_wrapped: bool = True) -> inspect.Signature:
        """``inspect.signature``, its annotations in FORWARDREF format: a name not defined yet does not raise."""
        return inspect.signature(obj, follow_wrapped=follow_wrapped,
                                 annotation_format=annotationlib.Format.FORWARDREF)

    def _alias_value(alias: Any) -> Any:
        evaluate = getattr(alias, "evaluate_value", None)
        if evaluate is None:  # typing_extensions' own class: evaluated when made
            return alias.__value__
        return annotationlib.call_evaluate_function(evaluate, annotationlib.Format.FORWARDREF)
else:
    ForwardRef = typing.ForwardRef

    def annotations_of(obj: Any) -> dict[str, Any]:
        """``obj``'s own annotations as the function keeps them: values, or strings under the future import."""
        return dict(inspect.get_annotations(obj))

    def annotation_texts(obj: Any) -> dict[str, str]:
        """``obj``'s annotations that are kept as text (``from __future__ import annotations``)."""
        return {name: text for name, text in inspect.get_annotations(obj).items() if isinstance(text, str)}

    def signature(obj: Any, *, follow_wrapped: bool = True) -> inspect.Signature:
        """``inspect.signature``: annotations are evaluated already, or strings."""
        return inspect.signature(obj, follow_wrapped=follow_wrapped)

    def _alias_value(alias: Any) -> Any:
        return alias.__value__  # NameError when its value names something not defined (3.12, 3.13)


_ALIAS_TYPES: Final = tuple({t for t in (getattr(typing, "TypeAliasType", None), typing_extensions.TypeAliasType)
                             if isinstance(t, type)})


def is_alias(obj: object) -> bool:
    """Whether ``obj`` is a type alias made by a ``type`` statement or by ``TypeAliasType``."""
    return isinstance(obj, _ALIAS_TYPES)


def alias_value(alias: Any) -> Any:
    """The value of a type alias (``is_alias``). On 3.14 a name its value does not define yet is a ``ForwardRef``;
    below, reading such a value raises ``NameError``."""
    return _alias_value(alias)


def forward_text(annotation: object) -> object:
    """A ``ForwardRef``'s text (the source of an annotation that did not evaluate); anything else as it is."""
    if isinstance(annotation, (ForwardRef, typing.ForwardRef)):
        return annotation.__forward_arg__
    return annotation


def token(obj: Any) -> object:
    """What changes when ``obj``'s annotations are replaced in place, read without evaluating them: its
    ``__annotate__`` on 3.14 (its ``__annotations__`` where that is a dict set as it is), else its
    ``__annotations__``. For caches of what was read from them."""
    if LAZY and (annotate := getattr(obj, "__annotate__", None)) is not None:
        return annotate
    return getattr(obj, "__annotations__", None)


def declares(obj: Any) -> bool:
    """Whether ``obj`` declares any annotation, evaluating none of them."""
    if LAZY and callable(getattr(obj, "__annotate__", None)):
        return True
    return bool(getattr(obj, "__annotations__", None))  # evaluated, strings, or (3.14) a dict set as it is


__all__ = ["LAZY", "ForwardRef", "alias_value", "annotation_texts", "annotations_of", "declares", "forward_text",
           "is_alias", "signature", "token"]
