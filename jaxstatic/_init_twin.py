"""An ``__init__`` with the same signature as the one it runs, so that type checkers that decorate it see it whole.

``jaxstatic.dataclass`` runs code of its own before and after a class's ``__init__`` (assignment opened, converters,
static values frozen). A ``def __init__(self, *args, **kwargs)`` wrapper would hide the parameters from the runtime
checkers users put on top: ``@beartype`` reads the code object's parameters, ``@jaxtyped`` binds the signature and
resolves string annotations in ``__globals__``. So the wrapper is generated with the wrapped ``__init__``'s own
parameters, defaults and annotations, in its module's globals, as ``dataclasses`` generates its ``__init__``. Like
attrs' generated methods, the source is compiled under its own file name with a ``linecache`` entry.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import linecache
import sys
import types
from collections.abc import Callable
from typing import Any

from . import _lazy, _traceback

_counter = itertools.count()
_Kind = inspect.Parameter
_STARS: dict[Any, str] = {_Kind.VAR_POSITIONAL: "*", _Kind.VAR_KEYWORD: "**"}


def twin(init: Callable[..., None], cls: type, start: Callable[[Any], None],
         finish: Callable[[Any], None]) -> Callable[..., None]:
    """``__init__(<init's parameters>)``: ``start(self)``, ``init(self, ...)``, ``finish(self)``."""
    try:
        params = list(_lazy.signature(init).parameters.values())
    except (TypeError, ValueError):
        params = []
    if not params or params[0].kind not in (_Kind.POSITIONAL_ONLY, _Kind.POSITIONAL_OR_KEYWORD):
        return _plain_wrapper(init, start, finish)
    defaults = [p.default for p in params if p.default is not p.empty]
    names = [f"_jaxstatic_default{i}" for i in range(len(defaults))]
    self = params[0].name
    source = "\n".join([
        f"def _jaxstatic_make(_jaxstatic_init, _jaxstatic_start, _jaxstatic_finish, {', '.join([*names, ''])}):",
        f"    def __init__({_parameters(params, iter(names))}):",
        f"        _jaxstatic_start({self})",
        f"        _jaxstatic_init({_arguments(params)})",
        f"        _jaxstatic_finish({self})",
        "    return __init__",
        ""])
    filename = f"<jaxstatic generated {cls.__qualname__}.__init__ #{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace: dict[str, Any] = {}
    exec(compile(source, filename, "exec"), namespace)
    made = namespace["_jaxstatic_make"](init, start, finish, *defaults)
    module = sys.modules.get(cls.__module__)
    fn = types.FunctionType(made.__code__, getattr(module, "__dict__", {}), "__init__", made.__defaults__,
                            made.__closure__)
    fn.__kwdefaults__ = made.__kwdefaults__
    _traceback.forget_with(fn, filename)  # a class made per call leaves no source behind
    return functools.update_wrapper(fn, init)


def _parameters(params: list[inspect.Parameter], defaults: Any) -> str:
    out: list[str] = []
    for i, p in enumerate(params):
        bare_star = not any(q.kind is _Kind.VAR_POSITIONAL for q in params) and "*" not in out
        if p.kind is _Kind.KEYWORD_ONLY and bare_star:
            out.append("*")
        text = _STARS.get(p.kind, "") + p.name
        out.append(text if p.default is p.empty else f"{text}={next(defaults)}")
        if p.kind is _Kind.POSITIONAL_ONLY and (i + 1 == len(params) or params[i + 1].kind is not p.kind):
            out.append("/")
    return ", ".join(out)


def _arguments(params: list[inspect.Parameter]) -> str:
    out = []
    for p in params:
        if p.kind is _Kind.VAR_POSITIONAL:
            out.append("*" + p.name)
        elif p.kind is _Kind.VAR_KEYWORD:
            out.append("**" + p.name)
        elif p.kind is _Kind.KEYWORD_ONLY:
            out.append(f"{p.name}={p.name}")
        else:
            out.append(p.name)
    return ", ".join(out)


def _plain_wrapper(init: Callable[..., None], start: Callable[[Any], None],
                   finish: Callable[[Any], None]) -> Callable[..., None]:
    """For an ``__init__`` whose signature cannot be read or written again (a builtin, ``self`` inside ``*args``)."""

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        start(self)
        init(self, *args, **kwargs)
        finish(self)

    return __init__


__all__ = ["twin"]
