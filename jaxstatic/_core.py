"""A jaxstatic function's core (``Core``): its programs (``_programs``), and here its call shapes: how each shape of
call (how many positional values, which keywords) splits into static and dynamic values, and the code that
dispatches it.

A shape met for the first time gets its ``Plan`` (``_plan``) and generated code (``_codegen``) that builds the flat
static key and looks the program up; the first positional shape becomes the function's own ``__call__`` (a class of
its own per function, ``_specialize``), and each shape met gets a hit in C where the extension is built
(``_compiled``). Functions that can take the exact-key lane (``_lane``) take it on their first call.
"""

from __future__ import annotations

import functools
import types
import weakref
from collections.abc import Callable
from typing import Any

from . import _codegen, _compiled, _freeze, _lane, _options, _typecheck
from ._errors import non_static_error
from ._parts import Dispatch, Generated, Hooks, Miss, Slot
from ._plan import Plan
from ._programs import Programs
from ._stats import TraceStats


class Core(Programs):
    """The core of a jaxstatic function: what every handle of it shares (``_shared``). Its programs, their keys and
    their misses (``Programs``); here, its call shapes, the dispatch of each, the exact-key lane, and the class and
    hit in C its handles share. Made by the transform (``StaticFunction``), which it asks for what differs per
    transform through ``Hooks``; it holds the transform, never a handle (a handle holds the user's function, which
    holds a shared core)."""

    def __init__(self, hooks: Hooks, stats: TraceStats) -> None:
        super().__init__(hooks, stats)
        self._plans: dict[int, Dispatch] = {}  # positional calls, by len(args)
        self._kw_plans: dict[tuple[str, ...], Dispatch] = {}  # keyword calls, by names: the latest nargs seen
        self._shapes: dict[Any, tuple[Plan, Generated]] = {}  # every call shape seen
        self._variants: dict[tuple[str, ...], int] = {}  # each set of dynamic parameters seen, numbered (``Plan``)
        self._lane_checked = False  # whether the first call has shown if the lane can be taken
        self._handles: tuple[weakref.ref[Any], ...] = ()  # replaced whole, never changed: read by any thread

    def _shape(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Plan, Generated]:
        """The plan and generated functions of this call's shape, made when the shape is first seen."""
        shape = (len(args), *kwargs) if kwargs else len(args)
        found = self._shapes.get(shape)
        if found is None:
            plan = Plan.bind(self._hooks._layout(), len(args), tuple(kwargs), self._variants)
            if not self._lane_checked:
                self._install_lane()
            entry = self._lane is None and not kwargs and not any(isinstance(k, int) for k in self._shapes)
            namespace = self._namespace(plan)
            code = _codegen.generate(plan, namespace, self._name)
            found = self._shapes[shape] = (plan, code)
            if entry:
                self._specialize(_compiled.key_call(self, plan, code["entry"], namespace))
        return found

    def _with_program(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Plan, Any, Any]:
        """``program.<method>(dynamic values)`` for the program of this call's static key (made and kept if need
        be), with the caller's own static values handed to the body while JAX traces it: ``lower``, ``trace`` and
        ``eval_shape``."""
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
            program = self._build(plan, slot)
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

    def _clear_cache(self) -> None:
        """``clear_cache()``: the programs dropped (``_clear``), the traces' signatures with them, and the lane's
        program made again (JAX's caches keyed by the old one release its values)."""
        self._clear()
        held = self._stats.cleared()
        del held
        if self._lane is not None:
            self._lane.program.clear_cache()
            self._lane_checked = False
            self._install_lane()

    def _install_lane(self) -> None:
        """Take the exact-key lane (``_lane``) if this function can: its ``__call__`` becomes the lane's."""
        with self._lock:
            if self._lane_checked:
                return
            self._lane_checked = True
            if self._hooks._takes_lane() and self._stats.options.cache_size == _options.JAX_JIT_CACHE_SIZE and \
                    _lane.eligible(self._hooks._layout(), _typecheck.declared_types(self._hooks._fn)):
                self._lane = _lane.Lane(self, self._hooks._lane_program, self._call)
                self._specialize(self._lane.call)
                self._stats.currsize = self._lane.currsize

    def _dispatcher(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Dispatch:
        """The dispatcher of this call's shape (``tuple(kwargs)`` costs a third of ``(len(args), *kwargs)``, so
        keyword shapes are found by names alone), made if need be. Returned, not called: the caller calls it (a
        frame fewer: ``_parts.Miss`` says why that counts)."""
        dispatch = self._kw_plans.get(tuple(kwargs)) if kwargs else self._plans.get(len(args))
        return self._new_dispatch(args, kwargs) if dispatch is None else dispatch

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Any call: the dispatcher of its shape (``_dispatcher``), run."""
        return self._dispatcher(args, kwargs)(args, kwargs)

    def _new_dispatch(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Dispatch:
        dispatch = self._shape(args, kwargs)[1]["dispatch"]
        if kwargs:
            self._kw_plans[tuple(kwargs)] = dispatch
        else:
            self._plans[len(args)] = dispatch
        _compiled.keyword_calls(self)  # a shape met: a hit in C of its own
        return dispatch

    def _call_as_miss(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Miss:
        """Any call, as a ``Miss`` its caller runs in its own frame, as the dispatcher runs one: the first call of a
        shape, and the first the lane hands the general path. A shape not met before gets its dispatcher (``_new_dispatch``); a
        key cached runs its program as a miss that finds it cached does."""
        self._dispatcher(args, kwargs)  # made if need be: later calls of this shape go to it
        plan, code = self._shape(args, kwargs)
        key = code["key"](args, kwargs)
        try:
            self._cache.get(key)
        except Exception as err:  # as the dispatcher's lookup
            raise self._uncomparable(plan, key, args, kwargs, err)  # noqa: B904 (chained as the dispatcher's)
        next(self._stats.calls)
        return self._miss(plan, key, args, kwargs)

    def _specialize(self, entry: Callable[..., Any]) -> None:
        """Give this function's objects (its transform and the handles alive) a class of their own whose ``__call__``
        is ``entry``: the first positional shape's dispatcher, its hit in C, or the lane's ``__call__``.

        Python looks ``__call__`` up on the type, so this is the one way to make the commonest call a single
        Python frame (measured: ~150 ns of the ~400 ns jaxstatic adds to a call); other shapes go to their own
        dispatcher (``_dispatcher``), or their own hit in C.
        """
        cls = self._hooks._unspecialized()
        if isinstance(entry, types.FunctionType):  # not a hit in C (_hits), which has a doc of its own
            entry.__doc__ = cls.__call__.__doc__  # StaticFunction's
        new = type(cls.__name__, (cls,), {"__call__": entry, "__module__": cls.__module__,
                                          "__qualname__": cls.__qualname__, "_specialized": True})
        for one in self._instances():
            one.__class__ = new
            _compiled.attach(one, entry)

    def _head(self) -> Any:
        """The ``__call__`` this function's objects have now: the class's own where it was specialized, else None
        (the transform's)."""
        cls = type(self._hooks).__dict__
        return cls.get("__call__") if cls.get("_specialized") else None

    def _instances(self) -> list[Any]:
        """This function's objects: its transform and the handles alive, one class and one hit in C between them."""
        return [self._hooks, *(handle for handle in self._alive() if handle is not self._hooks)]

    def _alive(self) -> list[Any]:
        """The handles alive."""
        return [handle for ref in self._handles if (handle := ref()) is not None]

    def _unspecialize(self) -> None:
        cls = self._hooks._unspecialized()
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
            "missed": functools.partial(self._miss, plan),
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


__all__ = ["Core"]
