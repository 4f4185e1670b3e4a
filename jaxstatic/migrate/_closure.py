"""Rule JS011: ``jax.jit(make_train(config))``, where ``make_train`` is defined in the file and returns a function
defined inside it, to ``js.jit(make_train(config))``: made again with an equal config, the closure then shares one
program (``jax.jit`` compiles each closure anew).

Converted only when the source shows it: the factory is a top-level ``def`` of the file, undecorated, whose every
``return`` gives a function defined in its own body (a ``def`` or a ``lambda``) that no decorator wraps; the call
names no static option (the other rules read those) and the jitted value is the factory's call itself or a
``functools.partial`` of it. ``js.jit`` of such a closure behaves as ``jax.jit`` of it does, and shares its programs
only with closures whose closed-over values are equal as static values are (an array or an object compared by
identity never shares). A factory wrapped in ``jax.vmap`` (or another transform) first is reported with the recipe:
``js.jit`` shares the closures it is given itself.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from ._common import Left, code
from ._jit import JIT, PARTIAL, _Jitting

RECIPE = "docs/migration.md#a-config-held-in-a-closure"
WRAPPERS = ("jax.vmap", "jax.pmap", "jax.grad", "jax.value_and_grad", "jax.checkpoint", "jax.remat")


class FactoryJit(_Jitting):
    CODE = "JS011"
    TRIGGERS = ("jit",)
    DESCRIPTION = ("jax.jit(factory(...)) of a factory in the file that returns a function defined inside it -> "
                   "js.jit(factory(...)): equal closures share one program")

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        self.factories = {s.name.value: s for s in tree.body if isinstance(s, cst.FunctionDef)}
        return super().transform_module_impl(tree)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not original_node.args or self.transform_of(original_node.func) is not JIT:
            return updated_node
        if self.static_args(original_node, JIT) or original_node.args[0].keyword is not None:
            return updated_node  # JS003 reads (or reports) its static options
        found = self._factory_call(original_node.args[0].value)
        if found is None:
            return updated_node
        factory, wrapper = found
        try:
            if wrapper is not None:
                raise Left(f"{code(wrapper)}(...) around {factory}(...): js.jit shares the programs of equal "
                           f"closures it is given itself; jit the closure directly, or make what it closes over a "
                           f"Static parameter ({RECIPE})")
            inner = self._returns_inner(self.factories[factory])
        except Left as why:
            self.left(original_node, str(why))
            return updated_node
        self.converted(original_node, f"{factory}(): jax.jit of the {inner} it returns now js.jit: made again with "
                                      f"equal values, it shares one program ({RECIPE})")
        self.drop_imports_of(original_node.func)
        self.need_js()
        return updated_node.with_changes(func=self.js_attr("jit"))

    def _factory_call(self, value: cst.BaseExpression) -> tuple[str, cst.BaseExpression | None] | None:
        """``(factory name, wrapper)`` for ``factory(...)``, ``partial(factory(...), ...)`` (no wrapper) and
        ``jax.vmap(factory(...))`` (the wrapper); None for anything else."""
        if not isinstance(value, cst.Call):
            return None
        inner, wrapper = value, None
        if value.args and (self.is_one_of(value.func, PARTIAL) or self.is_one_of(value.func, WRAPPERS)):
            wrapper = None if self.is_one_of(value.func, PARTIAL) else value.func
            inner = value.args[0].value  # type: ignore[assignment]
            if not isinstance(inner, cst.Call):
                return None
        if not isinstance(inner.func, cst.Name) or inner.func.value not in self.factories:
            return None
        if not _defines_inner(self.factories[inner.func.value]):
            return None
        return inner.func.value, wrapper

    def _returns_inner(self, factory: cst.FunctionDef) -> str:
        """What the factory returns, in words (``train``); ``Left`` where a return gives anything else."""
        if factory.decorators:
            raise Left(f"{factory.name.value}() is decorated: what it returns is not read from its source")
        inner = {s.name.value: s for s in _own_statements(factory) if isinstance(s, cst.FunctionDef)}
        names = []
        for ret in _returns(factory):
            value = ret.value
            if isinstance(value, cst.Lambda):
                names.append("lambda")
            elif isinstance(value, cst.Name) and value.value in inner:
                if inner[value.value].decorators:
                    raise Left(f"{value.value}(), which {factory.name.value}() returns, is decorated: js.jit would "
                               "wrap what the decorator returns")
                names.append(value.value)
            else:
                raise Left(f"{factory.name.value}() returns {code(value) if value else 'None'}, not a function "
                           "defined inside it")
        if not names:
            raise Left(f"{factory.name.value}() returns nothing")
        return " or ".join(dict.fromkeys(names))


def _defines_inner(factory: cst.FunctionDef) -> bool:
    """Whether the function defines a function in its own body (a factory), or returns a lambda."""
    return any(isinstance(s, cst.FunctionDef) for s in _own_statements(factory)) or any(
        isinstance(r.value, cst.Lambda) for r in _returns(factory))


def _own_statements(fn: cst.FunctionDef) -> list[cst.CSTNode]:
    """The statements of ``fn``'s own body, inside its ``if``/``with``/``try`` blocks, not inside nested ones."""
    out: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [fn.body]
    while stack:
        node = stack.pop()
        for child in node.children:
            if isinstance(child, (cst.FunctionDef, cst.ClassDef)):
                out.append(child)
                continue
            if isinstance(child, cst.Lambda):
                continue
            out.append(child)
            stack.append(child)
    return out


def _returns(fn: cst.FunctionDef) -> list[cst.Return]:
    """The ``return`` statements of ``fn`` itself (not of the functions it defines)."""
    return [s for s in _own_statements(fn) if m.matches(s, m.Return())]  # type: ignore[misc]


RULES: tuple[type[_Jitting], ...] = (FactoryJit,)

__all__ = ["RULES", "FactoryJit"]
