"""The machinery every jaxstatic transform shares: call shapes, static keys, the program cache and the traced body.

A transform (``jit``, ``vmap``, ``grad``, ...) is a ``StaticFunction`` subclass that says only what differs: how to
turn a body whose static values are fixed into a JAX program (``_build``), and which options it checks once the
static parameters are known (``_resolve``). Everything else is here:

- the split of a call into static and dynamic values, per call shape (``_plan``), and generated code that builds
  the flat static key and dispatches (``_codegen``);
- one program per static key, in a cache bounded by ``cache_size`` (least recently used evicted). A miss traces
  without any function-wide lock: an in-flight entry per key makes equal keys trace once while other keys trace in
  parallel, and a recursive call with the same key inside its own trace reuses the program being traced;
- the body handed to JAX, which reads the caller's own static values on the first trace and equal values rebuilt
  from the key (``_freeze.thaw``) on retraces for new shapes, counts the trace, and passes JAX the user's function
  name, source line and parameter names (JAX reads them from ``__wrapped__`` and ``__signature__``);
- faults leave nothing behind: a call that raises is not cached, not counted as a trace or a hit, and forgets its
  static values.
"""

from __future__ import annotations

import ast
import collections
import contextlib
import functools
import inspect
import sys
import threading
import types
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Concatenate, Generic, TypeVar, cast, overload

import jax
from typing_extensions import ParamSpec, Self

from . import (
    _codegen,
    _compiled,
    _donate_errors,
    _explain,
    _freeze,
    _lane,
    _options,
    _shared,
    _stats,
    _traceback,
    _typecheck,
)
from ._annotations import call_signature, deferring
from ._errors import AnnotationError, non_array_error, non_static_error, uncomparable_error
from ._lane import jit_disabled
from ._memo import IdentityMemo
from ._plan import Layout, Plan

# Contravariant, as a callable's parameters are: a function of named parameters is also one of positional-only ones
# (the variance pyrefly and ty need to bind `self` in __get__; mypy and pyright infer it already)
_P = ParamSpec("_P", contravariant=True)  # type: ignore[misc]
_P2 = ParamSpec("_P2")
_R = TypeVar("_R")
_R_co = TypeVar("_R_co", covariant=True)
_R2 = TypeVar("_R2")
_T = TypeVar("_T")

Dispatch = Callable[[tuple[Any, ...], dict[str, Any]], Any]

_PARAM_OPTIONS = frozenset({"static_argnums", "static_argnames", "donate_argnums", "donate_argnames"})

EVICTED = "its compiled program had been evicted to keep at most cache_size={} programs"
_EVICTED_MEMORY = 1024  # hashes of evicted keys kept, to explain retraces they cause (hashes keep no value alive)


class Slot:
    """What one program's body needs: its key, and the caller's own static values while the caller traces it."""

    __slots__ = ("key", "local")

    def __init__(self, key: Any) -> None:
        self.key = key
        self.local = threading.local()


class _InFlight:
    """A program being traced for the first time, by ``owner`` (a thread id)."""

    __slots__ = ("done", "owner", "program", "slot")

    def __init__(self, owner: int, program: Any, slot: Slot) -> None:
        self.owner, self.program, self.slot = owner, program, slot
        self.done = threading.Event()


