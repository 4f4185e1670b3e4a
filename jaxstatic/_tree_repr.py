"""A readable repr for pytrees of arrays: arrays as ``f32[3,4]``, functions by name, nested nodes indented.

Equinox's tree repr is the model: a line per field only when the one-line form does not fit in ``WIDTH``
columns. Containers (lists, tuples, dicts, named tuples) and ``jaxstatic.dataclass`` instances are opened; anything
else prints its own ``repr``, re-indented when it spans lines (an ``equinox.Module`` does). Cost: proportional to
the tree's size times its depth; a repr is never on a hot path.
"""

from __future__ import annotations

import dataclasses
import re
import types
from collections.abc import Callable, Iterable
from typing import Any

import jax
import jax.core
import numpy as np

WIDTH = 88

_DTYPE = re.compile(r"(bfloat|float|uint|int|complex)(\d+)")
_SHORT = {"bfloat": "bf", "float": "f", "uint": "u", "int": "i", "complex": "c"}

# (opening text, entries as (prefix, value), closing text, trailing comma needed when there is one entry)
_Parts = tuple[str, list[tuple[str, Any]], str, bool]


def tree_repr(value: Any, fields: Callable[[Any], Iterable[str]]) -> str:
    """The repr of ``value``; ``fields(obj)`` names the fields to show of a ``jaxstatic.dataclass`` instance."""
    return _Printer(fields).format(value, 0, 0)


def short_dtype(dtype: Any) -> str:
    """``f32``, ``bf16``, ``i32``, ``bool``: the short dtype names of Equinox's repr."""
    name = str(dtype)
    m = _DTYPE.fullmatch(name)
    return _SHORT[m.group(1)] + m.group(2) if m else name


def array_repr(value: Any) -> str:
    """``f32[3,4]``; ``weak_f32[3]`` for a weakly typed array (made from a Python scalar); ``(numpy)`` marks NumPy's."""
    weak = "weak_" if getattr(getattr(value, "aval", value), "weak_type", False) else ""
    text = f"{weak}{short_dtype(value.dtype)}[{','.join(map(str, value.shape))}]"
    return text + "(numpy)" if isinstance(value, np.ndarray) else text


class _Printer:
    def __init__(self, fields: Callable[[Any], Iterable[str]]) -> None:
        self._fields = fields

    def format(self, value: Any, indent: int, taken: int) -> str:
        """``value`` printed at column ``indent + taken`` of a line whose entry starts at column ``indent``."""
        parts = self._parts(value)
        if parts is None:
            return _reindent(self._atom(value), indent)
        line = self._one_line(value)
        if indent + taken + len(line) <= WIDTH and "\n" not in line:
            return line
        opening, entries, closing, _ = parts
        pad = " " * (indent + 2)
        body = "".join(f"{pad}{prefix}{self.format(v, indent + 2, len(prefix))},\n" for prefix, v in entries)
        return f"{opening}\n{body}{' ' * indent}{closing}"

    def _one_line(self, value: Any) -> str:
        parts = self._parts(value)
        if parts is None:
            return self._atom(value)
        opening, entries, closing, single_comma = parts
        inner = ", ".join(prefix + self._one_line(v) for prefix, v in entries)
        return opening + inner + ("," if single_comma and len(entries) == 1 else "") + closing

    def _parts(self, value: Any) -> _Parts | None:
        t = type(value)
        if "__jaxstatic_class__" in t.__dict__:
            return f"{t.__name__}(", [(f"{n}=", getattr(value, n)) for n in self._fields(value)], ")", False
        if isinstance(value, tuple) and hasattr(t, "_fields"):
            return f"{t.__name__}(", [(f"{n}=", v) for n, v in zip(t._fields, value)], ")", False
        if t is list:
            return "[", [("", v) for v in value], "]", False
        if t is tuple:
            return "(", [("", v) for v in value], ")", True
        if t is dict:
            return "{", [(f"{self._one_line(k)}: ", v) for k, v in value.items()], "}", False
        return None

    def _atom(self, value: Any) -> str:
        if isinstance(value, (jax.Array, np.ndarray, jax.core.Tracer)) and hasattr(value, "shape"):
            return array_repr(value)
        name = None if dataclasses.is_dataclass(value) else callable_name(value)
        if name is not None:
            return f"<{'method' if isinstance(value, types.MethodType) else 'function'} {name}>"
        return repr(value)


def _reindent(text: str, indent: int) -> str:
    return text.replace("\n", "\n" + " " * indent) if indent else text


def callable_name(value: Any) -> str | None:
    """``relu``, ``Model.apply``: a function's qualified name without ``<locals>`` scopes; None for non-functions."""
    if not callable(value) or isinstance(value, type):
        return None
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    return name.rpartition("<locals>.")[2] if isinstance(name, str) else None
