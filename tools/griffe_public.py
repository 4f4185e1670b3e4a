"""A Griffe extension for the API reference (``extensions:`` in ``mkdocs.yml``): signatures as a user reads them.

jaxstatic's public names are defined in private modules, so their source spells types and defaults with private
names. For every function and class of the package this rewrites what the reference shows:

- type variables lose their underscore (``Callable[_P, _R]`` -> ``Callable[P, R]``), and private module prefixes go
  (``_stats.CacheInfo`` -> ``CacheInfo``);
- a default that is not a literal shows its value (``_options.JAX_JIT_CACHE_SIZE`` -> ``8192``);
- a function with overloads shows one signature, the implementation's, returning what its overloads return;
- a base class that is jaxstatic's own but not public is replaced by its own bases, or left out.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from typing import Any

import griffe

_PRIVATE_PREFIX = re.compile(r"\b(?:_[A-Za-z]\w*\.)+(?=[A-Za-z])")
_TYPE_VARIABLE = re.compile(r"\b_([A-Z]\w?)\b")


def public(text: str) -> str:
    return _TYPE_VARIABLE.sub(r"\1", _PRIVATE_PREFIX.sub("", text))


def _live(obj: griffe.Object) -> Any:
    """The Python object ``obj`` describes, imported from its module, or None."""
    module = obj.module
    try:
        found: Any = importlib.import_module(module.path)
        for part in obj.path[len(module.path) + 1:].split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None
    return found


def _is_literal(text: str) -> bool:
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return False
    return True


def _fix_function(func: griffe.Function) -> None:
    live = _live(func)
    try:
        defaults = {name: p.default for name, p in inspect.signature(live).parameters.items()} if live else {}
    except (TypeError, ValueError):
        defaults = {}
    for parameter in func.parameters:
        if parameter.annotation is not None:
            parameter.annotation = public(str(parameter.annotation))
        default = None if parameter.default is None else str(parameter.default)
        if default is not None and not _is_literal(default) and parameter.name in defaults:
            value = defaults[parameter.name]
            if value is not inspect.Parameter.empty and not repr(value).startswith("<"):
                parameter.default = repr(value)
    returns = [str(o.returns) for o in func.overloads or [] if o.returns is not None]
    if returns:
        func.returns = public(" | ".join(dict.fromkeys(returns)))
        func.overloads = []
    elif func.returns is not None:
        func.returns = public(str(func.returns))


def _fix_class(cls: griffe.Class, exported: set[str]) -> None:
    """Bases as a user can name them: jaxstatic's public classes and those of other packages. A base that is
    jaxstatic's own but not public is replaced by its bases, or left out."""
    bases: list[str] = []
    for base in cls.bases:
        name = str(base)
        own = cls.module.members.get(name.split("[")[0])
        if own is None:  # another package's, or reached through a private module (_extension.Base): left out
            if not name.startswith("_"):
                bases.append(name)
        elif name.split("[")[0] in exported or (isinstance(own, griffe.Alias)
                                                and not own.target_path.startswith("jaxstatic")):
            bases.append(name)
        elif isinstance(own, griffe.Class):
            bases += [str(b) for b in own.bases]
    cls.bases = [public(b) for b in bases]


def _walk(obj: griffe.Object, exported: set[str]) -> None:
    for member in obj.members.values():
        if member.is_alias:
            continue
        if isinstance(member, griffe.Function):
            _fix_function(member)
        elif isinstance(member, griffe.Class):
            _fix_class(member, exported)
            _walk(member, exported)
        elif isinstance(member, griffe.Module):
            _walk(member, exported)


class PublicSignatures(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.path == "jaxstatic":
            _walk(pkg, set(importlib.import_module("jaxstatic").__all__))