class StaticFunction(_compiled.Base, Generic[_P, _R], metaclass=_shared.Transform):
    """A function transformed by jaxstatic. Call it like the function it wraps.

    Made again from the same function with equal options, it is the one made before (``_shared``)."""

    _transform: ClassVar[str] = "transform"
    _jaxstatic_transform_: ClassVar[bool] = True  # how _hidden tells a transform, importing nothing of this module
    _counts_traces: ClassVar[bool] = True  # jit and pmap count traces; vmap and grad leave that to a jit above them
    _eager_without_jit: ClassVar[bool] = False  # jit alone becomes the plain function under jax.disable_jit()
    _shares: ClassVar[bool] = True  # made again from the same function and options, the one made before
    _made: tuple[tuple[Any, ...], dict[str, Any]]  # set by _shared: the options it was made with
    # Kept apart from the shared ``__dict__``: the function this object holds strongly (None: a shared core, kept in
    # the function's own ``__dict__``, which holds it weakly, so that no reference cycle keeps the function alive)
    __slots__ = ("__dict__", "__weakref__", "_keep")

    def __init__(self, fn: Callable[_P, _R], options: dict[str, Any], *, max_traces: int | None = None,
                 cache_size: int = _options.JAX_JIT_CACHE_SIZE) -> None:
        fn = _options.check_callable(fn, f"jaxstatic.{self._transform}")
        self._keep: Callable[..., Any] | None = fn
        # the object whose closures the programs hold: itself, or for a handle its core (``_shared``)
        self._core: Self = cast("Self", self)
        self._fn_ref: Callable[[], Any] = _none
        self._handles: tuple[weakref.ref[Self], ...] = ()  # replaced whole, never changed: read by any thread
        _wrap(self, fn)
        self._function = _options.display_name(fn)
        self._options = dict(options)
        self._signature_: inspect.Signature | None = None
        self._params_: _options.ParamOptions | None = None
        self._stats = _stats.TraceStats(self._function, _options.check_max_traces(self._function, max_traces),
                                        _options.check_cache_size(self._function, cache_size), self._label(fn))
        self._cache: collections.OrderedDict[Any, Any] = collections.OrderedDict()
        self._stats.currsize = self._cache.__len__
        self._stats.transforms = _transforms(self)
        self._stats.site = _stats.site_of(fn)
        self._slots: dict[Any, Slot] = {}
        self._inflight: dict[Any, _InFlight] = {}
        self._evicted: collections.deque[int] = collections.deque(maxlen=_EVICTED_MEMORY)
        # Bookkeeping only: never held while tracing or compiling. Reentrant, because a key's own __hash__/__eq__
        # (or a finalizer) runs under it when the cache is looked up, and may call this very function.
        self._lock = threading.RLock()
        self._memo = IdentityMemo()
        self._plans: dict[int, Dispatch] = {}  # positional calls, by len(args)
        self._kw_plans: dict[tuple[str, ...], Dispatch] = {}  # keyword calls, by names: the latest nargs seen
        self._shapes: dict[Any, tuple[Plan, dict[str, Callable[..., Any]]]] = {}  # every call shape seen
        self._variants: dict[tuple[str, ...], int] = {}
        self._layout_: Layout | None = None
        self._lane: _lane.Lane | None = None  # the exact-key lane, once the first call shows it can be taken
        self._lane_checked = False
        if self._options.keys() & _PARAM_OPTIONS or self._checks_at_decoration():
            # Options that name parameters are checked now, like jax.jit's; those that depend on which parameters
            # are Static too when the annotations resolve (forward references to later classes resolve by the
            # first call). Without such options nothing is read now: decoration stays as cheap as jax.jit's.
            self._params()
            with contextlib.suppress(AnnotationError), deferring():
                self._layout()

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
        _let_go(cleared)
        del held
        if self._lane is not None:
            getattr(self._lane.program, "clear_cache", lambda: None)()

    def _label(self, fn: Callable[..., Any]) -> str:
        """``jit(grad(loss))``: this transform around the one it wraps, as ``trace_report()`` names it."""
        inner = _inner_transform(fn)
        return f"{self._transform}({inner._stats.label if inner is not None else self._function})"

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

    # -- call shapes -----------------------------------------------------------------------------------------

    def _signature(self) -> inspect.Signature:
        if self._signature_ is None:
            try:
                self._signature_ = call_signature(self._fn)
            except (ValueError, TypeError):  # dict, some builtins: called as (*args, **kwargs), as jax.jit calls them
                self._signature_ = _options.ANY_CALL
        return self._signature_

    def _params(self) -> _options.ParamOptions:
        """The parameter options (static and donated names), checked against the signature once."""
        if self._params_ is None:
            signature = self._signature()
            self._params_ = _options.resolve_param_options(
                self._function, None if signature is _options.ANY_CALL else signature, self._options)
        return self._params_

    def _layout(self) -> Layout:
        layout = self._layout_
        if layout is None:
            params, inner = self._params(), _inner_transform(self._fn)
            extras, keywords = params.static_extras, params.static_keywords
            if inner is not None:  # *args extras and **kwargs entries an inner transform makes static, as names
                extras, keywords = extras | set(inner._layout().static_extras), keywords | inner._layout().static_keywords
            layout = Layout.of(self._fn, self._function, self._signature(),
                               params.static | self._inner_static(), f"jaxstatic.{self._transform}",
                               extras=extras, keywords=keywords)
            self._resolve(layout)
            self._layout_ = layout
        return layout

    def _inner_static(self) -> frozenset[str]:
        """Parameters a wrapped jaxstatic transform makes static by its options (``static_argnames``,
        ``nondiff_argnums``, ...): static here too, as an annotation is, since its program needs them static."""
        inner = _inner_transform(self._fn)
        if inner is None:
            return frozenset()
        return inner._layout().static & self._signature().parameters.keys()

    def _shape(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Plan, dict[str, Callable[..., Any]]]:
        """The plan and generated functions of this call's shape, made when the shape is first seen."""
        shape = (len(args), *kwargs) if kwargs else len(args)
        found = self._shapes.get(shape)
        if found is None:
            self = self._core  # the closures made here hold the core, never a handle
            plan = Plan.bind(self._layout(), len(args), tuple(kwargs), self._variants)
            if not self._lane_checked:
                self._install_lane()
            entry = self._lane is None and not kwargs and not any(isinstance(k, int) for k in self._shapes) and self._specializes()
            namespace = self._namespace(plan)
            code = _codegen.generate(plan, namespace, self._function, entry=entry)
            found = self._shapes[shape] = (plan, code)
            if "entry" in code:
                self._specialize(_compiled.key_call(self, plan, code["entry"], namespace))
        return found

    def _install_lane(self) -> None:
        """Take the exact-key lane (``_lane``) if this function can: its ``__call__`` becomes the lane's."""
        self = self._core
        with self._lock:
            if self._lane_checked:
                return
            self._lane_checked = True
            if self._takes_lane() and self._stats.maxsize == _options.JAX_JIT_CACHE_SIZE and _lane.eligible(
                    self._layout()):
                self._lane = _lane.Lane(self, self._lane_program, _general_call)
                self._specialize(self._lane.call)
                self._stats.currsize = self._lane.currsize

    def _new_dispatch(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Dispatch:
        self = self._core
        dispatch = self._shape(args, kwargs)[1]["dispatch"]
        if kwargs:
            self._kw_plans[tuple(kwargs)] = dispatch
        else:
            self._plans[len(args)] = dispatch
        _compiled.keyword_calls(self)  # a shape met: a hit in C of its own
        return dispatch

    def _specializes(self) -> bool:
        return True

    def _specialize(self, entry: Callable[..., Any]) -> None:
        """Give this object a class of its own whose ``__call__`` is the first positional shape's dispatcher.

        Python looks ``__call__`` up on the type, so this is the one way to make the commonest call a single
        Python frame (measured: ~150 ns of the ~400 ns jaxstatic adds to a call); other shapes go through
        ``_general_call``.
        """
        cls = self._unspecialized()
        if isinstance(entry, types.FunctionType):  # not a hit in C (_hits), which has a doc of its own
            entry.__doc__ = StaticFunction.__call__.__doc__
        new = type(cls.__name__, (cls,), {"__call__": entry, "__module__": cls.__module__,
                                          "__qualname__": cls.__qualname__, "_specialized": True})
        for one in self._instances():
            one.__class__ = new
            _compiled.attach(one, entry)

    def _instances(self) -> list[StaticFunction[Any, Any]]:
        """This function's objects: its core and the handles alive, one class and one hit in C between them."""
        core = self._core
        return [core, *(handle for handle in core._alive() if handle is not core)]

    def _alive(self) -> list[Self]:
        """The handles alive."""
        return [handle for ref in self._handles if (handle := ref()) is not None]

    def _unspecialized(self) -> type:
        cls = type(self)
        return cls.__base__ if cls.__dict__.get("_specialized") else cls  # type: ignore[return-value]

    def _unspecialize(self) -> None:
        cls = self._unspecialized()
        for one in self._instances():
            _compiled.attach(one, None)
            one.__class__ = cls

    def _namespace(self, plan: Plan) -> dict[str, Any]:
        move = self._cache.move_to_end

        def touch(key: Any) -> None:
            try:  # noqa: SIM105 (contextlib.suppress costs ~200 ns on the hit path)
                move(key)
            except KeyError:  # evicted by another thread meanwhile
                pass

        return {
            "cache": self._cache,
            "lookup": self._cache.get,
            "touch": touch,
            "next_call": self._stats.calls.__next__,
            "miss": functools.partial(self._miss, plan),
            "freeze_pair": self._pair_freezer(plan), "remembered": self._memo.remembered,
            "dynamic_error": functools.partial(self._failed_dynamic, plan),
            "failed": functools.partial(self._failed, plan),
            "uncomparable": functools.partial(self._uncomparable, plan),
            "reroute": self._reroute, "general": _general_call,
        }

    def _reroute(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Keyword names seen before with another number of positionals: point those names at this shape."""
        return self._new_dispatch(args, kwargs)(args, kwargs)

    def _key(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._shape(args, kwargs)[1]["key"](args, kwargs)

    def _pair_freezer(self, plan: Plan) -> _codegen.FreezePair:
        """The key pair of a static value that is not atomic: a container (remembered by identity when it is
        safe) or another hashable object. Raises the user-facing error for values that cannot be static."""
        memo, function, freeze = self._memo, self._function, _freeze.freeze

        def freeze_pair(value: Any, j: int) -> tuple[Any, Any]:
            pair = memo.get(value)
            if pair is None:
                try:
                    key = freeze(value)
                except _freeze.Unfreezable:
                    raise non_static_error(function, plan.statics[j][0], value) from None
                pair = _codegen.to_pair(key)
                if pair[0] is _codegen.FROZEN:
                    memo.put(value, pair)
            return pair  # type: ignore[no-any-return]

        return freeze_pair

    # -- misses and faults -----------------------------------------------------------------------------------

    def _miss(self, plan: Plan, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A key not in the cache: trace it, or wait for the thread tracing it. A call that raises on the way (in a
        key's own ``__hash__``, the type check, the transform, the trace) is counted once as failed, never a hit."""
        try:
            return self._trace_or_wait(plan, key, args, kwargs)
        except BaseException:
            self._failed(plan, args, kwargs)
            raise

    def _trace_or_wait(self, plan: Plan, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        # a new static value: checked against its Static[T] here (the lane's body checks its own), never on a hit
        if self._lane is None or not self._lane.serves(plan, key):
            _typecheck.check(self._fn, self._function, plan.static_values(args, kwargs))
        # jax.disable_jit() runs jit eagerly, not a trace, nothing cached; pmap, shard_map, grad, vmap and the
        # others keep their meaning (pmap still maps over devices), as JAX's do.
        if self._eager_without_jit and jit_disabled():
            return _lane.eager(self._stats, self._fn, args, kwargs)
        me = threading.get_ident()
        while True:
            with self._lock:
                program = self._cache.get(key)
                flight = self._inflight.get(key) if program is None else None
                if program is None and flight is None:
                    slot = Slot(key)
                    built = None if self._counts_traces else _static_signature(plan, key)
                    record = None if built is None else self._stats.begin_build(built)
                    if self._lane is not None and self._lane.serves(plan, key):  # the lane's key: its program
                        program = self._lane.adapter(plan, key)
                    else:  # may raise: a call the transform refuses (grad of a missing argument)
                        program = self._build(plan, self._body(plan, slot), slot)
                    flight = self._inflight[key] = _InFlight(me, program, slot)
                    break
            if program is not None:  # another thread finished it meanwhile
                return self._call(plan, program, self._slots.get(key) or Slot(key), args, kwargs)
            assert flight is not None
            if flight.owner == me:  # a recursive call inside its own trace: JAX traces the new shapes nested
                return self._call(plan, flight.program, flight.slot, args, kwargs)
            flight.done.wait()
        try:
            result = self._call(plan, flight.program, flight.slot, args, kwargs)
        except BaseException:
            with self._lock:
                self._inflight.pop(key, None)
            flight.done.set()
            raise
        with self._lock:
            self._inflight.pop(key, None)
            evicted = self._insert(key, flight.program, flight.slot)
        flight.done.set()
        _let_go(evicted)
        if built is not None:  # a miss, for transforms whose traces a jit counts
            self._stats.end_build(built, record)
        return result

    def _add(self, key: Any, program: Any, slot: Slot) -> None:
        """Add a program (``_insert``) under the lock, and let go of what it evicted after."""
        with self._lock:
            evicted = self._insert(key, program, slot)
        _let_go(evicted)

    def _insert(self, key: Any, program: Any, slot: Slot) -> list[tuple[Any, Any, Any]]:
        """Add a program, evicting the least recently used past ``cache_size`` (called under the lock). Returns the
        evicted ``(key, program, slot)``s, for the caller to let go of once the lock is released (``_let_go``): a
        key's last reference may run a finalizer that calls this function, and ``clear_cache()`` is JAX's code."""
        self._cache[key] = program
        self._slots[key] = slot
        evicted: list[tuple[Any, Any, Any]] = []
        while len(self._cache) > (self._stats.maxsize or len(self._cache)):
            old, dropped = self._cache.popitem(last=False)
            evicted.append((old, dropped, self._slots.pop(old, None)))
            self._evicted.append(hash(old))
            self._stats.evictions += 1
        return evicted

    def _call(self, plan: Plan, program: Any, slot: Slot, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run ``program`` for this call, handing the body the caller's own static values should it trace."""
        pos, kw = plan.dynamic_values(args, kwargs)
        local = slot.local
        outer = getattr(local, "statics", None)
        local.statics = plan.static_values(args, kwargs)
        try:
            return program(*pos, **kw)
        except TypeError as err:
            raise self._dynamic_error(plan, args, kwargs, err) from None
        finally:
            local.statics = outer

    def _uncomparable(self, plan: Plan, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                      err: Exception) -> Exception:
        """The error for a cache lookup that raised: ``err`` itself where the key's hash raises (a static value's
        own ``__hash__``, as ``jax.jit`` raises it); else a static value's ``__eq__`` raised, which is named."""
        try:
            hash(key)
        except Exception:
            return err
        statics = plan.static_values(args, kwargs)
        for j, (name, _) in enumerate(plan.statics):
            mine = key[1 + 2 * j:3 + 2 * j]
            for other in list(dict.keys(self._cache)):  # the plain dict's keys: no lookup that would compare
                try:
                    _ = other[1 + 2 * j:3 + 2 * j] == mine
                except Exception:
                    return uncomparable_error(self._function, name, statics[name], err)
        return uncomparable_error(self._function, plan.statics[0][0], statics[plan.statics[0][0]], err) \
            if plan.statics else err

    def _failed(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A call raised: it is no hit, and its static values are not kept."""
        next(self._stats.failures)
        for value in plan.static_values(args, kwargs).values():
            self._memo.discard(value)
        # JAX's error about a deleted or donated buffer, raised again naming the parameter and path
        _donate_errors.explain_failure(self._function, plan, args, kwargs, frozenset(self._params().donate))

    def _failed_dynamic(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any], err: TypeError) -> TypeError:
        self._failed(plan, args, kwargs)
        return self._dynamic_error(plan, args, kwargs, err)

    def _dynamic_error(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any],
                       err: TypeError) -> TypeError:
        """Say which non-Static parameter got a value JAX cannot trace; otherwise the original error."""
        for name, src in plan.dynamics:
            leaves = jax.tree_util.tree_flatten_with_path(src.get(args, kwargs))[0]
            for path, leaf in leaves:
                if not _is_traceable(leaf):
                    where = name + jax.tree_util.keystr(path)
                    from . import _hidden

                    hidden = _hidden.non_array_error(self._fn, plan.layout.static, f"jaxstatic.{self._transform}",
                                                     args, kwargs, leaf)  # a decorator hid a Static parameter
                    if hidden is not None:
                        return hidden
                    return non_array_error(self._function, name, where, leaf, src.kind == "varkw",
                                           src.get(args, kwargs))
        return err

    # -- the traced body -------------------------------------------------------------------------------------

    def _body(self, plan: Plan, slot: Slot) -> Callable[..., Any]:
        """The function JAX traces for one static key: it rebuilds the user's call from the dynamic values."""
        self = self._core  # the body holds the core, which holds the function weakly
        layout, fn, stats, key = plan.layout, self._fn, self._stats, slot.key
        from . import _hidden  # loaded by the first program built, not with jaxstatic

        transform = f"jaxstatic.{self._transform}"
        params = layout.signature.parameters
        named = [n for n in plan.variant if params[n].kind not in (params[n].VAR_POSITIONAL, params[n].VAR_KEYWORD)]
        varpos = next((n for n in plan.variant if params[n].kind is params[n].VAR_POSITIONAL), None)
        varkw = next((n for n in plan.variant if params[n].kind is params[n].VAR_KEYWORD), None)
        labels = [name for name, _ in plan.statics]
        counts = self._counts_traces

        def body(*dyn: Any, **dynkw: Any) -> Any:
            # the function itself, unless a decorator hides Static parameters; read at each trace (a call runs
            # through an object holding it), never held by the program
            call = _hidden.explaining(self._fn, layout.static, transform)
            statics = statics_of(plan, slot)
            dynamic: dict[str, Any] = dict(zip(named, dyn))
            if varpos is not None:
                dynamic[varpos] = dyn[len(named):]
            if varkw is not None:
                dynamic[varkw] = dynkw
            call_args, call_kwargs = layout.assemble(dynamic, statics)
            if not counts:
                return call(*call_args, **call_kwargs)
            if jit_disabled():
                return _lane.eager(stats, call, call_args, call_kwargs)
            signature: dict[str, _explain.DynamicSig | _explain.StaticSig] = {
                **{n: _explain.StaticSig(k) for n, k in zip(labels, _codegen.static_keys(key))},
                **{n: _explain.dynamic_sig(v) for n, v in dynamic.items()},
            }
            return _lane.counted(stats, signature, self._why_again(key), call, call_args, call_kwargs)

        body.__name__ = _options.program_name(fn)
        body.__qualname__ = self._function
        stub = _options.debug_stub(fn)
        if stub is not None:  # JAX's debug info: the user's name, file and line
            body.__wrapped__ = stub  # type: ignore[attr-defined]
        body.__signature__ = _program_signature(named, varpos, varkw)  # type: ignore[attr-defined]
        return body

    def _why_again(self, key: Any) -> str:
        if hash(key) in self._evicted:
            return EVICTED.format(self._stats.maxsize)
        return _explain.NOTHING_SEEN

    # -- the public surface ----------------------------------------------------------------------------------

    def __call__(self, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return _general_call(self, args, kwargs)  # type: ignore[no-any-return]
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
        """A method: bound like a function, so ``obj.apply(x)`` passes ``obj`` as the first argument, and so do
        ``obj.apply.lower(x)``, ``.trace`` and ``.eval_shape``."""
        return self if instance is None else BoundMethod(self, instance)

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
        _let_go(cleared)
        del held
        if self._lane is not None:  # a new lane program: JAX's caches keyed by the old one release its values
            self._lane.program.clear_cache()
            self._lane_checked = False
            self._install_lane()
        inner = _inner_transform(self._fn)
        if inner is not None:
            inner.clear_cache()

    @property
    def __signature__(self) -> inspect.Signature:
        return self._signature()

    def __repr__(self) -> str:
        return f"<jaxstatic.{self._transform} of {self._function}>"

    def __reduce__(self) -> str | tuple[Any, ...]:
        """Pickled as ``jax.jit`` functions are: by reference where its module and name lead back to it (a
        module-level function round-trips as itself, its programs kept); otherwise (a local function, or one in
        ``__main__``, which another process's ``__main__`` does not hold) by value, as the transform of its function
        with the same options, which a pickler that pickles functions by value (cloudpickle) can ship to another
        process."""
        name = str(getattr(self, "__qualname__", self._function))
        module = getattr(self, "__module__", None)
        if module != "__main__" and _importable(self, module, name):
            return name
        args, kwargs = self._made
        fn = self._fn
        return _rebuild, (self._unspecialized(), fn, args, kwargs, _annotation_globals(fn)), self._pickled_state()

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


def _general_call(self: StaticFunction[Any, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Any call: find the dispatcher of its shape (``tuple(kwargs)`` costs a third of ``(len(args), *kwargs)``, so
    keyword shapes are found by names alone) and run it."""
    dispatch = self._kw_plans.get(tuple(kwargs)) if kwargs else self._plans.get(len(args))
    if dispatch is None:
        dispatch = self._new_dispatch(args, kwargs)
    return dispatch(args, kwargs)


def _importable(fn: object, module: str | None, qualname: str) -> bool:
    """Whether ``module.qualname`` leads back to ``fn`` (so pickling by reference loads ``fn`` itself)."""
    target: Any = sys.modules.get(module or "")
    for part in qualname.split("."):
        target = getattr(target, part, None)
        if target is None:
            return False
    return target is fn


def _annotation_globals(fn: Callable[..., Any]) -> dict[str, Any]:
    """The module-level names that ``fn``'s string annotations (``from __future__ import annotations``) use: a
    function pickled by value takes along only the globals its code uses, and its ``Static`` marks must still
    resolve where it is loaded."""
    names: set[str] = set()
    for text in getattr(fn, "__annotations__", {}).values():
        if isinstance(text, str):
            with contextlib.suppress(SyntaxError):
                names.update(n.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Name))
    module = getattr(fn, "__globals__", {})
    return {name: module[name] for name in sorted(names) if name in module}


def _rebuild(cls: type[StaticFunction[Any, Any]], fn: Callable[..., Any], args: tuple[Any, ...],
             kwargs: dict[str, Any], names: dict[str, Any]) -> StaticFunction[Any, Any]:
    """A transformed function pickled by value, made again from its function and options."""
    module = getattr(fn, "__globals__", None)
    if isinstance(module, dict):
        for name, value in names.items():
            module.setdefault(name, value)
    return cls(fn, *args, **kwargs)


def _wrap(self: StaticFunction[Any, Any], fn: Callable[..., Any]) -> None:
    """``functools.update_wrapper``, whose attributes of ``fn`` never replace this transform's own: its options,
    set before this call (``js.grad(js.grad(f, argnums=0), argnums=1)`` differentiated by argnums=0 twice when an
    inner transform's options replaced the outer one's), and its methods and properties (``eqx.filter_jit``'s
    ``_signature`` attribute hid the method of that name: the first call raised ``'Signature' object is not
    callable``). Other wrappers' private attributes are theirs alone, so none is copied."""
    functools.update_wrapper(self, fn, updated=())
    own = self.__dict__
    for name, value in getattr(fn, "__dict__", {}).items():
        if name not in own and not (name.startswith("_") and not name.startswith("__")) and not hasattr(
                type(self), name):
            own[name] = value


def _none() -> None:
    return None


def _let_go(evicted: list[tuple[Any, Any, Any]]) -> None:
    """Release the ``(key, program, slot)``s a cache let go of, outside its lock: each program's own caches
    (``clear_cache()``: JAX's), then the keys themselves, whose values' finalizers may call the function again."""
    for _, program, _ in evicted:
        getattr(program, "clear_cache", lambda: None)()
    evicted.clear()


def _inner_transform(fn: Callable[..., Any]) -> StaticFunction[Any, Any] | None:
    """The jaxstatic transform that ``fn`` is, or that it wraps (through ``functools.wraps`` decorators)."""
    for _ in range(64):  # a __wrapped__ cycle cannot hang clear_cache()
        if isinstance(fn, StaticFunction):
            return fn
        fn = getattr(fn, "__wrapped__", None)  # type: ignore[assignment]
        if fn is None:
            return None
    return None


def statics_of(plan: Plan, slot: Slot) -> dict[str, Any]:
    """The static values of a program, by parameter name: the caller's own objects while the caller's call traces
    it; on a retrace for new shapes, values equal to them (same types, order and bits), rebuilt from the key."""
    statics = getattr(slot.local, "statics", None)
    if statics is None:
        statics = dict(zip([name for name, _ in plan.statics], map(_freeze.thaw, _codegen.static_keys(slot.key))))
    return statics


def _program_signature(named: list[str], varpos: str | None, varkw: str | None) -> inspect.Signature:
    """The signature of a program's body: the dynamic parameters, by the user's names, as JAX's errors print them."""
    kind = inspect.Parameter
    params = [kind(n, kind.POSITIONAL_OR_KEYWORD) for n in named]
    if varpos is not None:
        params.append(kind(varpos, kind.VAR_POSITIONAL))
    if varkw is not None:
        params.append(kind(varkw, kind.VAR_KEYWORD))
    return inspect.Signature(params)


def _transforms(fn: StaticFunction[..., Any]) -> tuple[str, ...]:
    """``("jit", "vmap")`` for ``js.jit(js.vmap(f))``: the jaxstatic transforms applied, outermost first."""
    names = [fn._transform]
    while isinstance(fn._fn, StaticFunction):
        fn = fn._fn
        names.append(fn._transform)
    return tuple(names)


def _static_signature(plan: Plan, key: Any) -> _explain.Signature:
    """What a program of a transform that leaves compiling to a jit depends on: its static values."""
    return {name: _explain.StaticSig(k) for (name, _), k in zip(plan.statics, _codegen.static_keys(key))}


def _is_traceable(leaf: object) -> bool:
    # a dtype class (jnp.int32) has a ``dtype`` attribute too, but JAX cannot trace it
    return (_freeze.is_array(leaf) or isinstance(leaf, (int, float, complex, bool))
            or (hasattr(leaf, "dtype") and not isinstance(leaf, type)))


__all__ = ["BoundMethod", "Slot", "StaticFunction", "jit_disabled", "statics_of"]
