"""What the migration rules share: the sites they report, name resolution, and the edits every rule makes.

Only ``jaxstatic.migrate`` imports this (through ``_migrate_cli``): the runtime never needs LibCST.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from typing import ClassVar

import libcst as cst
from libcst.codemod import Codemod, CodemodContext, VisitorBasedCodemodCommand
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import PositionProvider, ProviderT, QualifiedNameProvider, ScopeProvider

STATIC_NAMES = frozenset({"jaxstatic.Static", "jaxstatic._annotations.Static"})


@dataclasses.dataclass(frozen=True)
class Site:
    """One place a rule looked at: converted, or left as it was with the reason."""

    path: str
    line: int
    rule: str
    converted: bool
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule} {'converted' if self.converted else 'left'}: {self.message}"


class Left(Exception):  # not an error: the reason a site is left as it was
    """Raised inside a rule with the reason a site cannot be converted safely."""


class Rule(VisitorBasedCodemodCommand):
    """A numbered codemod. Subclasses set ``CODE`` and ``DESCRIPTION`` and call ``converted``/``left`` per site."""

    CODE = "JS000"
    # a rule runs only on a file whose text holds each of these (each rule is a pass over the whole file)
    TRIGGERS: tuple[str, ...] = ()

    @classmethod
    def applies(cls, source: str) -> bool:
        return all(t in source for t in cls.TRIGGERS)
    METADATA_DEPENDENCIES: ClassVar[Collection[ProviderT]] = (PositionProvider, QualifiedNameProvider, ScopeProvider)

    def __init__(self, context: CodemodContext, sites: list[Site]) -> None:
        super().__init__(context)
        self.sites = sites

    def _instantiate_and_run(self, transform: type[Codemod], tree: cst.Module) -> cst.Module:
        if transform is RemoveImportsVisitor:
            transform = _RemoveImports
        return super()._instantiate_and_run(transform, tree)

    def _site(self, node: cst.CSTNode, converted: bool, message: str) -> None:
        line = self.get_metadata(PositionProvider, node).start.line
        self.sites.append(Site(self.context.filename or "<string>", line, self.CODE, converted, message))

    def converted(self, node: cst.CSTNode, message: str) -> None:
        self._site(node, True, message)

    def left(self, node: cst.CSTNode, message: str) -> None:
        self._site(node, False, message)

    def qualified(self, node: cst.CSTNode) -> set[str]:
        """The fully qualified names ``node`` may refer to (``jax.jit`` for ``jit`` after ``from jax import jit``)."""
        return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}

    def is_one_of(self, node: cst.CSTNode, names: Collection[str]) -> bool:
        return bool(self.qualified(node) & set(names))

    def drop_imports_of(self, node: cst.CSTNode) -> None:
        """Remove the imports ``node`` used, where nothing else uses them after the rewrite."""
        RemoveImportsVisitor.remove_unused_import_by_node(self.context, node)

    def need_js(self) -> cst.Name:
        AddImportsVisitor.add_needed_import(self.context, "jaxstatic", asname="js")
        return cst.Name("js")

    def static_of(self, annotation: cst.BaseExpression | None) -> cst.Annotation:
        """``Static[T]`` for annotation ``T``; ``Static[Any]`` for none."""
        AddImportsVisitor.add_needed_import(self.context, "jaxstatic", "Static")
        if annotation is None:
            AddImportsVisitor.add_needed_import(self.context, "typing", "Any")
            annotation = cst.Name("Any")
        return cst.Annotation(cst.Subscript(cst.Name("Static"), [cst.SubscriptElement(cst.Index(annotation))]))

    def is_static(self, annotation: cst.Annotation | None) -> bool:
        value = annotation.annotation if annotation else None
        return isinstance(value, cst.Subscript) and self.is_one_of(value.value, STATIC_NAMES)


class _RemoveImports(RemoveImportsVisitor):
    """LibCST's, but the blank lines and comments above an import statement it removes stay where they were
    (above the next statement), so import groups stay apart and the module docstring keeps its blank line."""

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body, carried = list(updated_node.body), list[cst.EmptyLine]()
        j = 0
        for stmt in original_node.body:
            if j >= len(body) or not (stmt.deep_equals(body[j]) or _same_import(stmt, body[j])):
                carried += stmt.leading_lines
                continue
            if carried and j < len(body) and not body[j].leading_lines:
                body[j] = body[j].with_changes(leading_lines=carried)
            carried = []
            j += 1
        return updated_node.with_changes(body=body)


def _same_import(original: cst.CSTNode, updated: cst.CSTNode) -> bool:
    """Whether ``updated`` is ``original`` with some imported names removed."""
    if not (isinstance(original, cst.SimpleStatementLine) and isinstance(updated, cst.SimpleStatementLine)):
        return False
    if len(original.body) != 1 or len(updated.body) != 1:
        return False
    a, b = original.body[0], updated.body[0]
    if isinstance(a, cst.ImportFrom) and isinstance(b, cst.ImportFrom):
        return a.module is not None and b.module is not None and a.module.deep_equals(b.module)
    if isinstance(a, cst.Import) and isinstance(b, cst.Import):
        return {code(n) for n in b.names} <= {code(n) for n in a.names}
    return False


def js_attr(name: str) -> cst.Attribute:
    return cst.Attribute(cst.Name("js"), cst.Name(name))


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def without(args: Sequence[cst.Arg], drop: Collection[cst.Arg]) -> list[cst.Arg]:
    """``args`` less ``drop``, the last one keeping the comma (and line break) the original last one had."""
    kept = [a for a in args if a not in drop]
    if kept and args and kept[-1] is not args[-1]:
        kept[-1] = kept[-1].with_changes(comma=args[-1].comma)
    return kept


def star_args(call: cst.Call) -> cst.Arg | None:
    """The first ``*x``/``**x`` argument of ``call``: options forwarded that way cannot be read."""
    return next((a for a in call.args if a.star), None)


def literal_ints(value: cst.BaseExpression) -> list[int] | None:
    """The ints a literal ``1``/``-1``/``(0, 2)``/``[0]`` holds, or None when it is not such a literal."""
    items = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
    out = []
    for item in items:
        sign = 1
        if isinstance(item, cst.UnaryOperation) and isinstance(item.operator, cst.Minus):
            sign, item = -1, item.expression
        if not isinstance(item, cst.Integer):
            return None
        out.append(sign * int(item.evaluated_value))
    return out


def literal_strs(value: cst.BaseExpression) -> list[str] | None:
    """The strings a literal ``"n"``/``("n", "m")``/``["n"]`` holds, or None when it is not such a literal."""
    items = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
    out = []
    for item in items:
        if not isinstance(item, cst.SimpleString):
            return None
        text = item.evaluated_value
        if not isinstance(text, str):
            return None
        out.append(text)
    return out


def code(node: cst.CSTNode) -> str:
    """One line of source for ``node``, for messages."""
    text = cst.Module([]).code_for_node(node)
    return " ".join(text.split())
