"""Rules JS001-JS004: ``jax.jit``/``jax.pmap`` with static positions or names, or donating, to ``js.jit``/``js.pmap``
and ``Static[...]`` annotations on the parameters they named.

A decorator that only donates (``@partial(jax.jit, donate_argnums=0)``) becomes ``@js.jit(donate_argnums=0)``, which
JS010 turns into ``Donate[...]`` parameters in the same run; a call (``jax.jit(step, donate_argnums=0)``) becomes
``js.jit(step)`` with the donated parameters annotated ``Donate[...]``, as its static ones become ``Static[...]``.

Each site is converted only when everything it says can be read from the source: literal positions and names of
parameters of a function defined in the same file, whose signature is the one the transform sees (no decorator
between). Every other option is kept as written: ``js.jit`` takes each ``jax.jit`` option with its meaning, and
``donate_argnums``/``in_shardings``/``in_axes`` count parameters as JAX does, so their positions stay right.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import NamedTuple

import libcst as cst
from libcst.metadata import Assignment, ParentNodeProvider, PositionProvider, ScopeProvider

from ._common import (
    Left,
    Rule,
    admits_none,
    code,
    named_by,
    or_none,
    star_args,
    without,
)
from ._files import KEY, Elsewhere, Request

PARTIAL = ("functools.partial",)
DONATE_OPTIONS = frozenset({"donate_argnums", "donate_argnames"})
NAMING = ("static_arg", "static_broadcasted_argnums", "donate_arg")
"""A file holds a site the rules convert only when it holds one of these."""
# js.pmap's options (jaxstatic._vmap_pmap.pmap): any other is left for a person to look at
PMAP_OPTIONS = frozenset({"axis_name", "in_axes", "out_axes", "static_broadcasted_argnums", "devices", "backend",
                          "axis_size", "donate_argnums"})


@dataclasses.dataclass(frozen=True)
class Transform:
    """A JAX transform the rules rewrite: its ``js`` name and the options that name static parameters."""

    name: str
    by_position: str
    by_name: str | None
    options: frozenset[str] | None  # None: every option is kept (js.jit takes all of jax.jit's)


JIT = Transform("jit", "static_argnums", "static_argnames", None)
PMAP = Transform("pmap", "static_broadcasted_argnums", None, PMAP_OPTIONS)
TRANSFORMS = {"jax.jit": JIT, "jax.pmap": PMAP}


class _Jitting(Rule):
    """What the four rules share: reading the static options against a signature and rewriting both."""

    TRIGGERS: tuple[str, ...] = ("static_arg",)

    def transform_of(self, node: cst.BaseExpression) -> Transform | None:
        return next((TRANSFORMS[n] for n in self.qualified(node) if n in TRANSFORMS), None)

    def static_args(self, call: cst.Call, transform: Transform) -> list[cst.Arg]:
        options = (transform.by_position, transform.by_name)
        return [a for a in call.args if a.keyword is not None and a.keyword.value in options]

    def donate_args(self, call: cst.Call) -> list[cst.Arg]:
        return [a for a in call.args if a.keyword is not None and a.keyword.value in DONATE_OPTIONS]

    @staticmethod
    def what(fn: cst.FunctionDef, names: set[str], transform: Transform) -> str:
        done = f"{', '.join(sorted(names))} now Static" if names else f"jax.{transform.name} now js.{transform.name}"
        return f"{fn.name.value}(): {done}"

    def check_options(self, call: cst.Call, transform: Transform, positional: int) -> None:
        """Leave calls whose options cannot all be read or kept."""
        star = star_args(call)
        if star is not None:
            raise Left(f"options forwarded through {code(star)}: which parameters are static is known only at run time")
        extra = [a for a in call.args if a.keyword is None][positional:]
        if extra:
            raise Left(f"option {code(extra[0].value)} given by position; give it by name")
        unknown = [a.keyword.value for a in call.args if a.keyword and transform.options is not None
                   and a.keyword.value not in transform.options]
        if unknown:
            raise Left(f"option {unknown[0]!r} has no js.{transform.name} equivalent")

    def static_names(self, statics: Sequence[cst.Arg], transform: Transform, fn: cst.FunctionDef) -> set[str]:
        """The names of the parameters of ``fn`` that ``statics`` make static; ``Left`` when unsure."""
        params = fn.params
        positional = [*params.posonly_params, *params.params]
        names = named_by(statics, transform.by_position, fn)
        if self.strict:
            self.strict_check(fn, names)
        annotated = [p.name.value for p in [*positional, *params.kwonly_params]
                     if self.is_static(p.annotation) and p.name.value not in names]
        if annotated:
            # JAX ignores that annotation, js.jit would not: the parameter would turn static
            raise Left(f"{fn.name.value}() already annotates {annotated[0]!r} Static, which {transform.name} here "
                       "traces")
        return names

    def written_static(self, annotation: cst.Annotation | None) -> bool:
        """``Static[...]`` written by an earlier rule on this file (new nodes have no qualified names yet)."""
        value = annotation.annotation if annotation else None
        return isinstance(value, cst.Subscript) and code(value.value) == self.name("Static")

    def already_static(self, fn: cst.FunctionDef) -> set[str]:
        params = fn.params
        return {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]
                if self.is_static(p.annotation) or self.written_static(p.annotation)}

    def strict_check(self, fn: cst.FunctionDef, names: set[str]) -> None:
        """--strict: js.jit checks each static value against its ``T`` and warns on a mismatch, which a caller
        the tool cannot see might cause; so only parameters that declare no type (``Static[Any]``) are made
        static."""
        params = fn.params
        for p in [*params.posonly_params, *params.params, *params.kwonly_params]:
            annotation = p.annotation.annotation if p.annotation else None
            if p.name.value in names and annotation is not None and code(annotation) not in ("Any", "typing.Any"):
                raise Left(f"{fn.name.value}(): parameter {p.name.value!r} is annotated {code(annotation)}, and "
                           "js.jit warns when a caller passes another type; --strict converts only parameters "
                           "annotated Any or not at all")

    def annotate(self, fn: cst.FunctionDef, names: set[str]) -> cst.FunctionDef:
        """``fn`` with each parameter in ``names`` annotated ``Static[...]``."""

        def static(p: cst.Param) -> cst.Annotation | None:
            if self.is_static(p.annotation) or self.written_static(p.annotation):
                return None
            annotation = p.annotation.annotation if p.annotation else None
            if annotation is not None and _is_none(p.default) and not admits_none(annotation):
                # "axis: int = None" ran clean under jax.jit; Static[int] would warn at every call given None
                annotation = or_none(annotation)
            return self.static_of(annotation)

        return self.annotate_params(fn, names, static)

    def rewritten(self, call: cst.Call, transform: Transform, statics: Sequence[cst.Arg], drop_first: bool
                  ) -> cst.BaseExpression:
        """``js.<transform>(...)`` with the other arguments of ``call`` as written; bare ``js.jit`` when none."""
        self.drop_imports_of(call)
        self.need_js()
        args = without(call.args, [*statics, *call.args[:1]] if drop_first else statics)
        if not args:
            return self.js_attr(transform.name)
        return call.with_changes(func=self.js_attr(transform.name), args=args)


def _is_none(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


class _DecoratorRule(_Jitting):
    """A rule that rewrites a decorator of a function and that function's parameters."""

    @classmethod
    def applies(cls, source: str) -> bool:
        return super().applies(source) and any(o in source for o in NAMING)

    def match(self, decorator: cst.Decorator) -> tuple[cst.Call, Transform, bool] | None:
        """(the call, its transform, whether the call's first argument is the transform) when this rule applies."""
        raise NotImplementedError

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        for i, decorator in enumerate(original_node.decorators):
            found = self.match(decorator)
            if found is None:
                continue
            call, transform, drop_first = found
            statics = self.static_args(call, transform)
            if not statics and not self.donate_args(call):
                continue
            try:
                if i != len(original_node.decorators) - 1:
                    below = code(original_node.decorators[-1].decorator)
                    raise Left(f"@{below} below it changes the function {transform.name} sees")
                self.check_options(call, transform, 1 if drop_first else 0)
                names = self.static_names(statics, transform, original_node)
            except Left as why:
                self.left(decorator, str(why))
                continue
            new = self.rewritten(call, transform, statics, drop_first)
            decorators = list(updated_node.decorators)
            decorators[i] = decorators[i].with_changes(decorator=new)
            self.converted(decorator, self.what(original_node, names, transform))
            return self.annotate(updated_node, names).with_changes(decorators=decorators)
        return updated_node


