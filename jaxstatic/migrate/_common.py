"""What the migration rules share: the sites they report, name resolution, and the edits every rule makes.

Only ``jaxstatic.migrate`` imports this (through ``_cli``): the runtime never needs LibCST.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Sequence
from typing import ClassVar

import libcst as cst
from libcst.codemod import Codemod, CodemodContext, VisitorBasedCodemodCommand
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import (
    Assignment,
    GlobalScope,
    MetadataWrapper,
    PositionProvider,
    ProviderT,
    QualifiedNameProvider,
    Scope,
    ScopeProvider,
)

STATIC_NAMES = frozenset({"jaxstatic.Static", "jaxstatic._annotations.Static"})
STRICT = "jaxstatic.migrate.strict"  # CodemodContext.scratch: --strict given
LEAVE = "jaxstatic.migrate.leave"  # CodemodContext.scratch: classes of this file to leave, by name, and why
CONVERTED = "jaxstatic.migrate.converted"  # CodemodContext.scratch: the set the classes converted are added to
ALIASES = "jaxstatic.migrate.aliases"  # CodemodContext.scratch: the names free_names chose for this file
# each name the converted code uses: the import it must come from, and the names tried in turn for it when the
# file binds that name to something else anywhere (a local, a parameter, a class attribute would shadow it)
IMPORTED: dict[str, tuple[str, str | None]] = {
    "js": ("jaxstatic", None), "Static": ("jaxstatic", "Static"), "Donate": ("jaxstatic", "Donate"),
    "Any": ("typing", "Any"), "dataclasses": ("dataclasses", None)}
CANDIDATES = {"js": ("js", "jaxstatic", "js_", "jaxstatic_"), "Static": ("Static", "JsStatic", "Static_"),
              "Donate": ("Donate", "JsDonate", "Donate_"),
              "Any": ("Any", "AnyType", "Any_"), "dataclasses": ("dataclasses", "dataclasses_", "std_dataclasses")}


@dataclasses.dataclass(frozen=True)
class Site:
    """One place a rule looked at: converted, or left as it was with the reason."""

    path: str
    line: int
    rule: str
    converted: bool
    message: str

    def __str__(self) -> str:
        return self.text(written=True)

    def text(self, written: bool) -> str:
        """The line the summary prints: "would convert" where nothing is written (``--check``, ``--diff``)."""
        done = ("converted" if written else "would convert") if self.converted else "left"
        return f"{self.path}:{self.line}: {self.rule} {done}: {self.message}"


class Left(Exception):  # not an error: the reason a site is left as it was
    """Raised inside a rule with the reason a site cannot be converted safely."""


DONATE_NAMES = frozenset({"jaxstatic.Donate", "jaxstatic._annotations.Donate"})


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

    @property
    def strict(self) -> bool:
        """``--strict``: convert only what the source proves safe, leave what the default mode takes on trust."""
        return bool(self.context.scratch.get(STRICT))

    def name(self, wanted: str) -> str:
        """The name the converted code uses for ``wanted`` (``js``, ``Static``, ``Any``, ``dataclasses``) in this
        file: ``wanted`` itself unless the file binds it to something else (``free_names``)."""
        aliases: dict[str, str] = self.context.scratch.get(ALIASES, {})
        return aliases.get(wanted, wanted)

    def need(self, wanted: str) -> cst.Name:
        """The name for ``wanted``, its import added."""
        alias = self.name(wanted)
        module, obj = IMPORTED[wanted]
        if obj is None:
            AddImportsVisitor.add_needed_import(self.context, module, asname=None if alias == module else alias)
        else:
            AddImportsVisitor.add_needed_import(self.context, module, obj, asname=None if alias == obj else alias)
        return cst.Name(alias)

    def need_js(self) -> cst.Name:
        return self.need("js")

    def js_attr(self, name: str) -> cst.Attribute:
        """``js.<name>``, under the name this file gives jaxstatic, imported."""
        return cst.Attribute(self.need_js(), cst.Name(name))

    def annotate_donated(self, fn: cst.FunctionDef, names: set[str]) -> cst.FunctionDef:
        """``fn`` with each parameter in ``names`` annotated ``Donate[...]`` (``Donate[Any]`` where it had none)."""
        def donated(p: cst.Param) -> cst.Annotation | None:
            if self.is_donate(p.annotation):
                return None
            inner = p.annotation.annotation if p.annotation else self.need("Any")
            return cst.Annotation(cst.Subscript(self.need("Donate"), [cst.SubscriptElement(cst.Index(inner))]))

        return self.annotate_params(fn, names, donated)

    @staticmethod
    def annotate_params(fn: cst.FunctionDef, names: set[str],
                        annotated: Callable[[cst.Param], cst.Annotation | None]) -> cst.FunctionDef:
        """``fn`` with each parameter in ``names`` given the annotation ``annotated`` makes of it (``None``: left as
        it was), every kind of parameter alike."""
        def one(p: cst.Param) -> cst.Param:
            annotation = annotated(p) if p.name.value in names else None
            if annotation is None:
                return p
            # "n=1" gains spaces with its annotation: "n: Static[Any] = 1", as PEP 8 writes it
            equal = cst.AssignEqual() if p.annotation is None and p.default is not None else p.equal
            return p.with_changes(annotation=annotation, equal=equal)

        params = fn.params
        return fn.with_changes(params=params.with_changes(
            posonly_params=[one(p) for p in params.posonly_params], params=[one(p) for p in params.params],
            kwonly_params=[one(p) for p in params.kwonly_params]))

    def is_donate(self, annotation: cst.Annotation | None) -> bool:
        """``Donate[...]``, written by the user or by an earlier rule on this file (new nodes have no qualified
        names yet)."""
        value = annotation.annotation if annotation else None
        return isinstance(value, cst.Subscript) and (self.is_one_of(value.value, DONATE_NAMES)
                                                     or code(value.value) == self.name("Donate"))

    def static_of(self, annotation: cst.BaseExpression | None) -> cst.Annotation:
        """``Static[T]`` for annotation ``T``; ``Static[Any]`` for none."""
        static = self.need("Static")
        if annotation is None:
            annotation = self.need("Any")
        return cst.Annotation(cst.Subscript(static, [cst.SubscriptElement(cst.Index(annotation))]))

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


def named_by(options: Sequence[cst.Arg], by_position: str, fn: cst.FunctionDef) -> set[str]:
    """The names of the parameters of ``fn`` that ``options`` name: the option called ``by_position`` by positions,
    the others by names. ``Left`` where the source does not say which: a computed value, a negative position (JAX
    counts it from the end of each call's arguments), a position past the named parameters, a name of none."""
    params = fn.params
    positional = [*params.posonly_params, *params.params]
    named = {p.name.value for p in [*positional, *params.kwonly_params]}
    names: set[str] = set()
    for arg in options:
        option = arg.keyword.value if arg.keyword else ""
        values = literal_ints(arg.value) if option == by_position else literal_strs(arg.value)
        if values is None:
            raise Left(f"{option}={code(arg.value)} is computed at run time; annotate the parameters by hand")
        for value in values:
            if isinstance(value, str):
                if value not in named:
                    raise Left(f"{option} names {value!r}, which is not a named parameter of {fn.name.value}()")
                names.add(value)
            elif value < 0:
                raise Left(f"{option} holds {value}, which JAX counts from the end of each call's arguments")
            elif value >= len(positional):
                raise Left(f"{option} holds {value}, but {fn.name.value}() has {len(positional)} positional "
                           "parameters")
            else:
                names.add(positional[value].name.value)
    return names


def code(node: cst.CSTNode) -> str:
    """One line of source for ``node``, for messages."""
    text = cst.Module([]).code_for_node(node)
    return " ".join(text.split())


def free_names(module: cst.Module) -> dict[str, str] | tuple[int, str]:
    """For each name the converted code may use (``IMPORTED``), the first of its ``CANDIDATES`` the file binds
    nowhere (in any scope) and reads nowhere unbound, or binds only by that very import; or (line, name) when
    none is free."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    scopes = {s for s in wrapper.resolve(ScopeProvider).values() if s is not None}
    positions = wrapper.resolve(PositionProvider)
    chosen: dict[str, str] = {}
    for wanted, (source, obj) in IMPORTED.items():
        free = next((c for c in CANDIDATES[wanted] if _free(scopes, c, source, obj, c == wanted)), None)
        if free is None:
            nodes = [a.node for s in scopes for a in s.assignments[wanted] if isinstance(a, Assignment)]
            return (positions[nodes[0]].start.line if nodes and nodes[0] in positions else 1), wanted
        chosen[wanted] = free
    return chosen


def _free(scopes: Collection[Scope], name: str, source: str, obj: str | None, own: bool) -> bool:
    """Whether ``name`` can be bound to ``source``'s ``obj`` everywhere in the file."""
    for scope in scopes:
        for assignment in scope.assignments[name]:
            if not (own and isinstance(scope, GlobalScope) and isinstance(assignment, Assignment)
                    and _imports(assignment.node, name, source, obj)):
                return False
        if any(not access.referents for access in scope.accesses[name]):
            return False  # read, bound nowhere here: a builtin, or from a star import
    return True


def _imports(node: cst.CSTNode, name: str, source: str, obj: str | None) -> bool:
    """Whether ``node`` is ``import source as name`` (obj None) or ``from source import obj as name``."""
    if isinstance(node, cst.Import):
        return obj is None and any(code(a.name) == source and (a.evaluated_alias or source) == name
                                   for a in node.names)
    if isinstance(node, cst.ImportFrom) and node.module is not None and not isinstance(node.names, cst.ImportStar):
        return (obj is not None and code(node.module) in (source, "typing_extensions")
                and any(code(a.name) == obj and (a.evaluated_alias or obj) == name for a in node.names))
    return False


# what an annotation says a static value may be. A name holding one of these words may be an array, which
# Static refuses (JAX kept it as metadata, compared by identity); Any and object may be anything
_ARRAYISH = ("array", "tensor", "pytree", "params")
_ANYTHING = frozenset({"Any", "object"})
# the types --strict takes an annotation's word for: builtins a static value of that type is hashable as
_BUILTIN = frozenset({"int", "float", "bool", "str", "bytes", "complex", "None", "tuple", "Tuple", "frozenset",
                      "FrozenSet", "list", "List", "dict", "Dict", "set", "Set", "Literal", "Optional", "Union",
                      "Callable", "type", "Type", "Hashable", "Enum"})
_OPAQUE = frozenset({"Callable", "type", "Type", "Literal"})  # what their brackets hold is no value of the field


def might_hold(annotation: cst.BaseExpression | None, strict: bool) -> str | None:
    """What a static value annotated ``annotation`` might be that ``Static`` refuses, or None when the annotation
    rules that out: unannotated, ``Any`` or ``object`` may be anything; a type named like an array may be one;
    under ``strict`` a type that is not a builtin (a class of the project or of a library) might be unhashable."""
    if annotation is None:
        return "any value (it is not annotated), an array among them"
    if isinstance(annotation, (cst.SimpleString, cst.ConcatenatedString)):
        return "a value of a type named in a string, which the tool does not read" if strict else None
    for word in _words(annotation):
        if word in _ANYTHING:
            return f"any value (it is annotated {word}), an array among them"
        if any(a in word.lower() for a in _ARRAYISH):
            return f"an array (it is annotated {code(annotation)})"
        if strict and word not in _BUILTIN:
            return f"an unhashable value: {word} is not a builtin type, so --strict cannot tell"
    return None


def _words(node: cst.BaseExpression) -> list[str]:
    """The last part of each name in an annotation (``jax.Array``: ``Array``), not looking into ``Callable[...]``."""
    if isinstance(node, cst.Name):
        return [node.value]
    if isinstance(node, cst.Attribute):
        return [node.attr.value]
    if isinstance(node, cst.Subscript):
        head = _words(node.value)
        if head and head[-1] in _OPAQUE:
            return head
        inner = [e.slice.value for e in node.slice if isinstance(e.slice, cst.Index)]
        return head + [w for i in inner for w in _words(i)]
    if isinstance(node, cst.BinaryOperation):
        return _words(node.left) + _words(node.right)
    if isinstance(node, (cst.Tuple, cst.List)):
        return [w for e in node.elements for w in _words(e.value)]
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)):
        return []
    return ["<expression>"]


def admits_none(annotation: cst.BaseExpression) -> bool:
    """Whether ``None`` is a value of ``annotation`` (it names None, Optional, Any or object)."""
    if isinstance(annotation, (cst.SimpleString, cst.ConcatenatedString)):
        return "None" in code(annotation)
    return bool(({"None", "Optional"} | _ANYTHING) & set(_words(annotation)))


def or_none(annotation: cst.BaseExpression) -> cst.BaseExpression:
    """``T | None``; in a string when ``T`` is one, which ``|`` cannot join at run time."""
    if isinstance(annotation, cst.SimpleString):
        text = annotation.value
        quote = text[-3:] if text[-3:] in ('"""', "\'\'\'") else text[-1]
        return annotation.with_changes(value=text[: -len(quote)] + " | None" + quote)
    return cst.BinaryOperation(annotation, cst.BitOr(), cst.Name("None"))
