"""A function transformed by jaxstatic: ``StaticFunction``, the base every transform shares, and its public surface.

A transform (``jit``, ``vmap``, ``grad``, ...) is a ``StaticFunction`` subclass that says only what differs: how to
turn a body whose static values are fixed into a JAX program (``_build``), and which options it checks once the
static parameters are known (``_resolve``). What every transform shares is its core (``_core.Core``), an object of
its own that the transform makes and every handle holds (the ``_core`` slot):

- its call shapes (``_core``): the split of a call into static and dynamic values per shape, and the generated
  code (and hit in C) that builds the flat static key and dispatches;
- its programs (``_parts.Programs``): one per static key, in a cache bounded by ``cache_size``; a key not there
  is a miss (``_miss``, which reads top to bottom);
- the body JAX traces (``_body``), which hands the user's function its static values and counts the trace.

The core asks the transform for what differs per transform through ``_parts.Transform``, which ``StaticFunction``
satisfies. What is here: making one (``__init__``), its options and the parameters they make static (``_params``,
``_layout``), the handles ``js.jit(f)`` returns over a core shared across rebuilds (``_shared``), and what a user
calls and reads (``__call__``, ``__get__``, ``trace_count``, ``cache_info``, ``clear_cache``, pickling).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Concatenate, Generic, TypeVar, overload

from typing_extensions import ParamSpec, Self

from . import (
    _c_hits,
    _extension,
    _lazy,
    _naming,
    _options,
    _pickling,
    _shared,
    _stats,
    _traceback,
)
from ._annotations import call_signature, deferring
from ._core import Core
from ._errors import AnnotationError
from ._parts import KeyState
from ._plan import Layout, Plan

# Contravariant, as a callable's parameters are: a function of named parameters is also one of positional-only ones
# (the variance pyrefly and ty need to bind `self` in __get__; mypy and pyright infer it already)
_P = ParamSpec("_P", contravariant=True)  # type: ignore[misc]
_P2 = ParamSpec("_P2")
_R = TypeVar("_R")
_R_co = TypeVar("_R_co", covariant=True)
_R2 = TypeVar("_R2")
_T = TypeVar("_T")

class StaticFunction(_extension.Base, Generic[_P, _R], metaclass=_shared.FindOrMake):
    """A function transformed by jaxstatic. Call it like the function it wraps.

    Made again from the same function with equal options, it is the one made before (``_shared``). What a user holds
    is most often a handle (``_handle``) over the transform: an object sharing its ``__dict__`` and core and holding
    the function, where the transform holds it weakly (``_keep`` is None), so that its ``_fn`` finds the function
    through a live handle."""

    _transform_name: ClassVar[str] = "transform"
    _jaxstatic_transform_: ClassVar[bool] = True  # how _hidden tells a transform, importing nothing of this module
    _counts_traces: ClassVar[bool] = True  # jit and pmap count traces; vmap and grad leave that to a jit above them
    _eager_without_jit: ClassVar[bool] = False  # jit alone becomes the plain function under jax.disable_jit()
    # a value passed by keyword selects a program of its own (js.vmap, js.pmap: mapped over axis 0, as JAX's); a
    # transform over one passes a call on as it was made (``_plan.Layout.keyword_variants``)
    _keyword_variants: ClassVar[bool] = False
    _shares: ClassVar[bool] = True  # made again from the same function and options, the one made before
    _method_type: ClassVar[type[BoundMethod[Any, Any]]]  # what ``__get__`` binds to an instance: set below
    # the record of its options (``_options.Options``, extended per transform): made once, when it is applied
    _options_type: ClassVar[type[_options.Options]] = _options.Options
    _made: tuple[tuple[Any, ...], dict[str, Any]]  # set by _shared: the options it was made with
    # Kept apart from the ``__dict__`` a transform shares with its handles: the function this object holds strongly
    # (None: a shared transform, kept in the function's own ``__dict__``, which holds it weakly, so that no reference
    # cycle keeps the function alive), and the core (every handle's is its transform's)
    __slots__ = ("__dict__", "__weakref__", "_core", "_keep")

    def __init__(self, fn: Callable[_P, _R], options: dict[str, Any]) -> None:
        fn = _options.check_callable(fn, f"jaxstatic.{self._transform_name}")
        self._keep: Callable[..., Any] | None = fn
        self._fn_ref: Callable[[], Any] = _none  # the function, weakly, once a shared transform no longer holds it
        _wrap(self, fn)
        self._name = _naming.display_name(fn)
        self._opts = opts = self._options_type.make(self._name, dict(options))  # every option, read by attribute
        self._known_signature: inspect.Signature | None = None
        self._known_params: _options.ParamOptions | None = None
        self._known_layout: Layout | None = None  # read at the first call (``_layout``)
        stats = _stats.TraceStats(opts, self._label(fn))
        stats.transforms, stats.site = _transforms(self, fn), _stats.site_of(fn)
        self._core = Core(self, stats)
        named = (opts.static_argnums, opts.static_argnames, opts.donate_argnums, opts.donate_argnames)
        if any(option is not None for option in named) or self._checks_at_decoration():
            # Options that name parameters are checked now, like jax.jit's; those that depend on which parameters
            # are Static too when the annotations resolve (forward references to later classes resolve by the
            # first call). Without such options nothing is read now: decoration stays as cheap as jax.jit's.
            self._params()
            with contextlib.suppress(AnnotationError), deferring():
                self._layout()

    @property
    def _fn(self) -> Callable[..., Any]:
        """The function transformed: a handle's own; a shared transform's, that of a handle alive (a call or a trace
        runs through one), else the one it was made from while that lives."""
        keep = self._keep
        if keep is None:
            for handle in self._core._alive():
                return handle._keep  # type: ignore[no-any-return]
            keep = self._fn_ref()
        return keep

    def _traced_fn(self) -> Callable[..., Any]:
        """The function a trace runs: ``_fn``, or, for a transform shared by closures of equal values, one whose
        values are still those (``_shared.traced_function``). A function that closes over nothing is ``_fn``."""
        return _shared.traced_function(self) if self._closes_over() else self._fn

    def _after_trace(self, fn: Callable[..., Any]) -> None:
        """A trace ran ``fn``: a transform shared by closures checks they are unchanged (``_shared.after_trace``)."""
        if self._closes_over():
            _shared.after_trace(self, fn)

    def _closes_over(self) -> bool:
        """Whether this transform is shared by functions that close over values (cells, defaults, a partial's
        arguments), which a trace must find unchanged."""
        closed = self.__dict__.get("_closed")
        return closed is not None and bool(closed.labels)

    @property
    def __wrapped__(self) -> Callable[..., Any]:
        """The function transformed (``functools.update_wrapper``'s attribute, read through ``_fn``: a shared core
        holds it weakly)."""
        return self._fn

    @__wrapped__.setter
    def __wrapped__(self, fn: Callable[..., Any]) -> None:
        pass  # update_wrapper's: the function is this object's ``_keep``

    def _handle(self, fn: Callable[..., Any]) -> Self:
        """What ``js.jit(f)`` returns for this shared transform: the live object holding ``fn`` (``js.jit(f) is
        js.jit(f)``), else a new one sharing this one's ``__dict__`` (options, names), core, class and hit in C, and
        holding ``fn`` strongly: this one, kept in ``fn``'s ``__dict__``, does not."""
        core = self._core
        for ref in core._handles:
            alive = ref()
            if alive is not None and alive._keep is fn:
                return alive  # type: ignore[no-any-return]
        cls = type(self)
        handle: Self = cls.__new__(cls)
        handle.__dict__ = self.__dict__
        handle._keep, handle._core = fn, core
        core._handles = (*[ref for ref in core._handles if ref() is not None], weakref.ref(handle))
        if "_specialized" in cls.__dict__:  # its hit in C (a new object has none)
            _c_hits.attach(handle, cls.__dict__["__call__"])
        return handle

    def _release(self) -> None:
        """The function this transform was kept in is gone: its programs go now (``Core._release``)."""
        self._core._release()

    def _label(self, fn: Callable[..., Any]) -> str:
        """``jit(grad(loss))``: this transform around the one it wraps, as ``trace_report()`` names it."""
        inner = inner_transform(fn)
        return f"{self._transform_name}({inner._core._stats.label if inner is not None else self._name})"

    # -- its parameters: which are static, which donated ------------------------------------------------------

    def _signature(self) -> inspect.Signature:
        if self._known_signature is None:
            try:
                self._known_signature = call_signature(self._fn)
            except (ValueError, TypeError):  # dict, some builtins: called as (*args, **kwargs), as jax.jit calls them
                self._known_signature = _options.ANY_CALL
        return self._known_signature

    def _params(self) -> _options.ParamOptions:
        """The parameter options (static and donated names), checked against the signature once: derived from the
        record and the signature, so kept beside the record. A transform whose options depend on which parameters
        are static replaces them when the layout is read (``_resolve``: ``js.jit`` joins the ``Donate[...]`` marks
        to ``donate_argnums``), so read them after ``_layout()`` where that matters."""
        if self._known_params is None:
            signature = self._signature()
            self._known_params = _options.resolve_param_options(
                self._opts, None if signature is _options.ANY_CALL else signature)
        return self._known_params

    def _layout(self) -> Layout:
        """Which parameters are static and where each value of a call comes from (``_plan``), read once; the
        options that depend on it resolved then (``_resolve``)."""
        layout = self._known_layout
        if layout is None:
            params, inner = self._params(), inner_transform(self._fn)
            extras, keywords = params.static_extras, params.static_keywords
            if inner is not None:  # *args extras and **kwargs entries an inner transform makes static, as names
                extras, keywords = extras | set(inner._layout().static_extras), keywords | inner._layout().static_keywords
            variants = self._keyword_variants or (inner is not None and inner._layout().keyword_variants)
            layout = Layout.of(self._fn, self._name, self._signature(),
                               params.static | self._inner_static(), f"jaxstatic.{self._transform_name}",
                               extras=extras, keywords=keywords,
                               keyword_variants=variants)
            self._resolve(layout)
            self._known_layout = layout
        return layout

    def _inner_static(self) -> frozenset[str]:
        """Parameters a wrapped jaxstatic transform makes static by its options (``static_argnames``,
        ``nondiff_argnums``, ...): static here too, as an annotation is, since its program needs them static."""
        inner = inner_transform(self._fn)
        if inner is None:
            return frozenset()
        return inner._layout().static & self._signature().parameters.keys()

    def _unspecialized(self) -> type:
        """This transform's class, before its core gave it a ``__call__`` of its own (``Core._specialize``)."""
        cls = type(self)
        return cls.__base__ if cls.__dict__.get("_specialized") else cls  # type: ignore[return-value]

    # -- what a transform supplies ---------------------------------------------------------------------------

    def _checks_at_decoration(self) -> bool:
        """Whether this transform was given options to check against the signature when it is applied."""
        return False

    def _resolve(self, layout: Layout) -> None:
        """Check and resolve the options that depend on which parameters are static, once, when ``_layout`` reads
        the layout; a transform may replace its parameter options here (``_known_params``, as ``js.jit`` does to
        join the ``Donate[...]`` marks)."""

    def _takes_lane(self) -> bool:
        """Whether this transform has an exact-key lane (``_lane``) and its options allow it."""
        return False

    def _lane_program(self, body: Callable[..., Any], argnums: tuple[int, ...], argnames: tuple[str, ...]) -> Any:
        """The exact-key lane's program: ``body`` compiled with these static arguments, keyed by JAX."""
        raise NotImplementedError

    def _build(self, plan: Plan, body: Callable[..., Any], state: KeyState) -> Callable[..., Any]:
        """The JAX program of one static key: ``body`` takes the dynamic values of ``plan``'s call shape, in the
        order of ``plan.dynamics`` (named ones positionally, then ``*args`` extras, then ``**kwargs`` extras by
        keyword). ``statics(plan, state)`` gives the static values, for transforms with rules of their own."""
        raise NotImplementedError

    # -- the public surface ----------------------------------------------------------------------------------

    def __call__(self, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            # Core._call, written out: a frame fewer on every call that is no hit in C
            core = self._core
            dispatch = core._by_keywords.get(tuple(kwargs)) if kwargs else core._by_nargs.get(len(args))
            if dispatch is not None:
                return dispatch(args, kwargs)  # type: ignore[no-any-return]
            # A new call shape: its first call runs here as a ``Miss`` (the dispatcher's lines,
            # ``_codegen._miss_lines``), made by the shape's generated ``key_then_begin`` (``Core._first_call``)
            miss = core._first_call(args, kwargs)
            try:
                result = miss.program(*miss.pos, **miss.kw)
            except BaseException as err:
                raised = miss.fail(err)
                if raised is err:
                    raise
                raise raised from None
            return miss.done(result)  # type: ignore[no-any-return]
        except BaseException as err:
            _traceback.hide(err)  # the frame a user calls drops jaxstatic's own from the traceback
            raise

    # Bound as a function is, under every checker: on an instance, the parameters after ``self``; on the class,
    # itself, except under ``@classmethod`` (first parameter ``type[C]``: the checkers bind ``cls`` through this
    # ``__get__``); an object whose type is not the first parameter's gets the function itself, as
    # ``@staticmethod`` (``obj.f``) and a property returning the function (mypy binds it too) give it at run time.
    # ``self`` is matched as a Callable: mypy checks a callable's first parameter, but not a ParamSpec prefix of a
    # generic class's (it would bind ``cls`` of every method).
    @overload
    def __get__(  # type: ignore[misc]  # mypy: the erased self type is a callable, a supertype of the class
        self: Callable[Concatenate[type[_T], _P2], _R2], instance: None, owner: type[_T]
    ) -> BoundMethod[_P2, _R2]: ...
    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Self: ...
    @overload
    def __get__(
        self: Callable[Concatenate[_T, _P2], _R2], instance: _T, owner: type | None = None
    ) -> BoundMethod[_P2, _R2]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> Self: ...
    def __get__(self, instance: object, owner: type | None = None) -> Any:
        """A method: bound like a function, so ``obj.apply(x)`` passes ``obj`` as the first argument: a
        ``_method_type`` (a ``JitMethod`` for ``js.jit``, whose ``lower``, ``trace`` and ``eval_shape`` bind it too)."""
        return self if instance is None else self._method_type(self, instance)

    @property
    def trace_count(self) -> int:
        """How many times the Python body has been traced."""
        return self._core._stats.traces

    @property
    def retraces(self) -> tuple[_stats.Retrace, ...]:
        """Each retrace (the latest 1024), with the reason; ``str(record)`` explains it per parameter."""
        stats = self._core._stats
        with stats.lock:
            return tuple(stats.retraces)

    def cache_info(self) -> _stats.CacheInfo:
        """Hits, misses (traces), the bound (``cache_size``), programs held now, and evictions."""
        return self._core._stats.cache_info()

    def _cache_size(self) -> int:
        """The entries of JAX's dispatch caches held for this function, as ``jax.jit`` objects' ``_cache_size()``
        counts its own (``Core._cache_size``)."""
        return self._core._cache_size()

    def clear_cache(self) -> None:
        """Drop every compiled program and every static value held for them, by this transform and by the
        jaxstatic transforms it wraps (``js.jit(js.vmap(f))`` clears the vmap's too)."""
        self._core._clear_cache()
        inner = inner_transform(self._fn)
        if inner is not None:
            inner.clear_cache()

    @property
    def __signature__(self) -> inspect.Signature:
        return self._signature()

    def __repr__(self) -> str:
        return f"<jaxstatic.{self._transform_name} of {self._name}>"

    def __reduce__(self) -> str | tuple[Any, ...]:
        """Pickled as ``jax.jit`` functions are: by reference where its module and name lead back to it (a
        module-level function round-trips as itself, its programs kept); otherwise (a local function, or one in
        ``__main__``, which another process's ``__main__`` does not hold) by value, as the transform of its function
        with the same options, which a pickler that pickles functions by value (cloudpickle) can ship to another
        process."""
        name = str(getattr(self, "__qualname__", self._name))
        module = getattr(self, "__module__", None)
        if module != "__main__" and _pickling.importable(self, module, name):
            return name
        args, kwargs = self._made
        fn = self._fn
        return _pickling.rebuild, (self._unspecialized(), fn, args, kwargs, _pickling.annotation_globals(fn)), \
            self._pickled_state()

    def _pickled_state(self) -> Any:
        """What pickling by value adds to the transform's arguments (``__setstate__`` restores it)."""
        return None

    def __setstate__(self, state: Any) -> None:
        pass

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        """Like a function, a transformed function is copied as itself (as ``jax.jit`` objects are)."""
        return self


class BoundMethod(functools.partial[Any], Generic[_P, _R_co]):
    """``obj.method`` for a transformed method: a C-level ``functools.partial`` for calls; other attributes
    (``trace_count``, ...) are the function's. Typed as the method without ``self``:
    ``BoundMethod[[jax.Array, int], jax.Array]`` (a jitted one is a ``JitMethod``)."""

    if TYPE_CHECKING:  # the call stays functools.partial's own, in C
        def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R_co: ...

        @property
        def trace_count(self) -> int: ...
        @property
        def retraces(self) -> tuple[_stats.Retrace, ...]: ...
        def cache_info(self) -> _stats.CacheInfo: ...
        def clear_cache(self) -> None: ...
    else:  # typed above, so that a misspelt attribute is reported
        def __getattr__(self, name: str) -> Any:
            return getattr(self.func, name)


StaticFunction._method_type = BoundMethod


def _wrap(self: StaticFunction[Any, Any], fn: Callable[..., Any]) -> None:
    """``functools.update_wrapper``, whose attributes of ``fn`` never replace this transform's own: its options,
    set before this call (``js.grad(js.grad(f, argnums=0), argnums=1)`` differentiated by argnums=0 twice when an
    inner transform's options replaced the outer one's), and its methods and properties (``eqx.filter_jit``'s
    ``_signature`` attribute hid the method of that name: the first call raised ``'Signature' object is not
    callable``). Other wrappers' private attributes are theirs alone, so none is copied. A ``functools.partial``
    without a name of its own lends its function's (``_naming.wrapper_names``). On Python 3.14,
    ``update_wrapper`` copies ``__annotate__`` and not ``__annotations__``, which an instance would then read from
    its class: they are read here (``_lazy``: a name not defined yet stays a ``ForwardRef``)."""
    functools.update_wrapper(self, fn, updated=())
    own = self.__dict__
    for name, value in _naming.wrapper_names(fn).items():  # a partial: named after its function, as by jax.jit
        own.setdefault(name, value)
    if _lazy.LAZY and callable(getattr(fn, "__annotate__", None)):
        own["__annotations__"] = _lazy.annotations_of(fn)
    for name, value in getattr(fn, "__dict__", {}).items():
        if name not in own and not (name.startswith("_") and not name.startswith("__")) and not hasattr(
                type(self), name):
            own[name] = value


def _none() -> None:
    return None


def _transforms(transform: StaticFunction[..., Any], fn: Callable[..., Any]) -> tuple[str, ...]:
    """``("jit", "vmap")`` for ``js.jit(js.vmap(f))``: the jaxstatic transforms applied, outermost first."""
    names = [transform._transform_name]
    while isinstance(fn, StaticFunction):
        names.append(fn._transform_name)
        fn = fn._fn
    return tuple(names)


def inner_transform(fn: Callable[..., Any]) -> StaticFunction[..., Any] | None:
    """The jaxstatic transform that ``fn`` is, or that it wraps (through ``functools.wraps`` decorators)."""
    for _ in range(64):  # a __wrapped__ cycle cannot hang clear_cache()
        if isinstance(fn, StaticFunction):
            return fn
        fn = getattr(fn, "__wrapped__", None)  # type: ignore[assignment]
        if fn is None:
            return None
    return None


__all__ = ["BoundMethod", "StaticFunction"]
