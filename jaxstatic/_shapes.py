"""A jaxstatic function's call shapes: how each shape of call (how many positional values, which keywords) splits
into static and dynamic values, and the code that dispatches it.

A shape met for the first time gets its ``Plan`` (``_plan``) and generated code (``_codegen``) that builds the flat
static key and looks the program up; the first positional shape becomes the function's own ``__call__`` (a class of
its own per function, ``_specialize``), and each shape met gets a hit in C where the extension is built
(``_compiled``). Functions that can take the exact-key lane (``_lane``) take it on their first call.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from typing_extensions import Self

from . import _codegen, _compiled, _freeze, _lane, _options
from ._annotations import call_signature
from ._errors import non_static_error
from ._owner import Runs
from ._plan import Layout, Plan
from ._state import Dispatch, State, inner_transform


class CallShapes(State):
    """The call shapes of a jaxstatic function, and the dispatch of each."""

    if not TYPE_CHECKING:  # as State's
        __slots__ = ()

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
                self._name, None if signature is _options.ANY_CALL else signature, self._options)
        return self._params_

    def _layout(self) -> Layout:
        layout = self._layout_
        if layout is None:
            params, inner = self._params(), inner_transform(self._fn)
            extras, keywords = params.static_extras, params.static_keywords
            if inner is not None:  # *args extras and **kwargs entries an inner transform makes static, as names
                extras, keywords = extras | set(inner._layout().static_extras), keywords | inner._layout().static_keywords
            layout = Layout.of(self._fn, self._name, self._signature(),
                               params.static | self._inner_static(), f"jaxstatic.{self._transform}",
                               extras=extras, keywords=keywords)
            self._resolve(layout)
            self._layout_ = layout
        return layout

    def _inner_static(self) -> frozenset[str]:
        """Parameters a wrapped jaxstatic transform makes static by its options (``static_argnames``,
        ``nondiff_argnums``, ...): static here too, as an annotation is, since its program needs them static."""
        inner = inner_transform(self._fn)
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
            code = _codegen.generate(plan, namespace, self._name)
            found = self._shapes[shape] = (plan, code)
            if entry:
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
                self._lane = _lane.Lane(self, self._lane_program, general_call)
                self._specialize(self._lane.call)
                self._stats.currsize = self._lane.currsize

    def _dispatcher(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Dispatch:
        """The dispatcher of this call's shape (``tuple(kwargs)`` costs a third of ``(len(args), *kwargs)``, so
        keyword shapes are found by names alone), made if need be. Returned, not called: the caller calls it, a
        frame fewer between a call and its trace."""
        dispatch = self._kw_plans.get(tuple(kwargs)) if kwargs else self._plans.get(len(args))
        return self._new_dispatch(args, kwargs) if dispatch is None else dispatch

    def _new_dispatch(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Dispatch:
        self = self._core
        dispatch = self._shape(args, kwargs)[1]["dispatch"]
        if kwargs:
            self._kw_plans[tuple(kwargs)] = dispatch
        else:
            self._plans[len(args)] = dispatch
        _compiled.keyword_calls(self)  # a shape met: a hit in C of its own
        return dispatch

    def _run(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Runs:
        """Any call, as a ``Run`` (``_programs``) its caller runs in its own frame, as the dispatcher runs a miss:
        the first call of a function, and the first the lane hands the general path, trace one frame of jaxstatic's
        below the call, as every other miss does. A shape not met before gets its dispatcher (``_new_dispatch``); a
        key cached runs its program as a miss that finds it cached does."""
        self = self._core
        self._dispatcher(args, kwargs)  # made if need be: later calls of this shape go to it
        plan, code = self._shape(args, kwargs)
        key = code["key"](args, kwargs)
        try:
            self._cache.get(key)
        except Exception as err:  # as the dispatcher's lookup
            raise self._uncomparable(plan, key, args, kwargs, err)  # noqa: B904 (chained as the dispatcher's)
        next(self._stats.calls)
        return self._miss(plan, key, args, kwargs)  # type: ignore[no-any-return]

    def _specializes(self) -> bool:
        return True

    def _specialize(self, entry: Callable[..., Any]) -> None:
        """Give this object a class of its own whose ``__call__`` is the first positional shape's dispatcher.

        Python looks ``__call__`` up on the type, so this is the one way to make the commonest call a single
        Python frame (measured: ~150 ns of the ~400 ns jaxstatic adds to a call); other shapes go to their own
        dispatcher (``_dispatcher``), or their own hit in C.
        """
        cls = self._unspecialized()
        if isinstance(entry, types.FunctionType):  # not a hit in C (_hits), which has a doc of its own
            entry.__doc__ = cls.__call__.__doc__  # StaticFunction's
        new = type(cls.__name__, (cls,), {"__call__": entry, "__module__": cls.__module__,
                                          "__qualname__": cls.__qualname__, "_specialized": True})
        for one in self._instances():
            one.__class__ = new
            _compiled.attach(one, entry)

    def _instances(self) -> list[Any]:
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
            "reroute": self._reroute, "route": self._dispatcher,
        }

    def _reroute(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Keyword names seen before with another number of positionals: point those names at this shape."""
        return self._new_dispatch(args, kwargs)(args, kwargs)

    def _key(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._shape(args, kwargs)[1]["key"](args, kwargs)

    def _pair_freezer(self, plan: Plan) -> _codegen.FreezePair:
        """The key pair of a static value that is not atomic: a container (remembered by identity when it is
        safe) or another hashable object. Raises the user-facing error for values that cannot be static."""
        memo, function, freeze = self._memo, self._name, _freeze.freeze

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


def general_call(self: CallShapes, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Any call: the dispatcher of its shape (``dispatcher``), run."""
    return self._dispatcher(args, kwargs)(args, kwargs)


__all__ = ["CallShapes", "general_call"]
