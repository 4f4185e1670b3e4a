"""Hooks that run while mypy analyses annotations (semantic analysis).

* ``Static[T]`` with a ``T`` that can never be static (``[jaxstatic-unhashable]``).
* ``Annotated[T, STATIC]`` (or ``NODIFF``, ``DONATE``): mypy drops ``Annotated``'s metadata, so it is rewritten to
  ``Static[T]`` (``NoDiff[T]``, ``Donate[T]``) here, and every later check sees one form.
* A ``Static`` or ``NoDiff`` imported from a ``jaxstatic`` mypy cannot see: a note, once per run, instead of checks
  that silently never happen.

Each hook lets mypy analyse the annotation as usual by asking for it again with a re-entry guard up (the nested
lookup then gets no hook), and looks at the result.
"""

from __future__ import annotations

from collections.abc import Sequence

from mypy.nodes import Import, ImportAll, ImportBase, ImportFrom, TypeAlias, Var
from mypy.plugin import AnalyzeTypeContext
from mypy.semanal import SemanticAnalyzer
from mypy.typeanal import TypeAnalyser
from mypy.types import (
    AnyType,
    Instance,
    TupleType,
    Type,
    TypeAliasType,
    UnboundType,
    UnionType,
    get_proper_type,
)

from . import _messages
from ._errorcodes import UNHASHABLE
from ._fullnames import MARKER_OBJECTS, STATIC_ALIAS
from ._hashability import holds_array


class GuardedHook:
    """A callable type-analysis hook with a re-entry guard: analysing the type asks the plugin again."""

    def __init__(self) -> None:
        self.active = False

    def __call__(self, ctx: AnalyzeTypeContext) -> Type:
        self.active = True
        try:
            return self.analyze(ctx)
        finally:
            self.active = False

    def analyze(self, ctx: AnalyzeTypeContext) -> Type:
        return ctx.api.analyze_type(ctx.type)


class StaticAnnotationHook(GuardedHook):
    """``Static[T]``: reject a ``T`` that holds arrays only."""

    def analyze(self, ctx: AnalyzeTypeContext) -> Type:
        analyzed = ctx.api.analyze_type(ctx.type)
        check_static_alias(ctx, analyzed)
        return analyzed


class AnnotatedHook(GuardedHook):
    """``Annotated[T, STATIC]`` becomes ``Static[T]`` (``NODIFF`` ``NoDiff[T]``, ``DONATE`` ``Donate[T]``)."""

    def analyze(self, ctx: AnalyzeTypeContext) -> Type:
        t = ctx.type
        alias = _marker_alias(ctx, t.args[1:]) if len(t.args) > 1 else None
        if alias is None:
            return ctx.api.analyze_type(t)
        self.active = False  # the inner type may be ``Static[...]`` or another ``Annotated``
        marked = TypeAliasType(alias, [ctx.api.analyze_type(t.args[0])], line=t.line, column=t.column)
        check_static_alias(ctx, marked)
        return marked


class UnresolvedNote(GuardedHook):
    """``Static``/``NoDiff`` from a ``jaxstatic`` that mypy cannot resolve (not installed where mypy runs, an
    editable install through an import hook, ``follow_imports = skip``): say so once per run."""

    def __init__(self) -> None:
        super().__init__()
        self.said = False

    def analyze(self, ctx: AnalyzeTypeContext) -> Type:
        api = ctx.api
        if not self.said and isinstance(api, TypeAnalyser) and _unresolved_jaxstatic(ctx):
            self.said = True
            api.note(_messages.UNRESOLVED, ctx.context)
        return ctx.api.analyze_type(ctx.type)


def check_static_alias(ctx: AnalyzeTypeContext, analyzed: Type) -> None:
    if not (isinstance(analyzed, TypeAliasType) and analyzed.alias is not None):
        return
    if analyzed.alias.fullname != STATIC_ALIAS or not analyzed.args:
        return
    inner = analyzed.args[0]
    if holds_array(inner):
        ctx.api.fail(_messages.never_static(short_name(inner)), ctx.context, code=UNHASHABLE)


def _marker_alias(ctx: AnalyzeTypeContext, metadata: Sequence[Type]) -> TypeAlias | None:
    api = ctx.api
    if not isinstance(api, TypeAnalyser):
        return None
    for meta in metadata:
        if not isinstance(meta, UnboundType) or meta.args:
            continue
        sym = api.lookup_qualified(meta.name, meta, suppress_errors=True)
        alias_name = MARKER_OBJECTS.get(sym.node.fullname) if sym is not None and sym.node else None
        if alias_name is not None:
            found = api.api.lookup_fully_qualified_or_none(alias_name)
            if found is not None and isinstance(found.node, TypeAlias):
                return found.node
    return None


def _unresolved_jaxstatic(ctx: AnalyzeTypeContext) -> bool:
    api = ctx.api
    if not isinstance(api, TypeAnalyser) or not isinstance(api.api, SemanticAnalyzer):
        return False
    semanal = api.api
    if "jaxstatic" in semanal.modules:
        return False
    sym = api.lookup_qualified(ctx.type.name, ctx.type, suppress_errors=True)
    node = sym.node if sym is not None else None
    if not isinstance(node, Var) or not isinstance(get_proper_type(node.type), AnyType):
        return False
    return any(_imports_jaxstatic(i) for i in semanal.cur_mod_node.imports)


def _imports_jaxstatic(node: ImportBase) -> bool:
    if isinstance(node, Import):
        return any(_is_ours(name) for name, _ in node.ids)
    return isinstance(node, (ImportFrom, ImportAll)) and _is_ours(node.id)


def _is_ours(module: str) -> bool:
    return module == "jaxstatic" or module.startswith("jaxstatic.")


def short_name(t: Type, depth: int = 0) -> str:
    """``list[Array]`` rather than ``builtins.list[jax._src.basearray.Array]``."""
    p = get_proper_type(t)
    if depth > 4:
        return "..."
    if isinstance(p, Instance):
        if p.type.fullname == "builtins.tuple" and p.args:
            return f"tuple[{short_name(p.args[0], depth + 1)}, ...]"
        args = f"[{', '.join(short_name(a, depth + 1) for a in p.args)}]" if p.args else ""
        return f"{p.type.name}{args}"
    if isinstance(p, TupleType):
        return f"tuple[{', '.join(short_name(a, depth + 1) for a in p.items)}]"
    if isinstance(p, UnionType):
        return " | ".join(short_name(a, depth + 1) for a in p.items)
    return str(p)
