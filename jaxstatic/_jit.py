"""``jaxstatic.jit``: split arguments by their ``Static`` annotations, freeze the static ones, compile through JAX.

Design: one ``jax.jit``-compiled closure per frozen static key, with no static arguments at JAX's level. The closure
reads its static values at trace time, so JAX never holds them in its process-wide caches: ``clear_cache()`` or
dropping the function releases them.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from typing import Any, Concatenate, Generic, TypeVar, overload

import jax
from typing_extensions import ParamSpec, Self

from . import _explain, _freeze, _hidden, _stats
from ._aot import Compilation, Lowered
from ._errors import NonArrayArgumentError
from ._plan import FROZEN, Layout, Plan, generate_dispatch, static_keys, to_pair

_P = ParamSpec("_P")
_P2 = ParamSpec("_P2")
_R = TypeVar("_R")
_R2 = TypeVar("_R2")
_T = TypeVar("_T")

Dispatch = Callable[[tuple[Any, ...], dict[str, Any]], Any]


@functools.cache
def _jax_jit_options() -> frozenset[str]:
    params = inspect.signature(jax.jit).parameters
    return frozenset(n for n, p in params.items() if p.kind is p.KEYWORD_ONLY)


def _check_options(function: str, options: dict[str, Any]) -> None:
    unknown = set(options) - _jax_jit_options()
    if unknown:
        raise TypeError(f"jaxstatic.jit({function}): unknown option(s) {sorted(unknown)}; jax.jit accepts "
                        f"{sorted(_jax_jit_options())}.")


def _as_tuple(value: Any) -> tuple[Any, ...]:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


class JitFunction(Generic[_P, _R]):
    """A function compiled by ``jaxstatic.jit``. Call it like the function it wraps."""

    def __init__(self, fn: Callable[_P, _R], *, max_traces: int | None = None, **jax_options: Any) -> None:
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._function = _display_name(fn)
        _check_options(self._function, jax_options)
        self._static_names = frozenset(_as_tuple(jax_options.pop("static_argnames", None)))
        self._static_nums = tuple(int(i) for i in _as_tuple(jax_options.pop("static_argnums", None)))
        self._donate = (frozenset(_as_tuple(jax_options.pop("donate_argnames", None))),
                        tuple(int(i) for i in _as_tuple(jax_options.pop("donate_argnums", None))))
        self._in_shardings = jax_options.pop("in_shardings", None)
        self._jax_options = jax_options
        self._stats = _stats.TraceStats(self._function, max_traces)
        self._layout: Layout | None = None
        self._plans: dict[int, Dispatch] = {}  # positional calls, by len(args)
        self._kw_plans: dict[tuple[str, ...], Dispatch] = {}  # keyword calls, by names: the latest nargs seen
        self._dispatches: dict[Any, Dispatch] = {}  # every call shape, by (len(args), *names)
        self._plan_objects: dict[Any, Plan] = {}
        self._variants: dict[tuple[str, ...], int] = {}
        self._cache: dict[Any, Any] = {}
        self._memo = _freeze.IdentityMemo()
        self._pending: tuple[Any, dict[str, Any]] | None = None

    # -- the call path ---------------------------------------------------------------------------------------

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return _general_call(self, args, kwargs)  # type: ignore[no-any-return]

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Self: ...
    @overload
    def __get__(
        self: JitFunction[Concatenate[_T, _P2], _R2], instance: _T, owner: type | None = None
    ) -> Callable[_P2, _R2]: ...
    def __get__(self, instance: object, owner: type | None = None) -> Any:
        """A method: bound like a function, so ``obj.apply(x)`` passes ``obj`` as the first argument."""
        return self if instance is None else types.MethodType(self, instance)

    def _plan(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Plan:
        shape = (len(args), *kwargs) if kwargs else len(args)
        plan = self._plan_objects.get(shape)
        if plan is None:
            if self._layout is None:  # annotations are read at the first call: forward references resolve by then
                self._layout = Layout.of(self._fn, self._function, self._static_names, self._static_nums)
            plan = Plan.bind(self._layout, len(args), tuple(kwargs), self._variants)
            self._plan_objects[shape] = plan
        return plan

    def _key(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        plan = self._plan(args, kwargs)
        return plan.key(args, kwargs, self._pair_freezer(plan))

    def _new_dispatch(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Dispatch:
        shape = (len(args), *kwargs) if kwargs else len(args)
        dispatch = self._dispatches.get(shape)
        if dispatch is None:
            plan = self._plan(args, kwargs)
            ns = self._dispatch_namespace(plan)
            dispatch = self._dispatches[shape] = generate_dispatch(plan, ns)
            if not kwargs and type(self) is JitFunction:
                self._specialize(plan, ns)
        if kwargs:
            self._kw_plans[tuple(kwargs)] = dispatch
        else:
            self._plans[len(args)] = dispatch
        return dispatch

    def _dispatch_namespace(self, plan: Plan) -> dict[str, Any]:
        return {
            "cache": self._cache,
            "next_call": self._stats.calls.__next__,
            "miss": functools.partial(self._miss, plan),
            "freeze_pair": self._pair_freezer(plan),
            "dynamic_error": functools.partial(self._dynamic_error, plan),
            "reroute": self._reroute,
            "general": _general_call,
        }

    def _specialize(self, plan: Plan, ns: dict[str, Any]) -> None:
        """Give this object a class of its own whose ``__call__`` is the first positional shape's dispatcher.

        Python looks ``__call__`` up on the type, so this is the one way to make the commonest call a single
        Python frame; every other shape still goes through ``_general_call``.
        """
        call = generate_dispatch(plan, ns, entry=True)
        call.__doc__ = JitFunction.__call__.__doc__
        self.__class__ = type(JitFunction.__name__, (JitFunction,), {"__call__": call, "__module__": __name__})

    def _reroute(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Keyword names seen before with another number of positionals: point those names at this shape."""
        return self._new_dispatch(args, kwargs)(args, kwargs)

    def _pair_freezer(self, plan: Plan) -> Callable[[Any, int], tuple[Any, Any]]:
        """The key pair of a static value that is not atomic: a container (remembered by identity when it is
        safe) or another hashable object. Raises the user-facing error for values that cannot be static."""
        memo, function, freeze = self._memo, self._function, _freeze.freeze

        def freeze_pair(value: Any, j: int) -> tuple[Any, Any]:
            pair = memo.get(value)
            if pair is None:
                try:
                    key = freeze(value)
                except _freeze.Unfreezable:
                    raise _freeze.non_static_error(function, plan.statics[j][0], value) from None
                pair = to_pair(key)
                if pair[0] is FROZEN:
                    memo.put(value, pair)
            return pair  # type: ignore[no-any-return]

        return freeze_pair

    def _miss(self, plan: Plan, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        pos, kw = plan.dynamic_values(args, kwargs)
        with self._stats.lock:  # one trace per key, however many threads miss at once
            program = self._cache.get(key)
            if program is None:
                program = self._compile(plan, key)
                outer, self._pending = self._pending, (key, plan.static_values(args, kwargs))
                try:
                    result = self._run(plan, program, pos, kw, args, kwargs)
                finally:
                    self._pending = outer
                self._cache[key] = program
                return result
        return self._run(plan, program, pos, kw, args, kwargs)

    def _run(self, plan: Plan, program: Any, pos: list[Any], kw: dict[str, Any], args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> Any:
        try:
            return program(*pos, **kw)
        except TypeError as err:
            raise self._dynamic_error(plan, args, kwargs, err) from None

    # -- building programs -----------------------------------------------------------------------------------

    def _compile(self, plan: Plan, key: Any) -> Any:
        """A ``jax.jit`` closure for one static key; its statics come from the caller or from the key."""
        layout = plan.layout
        labels = layout.static_labels
        params = layout.signature.parameters
        named = [n for n in plan.variant if params[n].kind not in (params[n].VAR_POSITIONAL, params[n].VAR_KEYWORD)]
        varpos = next((n for n in plan.variant if params[n].kind is params[n].VAR_POSITIONAL), None)
        varkw = next((n for n in plan.variant if params[n].kind is params[n].VAR_KEYWORD), None)
        stats = self._stats
        fn: Callable[..., Any] = self._fn

        def body(*dyn: Any, **dynkw: Any) -> Any:
            pending = self._pending
            if pending is not None and pending[0] is key:
                statics = pending[1]  # the caller's own objects
            else:  # a retrace for new shapes: equal values rebuilt from the key
                statics = {label: _freeze.thaw(k) for label, k in zip(labels, static_keys(key))}
            dynamic: dict[str, Any] = dict(zip(named, dyn))
            if varpos is not None:
                dynamic[varpos] = dyn[len(named):]
            if varkw is not None:
                dynamic[varkw] = dynkw
            signature: dict[str, _explain.DynamicSig | _explain.StaticSig] = {
                **{n: _explain.StaticSig(k) for n, k in zip(labels, static_keys(key))},
                **{n: _explain.dynamic_sig(v) for n, v in dynamic.items()},
            }
            stats.record_trace(signature)
            call_args, call_kwargs = layout.assemble(dynamic, statics)
            try:
                return fn(*call_args, **call_kwargs)
            except _hidden.TRACER_ERRORS as err:
                _hidden.explain_tracer_error(err, fn, call_args, call_kwargs)
                raise

        body.__name__ = getattr(fn, "__name__", "jaxstatic_function")
        body.__qualname__ = self._function
        return jax.jit(body, **self._options_for(named, layout))

    def _options_for(self, named: list[str], layout: Layout) -> dict[str, Any]:
        """jax.jit's per-argument options, re-indexed from the user's parameters to the program's arguments."""
        options = dict(self._jax_options)
        positional = [n for n, p in layout.signature.parameters.items()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        donate = set(self._donate[0]) | {positional[i] for i in self._donate[1]}
        if donate:
            options["donate_argnums"] = tuple(i for i, n in enumerate(named) if n in donate)
        if isinstance(self._in_shardings, (tuple, list)):
            by_name = dict(zip(positional, self._in_shardings))
            options["in_shardings"] = tuple(by_name.get(n) for n in named)
        elif self._in_shardings is not None:
            options["in_shardings"] = self._in_shardings
        return options

    def _dynamic_error(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any],
                       err: TypeError) -> TypeError:
        """Say which non-Static parameter got a value JAX cannot trace; otherwise the original error."""
        for name, src in plan.dynamics:
            leaves = jax.tree_util.tree_flatten_with_path(src.get(args, kwargs))[0]
            for path, leaf in leaves:
                if not _is_traceable(leaf):
                    where = name + jax.tree_util.keystr(path)
                    return NonArrayArgumentError(
                        f"{self._function}(): parameter {name!r} is not Static, so its value is traced as an array, "
                        f"but {where} is a {_freeze.type_name(leaf)}. Mark it static where it is declared "
                        f"({name}: Static[...]), or pass an array."
                    )
        return err

    # -- the public surface ----------------------------------------------------------------------------------

    @property
    def trace_count(self) -> int:
        """How many times the Python body has been traced."""
        return self._stats.traces

    @property
    def retraces(self) -> tuple[_stats.Retrace, ...]:
        """Each retrace, with the reason; ``str(record)`` explains it per parameter."""
        return tuple(self._stats.retraces)

    def cache_info(self) -> _stats.CacheInfo:
        return self._stats.cache_info()

    def clear_cache(self) -> None:
        """Drop every compiled program and every static value held for them."""
        with self._stats.lock:
            for program in self._cache.values():
                program.clear_cache()
            self._cache.clear()
            self._memo.clear()
            self._stats.cleared()

    def lower(self, *args: _P.args, **kwargs: _P.kwargs) -> Lowered:
        """Lower for these arguments (ahead of time); ``.compile()`` gives a callable with this signature."""
        plan = self._plan(args, kwargs)
        key = self._key(args, kwargs)
        pos, kw = plan.dynamic_values(args, kwargs)
        with self._stats.lock:
            program = self._cache.get(key) or self._compile(plan, key)
            outer, self._pending = self._pending, (key, plan.static_values(args, kwargs))
            try:
                lowered = program.lower(*pos, **kw)
            finally:
                self._pending = outer
            self._cache.setdefault(key, program)
        return Lowered(Compilation(self._function, plan, key, self._plan, self._key), lowered)

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self._fn)

    def __repr__(self) -> str:
        return f"<jaxstatic.jit of {self._function}>"


def _general_call(self: JitFunction[Any, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Any call: find the dispatcher of its shape (``tuple(kwargs)`` costs a third of ``(len(args), *kwargs)``, so
    keyword shapes are found by names alone) and run it."""
    dispatch = self._kw_plans.get(tuple(kwargs)) if kwargs else self._plans.get(len(args))
    if dispatch is None:
        dispatch = self._new_dispatch(args, kwargs)
    return dispatch(args, kwargs)


def _display_name(fn: Callable[..., Any]) -> str:
    """``Model.apply``: the qualified name without ``<locals>`` scopes, as errors and reports print it."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return str(name).rpartition("<locals>.")[2]


def _is_traceable(leaf: object) -> bool:
    return _freeze.is_array(leaf) or isinstance(leaf, (int, float, complex, bool)) or hasattr(leaf, "dtype")


@overload
def jit(fn: Callable[_P, _R], /, *, max_traces: int | None = None, **jax_options: Any) -> JitFunction[_P, _R]: ...
@overload
def jit(
    fn: None = None, /, *, max_traces: int | None = None, **jax_options: Any
) -> Callable[[Callable[_P, _R]], JitFunction[_P, _R]]: ...
def jit(fn: Callable[_P, _R] | None = None, /, *, max_traces: int | None = None, **jax_options: Any) -> Any:
    """Compile ``fn`` with JAX; parameters annotated ``Static[...]`` are static.

    Static values may be anything static-hashable (hashable, or builtin containers of such), so a ``dict`` config
    works; equal values share one compiled program. ``max_traces`` raises ``RetraceError`` past that many traces.
    Every ``jax.jit`` option is accepted; ``static_argnums``/``static_argnames`` add to the annotations.
    """
    if fn is None:
        return functools.partial(jit, max_traces=max_traces, **jax_options)
    return JitFunction(fn, max_traces=max_traces, **jax_options)
