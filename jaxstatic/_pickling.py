"""Pickling a jaxstatic function by value: the module-level names its annotations' text needs, and how it is made
again where it is loaded (``StaticFunction.__reduce__``; by reference where its module and name lead back to it)."""

from __future__ import annotations

import ast
import contextlib
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from . import _lazy

_T = TypeVar("_T")


def importable(fn: object, module: str | None, qualname: str) -> bool:
    """Whether ``module.qualname`` leads back to ``fn`` (so pickling by reference loads ``fn`` itself)."""
    target: Any = sys.modules.get(module or "")
    for part in qualname.split("."):
        target = getattr(target, part, None)
        if target is None:
            return False
    return target is fn


def annotation_globals(fn: Callable[..., Any]) -> dict[str, Any]:
    """The module-level names that ``fn``'s annotations use (read as text: strings under ``from __future__ import
    annotations``, and every annotation on Python 3.14, whose annotations are evaluated when read): a function
    pickled by value takes along only the globals its code uses, and its ``Static`` marks must still resolve where
    it is loaded."""
    names: set[str] = set()
    for text in _lazy.annotation_texts(fn).values():
        with contextlib.suppress(SyntaxError):
            names.update(n.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Name))
    module = getattr(fn, "__globals__", {})
    return {name: module[name] for name in sorted(names) if name in module}


def rebuild(cls: Callable[..., _T], fn: Callable[..., Any], args: tuple[Any, ...],
             kwargs: dict[str, Any], names: dict[str, Any]) -> _T:
    """A transformed function pickled by value, made again from its function and options."""
    module = getattr(fn, "__globals__", None)
    if isinstance(module, dict):
        for name, value in names.items():
            module.setdefault(name, value)
    return cls(fn, *args, **kwargs)


__all__ = ["annotation_globals", "importable", "rebuild"]
