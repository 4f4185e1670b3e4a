"""A function transformed by jaxstatic: ``StaticFunction``, the base every transform shares, and its public surface.

A transform (``jit``, ``vmap``, ``grad``, ...) is a ``StaticFunction`` subclass that says only what differs: how to
turn a body whose static values are fixed into a JAX program (``_build``), and which options it checks once the
static parameters are known (``_resolve``). ``StaticFunction`` is made of parts, one module each, over the state they
share (``_state``):

- its call shapes (``_shapes``): the split of a call into static and dynamic values per shape, and the generated
  code (and hit in C) that builds the flat static key and dispatches;
- its programs (``_programs``): one per static key, in a cache bounded by ``cache_size``; misses and failed calls;
- the body JAX traces (``_body``), which hands the user's function its static values and counts the trace.

What is here: making one (``__init__``), the handles ``js.jit(f)`` returns over a core shared across rebuilds
(``_shared``), and what a user calls and reads (``__call__``, ``__get__``, ``trace_count``, ``cache_info``,
``clear_cache``, pickling).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import inspect
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Concatenate, Generic, TypeVar, cast, overload

from typing_extensions import ParamSpec, Self

from . import (
    _compiled,
    _extension,
    _lane,
    _lazy,
    _naming,
    _options,
    _pickling,
    _shared,
    _stats,
    _traceback,
)
from ._annotations import deferring
from ._body import TracedBody
from ._errors import AnnotationError
from ._memo import IdentityMemo
from ._plan import Layout, Plan
from ._programs import EVICTED_MEMORY, Programs, let_go
from ._shapes import CallShapes
from ._state import Dispatch, Slot, inner_transform

# Contravariant, as a callable's parameters are: a function of named parameters is also one of positional-only ones
# (the variance pyrefly and ty need to bind `self` in __get__; mypy and pyright infer it already)
_P = ParamSpec("_P", contravariant=True)  # type: ignore[misc]
_P2 = ParamSpec("_P2")
_R = TypeVar("_R")
_R_co = TypeVar("_R_co", covariant=True)
_R2 = TypeVar("_R2")
_T = TypeVar("_T")

_PARAM_OPTIONS = frozenset({"static_argnums", "static_argnames", "donate_argnums", "donate_argnames"})


class StaticFunction(CallShapes, Programs, TracedBody, _extension.Base, Generic[_P, _R],
                     metaclass=_shared.Transform):
    """A function transformed by jaxstatic. Call it like the function it wraps.

    Made again from the same function with equal options, it is the one made before (``_shared``)."""

    _transform: ClassVar[str] = "transform"
    _jaxstatic_transform_: ClassVar[bool] = True  # how _hidden tells a transform, importing nothing of this module
    _counts_traces: ClassVar[bool] = True  # jit and pmap count traces; vmap and grad leave that to a jit above them
    _eager_without_jit: ClassVar[bool] = False  # jit alone becomes the plain function under jax.disable_jit()
    _shares: ClassVar[bool] = True  # made again from the same function and options, the one made before
    _method_type: ClassVar[type[BoundMethod[Any, Any]]]  # what ``__get__`` binds to an instance: set below
    # jaxstatic's own options (``_options.Own``), given among the options and taken out before JAX sees them
    _own_options: ClassVar[tuple[_options.Own, ...]] = (_options.MAX_TRACES, _options.CACHE_SIZE)
    _made: tuple[tuple[Any, ...], dict[str, Any]]  # set by _shared: the options it was made with
    # Kept apart from the shared ``__dict__``: the function this object holds strongly (None: a shared core, kept in
    # the function's own ``__dict__``, which holds it weakly, so that no reference cycle keeps the function alive)
    __slots__ = ("__dict__", "__weakref__", "_keep")

    def __init__(self, fn: Callable[_P, _R], options: dict[str, Any]) -> None:
        fn = _options.check_callable(fn, f"jaxstatic.{self._transform}")
        self._keep: Callable[..., Any] | None = fn
        # the object whose closures the programs hold: itself, or for a handle its core (``_shared``)
        self._core: Self = cast("Self", self)
        self._fn_ref: Callable[[], Any] = _none
        self._handles: tuple[weakref.ref[Self], ...] = ()  # replaced whole, never changed: read by any thread
        _wrap(self, fn)
        self._name = _naming.display_name(fn)
        self._options = dict(options)  # JAX's options: jaxstatic's own (``_own_options``) are taken out
        self._own_values = _options.take_own(self._own_options, self._name, self._options)
        self._signature_: inspect.Signature | None = None
        self._params_: _options.ParamOptions | None = None
        self._start_programs(fn)
        self._start_shapes()
        if self._options.keys() & _PARAM_OPTIONS or self._checks_at_decoration():
            # Options that name parameters are checked now, like jax.jit's; those that depend on which parameters
            # are Static too when the annotations resolve (forward references to later classes resolve by the
            # first call). Without such options nothing is read now: decoration stays as cheap as jax.jit's.
            self._params()
            with contextlib.suppress(AnnotationError), deferring():
                self._layout()

    def _start_programs(self, fn: Callable[..., Any]) -> None:
        """The program cache (empty), its statistics, and what a miss and a hit share with it."""
        self._stats = _stats.TraceStats(self._name, self._own_values["max_traces"],
                                        self._own_values["cache_size"], self._label(fn))
        self._cache: collections.OrderedDict[Any, Any] = collections.OrderedDict()
        self._stats.currsize = self._cache.__len__
        self._stats.transforms = _transforms(self)
        self._stats.site = _stats.site_of(fn)
        self._slots: dict[Any, Slot] = {}
        self._inflight: dict[Any, Any] = {}
        self._evicted: collections.deque[int] = collections.deque(maxlen=EVICTED_MEMORY)
        # Bookkeeping only: never held while tracing or compiling. Reentrant, because a key's own __hash__/__eq__
        # (or a finalizer) runs under it when the cache is looked up, and may call this very function.
        self._lock = threading.RLock()
        self._memo = IdentityMemo()

    def _start_shapes(self) -> None:
        """The call shapes (none seen yet), the layout read at the first call, and the exact-key lane."""
        self._plans: dict[int, Dispatch] = {}  # positional calls, by len(args)
        self._kw_plans: dict[tuple[str, ...], Dispatch] = {}  # keyword calls, by names: the latest nargs seen
        self._shapes: dict[Any, tuple[Plan, dict[str, Callable[..., Any]]]] = {}  # every call shape seen
        self._variants: dict[tuple[str, ...], int] = {}
        self._layout_: Layout | None = None
        self._lane: _lane.Lane | None = None  # the exact-key lane, once the first call shows it can be taken
        self._lane_checked = False

    @property
    def _fn(self) -> Callable[..., Any]:
        """The function transformed: a handle's own; a shared core's, that of a handle alive (a call or a trace runs
        through one), else the one it was made from while that lives."""
        keep = self._keep
        if keep is None:
            for handle in self._alive():
                return handle._keep  # type: ignore[return-value]
            keep = self._fn_ref()
        return keep

    @property
    def __wrapped__(self) -> Callable[..., Any]:
        """The function transformed (``functools.update_wrapper``'s attribute, read through ``_fn``: a shared core
        holds it weakly)."""
        return self._fn

    @__wrapped__.setter
    def __wrapped__(self, fn: Callable[..., Any]) -> None:
        pass  # update_wrapper's: the function is this object's ``_keep``

    def _handle(self, fn: Callable[..., Any]) -> Self:
        """What ``js.jit(f)`` returns for this shared core: the live object holding ``fn`` (``js.jit(f) is
        js.jit(f)``), else a new one sharing this core's ``__dict__`` (programs, statistics, call shapes), its class
        and its hit in C, and holding ``fn`` strongly: the core, kept in ``fn``'s ``__dict__``, does not."""
        for ref in self._handles:
            alive = ref()
            if alive is not None and alive._keep is fn:
                return alive
        cls = type(self)
        handle: Self = cls.__new__(cls)
        handle.__dict__ = self.__dict__
        handle._keep = fn
        self._handles = (*[ref for ref in self._handles if ref() is not None], weakref.ref(handle))
        if "_specialized" in cls.__dict__:  # its hit in C (a new object has none)
            _compiled.attach(handle, cls.__dict__["__call__"])
        return handle

    def _release(self) -> None:
        """The function this core was kept in is gone: its programs go now (JAX's hold the arrays the function
        captured), not when the garbage collector finds the core."""
        with self._lock:
            cleared = [(None, program, None) for program in dict.values(self._cache)]
            self._cache.clear()
            self._slots.clear()
            held = self._memo.clear()
        let_go(cleared)
        del held
        if self._lane is not None:
            getattr(self._lane.program, "clear_cache", lambda: None)()

    def _label(self, fn: Callable[..., Any]) -> str:
        """``jit(grad(loss))``: this transform around the one it wraps, as ``trace_report()`` names it."""
        inner = inner_transform(fn)
        return f"{self._transform}({inner._stats.label if inner is not None else self._name})"

    # -- what a transform supplies ---------------------------------------------------------------------------

    def _checks_at_decoration(self) -> bool:
        """Whether this transform was given options to check against the signature when it is applied."""
        return False

    def _resolve(self, layout: Layout) -> None:
        """Check and resolve the options that depend on which parameters are static (once)."""

    def _takes_lane(self) -> bool:
        """Whether this transform has an exact-key lane (``_lane``) and its options allow it."""
        return False

    def _lane_program(self, body: Callable[..., Any], argnums: tuple[int, ...], argnames: tuple[str, ...]) -> Any:
        """The exact-key lane's program: ``body`` compiled with these static arguments, keyed by JAX."""
        raise NotImplementedError

    def _build(self, plan: Plan, body: Callable[..., Any], slot: Slot) -> Callable[..., Any]:
        """The JAX program of one static key: ``body`` takes the dynamic values of ``plan``'s call shape, in the
        order of ``plan.dynamics`` (named ones positionally, then ``*args`` extras, then ``**kwargs`` extras by
        keyword). ``statics(plan, slot)`` gives the static values, for transforms with rules of their own."""
        raise NotImplementedError

    def _with_program(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Plan, Any, Any]:
        """``program.<method>(dynamic values)`` for the program of this call's static key (made and kept if need
        be), with the caller's own static values handed to the body while JAX traces it."""
        self = self._core  # what the program holds is the core, never a handle
        plan, code = self._shape(args, kwargs)
        key = code["key"](args, kwargs)
        # Counted as a call, as its trace (if it traces) is counted as a miss: hits are calls less misses, so an
        # uncounted lower() hid the next hit.
        next(self._stats.calls)
        if self._lane is not None and self._lane.serves_aot(plan, key):  # the lane's key: its program, traced once
            return plan, key, self._lane.aot(method, plan, args, kwargs)
        with self._lock:
            program, slot = self._cache.get(key), self._slots.get(key)
        made = program is None or slot is None
        if made:
            slot = Slot(key)
            program = self._build(plan, self._body(plan, slot), slot)
        assert slot is not None
        pos, kw = plan.dynamic_values(args, kwargs)
        local = slot.local
        outer, local.statics = getattr(local, "statics", None), plan.static_values(args, kwargs)
        try:
            result = getattr(program, method)(*pos, **kw)
        except BaseException:
            next(self._stats.failures)
            raise
        finally:
            local.statics = outer
        if made:
            self._add(key, program, slot)
        return plan, key, result

    # -- the public surface ----------------------------------------------------------------------------------

    def __call__(self, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            # general_call, written out: a frame fewer on every call that is no hit in C
            dispatch = self._kw_plans.get(tuple(kwargs)) if kwargs else self._plans.get(len(args))
            if dispatch is not None:
                return dispatch(args, kwargs)  # type: ignore[no-any-return]
            # A new call shape, the first call among them: run here, as the dispatcher runs a miss (the same lines
            # as ``_codegen._run_lines``), so that the trace runs one frame of jaxstatic's below the call (nested
            # jitted functions recurse as deep as Python's frames allow)
            run = self._run(args, kwargs)
            try:
                result = run.program(*run.pos, **run.kw)
            except BaseException as err:
                raised = run.fail(err)
                if raised is err:
                    raise
                raise raised from None
            return run.done(result)  # type: ignore[no-any-return]
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
        return self._stats.traces

    @property
    def retraces(self) -> tuple[_stats.Retrace, ...]:
        """Each retrace (the latest 1024), with the reason; ``str(record)`` explains it per parameter."""
        with self._stats.lock:
            return tuple(self._stats.retraces)

    def cache_info(self) -> _stats.CacheInfo:
        """Hits, misses (traces), the bound (``cache_size``), programs held now, and evictions."""
        return self._stats.cache_info()

    def _cache_size(self) -> int:
        """The entries of JAX's dispatch caches held for this function, as ``jax.jit`` objects' ``_cache_size()``
        counts its own: one per static key and shapes of the dynamic values (``cache_info().currsize`` counts
        programs, one per static key)."""
        own = [p for p in list(dict.values(self._cache)) if not getattr(p, "lane", False)]  # no key hashed
        lane = [] if self._lane is None else [self._lane.program]
        return sum(int(getattr(p, "_cache_size", lambda: 1)()) for p in own + lane)

    def clear_cache(self) -> None:
        """Drop every compiled program and every static value held for them, by this transform and by the
        jaxstatic transforms it wraps (``js.jit(js.vmap(f))`` clears the vmap's too)."""
        self = self._core
        with self._lock:
            # The cache's entries read as the plain dict's, which hashes no key: no Python code runs, so no hit's
            # move_to_end in another thread comes in between. What was held is let go of after the lock.
            cleared = [(None, program, None) for program in dict.values(self._cache)]
            self._cache.clear()
            self._slots.clear()
            held = self._memo.clear(), self._stats.cleared()
        let_go(cleared)
        del held
        if self._lane is not None:  # a new lane program: JAX's caches keyed by the old one release its values
            self._lane.program.clear_cache()
            self._lane_checked = False
            self._install_lane()
        inner = inner_transform(self._fn)
        if inner is not None:
            inner.clear_cache()

    @property
    def __signature__(self) -> inspect.Signature:
        return self._signature()

    def __repr__(self) -> str:
        return f"<jaxstatic.{self._transform} of {self._name}>"

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


def _transforms(fn: StaticFunction[..., Any]) -> tuple[str, ...]:
    """``("jit", "vmap")`` for ``js.jit(js.vmap(f))``: the jaxstatic transforms applied, outermost first."""
    names = [fn._transform]
    while isinstance(fn._fn, StaticFunction):
        fn = fn._fn
        names.append(fn._transform)
    return tuple(names)


__all__ = ["BoundMethod", "StaticFunction"]