class PartialJit(_DecoratorRule):
    CODE = "JS001"
    TRIGGERS = ("partial",)
    DESCRIPTION = "@partial(jax.jit, static_argnums/static_argnames=..., donate_...) -> @js.jit and Static[...] parameters"

    def match(self, decorator: cst.Decorator) -> tuple[cst.Call, Transform, bool] | None:
        call = decorator.decorator
        if not (isinstance(call, cst.Call) and call.args and self.is_one_of(call.func, PARTIAL)):
            return None
        transform = self.transform_of(call.args[0].value)
        return (call, transform, True) if transform is JIT else None


class JitDecoratorCall(_DecoratorRule):
    CODE = "JS002"
    TRIGGERS = ()
    DESCRIPTION = "@jax.jit(static_argnums/static_argnames=...) -> @js.jit and Static[...] parameters"

    def match(self, decorator: cst.Decorator) -> tuple[cst.Call, Transform, bool] | None:
        call = decorator.decorator
        if not isinstance(call, cst.Call) or any(a.keyword is None and not a.star for a in call.args):
            return None
        return (call, JIT, False) if self.transform_of(call.func) is JIT else None


class PmapDecorator(_DecoratorRule):
    CODE = "JS004"
    TRIGGERS = ("partial",)
    DESCRIPTION = "jax.pmap(static_broadcasted_argnums=..., donate_argnums=...) -> js.pmap and Static[...] parameters"

    def match(self, decorator: cst.Decorator) -> tuple[cst.Call, Transform, bool] | None:
        call = decorator.decorator
        if not (isinstance(call, cst.Call) and call.args and self.is_one_of(call.func, PARTIAL)):
            return None
        return (call, PMAP, True) if self.transform_of(call.args[0].value) is PMAP else None


