"""A jaxstatic function's core (``Core``): its call shapes, how each shape of call (how many positional values, which
keywords) splits into static and dynamic values, the code that dispatches it, and its programs by key (a
``_parts.Programs``; a key not there is a miss, ``_miss``).

A shape met for the first time gets its ``Plan`` (``_plan``) and generated code (``_codegen``) that builds the flat
static key and looks the program up; the first positional shape becomes the function's own ``__call__`` (a class of
its own per function, ``_specialize``), and each shape met gets a hit in C where the extension is built
(``_c_hits``). Functions that can take the exact-key lane (``_lane``) take it on their first call.
"""

from __future__ import annotations

import functools
import types
import weakref
from collections.abc import Callable
from typing import Any

from . import _c_hits, _codegen, _freeze, _lane, _miss, _options, _typecheck
from ._errors import non_static_error
from ._memo import IdentityMemo
from ._parts import Dispatch, Generated, Programs, Transform, let_go
from ._plan import Plan
from ._stats import TraceStats


class Core:
    """The core of a jaxstatic function: what every handle of it shares (``_shared``): its call shapes, the
    dispatch of each, its programs by key (``Programs``), the exact-key lane, and the class and hit in C its handles
    share. Made by the transform (``StaticFunction``), which it asks for what differs per transform through
    ``_parts.Transform``; it holds the transform, never a handle (a handle holds the user's function, which holds a
    shared core)."""

    def __init__(self, transform: Transform, stats: TraceStats) -> None:
        self._transform = transform  # its options, and how it builds a program
        self._name = transform._name  # the function by name, as errors print it (``_naming.display_name``)
        self._stats = stats
        self._programs = Programs(stats)
        self._memo = IdentityMemo()  # static containers remembered by identity (``_memo``)
        self._lane: _lane.Lane | None = None  # the exact-key lane, once the first call shows it can be taken
        self._by_nargs: dict[int, Dispatch] = {}  # dispatchers of positional calls, by len(args)
        self._by_keywords: dict[tuple[str, ...], Dispatch] = {}  # of keyword calls, by names: the latest nargs seen
        self._shapes: dict[Any, tuple[Plan, Generated]] = {}  # every call shape seen
        self._variants: dict[tuple[str, ...], int] = {}  # each set of dynamic parameters seen, numbered (``Plan``)
        self._lane_checked = False  # whether the first call has shown if the lane can be taken
        self._handles: tuple[weakref.ref[Any], ...] = ()  # replaced whole, never changed: read by any thread

    def _plan_and_code(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Plan, Generated]:
        """The plan and generated functions of this call's shape (``_new_plan_and_code`` the first time it is seen)."""
        found = self._shapes.get((len(args), *kwargs) if kwargs else len(args))
        return self._new_plan_and_code(args, kwargs) if found is None else found

    def _new_plan_and_code(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Plan, Generated]:
        """A call shape seen for the first time: its plan (``Plan.bind``) and generated code (``_codegen``), kept,
        and the ways later calls reach it installed (``_install_shape``). The first call of all also decides
        whether the function takes the exact-key lane (``_install_lane``)."""
        plan = Plan.bind(self._transform._layout(), len(args), tuple(kwargs), self._variants)
        if not self._lane_checked:
            self._install_lane()
        first_positional = not kwargs and not any(isinstance(k, int) for k in self._shapes)
        namespace = self._namespace(plan)
        code = _codegen.generate(plan, namespace, self._name)
        found = self._shapes[(len(args), *kwargs) if kwargs else len(args)] = (plan, code)
        self._install_shape(plan, code, namespace, entry=first_positional and self._lane is None)
        return found

    def _install_shape(self, plan: Plan, code: Generated, namespace: dict[str, Any], entry: bool) -> None:
        """Where later calls of a new shape go: its dispatcher (``_route``); with ``entry`` (the first positional
        shape, off the lane), the function's own ``__call__`` becomes the shape's (``_specialize``), its hit in C
        where the extension is built (``_c_hits.shape_call``)."""
        if entry:
            self._specialize(_c_hits.shape_call(self, plan, code["entry"], namespace))
        self._route(plan, code["dispatch"])

    def _route(self, plan: Plan, dispatch: Dispatch) -> None:
        """Later calls of ``plan``'s shape go to ``dispatch`` (calls by keyword: those with its keywords), and to a
        hit in C of its own (``_c_hits.keyword_calls``)."""
        if plan.kwnames:
            self._by_keywords[plan.kwnames] = dispatch
        else:
            self._by_nargs[plan.nargs] = dispatch
        _c_hits.keyword_calls(self)

    def _with_program(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Plan, Any, Any]:
        """``program.<method>(dynamic values)`` for the program of this call's static key, made and cached as a
        call's miss makes it where none is (``_miss.ahead_of_time``): ``lower``, ``trace`` and ``eval_shape``."""
        plan, code = self._plan_and_code(args, kwargs)
        key = code["key"](args, kwargs)
        # Counted as a call, as its trace (if it traces) is counted as a miss: hits are calls less misses, so an
        # uncounted lower() hid the next hit.
        next(self._stats.calls)
        if self._lane is not None and self._lane.serves_aot(plan, key):  # the lane's key: its program, traced once
            return plan, key, self._lane.aot(method, plan, args, kwargs)
        return plan, key, _miss.ahead_of_time(self, plan, key, args, kwargs, method)

    def _clear(self) -> None:
        """Drop every program and every static value held for them (``clear_cache()``; ``_release``)."""
        cleared = self._programs.clear()
        held = self._memo.clear()
        let_go(cleared)
        del held

    def _release(self) -> None:
        """The function this core was kept in is gone (``_shared``): its programs go now (JAX's hold the arrays the
        function captured), not when the garbage collector finds the core."""
        self._clear()
        if self._lane is not None:
            getattr(self._lane.program, "clear_cache", lambda: None)()

    def _cache_size(self) -> int:
        """The entries of JAX's dispatch caches held for this function, as ``jax.jit`` objects' ``_cache_size()``
        counts its own: one per static key and shapes of the dynamic values (``cache_info().currsize`` counts
        programs, one per static key)."""
        own = [p for p in list(dict.values(self._programs.cache)) if not getattr(p, "lane", False)]  # none hashed
        lane = [] if self._lane is None else [self._lane.program]
        return sum(int(getattr(p, "_cache_size", lambda: 1)()) for p in own + lane)

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
        with self._programs.lock:
            if self._lane_checked:
                return
            self._lane_checked = True
            if self._transform._takes_lane() and self._stats.options.cache_size == _options.JAX_JIT_CACHE_SIZE and \
                    _lane.eligible(self._transform._layout(), _typecheck.declared_types(self._transform._fn)):
                self._lane = _lane.Lane(self, self._transform._lane_program, self._call, _miss.Miss.plain)
                self._specialize(self._lane.call)
                self._stats.currsize = self._lane.currsize

    def _dispatcher(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Dispatch:
        """The dispatcher of this call's shape (``tuple(kwargs)`` costs a third of ``(len(args), *kwargs)``, so
        keyword shapes are found by names alone), made if need be. Returned, not called: the caller calls it (a
        frame fewer: ``_miss.Miss`` says why that counts)."""
        dispatch = self._by_keywords.get(tuple(kwargs)) if kwargs else self._by_nargs.get(len(args))
        return self._plan_and_code(args, kwargs)[1]["dispatch"] if dispatch is None else dispatch

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Any call: the dispatcher of its shape (``_dispatcher``), run."""
        return self._dispatcher(args, kwargs)(args, kwargs)

    def _first_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _miss.Miss:
        """A call its caller runs in its own frame as a ``_miss.Miss`` (``Miss`` says why): the first call of a shape,
        and the first the lane hands the general path. Its shape's generated ``key_then_begin``, the dispatcher's own
        lines up to a miss: the key looked up (one cached by another shape runs as a hit does), the call counted, the
        miss begun."""
        miss: _miss.Miss = self._plan_and_code(args, kwargs)[1]["key_then_begin"](args, kwargs)
        return miss

    def _failed(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any], ran: bool = False) -> None:
        """A call raised (``_miss.failed``): for the hit paths, which cannot import ``_miss``."""
        _miss.failed(self, plan, args, kwargs, ran)

    def _failed_dynamic(self, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any], err: TypeError) -> TypeError:
        """A call raised ``err``, a ``TypeError``: counted as failed, and a dynamic value JAX cannot trace named."""
        _miss.failed(self, plan, args, kwargs)
        return _miss.dynamic_error(self, plan, args, kwargs, err)

    def _specialize(self, entry: Callable[..., Any]) -> None:
        """Give this function's objects (its transform and the handles alive) a class of their own whose ``__call__``
        is ``entry``: the first positional shape's dispatcher, its hit in C, or the lane's ``__call__``.

        Python looks ``__call__`` up on the type, so this is the one way to make the commonest call a single
        Python frame (measured: ~150 ns of the ~400 ns jaxstatic adds to a call); other shapes go to their own
        dispatcher (``_dispatcher``), or their own hit in C.
        """
        cls = self._transform._unspecialized()
        if isinstance(entry, types.FunctionType):  # not a hit in C (_hits), which has a doc of its own
            entry.__doc__ = cls.__call__.__doc__  # StaticFunction's
        new = type(cls.__name__, (cls,), {"__call__": entry, "__module__": cls.__module__,
                                          "__qualname__": cls.__qualname__, "_specialized": True})
        for one in self._instances():
            one.__class__ = new
            _c_hits.attach(one, entry)

    def _head(self) -> Any:
        """The ``__call__`` this function's objects have now: the class's own where it was specialized, else None
        (the transform's)."""
        cls = type(self._transform).__dict__
        return cls.get("__call__") if cls.get("_specialized") else None

    def _instances(self) -> list[Any]:
        """This function's objects: its transform and the handles alive, one class and one hit in C between them."""
        return [self._transform, *(handle for handle in self._alive() if handle is not self._transform)]

    def _alive(self) -> list[Any]:
        """The handles alive."""
        return [handle for ref in self._handles if (handle := ref()) is not None]

    def _unspecialize(self) -> None:
        cls = self._transform._unspecialized()
        for one in self._instances():
            _c_hits.attach(one, None)
            one.__class__ = cls

    def _namespace(self, plan: Plan) -> dict[str, Any]:
        """The names the generated code of ``plan``'s shape calls (``_codegen.generate`` says what each does), bound
        here to this core: its programs (``cache``, ``lookup``, ``touch``), its counts (``next_call``), a miss
        (``begin``: ``_miss.begin``), the key of a static container (``key_pair``, ``remembered``: ``_freeze``
        through the identity memo), its faults, and the dispatchers of other shapes (``reroute``, ``route``)."""
        cache = self._programs.cache
        move = cache.move_to_end

        def touch(key: Any) -> None:
            try:  # noqa: SIM105 (contextlib.suppress costs ~200 ns on the hit path)
                move(key)
            except KeyError:  # evicted by another thread meanwhile
                pass

        return {
            "cache": cache,
            "lookup": cache.get,
            "touch": touch,
            "next_call": self._stats.calls.__next__,
            "begin": functools.partial(_miss.begin, self, plan),
            "key_pair": self._key_pair(plan), "remembered": self._memo.remembered,
            "dynamic_error": functools.partial(self._failed_dynamic, plan),
            "failed": functools.partial(self._failed, plan),
            "uncomparable": functools.partial(_miss.uncomparable, self, plan),
            "reroute": self._reroute, "route": self._dispatcher,
        }

    def _reroute(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Keyword names seen before with another number of positionals: point those names at this shape."""
        plan, code = self._plan_and_code(args, kwargs)
        self._route(plan, code["dispatch"])
        return code["dispatch"](args, kwargs)

    def _key(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._plan_and_code(args, kwargs)[1]["key"](args, kwargs)

    def _key_pair(self, plan: Plan) -> _codegen.KeyPair:
        """The key pair of a static value that is not atomic: a container (remembered by identity when it is
        safe) or another hashable object. Raises the user-facing error for values that cannot be static."""
        memo, function, freeze = self._memo, self._name, _freeze.freeze

        def key_pair(value: Any, j: int) -> tuple[Any, Any]:
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

        return key_pair


__all__ = ["Core"]
