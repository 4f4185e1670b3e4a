"""The mypy entry point: dispatch on fully qualified names, nothing else (the checks live in topic modules)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, Final

from mypy.nodes import CallExpr, Decorator, SuperExpr, TypeInfo, Var
from mypy.options import Options
from mypy.plugin import (
    AnalyzeTypeContext,
    ClassDefContext,
    FunctionContext,
    FunctionSigContext,
    MethodContext,
    MethodSigContext,
    Plugin,
    ReportConfigContext,
)
from mypy.plugins import dataclasses as dataclasses_plugin
from mypy.types import CallableType, FunctionLike, Type

from . import (
    _argnames,
    _calls,
    _decorators,
    _donated,
    _gradients,
    _hashability,
    _overloads,
    _plain_jit,
    _spellings,
)
from ._chain import NextHooks, next_hook, overridden_after
from ._compat import MATCHES_OVERLOADED_CALL
from ._definitions import AnnotatedHook, StaticAnnotationHook, UnresolvedNote
from ._descriptors import name_bound, staticmethod_get
from ._fullnames import (
    ANNOTATED,
    ATTRS_MAKERS,
    CHECKED_ANYWAY,
    DATACLASS_DECORATORS,
    DONATING_TRANSFORMS,
    FUNCTOOLS_PARTIAL,
    JAX_JIT_DECORATOR,
    JAX_STATIC_OPTIONS,
    JAX_STUB_CALLS,
    JAX_WRAPPED_CALLS,
    JAXSTATIC_JIT,
    JAXSTATIC_TRANSFORMS,
    MARKER_ALIASES,
    NEVER_STATIC_PACKAGES,
    PARTIAL_CALL,
    PYTREE_DATACLASS,
    STATIC_ALIAS,
    TRANSFORM_DECORATORS,
    TRANSFORM_WRAPPERS,
)
from ._records import is_pytree_dataclass, record_attrs, record_dataclass, record_hash_none

RULES_VERSION: Final = "7"
"""Bump when a rule changes: mypy then rechecks every module instead of replaying cached results."""


def _source_digest() -> str:
    """A digest of the plugin's own sources. mypy's plugin snapshot hashes only the entry module, so an edit to
    a rule in a submodule would otherwise replay stale results from the cache."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


_CONFIG_DATA: Final = {"jaxstatic_mypy": RULES_VERSION, "sources": _source_digest()}

_SigHook = Callable[[FunctionSigContext], FunctionLike]
_MethodSigHook = Callable[[MethodSigContext], FunctionLike]
_FunctionHook = Callable[[FunctionContext], Type]
_MethodHook = Callable[[MethodContext], Type]

_JIT_APPLIED_BY_METHOD: Final = {PARTIAL_CALL: True, "jax._JitWrapped.__call__": False}
"""Calls that may apply ``jax.jit`` with options to a function, and whether through ``functools.partial``."""


_MARKER_SUFFIXES: Final = tuple(f".{name.rsplit('.', 1)[1]}" for name in sorted(MARKER_ALIASES))
_ANALYZED_SUFFIXES: Final = (*_MARKER_SUFFIXES, ".Annotated", "._First", "._Second")


_PYTREE_CLASS: Final = "<jaxstatic.dataclass>"


def _never_static(fullname: str) -> bool:
    """Calls into the standard library, jax or numpy never meet a Static parameter: no hook, no cost."""
    return fullname.partition(".")[0] in NEVER_STATIC_PACKAGES and fullname not in CHECKED_ANYWAY


