"""Rules JS005-JS006: ``jax_dataclasses`` and ``flax.struct`` pytree dataclasses to ``js.dataclass``.

A class is converted whole or not at all: its decorator, each static field (``jdc.Static[T]``,
``jdc.static_field()``, ``struct.field(pytree_node=False)``) to ``Static[T]``, each field's other arguments kept.
Both libraries' classes are frozen, as ``js.dataclass``'s are. A Flax class keeps its ``replace`` method, written
out with ``dataclasses.replace``, since any caller may use it.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod import CodemodContext

from ._common import CONVERTED, LEAVE, Left, Rule, Site, code, keyword, might_hold, without

JS_FIELD = frozenset({"default", "default_factory", "init", "repr", "metadata", "kw_only"})


class _DataclassRule(Rule):
    """Shared by both rules: the class stack, the decorator swap, and fields rewritten to ``Static[T]``."""

    DECORATOR = ""
    STATIC_FIELD = ""  # the field function whose static-ness this rule reads
    BASES: tuple[str, ...] = ()  # bases that make a class of this library without its decorator

    def __init__(self, context: CodemodContext, sites: list[Site]) -> None:
        super().__init__(context, sites)
        self.converting: list[bool] = []
        # each class by name and how many of that name came before it in the file: how files' passes name it
        self.seen: dict[str, int] = {}
        self.keys: list[tuple[str, int]] = []
        self.fields: dict[cst.AnnAssign, tuple[bool, list[cst.Arg]]] = {}

    def file_reason(self) -> str | None:
        """Why no class of this file can be converted, if some use elsewhere in the file forbids it."""
        return None

    def decorator_of(self, node: cst.ClassDef) -> cst.Decorator | None:
        return next((d for d in node.decorators if self.is_one_of(d.decorator, (self.DECORATOR,))), None)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        name = node.name.value
        self.keys.append((name, self.seen.get(name, 0)))
        self.seen[name] = self.seen.get(name, 0) + 1
        decorator = self.decorator_of(node)
        base = next((b for b in node.bases if self.is_one_of(b.value, self.BASES)), None)
        if decorator is None and base is None:
            self.converting.append(False)
            return
        try:
            if base is not None:
                raise Left(f"class {node.name.value} subclasses {code(base.value)}; write @js.dataclass by hand")
            assert decorator is not None
            if isinstance(decorator.decorator, cst.Call):
                raise Left(f"@{code(decorator.decorator)} takes options; convert class {node.name.value} by hand")
            reason = self.file_reason() or self.context.scratch.get(LEAVE, {}).get(self.keys[-1])
            if reason:
                raise Left(reason)
            fields = self.read_fields(node)
        except Left as why:
            self.left(node, str(why))
            self.converting.append(False)
            return
        self.fields.update(fields)
        self.converting.append(True)

    def read_fields(self, node: cst.ClassDef) -> dict[cst.AnnAssign, tuple[bool, list[cst.Arg]]]:
        """Each field given by this library's field function: whether it is static, and its other arguments."""
        found = {}
        for line in node.body.body:
            statements = line.body if isinstance(line, cst.SimpleStatementLine) else []
            for stmt in statements:
                value = stmt.value if isinstance(stmt, cst.AnnAssign) else None
                if isinstance(value, cst.Call) and self.is_one_of(value.func, (self.STATIC_FIELD,)):
                    assert isinstance(stmt, cst.AnnAssign)
                    found[stmt] = self.read_field(value)
                    self.check_static(stmt, found[stmt][0])
        return found

    def read_field(self, call: cst.Call) -> tuple[bool, list[cst.Arg]]:
        raise NotImplementedError

    def check_static(self, stmt: cst.AnnAssign, static: bool) -> None:
        """Leave a static field whose annotation lets it hold a value ``Static`` refuses at construction (an
        array: the library kept it as metadata, compared by identity, and never hashed it outside a jit)."""
        if not static or self.is_static(stmt.annotation):
            return
        what = might_hold(stmt.annotation.annotation, self.strict)
        if what is not None:
            raise Left(f"static field {code(stmt.target)} might hold {what}, which Static refuses; give it a "
                       "hashable type, or convert the class by hand")

    def leave_AnnAssign(self, original_node: cst.AnnAssign, updated_node: cst.AnnAssign) -> cst.AnnAssign:
        if original_node not in self.fields:
            return updated_node
        static, rest = self.fields[original_node]
        self.drop_imports_of(original_node.value or original_node)
        annotation = updated_node.annotation
        if static and not self.is_static(original_node.annotation):
            annotation = self.static_of(annotation.annotation)
        return updated_node.with_changes(annotation=annotation, **self.field_value(rest))

    def field_value(self, rest: list[cst.Arg]) -> dict[str, object]:
        """The field's value with the arguments left: none, its default, or ``js.field``/``dataclasses.field``."""
        if not rest:
            return {"value": None, "equal": cst.MaybeSentinel.DEFAULT}
        if len(rest) == 1 and rest[0].keyword and rest[0].keyword.value == "default":
            return {"value": rest[0].value}
        args = without(rest, [])
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        if all(a.keyword and a.keyword.value in JS_FIELD for a in rest):
            self.need_js()
            return {"value": cst.Call(self.js_attr("field"), args)}
        return {"value": cst.Call(cst.Attribute(self.need("dataclasses"), cst.Name("field")), args)}

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        key = self.keys.pop()
        if not self.converting.pop():
            return updated_node
        decorator = self.decorator_of(original_node)
        assert decorator is not None
        self.drop_imports_of(decorator)
        decorators = [d.with_changes(decorator=self.js_attr("dataclass")) if d is self._same(updated_node, decorator)
                      else d for d in updated_node.decorators]
        self.need_js()
        self.converted(original_node, f"class {original_node.name.value} is a js.dataclass")
        self.context.scratch.get(CONVERTED, set()).add(key)
        return self.finish(original_node, updated_node.with_changes(decorators=decorators))

    @staticmethod
    def _same(updated: cst.ClassDef, decorator: cst.Decorator) -> cst.Decorator:
        """The decorator of ``updated`` that is ``decorator`` (decorators hold nothing another rule rewrites)."""
        return next(d for d in updated.decorators if d.deep_equals(decorator))

    def finish(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        return updated


class JaxDataclasses(_DataclassRule):
    CODE = "JS005"
    TRIGGERS = ("jax_dataclasses",)
    DESCRIPTION = "jax_dataclasses: @jdc.pytree_dataclass, jdc.Static[T], jdc.jit -> @js.dataclass, Static[T], js.jit"
    DECORATOR = "jax_dataclasses.pytree_dataclass"
    STATIC_FIELD = "jax_dataclasses.static_field"
    BASES = ("jax_dataclasses.EnforcedAnnotationsMixin",)

    def __init__(self, context: CodemodContext, sites: list[Site]) -> None:
        super().__init__(context, sites)
        self.mutates: cst.CSTNode | None = None
        self.jitting: list[bool] = []

    def visit_Module(self, node: cst.Module) -> None:
        self.mutates = _first_use(self, node, "jax_dataclasses.copy_and_mutate")

    def file_reason(self) -> str | None:
        if self.mutates is None:
            return None
        return "this file uses jdc.copy_and_mutate, which mutates jax_dataclasses objects only; use dataclasses.replace"

    def read_field(self, call: cst.Call) -> tuple[bool, list[cst.Arg]]:
        if any(a.keyword is None for a in call.args):
            raise Left(f"{code(call)} takes arguments by position; give them by name")
        return True, list(call.args)

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.Subscript:
        if not (self.converting and self.converting[-1]) and not (self.jitting and self.jitting[-1]):
            return updated_node
        if not self.is_one_of(original_node.value, ("jax_dataclasses.Static",)):
            return updated_node
        self.drop_imports_of(original_node.value)
        return updated_node.with_changes(value=self.need("Static"))

    def _jdc_jit(self, node: cst.FunctionDef) -> cst.Decorator | None:
        for d in node.decorators:
            target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
            if self.is_one_of(target, ("jax_dataclasses.jit",)):
                return d
        return None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.jitting.append(self._jdc_jit(node) is not None)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if not self.jitting.pop():
            return updated_node
        decorator = self._jdc_jit(original_node)
        assert decorator is not None
        self.drop_imports_of(decorator)
        self.need_js()
        index = original_node.decorators.index(decorator)
        new = updated_node.decorators[index].decorator
        new = new.with_changes(func=self.js_attr("jit")) if isinstance(new, cst.Call) else self.js_attr("jit")
        decorators = list(updated_node.decorators)
        decorators[index] = decorators[index].with_changes(decorator=new)
        self.converted(original_node, f"{original_node.name.value}(): @jdc.jit is @js.jit")
        return updated_node.with_changes(decorators=decorators)


def _first_use(rule: Rule, module: cst.Module, name: str) -> cst.CSTNode | None:
    """The first node of ``module`` that refers to ``name``."""
    found: list[cst.CSTNode] = []

    class _Find(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if rule.is_one_of(node, (name,)):
                found.append(node)

        def visit_Name(self, node: cst.Name) -> None:
            if rule.is_one_of(node, (name,)):
                found.append(node)

    module.visit(_Find())
    return found[0] if found else None


class FlaxStruct(_DataclassRule):
    CODE = "JS006"
    TRIGGERS = ("flax", "struct")
    DESCRIPTION = "flax.struct: @struct.dataclass, struct.field(pytree_node=False) -> @js.dataclass, Static[T]"
    DECORATOR = "flax.struct.dataclass"
    STATIC_FIELD = "flax.struct.field"
    BASES = ("flax.struct.PyTreeNode",)

    def read_field(self, call: cst.Call) -> tuple[bool, list[cst.Arg]]:
        if keyword(call, "metadata") is not None:
            # Flax adds pytree_node to it, and code that passes metadata reads it: it would find that key no more
            raise Left(f"{code(call)[:60]} passes metadata, which Flax extends with pytree_node; convert the class "
                       "by hand")
        positional = [a for a in call.args if a.keyword is None]
        flag = keyword(call, "pytree_node") or (positional[0] if positional else None)
        if flag is None:
            return False, list(call.args)
        if not (isinstance(flag.value, cst.Name) and flag.value.value in ("True", "False")):
            raise Left(f"pytree_node={code(flag.value)} is computed at run time; annotate the field by hand")
        return flag.value.value == "False", without(call.args, [flag])

    def finish(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        """Keep ``replace``: Flax's classes have it, and any caller may use it."""
        body = updated.body
        if any(isinstance(s, cst.FunctionDef) and s.name.value == "replace" for s in body.body):
            return updated
        module = self.need("dataclasses").value
        method = cst.parse_statement(
            f"def replace(self, **changes):\n    return {module}.replace(self, **changes)\n",
            config=self.module_config())
        assert isinstance(body, cst.IndentedBlock)
        blank = cst.EmptyLine(indent=False)
        method = method.with_changes(leading_lines=[blank])
        return updated.with_changes(body=body.with_changes(body=[*body.body, method]))

    def module_config(self) -> cst.PartialParserConfig:
        module = self.context.module
        return cst.PartialParserConfig() if module is None else module.config_for_parsing


RULES: tuple[type[Rule], ...] = (JaxDataclasses, FlaxStruct)