class _CallRule(_Jitting):
    """``jax.<transform>(f, static...)`` calls of a function ``f`` defined in this file: found in a first pass (a
    function may come after the call that jits it, and may be jitted twice), rewritten in the second."""

    TRANSFORM = JIT
    TRIGGERS = ()
    METADATA_DEPENDENCIES = (*Rule.METADATA_DEPENDENCIES, ParentNodeProvider)

    @classmethod
    def applies(cls, source: str) -> bool:
        return super().applies(source) and any(o in source for o in NAMING)

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        self.collecting = True
        self.external: dict[cst.FunctionDef, tuple[str, str]] = {}  # defs of other files: their path and name
        self.calls: dict[cst.Call, tuple[cst.FunctionDef, _Names, list[cst.Arg]]] = {}
        self.uses: dict[cst.FunctionDef, object] = {}  # a def of this file: its scope assignment
        tree.visit(self)
        self.collecting = False
        self.functions = self._agreed()
        return tree.visit(self)

    def visit_Call(self, node: cst.Call) -> None:
        if not self.collecting or self.transform_of(node.func) is not self.TRANSFORM:
            return
        statics, donates = self.static_args(node, self.TRANSFORM), self.donate_args(node)
        if not (statics or donates) or not node.args or node.args[0].keyword is not None or node.args[0].star:
            return
        try:
            fn = self._function(node, node.args[0].value)
            self.check_options(node, self.TRANSFORM, 1 if self.TRANSFORM is JIT else 2)
            names = _Names(frozenset(self.static_names(statics, self.TRANSFORM, fn)),
                           frozenset(self._donated(donates, fn)))
            if fn in self.uses and (names.static - self.already_static(fn) or names.donated - self._already_donated(fn)):
                self._only_called(self.uses[fn], node)
            self.calls[node] = (fn, names, [*statics, *donates])
        except Left as why:
            self.left(node, str(why))

    def _already_donated(self, fn: cst.FunctionDef) -> set[str]:
        """Parameters annotated ``Donate[...]``, by the user or by an earlier rule on this file."""
        params = fn.params
        return {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]
                if self.is_donate(p.annotation)}

    def _donated(self, donates: list[cst.Arg], fn: cst.FunctionDef) -> set[str]:
        """The parameters ``donates`` name, to be annotated ``Donate[...]`` (JAX counts ``donate_argnums`` over
        every positional parameter, static ones included, as ``named_by`` does)."""
        if not donates:
            return set()
        if fn in self.external:
            raise Left(f"{fn.name.value} is defined in another file: annotate its donated parameters Donate[...] "
                       f"there and use js.{self.TRANSFORM.name} here")
        names = named_by(donates, "donate_argnums", fn)
        params = fn.params
        static = [p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]
                  if p.name.value in names and self.is_static(p.annotation)]
        if static:
            raise Left(f"{fn.name.value}() annotates {static[0]!r} Static, which has no buffer to donate")
        return names

    def _function(self, call: cst.Call, target: cst.BaseExpression) -> cst.FunctionDef:
        """The function definition ``target`` names in this file; ``Left`` when it is anything else."""
        if not isinstance(target, cst.Name):
            raise Left(f"the function {code(target)} is not a name defined in this file")
        scope = self.get_metadata(ScopeProvider, call)
        found = list(scope[target.value]) if scope is not None else []
        if len(found) != 1:
            raise Left(f"{target.value} is {'assigned more than once' if found else 'not defined'} in this file")
        node = found[0].node if isinstance(found[0], Assignment) else None
        if isinstance(node, cst.ImportFrom):
            return self._imported(node, target.value)
        if isinstance(node, cst.Import):
            raise Left(f"{target.value} is defined in another file ({code(node)}) not given: annotate its "
                       f"parameters Static[...] there and use js.{self.TRANSFORM.name} here")
        if not isinstance(node, cst.FunctionDef):
            raise Left(f"{target.value} is not a function defined with def in this file")
        if node.decorators:
            raise Left(f"{target.value}() is decorated, so its signature is not the one {self.TRANSFORM.name} sees")
        self.uses[node] = found[0]
        return node

    def _only_called(self, assignment: object, call: cst.Call) -> None:
        """Leave a function used anywhere but in a call of it or as an argument of a JAX function: annotating
        it changes what a jaxstatic transform of it (``js.vmap(f)``) or a function given it may do."""
        for access in getattr(assignment, "references", ()):
            node = access.node
            parent = self.get_metadata(ParentNodeProvider, node, None)
            if isinstance(parent, cst.Call) and parent.func is node:
                continue
            holder = self.get_metadata(ParentNodeProvider, parent, None) if isinstance(parent, cst.Arg) else None
            if isinstance(holder, cst.Call) and (holder is call or any(
                    q.startswith("jax.") for q in self.qualified(holder.func))):
                continue
            where = code(holder) if isinstance(holder, cst.Call) else code(parent) if parent is not None else ""
            raise Left(f"{code(node)} is also used in {where[:60]}, which may read its annotations: annotating "
                       "it would change what that does")

    def _imported(self, node: cst.ImportFrom, name: str) -> cst.FunctionDef:
        """The def of ``name``, imported by ``node`` from another file given on the command line."""
        elsewhere: Elsewhere | None = self.context.scratch.get(KEY)
        aliases = [] if isinstance(node.names, cst.ImportStar) else node.names
        alias = next((a for a in aliases if (a.evaluated_alias or a.evaluated_name) == name), None)
        module = code(node.module) if node.module else ""
        caller = self.context.filename or ""
        path = None if elsewhere is None else elsewhere.module_path(module, len(node.relative), caller)
        fn = None
        if elsewhere is not None and path is not None and alias is not None:
            fn = elsewhere.function(path, alias.evaluated_name)
        if elsewhere is None or fn is None or path is None or alias is None:
            raise Left(f"{name} is defined in another file ({code(node)}) not given: annotate its parameters "
                       f"Static[...] there and use js.{self.TRANSFORM.name} here")
        if fn.decorators:
            raise Left(f"{name}() is decorated, so its signature is not the one {self.TRANSFORM.name} sees")
        why = elsewhere.deny.get((path, alias.evaluated_name))
        if why:
            raise Left(why)
        if elsewhere.used_elsewhere(path, alias.evaluated_name):
            raise Left(f"{name} is also used in {path} where its annotations may be read (given to a function, "
                       "not called): annotating it would change what that does")
        self.external[fn] = (path, alias.evaluated_name)
        return fn

    def _agreed(self) -> dict[cst.FunctionDef, _Names]:
        """Functions whose every converted call names the same statics and donated parameters; the others' calls
        are left."""
        by_function: dict[cst.FunctionDef, list[cst.Call]] = {}
        for call, (fn, _, _) in self.calls.items():
            by_function.setdefault(fn, []).append(call)
        agreed = {}
        for fn, calls in by_function.items():
            if len({self.calls[c][1] for c in calls}) == 1:
                agreed[fn] = self.calls[calls[0]][1]
                continue
            statics_differ = len({self.calls[c][1].static for c in calls}) > 1
            what = "is made static on" if statics_differ else "donates"
            for c in calls:
                del self.calls[c]
                self.left(c, f"{fn.name.value}() {what} different parameters at different calls")
        return agreed

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if self.collecting or original_node not in self.functions:
            return updated_node
        names = self.functions[original_node]
        return self.annotate_donated(self.annotate(updated_node, set(names.static)), set(names.donated))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if self.collecting or original_node not in self.calls:
            return updated_node
        fn, names, statics = self.calls[original_node]
        if fn in self.external:
            path, name = self.external[fn]
            line = self.get_metadata(PositionProvider, original_node).start.line
            self.context.scratch[KEY].requests.append(
                Request(path, name, names.static, self.context.filename or "", line))
        done = [f"{', '.join(sorted(names.static))} now Static"] if names.static else []
        done += [f"{', '.join(sorted(names.donated))} now Donate"] if names.donated else []
        self.converted(original_node, f"{fn.name.value}(): {'; '.join(done)}")
        kept = without(updated_node.args, [a for a in updated_node.args if a.keyword and
                                           a.keyword.value in {s.keyword.value for s in statics if s.keyword}])
        self.drop_imports_of(original_node.func)
        self.need_js()
        return updated_node.with_changes(func=self.js_attr(self.TRANSFORM.name), args=kept)


