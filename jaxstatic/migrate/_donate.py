"""Rule JS010: ``donate_argnums``/``donate_argnames`` of a ``js.jit`` or ``js.pmap`` decorator to ``Donate[...]``
parameters.

It runs after the static rules (JS001-JS004), so ``@partial(jax.jit, static_argnums=1, donate_argnums=0)`` becomes
``@js.jit`` with ``Static[...]`` and ``Donate[...]`` parameters in one run. Only decorators are converted, where the
function they decorate is the one ``js.jit`` sees (no decorator below): there the positions of ``donate_argnums``
are the signature's. What cannot be read from the source (a computed option, a negative position, a position into
``*args``, a parameter already ``Static``) is left as it was and reported.
"""

from __future__ import annotations

import libcst as cst

from ._common import Left, Rule, code, named_by, without

OPTIONS = frozenset({"donate_argnums", "donate_argnames"})
JS_TRANSFORMS = {"jaxstatic.jit": "jit", "jaxstatic.pmap": "pmap"}
PARTIAL = ("functools.partial",)


class DonateDecorator(Rule):
    CODE = "JS010"
    TRIGGERS = ("donate_arg",)
    DESCRIPTION = "@js.jit/@js.pmap(donate_argnums/donate_argnames=...) -> @js.jit/@js.pmap and Donate[...] parameters"

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        decorators = list(original_node.decorators)
        for i, decorator in enumerate(decorators):
            call = decorator.decorator
            if not isinstance(call, cst.Call):
                continue
            through_partial = bool(call.args) and self.is_one_of(call.func, PARTIAL) and self.is_one_of(
                call.args[0].value, JS_TRANSFORMS)
            transform = self._transform(call.args[0].value if through_partial else call.func)
            if transform is None:
                continue
            options = call.args[1:] if through_partial else call.args
            donated = [a for a in options if a.keyword is not None and a.keyword.value in OPTIONS]
            if not donated:
                continue
            try:
                if i != len(decorators) - 1:
                    raise Left(f"@{code(decorators[-1].decorator)} below it changes the function {transform} sees")
                if any(a.keyword is None for a in options):
                    raise Left("an option given by position or through *; give options by name")
                names = self._names(donated, original_node)
            except Left as why:
                self.left(decorator, str(why))
                continue
            rest = without(options, donated)
            if through_partial and not rest:
                self.drop_imports_of(call.func)
            new = updated_node.decorators[i].with_changes(
                decorator=call.with_changes(func=self.js_attr(transform), args=rest) if rest else self.js_attr(transform))
            self.converted(decorator, f"{original_node.name.value}(): {', '.join(sorted(names))} now Donate")
            changed = [*updated_node.decorators[:i], new, *updated_node.decorators[i + 1:]]
            return self.annotate_donated(updated_node, names).with_changes(decorators=changed)
        return updated_node

    def visit_Call(self, node: cst.Call) -> None:
        transform = self._transform(node.func)
        if node.args and node.args[0].keyword is None and transform is not None and any(
                a.keyword is not None and a.keyword.value in OPTIONS for a in node.args):
            self.left(node, f"js.{transform}({code(node.args[0].value)}, donate_...) is a call, not a decorator: the option "
                            "keeps working; to declare it, annotate the parameters Donate[...] where they are defined")

    def _transform(self, node: cst.BaseExpression) -> str | None:
        return next((JS_TRANSFORMS[q] for q in self.qualified(node) if q in JS_TRANSFORMS), None)

    def _names(self, donated: list[cst.Arg], fn: cst.FunctionDef) -> set[str]:
        params = fn.params
        by_name = {p.name.value: p for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
        names = named_by(donated, "donate_argnums", fn)
        static = [n for n in sorted(names) if self.is_static(by_name[n].annotation)]
        if static:
            raise Left(f"{fn.name.value}() annotates {static[0]!r} Static, which has no buffer to donate")
        return names


RULES: tuple[type[Rule], ...] = (DonateDecorator,)