class JaxstaticPlugin(Plugin):
    def __init__(self, options: Options) -> None:
        super().__init__(options)
        _hashability.configure(options.python_version)
        self._static_annotation = StaticAnnotationHook()
        self._annotated = AnnotatedHook()
        self._unresolved = UnresolvedNote()
        # One hook object per fully qualified name, made once: these lookups run for every call mypy checks.
        self._function_sig_hooks: dict[str, _SigHook | None] = {}
        self._method_sig_hooks: dict[str, _MethodSigHook | None] = {}
        # get_function_hook's answers, except for names that may come to mean something else (variables, classes,
        # names not resolved yet): those are looked up every time.
        self._function_hooks: dict[str, _FunctionHook | None] = {}
        self._changeable_names: set[str] = set()
        self._wrapper_calls = frozenset(f"{wrapper}.__call__" for wrapper in TRANSFORM_WRAPPERS)
        self._mro_hooks_after: bool | None = None  # whether the plugins after us have any (the chain is fixed)
        # The hooks the plugins after us would give (called through the instance: they override these).
        self._next_function_sig = NextHooks[_SigHook](
            self, lambda p, name: p.get_function_signature_hook(name)
        )
        self._next_method_sig = NextHooks[_MethodSigHook](
            self, lambda p, name: p.get_method_signature_hook(name)
        )
        self._next_function = NextHooks[_FunctionHook](
            self, lambda p, name: p.get_function_hook(name)
        )
        self._next_method = NextHooks[_MethodHook](self, lambda p, name: p.get_method_hook(name))

    def report_config_data(self, ctx: ReportConfigContext) -> Any:
        return _CONFIG_DATA

    # --- semantic analysis -------------------------------------------------------------------------------------

    def get_type_analyze_hook(self, fullname: str) -> Callable[[AnalyzeTypeContext], Type] | None:
        # mypy asks for every name used in a type (some 180,000 times over ``-p equinox``): one test turns away
        # all but the names this hook can concern.
        if not fullname.endswith(_ANALYZED_SUFFIXES):
            return None
        if fullname == STATIC_ALIAS:
            return None if self._static_annotation.active else self._static_annotation
        if fullname in ANNOTATED:
            return None if self._annotated.active else self._annotated
        if fullname in _gradients.FUNCTION_PROTOCOLS and not MATCHES_OVERLOADED_CALL:
            return _gradients.as_plain_callable
        if fullname.endswith(_MARKER_SUFFIXES) and fullname not in MARKER_ALIASES:
            # ``Static`` imported from a jaxstatic mypy cannot see is a local name of the importing module.
            unresolved = self._unresolved
            return None if unresolved.active or unresolved.said else unresolved
        return None

    def get_class_decorator_hook(self, fullname: str) -> Callable[[ClassDefContext], None] | None:
        if fullname in DATACLASS_DECORATORS or fullname == PYTREE_DATACLASS:
            return partial(self._dataclass, fullname)
        if fullname in ATTRS_MAKERS:
            return partial(self._attrs, fullname)
        return None

    def get_customize_class_mro_hook(self, fullname: str) -> Callable[[ClassDefContext], None] | None:
        # The one hook mypy calls for every class it analyses: the class body is read here, while it exists.
        return self._class_body

    def _class_body(self, ctx: ClassDefContext) -> None:
        record_hash_none(ctx)
        if self._mro_hooks_after is None:
            self._mro_hooks_after = overridden_after(ctx.api, self, "get_customize_class_mro_hook")
        if self._mro_hooks_after:
            fullname = ctx.cls.fullname
            hook = next_hook(ctx.api, self, lambda p: p.get_customize_class_mro_hook(fullname))
            if hook is not None:
                hook(ctx)

    def _attrs(self, fullname: str, ctx: ClassDefContext) -> None:
        record_attrs(ctx, fullname)
        hook = next_hook(ctx.api, self, lambda p: p.get_class_decorator_hook(fullname))
        if hook is not None:
            hook(ctx)  # mypy's attrs plugin tags the class

    def _dataclass(self, fullname: str, ctx: ClassDefContext) -> None:
        record_dataclass(ctx, pytree=fullname == PYTREE_DATACLASS)
        hook = next_hook(ctx.api, self, lambda p: p.get_class_decorator_hook(fullname))
        if hook is None and fullname == PYTREE_DATACLASS:
            # mypy tags a dataclass_transform class only when no plugin claims its decorator: do it for mypy.
            hook = dataclasses_plugin.dataclass_tag_callback
        if hook is not None:
            hook(ctx)

    # --- type checking: call sites (every call, so the fast path matters) -------------------------------------

    def get_function_signature_hook(self, fullname: str) -> _SigHook | None:
        try:
            return self._function_sig_hooks[fullname]
        except KeyError:
            hook = None if _never_static(fullname) else partial(self._function_signature, fullname)
            self._function_sig_hooks[fullname] = hook
            return hook

    def get_method_signature_hook(self, fullname: str) -> _MethodSigHook | None:
        try:
            return self._method_sig_hooks[fullname]
        except KeyError:
            if _never_static(fullname) and not fullname.endswith(".__get__"):
                hook = None
            else:
                hook = partial(self._method_signature, fullname)
            self._method_sig_hooks[fullname] = hook
            return hook

    def _function_signature(self, fullname: str, ctx: FunctionSigContext) -> FunctionLike:
        nxt = self._next_function_sig.get(ctx.api, fullname)
        sig = nxt(ctx) if nxt is not None else ctx.default_signature
        call = ctx.context
        if not isinstance(call, CallExpr):
            return sig
        if isinstance(sig, CallableType) and _donated.has_donate(sig):
            _donated.check_call(ctx.api, sig, call)
        if isinstance(sig, CallableType) and _calls.has_static(sig):
            _calls.check_call(ctx.api, sig, call)
        elif fullname == FUNCTOOLS_PARTIAL:
            _calls.check_partial_creation(ctx.api, call)
        elif fullname in JAX_STATIC_OPTIONS and isinstance(sig, CallableType):
            _argnames.check_jax_jit_call(ctx.api, sig, call)
        return sig

    def _method_signature(self, fullname: str, ctx: MethodSigContext) -> FunctionLike:
        if fullname.endswith(".__get__"):
            unbound = staticmethod_get(ctx)
            if unbound is not None:
                return unbound
        nxt = self._next_method_sig.get(ctx.api, fullname)
        sig = nxt(ctx) if nxt is not None else ctx.default_signature
        if fullname.endswith(".__get__"):
            return name_bound(ctx, sig)
        context = ctx.context
        if fullname == PARTIAL_CALL:
            if isinstance(context, Decorator):
                _argnames.check_jax_jit_decorator(ctx.api, context)
            elif isinstance(context, CallExpr):
                bound = _calls.as_callable(ctx.type)
                static_checked = bound is not None and _calls.has_static(bound)
                if bound is not None and static_checked:
                    _calls.check_call(ctx.api, bound, context)
                _plain_jit.check(ctx.api, ctx.type, context, static_checked=static_checked)
        elif isinstance(context, CallExpr):
            if fullname in self._wrapper_calls and isinstance(sig, CallableType):
                sig = _calls.named_after_callee(sig, context)
            static_checked = False
            if isinstance(sig, CallableType) and _donated.has_donate(sig) and _donated.consumes(fullname):
                _donated.check_call(ctx.api, sig, context)
            elif fullname in self._wrapper_calls:
                _donated.check_local(ctx.api, context)
            if isinstance(sig, CallableType) and _calls.has_static(sig):
                static_checked = True
                _calls.check_call(ctx.api, sig, context)
            _calls.check_bound_self(ctx.api, ctx.type, context)
            if fullname in JAX_WRAPPED_CALLS or fullname in JAX_STUB_CALLS:
                _plain_jit.check(ctx.api, ctx.type, context, static_checked=static_checked)
                _donated.check_plain(ctx.api, ctx.type, context)
        return sig

    def get_method_hook(self, fullname: str) -> _MethodHook | None:
        if fullname in _JIT_APPLIED_BY_METHOD:
            return partial(self._jit_applied, fullname)
        return None

    def _jit_applied(self, fullname: str, ctx: MethodContext) -> Type:
        """``partial(jax.jit, static_argnames=...)(f)`` (and, with the stubs, ``jax.jit(static_argnames=...)(f)``),
        as a call or a decorator: the result carries the static parameters to its call sites."""
        nxt = self._next_method.get(ctx.api, fullname)
        returned = nxt(ctx) if nxt is not None else ctx.default_return_type
        if not ctx.arg_types or not ctx.arg_types[0]:
            return returned
        options = _argnames.options_of(ctx.context, through_partial=_JIT_APPLIED_BY_METHOD[fullname], api=ctx.api)
        if isinstance(ctx.context, CallExpr):
            _argnames.check_jax_applied(ctx.api, ctx, options)
        elif isinstance(ctx.context, Decorator) and not _JIT_APPLIED_BY_METHOD[fullname]:
            _argnames.check_jax_jit_decorator(ctx.api, ctx.context)  # the stubs' ``@jax.jit(static_argnames=...)``
        returned = _plain_jit.mark(ctx.api, returned, ctx.arg_types[0][0], options) or returned
        return _donated.mark(ctx.api, returned, ctx.arg_types[0][0], options) or returned

    # --- type checking: transforms applied to functions --------------------------------------------------------

    def get_function_hook(self, fullname: str) -> _FunctionHook | None:
        try:
            return self._function_hooks[fullname]
        except KeyError:
            pass
        hook = self._function_hook(fullname)
        if fullname not in self._changeable_names:
            self._function_hooks[fullname] = hook
        return hook

    def _function_hook(self, fullname: str) -> _FunctionHook | None:
        if fullname in JAXSTATIC_TRANSFORMS or fullname in TRANSFORM_DECORATORS:
            return partial(self._transform, fullname)
        if fullname in JAX_STATIC_OPTIONS or fullname == JAX_JIT_DECORATOR:
            return partial(self._jax_jit, fullname)
        if fullname == FUNCTOOLS_PARTIAL:
            return self._partial
        if " of " in fullname:  # a method called with no fully qualified name: ``super().apply(...)``
            return partial(self._super_call, fullname)
        named = self._named(fullname)
        if named == _PYTREE_CLASS:
            return self._construct
        return partial(self._transform, named) if named is not None else None

    def _named(self, fullname: str) -> str | None:
        """What a name mypy calls through stands for: the transform a module-level variable holds (``batched =
        vmap(in_axes=0)``; ``@batched``), or ``_PYTREE_CLASS`` for a ``jaxstatic.dataclass`` (mypy gives a call
        through ``type[Model]`` or ``cls`` the class's name)."""
        if _never_static(fullname):
            return None
        sym = self.lookup_fully_qualified(fullname)
        node = sym.node if sym is not None else None
        # Variables and classes are looked at each time (the daemon may see them change, and a variable's type
        # may not be inferred yet); the answer for anything else, functions above all, is remembered.
        if isinstance(node, Var):
            self._changeable_names.add(fullname)
            return _spellings.held_transform(node.type)
        if isinstance(node, TypeInfo):
            self._changeable_names.add(fullname)
            return _PYTREE_CLASS if is_pytree_dataclass(node) else None
        if node is None:
            self._changeable_names.add(fullname)  # not analysed yet
        return None

    def _construct(self, ctx: FunctionContext) -> Type:
        if isinstance(ctx.context, CallExpr):
            _calls.check_construction_through_type(ctx.api, ctx.context)
        return ctx.default_return_type

    def _partial(self, ctx: FunctionContext) -> Type:
        decorator = _spellings.partial_decorator(ctx)
        if decorator is not None:
            return decorator
        returned = self._next_function_result(FUNCTOOLS_PARTIAL, _spellings.bind_through(ctx))
        if not isinstance(ctx.context, CallExpr) or not ctx.arg_types or len(ctx.arg_types[0]) != 1:
            return returned
        return _plain_jit.mark_partial(ctx.api, ctx.context, ctx.arg_types[0][0], returned) or returned

    def _super_call(self, fullname: str, ctx: FunctionContext) -> Type:
        call = ctx.context
        if isinstance(call, CallExpr) and isinstance(call.callee, SuperExpr):
            _calls.check_super_call(ctx.api, call)
        return self._next_function_result(fullname, ctx)

    def _transform(self, fullname: str, ctx: FunctionContext) -> Type:
        transform = TRANSFORM_DECORATORS.get(fullname, fullname)
        _decorators.check_transform_argument(ctx, transform)
        if not ctx.arg_types or not ctx.arg_types[0]:
            name = f"jaxstatic.{transform.rsplit('.', 1)[1]}"
            named = _decorators.named_decorator(ctx.default_return_type, name)
            if named is not None:
                return named
        returned = self._next_function_result(fullname, ctx)
        if transform in _gradients.GRADIENTS:
            returned = _gradients.typed(ctx, transform, returned)
        options = _argnames.options_call(ctx, {transform})
        returned = _argnames.mark_static(ctx, options, returned) or returned
        if transform in DONATING_TRANSFORMS and ctx.arg_types and ctx.arg_types[0]:
            returned = _donated.mark_parameters(ctx.api, returned, ctx.arg_types[0][0], options) or returned
        if transform == JAXSTATIC_JIT and ctx.arg_types and ctx.arg_types[0]:
            returned = _overloads.kept(ctx.arg_types[0][0], returned) or returned
        return returned

    def _jax_jit(self, fullname: str, ctx: FunctionContext) -> Type:
        if fullname == JAX_JIT_DECORATOR:
            if isinstance(ctx.context, Decorator):
                _argnames.check_jax_jit_decorator(ctx.api, ctx.context)
            options = _argnames.options_of(ctx.context, through_partial=False)
            if isinstance(ctx.context, CallExpr):  # ``jax.jit(static_argnames=...)(f)``
                _argnames.check_jax_applied(ctx.api, ctx, options)
        elif not ctx.arg_types or not ctx.arg_types[0]:
            named = _decorators.named_decorator(ctx.default_return_type, JAX_JIT_DECORATOR)
            if named is not None:
                return named
            options = None
        else:  # ``jax.jit(f, static_argnames=...)``; a bare ``@jax.jit`` has no options
            options = ctx.context if isinstance(ctx.context, CallExpr) else None
        returned = self._next_function_result(fullname, ctx)
        if options is None or not ctx.arg_types or not ctx.arg_types[0]:
            return returned
        returned = _plain_jit.mark(ctx.api, returned, ctx.arg_types[0][0], options) or returned
        return _donated.mark(ctx.api, returned, ctx.arg_types[0][0], options) or returned

    def _next_function_result(self, fullname: str, ctx: FunctionContext) -> Type:
        nxt = self._next_function.get(ctx.api, fullname)
        return nxt(ctx) if nxt is not None else ctx.default_return_type