class _Names(NamedTuple):
    static: frozenset[str]
    donated: frozenset[str]


class JitCall(_CallRule):
    CODE = "JS003"
    DESCRIPTION = ("jax.jit(f, static_argnums/static_argnames=..., donate_...) of a function in the file -> js.jit(f, ...) "
                   "and Static[...]/Donate[...] parameters")


class PmapCall(_CallRule):
    CODE = "JS004"
    DESCRIPTION = ("jax.pmap(f, static_broadcasted_argnums=..., donate_argnums=...) of a function in the file -> "
                   "js.pmap(f, ...) and Static[...]/Donate[...] parameters")
    TRANSFORM = PMAP


class LeftPartials(_Jitting):
    """``partial(jax.jit, static...)`` anywhere but as a decorator: reported, never rewritten."""

    CODE = "JS001"
    TRIGGERS = ("partial",)

    @classmethod
    def applies(cls, source: str) -> bool:
        return super().applies(source) and any(o in source for o in Unrecognised.OPTIONS)

    def visit_Decorator(self, node: cst.Decorator) -> bool:
        return False  # the decorator rules report these

    def visit_Call(self, node: cst.Call) -> None:
        if node.args and self.is_one_of(node.func, PARTIAL):
            transform = self.transform_of(node.args[0].value)
            if transform is not None and (self.static_args(node, transform) or self.donate_args(node)):
                self.left(node, f"partial(jax.{transform.name}, ...) not used as a decorator; use js.{transform.name}"
                          " on the function and annotate its parameters")


