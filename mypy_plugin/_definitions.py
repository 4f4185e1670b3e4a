"""Check ``[jaxstatic-unhashable]`` where ``Static[T]`` is written with a ``T`` that can never be static.

The hook runs while mypy analyses each ``Static[...]`` annotation: it lets mypy analyse the annotation as usual
(answering ``None`` to the nested lookup) and looks at the result.
"""

from __future__ import annotations

from mypy.plugin import AnalyzeTypeContext
from mypy.types import Instance, TupleType, Type, TypeAliasType, get_proper_type

from ._errorcodes import UNHASHABLE
from ._hashability import holds_array


class StaticAnnotationHook:
    """A callable hook with a re-entry guard: analysing ``Static[...]`` asks the plugin for this hook again."""

    def __init__(self) -> None:
        self.active = False

    def __call__(self, ctx: AnalyzeTypeContext) -> Type:
        self.active = True
        try:
            analyzed = ctx.api.analyze_type(ctx.type)
        finally:
            self.active = False
        if isinstance(analyzed, TypeAliasType) and analyzed.args:
            inner = analyzed.args[0]
            if holds_array(inner):
                ctx.api.fail(
                    f'"Static[{short_name(inner)}]" can never be static: arrays are not hashable; '
                    "drop Static[...] and pass it as a regular (traced) argument",
                    ctx.context,
                    code=UNHASHABLE,
                )
        return analyzed


def short_name(t: Type) -> str:
    """``list[Array]`` rather than ``builtins.list[jax._src.basearray.Array]``."""
    p = get_proper_type(t)
    if isinstance(p, Instance):
        if p.type.fullname == "builtins.tuple" and p.args:
            return f"tuple[{short_name(p.args[0])}, ...]"
        args = f"[{', '.join(short_name(a) for a in p.args)}]" if p.args else ""
        return f"{p.type.name}{args}"
    if isinstance(p, TupleType):
        return f"tuple[{', '.join(short_name(a) for a in p.items)}]"
    return str(p)
