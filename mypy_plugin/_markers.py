"""Which mark (``Static``, ``NoDiff``) a parameter's declared type carries, seen through user aliases.

mypy keeps ``Static[int]`` as a type alias type. ``Cfg = Static[dict[str, Any]]`` or ``Opts: TypeAlias =
Static[object]`` are aliases of that alias: they are expanded one level at a time until a mark or anything else
appears. ``Annotated[T, STATIC]`` is rewritten to ``Static[T]`` while mypy analyses it (``_definitions``), so it
arrives here in the same form. Only the top level counts, as at run time: ``Static[int] | None`` is not static.
"""

from __future__ import annotations

from typing import Final

from mypy.types import Type, TypeAliasType

from ._fullnames import MARKER_ALIASES, STATIC_ALIAS

# Recursive aliases exist (``Nested = list["Nested"]``); a chain of aliases longer than this is not followed.
_MAX_ALIAS_CHAIN: Final = 16


def marker(t: Type) -> str | None:
    """The fully qualified name of the mark on ``t`` (``jaxstatic._annotations.Static``), or ``None``."""
    for _ in range(_MAX_ALIAS_CHAIN):
        if not isinstance(t, TypeAliasType) or t.alias is None:
            return None
        if t.alias.fullname in MARKER_ALIASES:
            return t.alias.fullname
        t = t._expand_once()
    return None


def is_static(t: Type) -> bool:
    """``Static[...]`` at the top level of a parameter's type, directly or through aliases."""
    return isinstance(t, TypeAliasType) and marker(t) == STATIC_ALIAS


def has_static(arg_types: list[Type]) -> bool:
    """The fast path: most signatures hold no type alias at the top level of any parameter."""
    for t in arg_types:  # noqa: SIM110 -- runs for every call mypy checks; a loop beats any(<genexpr>)
        if isinstance(t, TypeAliasType) and marker(t) == STATIC_ALIAS:
            return True
    return False


def short(fullname: str) -> str:
    """``Static`` for ``jaxstatic._annotations.Static``."""
    return fullname.rsplit(".", 1)[-1]