class Forwarded(_Jitting):
    """``jax.jit(f, **options)`` and ``partial(jax.jit, **options)`` with no static option written: which
    parameters are static is known only at run time, so they are reported, never passed over in silence."""

    CODE = "JS003"
    TRIGGERS = ("**",)
    # "jit(" or "jit," then "**" within the brackets: the files that may hold one (a rule pass costs a parse's time)
    _MAY_FORWARD = re.compile(r"\b(?:jit|pmap)\b\s*[(,](?:[^()]|\([^()]*\))*?\*\*")

    @classmethod
    def applies(cls, source: str) -> bool:
        return super().applies(source) and cls._MAY_FORWARD.search(source) is not None

    def visit_Call(self, node: cst.Call) -> None:
        star = next((a for a in node.args if a.star == "**"), None)
        if star is None or not isinstance(node.func, (cst.Name, cst.Attribute)):
            return  # (a jitted function called with **kwargs passes them as its arguments: nothing to report)
        partial = bool(node.args) and self.is_one_of(node.func, PARTIAL)
        transform = self.transform_of(node.args[0].value if partial else node.func)
        if transform is None or self.static_args(node, transform):
            return  # the other rules report a call whose static options are written
        self.left(node, f"options forwarded through {code(star)} to jax.{transform.name}: which parameters are "
                        f"static is known only at run time; annotate them Static[...] by hand and use "
                        f"js.{transform.name}")


class Requested(_Jitting):
    """The functions of this file that calls in other files made static: their parameters annotated."""

    CODE = "JS003"
    TRIGGERS = ()
    METADATA_DEPENDENCIES = (*Rule.METADATA_DEPENDENCIES, ParentNodeProvider)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        elsewhere = self.context.scratch.get(KEY)
        wanted = {} if elsewhere is None else elsewhere.annotate.get(self.context.filename or "", {})
        names = wanted.get(original_node.name.value)
        if names is None or not isinstance(self.get_metadata(ParentNodeProvider, original_node), cst.Module):
            return updated_node
        self.converted(original_node, f"{original_node.name.value}(): {', '.join(sorted(names))} now Static "
                                      "(jitted in another file)")
        return self.annotate(updated_node, set(names))


class Unrecognised(Rule):
    """A call still given static or donated positions or names after every rule, through a name no rule recognised
    (a ``partial`` or ``jit`` bound by assignment): reported, never rewritten."""

    CODE = "JS000"
    OPTIONS = frozenset({"static_argnums", "static_argnames", "static_broadcasted_argnums", *DONATE_OPTIONS})

    @classmethod
    def applies(cls, source: str) -> bool:
        return any(o in source for o in cls.OPTIONS)

    def visit_Call(self, node: cst.Call) -> None:
        option = next((a.keyword.value for a in node.args if a.keyword and a.keyword.value in self.OPTIONS), None)
        if option is not None and not self.is_one_of(node.func, ("jax.checkpoint", "jax.remat")):
            self.left(node, f"{code(node.func)}(..., {option}=...) is not a call of jax.jit or jax.pmap this "
                            "tool recognises; convert it by hand")


RULES: tuple[type[Rule], ...] = (PartialJit, JitDecoratorCall, JitCall, PmapDecorator, PmapCall, LeftPartials,
                                 Forwarded)
