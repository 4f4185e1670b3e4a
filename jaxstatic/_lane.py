"""The exact-key lane: cache hits at ``jax.jit``'s own cost, for calls whose static values all compare exactly.

``jax.jit`` keys its static arguments in C++ by type and ``==`` (``f(x, 1)``, ``f(x, 1.0)`` and ``f(x, True)`` are
three programs). For the types in ``_freeze.LANE`` (int, bool, str, bytes, None, numpy integers: the atomic types
whose values cannot be weakly referenced) that is jaxstatic's own rule, and such a value is its own key. Functions
and classes are atomic too, but JAX's caches would keep them (and what a closure holds) after ``clear_cache()``
and after the function is dropped, so they stay on the general path, which releases them; except a function or
class its module holds under its own name (``jnp.tanh``, ``len``, a module-level ``def``), which lives as long
as its module anyway: the lane keeps those (``kept``). So a call whose static values are all of those needs
nothing of ours beyond counting it: the lane hands it to a ``jax.jit`` of the function whose ``static_argnums`` are
its ``Static`` parameters. What stays jaxstatic's:

- one generated Python frame (``_codegen.generate_lane``): the user's parameters by name, so that Python binds any
  call shape in C (and reports a missing argument as the function would); it counts the call (hits) and checks
  each static value's type. Where the C extension was built, ``_hit_in_c`` puts the same work in front
  of it in C for the calls it takes whole (the values given in the declared order, Static defaults left out):
  then a hit runs no frame of jaxstatic's, and the frame takes the other calls;
- the traced body, which JAX runs on its own misses only: it counts the trace, explains it and applies
  ``max_traces``, exactly as the general path's body does;
- every other call goes the general path (``_core``): an extra positional argument (to get the function's own
  error), a dynamic parameter with a default left out, or a static value of any other type (a float, since
  ``0.0 == -0.0``; a container; a local function). The first such value switches the function to the general
  path's dispatcher for good, so general calls pay no extra frame for the lane.

A key whose static values are all exact is always served by the lane's program, even when the general path finds it
(``adapter``): the two paths never trace the same key twice. The lane is taken by ``jit`` without options other than
``static_argnums``/``static_argnames``, at the default ``cache_size`` (JAX's own cache then bounds the lane), for
functions without ``*args``/``**kwargs`` (whose extras JAX could not mark static by position).
"""

from __future__ import annotations

import collections
import functools
import operator
import sys
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import jax

from . import _c_hits, _codegen, _compat, _explain, _extension, _freeze, _naming, _typecheck
from ._parts import Owner
from ._plan import Layout, Plan

MakeProgram = Callable[[Callable[..., Any], tuple[int, ...], tuple[str, ...]], Any]


def eligible(layout: Layout, declared: Mapping[str, Any]) -> bool:
    """A signature the lane can take: named parameters only, none spelled like the generated code's own names, and
    no static parameter declared a type none of whose values the lane takes (``declared``: ``T`` of each
    ``Static[T]``). A ``Static[dict]`` function would otherwise install the lane on its first call, only to switch
    off it on its second (``Lane.switch``), the slowest way to what is a hit in meaning."""
    return _compat.LANE and all(p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and not p.name.startswith("_js_")
                                and (p.name not in declared or may_be_exact(declared[p.name]))
                                for p in layout.signature.parameters.values())


def may_be_exact(declared: Any) -> bool:
    """Whether a value declared ``Static[declared]`` may be one the lane takes: false for a type none of whose
    values it takes (``dict``, ``list``, ``tuple``, ``float``, a user's class, ...), true where unsure (``Any``, a
    union, a protocol, a name that does not resolve)."""
    origin = typing.get_origin(declared) or declared
    if origin is typing.Union or origin is getattr(types, "UnionType", None):
        return any(may_be_exact(arg) for arg in typing.get_args(declared))
    if declared is None or declared is Any:  # Any: a class of its own since Python 3.11
        return True
    if not isinstance(origin, type):
        return True
    try:
        return any(issubclass(t, origin) for t in _freeze.LANE | _KEEPABLE)
    except TypeError:  # a class whose subclass check refuses plain classes
        return True


class Lane:
    """The lane of one function: its ``jax.jit`` program, its ``__call__``, and the canonical call shape (every
    positional parameter by position, every keyword-only one by name) in which the lane always calls JAX."""

    def __init__(self, owner: Owner, make: MakeProgram, general: Callable[..., Any],
                 plain: Callable[[Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any]) -> None:
        layout = owner._transform._layout()
        params = list(layout.signature.parameters.values())
        # ``general``: any call, the general path's way; ``plain``: a call of the lane's own made again, as the
        # ``_miss.Miss`` (``Miss.plain``) the lane's ``__call__`` runs (``switch``)
        self.owner, self.general, self.plain, self.switched = owner, general, plain, False
        # The keys traced, oldest first, at most cache_size: cache_info's programs (JAX's own count is per shape)
        self.keys: collections.OrderedDict[Any, None] = collections.OrderedDict()
        self.kept: dict[int, Any] = {}  # id -> module-level function or class the lane takes (``admits``)
        self.positional = [p.name for p in params if p.kind is not p.KEYWORD_ONLY]
        self.positional_only = frozenset(p.name for p in params if p.kind is p.POSITIONAL_ONLY)
        self.kwonly = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
        self.ndynamic = sum(p.name not in layout.static for p in params)
        self.statics = [p.name for p in params if p.name in layout.static]
        self.kwonly_dynamic = any(n not in layout.static for n in self.kwonly)
        self.plan, code = owner._plan_and_code((None,) * len(self.positional), dict.fromkeys(self.kwonly))
        self.key: Callable[..., Any] = code["key"]
        argnums = tuple(i for i, n in enumerate(self.positional) if n in layout.static)
        argnames = tuple(n for n in self.kwonly if n in layout.static)
        self.program = make(self._body(layout), argnums, argnames)
        namespace = {"_js_fast": self.program, "_js_next": owner._stats.calls.__next__, "_js_other": self.other,
                     "_js_kept": self.kept.get,
                     "_js_switch": self.switch,
                     "_js_dynamic_error": functools.partial(owner._failed_dynamic, self.plan),
                     "_js_failed": functools.partial(owner._failed, self.plan)}
        self.entry = _codegen.generate_lane(layout, namespace, owner._name)
        self.call: Callable[..., Any] = _hit_in_c(self, owner, layout) or self.entry  # the class's __call__

    def _body(self, layout: Layout) -> Callable[..., Any]:
        """What JAX traces on its misses: the user's function, its trace counted and explained as the general path's
        body (``_body``) counts and explains its own, by the same flat key."""
        owner, plan, key_of = self.owner, self.plan, self.key
        from . import _hidden

        stats, fn = owner._stats, owner._transform._fn
        labels = [name for name, _ in plan.statics]

        def body(*args: Any, **kwargs: Any) -> Any:
            # read at each trace (a call runs through an object holding the function), never held by the program
            fn = owner._transform._traced_fn()
            call = _hidden.explaining(fn, layout.static)
            if _compat.jit_disabled():
                return stats.run_eagerly(call, args, kwargs)
            _typecheck.check(owner._transform._fn, owner._name, plan.static_values(args, kwargs))  # JAX's miss: new values
            key = key_of(args, kwargs)
            signature = _explain.call_signature(zip(labels, _codegen.static_keys(key)),
                                                ((n, src.get(args, kwargs)) for n, src in plan.dynamics))
            # counted in the body itself (``TraceStats.tracing``), as the general path's body is
            with stats.tracing(signature, owner._programs.why_again(key)):
                out = call(*args, **kwargs)
            owner._transform._after_trace(fn)
            self.traced(key)
            return out

        _naming.name_program(body, fn, owner._name, layout.signature)
        return body

    # -- calls the lane does not take -------------------------------------------------------------------------

    def canonical(self, pos: tuple[Any, ...], kwonly: dict[str, Any],
                  rest: tuple[Any, ...]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The call rebuilt from the lane's bound parameters: positionals up to the first one left out, the others by
        name (so the general path binds it as the caller's call, and fails it with the same message). A
        positional-only parameter past one left out holds its Static default, which the lane filled in (no call can
        give it): left out too."""
        given = len(pos)
        for i, value in enumerate(pos):
            if value is _codegen.NO:
                given = i
                break
        kwargs = {n: v for n, v in zip(self.positional[given:], pos[given:])
                  if v is not _codegen.NO and n not in self.positional_only}
        kwargs.update((n, v) for n, v in kwonly.items() if v is not _codegen.NO)
        return pos[:given] + rest, kwargs

    def other(self, _handle: Any, pos: tuple[Any, ...], kwonly: dict[str, Any], rest: tuple[Any, ...]) -> Any:
        """A call missing an argument or given extra ones (``_handle``: the object called): the general path, which
        binds it or says why not."""
        return self.general(*self.canonical(pos, kwonly, rest))

    def switch(self, fn: Any, pos: tuple[Any, ...], kwonly: dict[str, Any]) -> Any:
        """A static value the lane has not taken yet, as a call for the lane's ``__call__`` to run (a ``_miss.Miss``): a
        module-level function or class is kept, and the call taken; any other from now on makes the general path's
        dispatcher ``__call__`` (the lane's frame would only add to every such call), this call goes the general
        path (``Core._first_call``), and keys the lane has seen stay the lane's (``adapter``)."""
        values = dict(zip(self.positional, pos), **kwonly)
        if not self.switched and all(self.admits(values[name]) for name in self.statics):
            return self.plain(functools.partial(self.entry, fn), pos, kwonly)
        if not self.switched:
            self.switched = True
            self.owner._unspecialize()
            try:
                plan, code = self.owner._plan_and_code((None,) * len(self.positional), {})
            except TypeError:  # a keyword-only parameter without a default: no positional shape to specialize
                pass
            else:
                owner = self.owner
                owner._specialize(_c_hits.shape_call(owner, plan, code["entry"], owner._namespace(plan)))
            _c_hits.keyword_calls(self.owner)  # the shapes met so far: hits in C of their own
        return self.owner._first_call(*self.canonical(pos, kwonly, ()))

    # -- keys the general path meets -------------------------------------------------------------------------

    def admits(self, value: Any) -> bool:
        """Whether the lane takes this static value: of an exact type, or a function or class that its module
        holds under its name (kept from now on)."""
        if type(value) in _freeze.LANE or self.kept.get(id(value)) is value:
            return True
        if type(value) not in _KEEPABLE:
            return False
        try:  # a module's own __getattr__ may do anything: any failure means "not found"
            name = value.__qualname__
            found: Any = sys.modules.get(value.__module__) if "<" not in name else None  # <locals>, <lambda>
            for part in name.split("."):
                found = getattr(found, part, None)
        except Exception:
            return False
        if found is not value:
            return False
        self.kept[id(value)] = value
        return True

    def serves(self, plan: Plan, key: tuple[Any, ...]) -> bool:
        """Whether ``key`` is the lane's: every dynamic parameter given, every static value one it admits (a key
        pair's type is the value's own type only for atomic values: a float's pair holds its bits)."""
        return len(plan.dynamics) == self.ndynamic and all(
            t in _freeze.LANE or (t in _KEEPABLE and self.admits(v)) for t, v in zip(key[1::2], key[2::2]))

    def serves_aot(self, plan: Plan, key: tuple[Any, ...]) -> bool:
        """Whether ahead-of-time objects for ``key`` come from the lane's program: when it serves the key and JAX's
        compiled program takes every dynamic value by position, as ``_aot.Compiled`` passes them, and the call gave
        them so (the lane's program takes them in signature order, the plan's keywords come by name)."""
        return (self.serves(plan, key) and not self.kwonly_dynamic
                and all(src.kind == "arg" for _, src in plan.dynamics))

    def aot(self, method: str, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``lower``/``trace``/``eval_shape`` of the lane's program for this call, made canonical: a later call
        with these values finds what this traced, as with ``jax.jit``."""
        dynamic = {name: src.get(args, kwargs) for name, src in plan.dynamics}
        call_args, call_kwargs = plan.layout.assemble(dynamic, plan.static_values(args, kwargs))
        return getattr(self.program, method)(*call_args, **call_kwargs)

    def adapter(self, plan: Plan, key: tuple[Any, ...]) -> Callable[..., Any]:
        """The general path's program for a key the lane serves: the lane's program, called canonically (an exact
        key's values are the values themselves)."""
        statics = dict(zip([name for name, _ in plan.statics], key[2::2]))
        names, assemble, program = [name for name, _ in plan.dynamics], plan.layout.assemble, self.program

        def via_lane(*dynamic: Any) -> Any:
            args, kwargs = assemble(dict(zip(names, dynamic)), statics)
            return program(*args, **kwargs)

        via_lane.lane = True  # type: ignore[attr-defined]  # not a program of its own (cache_info's currsize)
        return via_lane

    def arguments(self, plan: Plan, key: tuple[Any, ...], args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """The arguments ``adapter``'s program gives the lane's for this call: laid out canonically, so that its
        later calls find the trace this one makes."""
        pos, _ = plan.dynamic_values(args, kwargs)
        statics = dict(zip([name for name, _ in plan.statics], key[2::2]))
        return plan.layout.assemble(dict(zip([name for name, _ in plan.dynamics], pos)), statics)

    def traced(self, key: Any) -> None:
        """A key traced: listed as held, newest last. JAX's compiled-program cache holds at most ``cache_size``
        (8192) programs, shared by every ``jax.jit`` of the process: past that many keys, the oldest traced is
        counted as evicted (``cache_info().evictions``), as the general path counts its own; JAX may drop a program
        sooner for another function's, and a retrace then says so."""
        with self.owner._stats.lock:
            self.keys[key] = None
            self.keys.move_to_end(key)
            while len(self.keys) > self.owner._stats.options.cache_size:
                self.keys.popitem(last=False)
                self.owner._stats.evictions += 1

    def currsize(self) -> int:
        """Programs held: the lane's and the general path's own, at most ``cache_size``: each is a ``jax.jit``
        program, and JAX's cache of compiled programs holds at most that many (8192), shared by the process."""
        cache = self.owner._programs.cache
        # the plain dict's values: no key is hashed, so no Python code runs and a hit's move_to_end in another
        # thread cannot come in between (an OrderedDict's own values() looks each key up)
        own = sum(not getattr(p, "lane", False) for p in list(dict.values(cache)))
        return min(own + len(self.keys), self.owner._stats.options.cache_size)


def _hit_in_c(lane: Lane, owner: Owner, layout: Layout) -> Callable[..., Any] | None:
    """The lane's hit in C, or None where it was not built: it takes the calls ``lane.entry`` would hand JAX at
    once, in the same canonical shape, and hands every other call to ``lane.entry``."""
    compiled = _extension.compiled
    if compiled is None:
        return None
    params = list(layout.signature.parameters.values())
    names = lane.positional + lane.kwonly  # the canonical order: positional parameters, then keyword-only ones
    # A Static default left out is passed to JAX as itself, as ``entry`` passes it; a dynamic one goes to ``entry``
    defaults = {p.name: p.default if p.default is not p.empty and p.name in layout.static else _codegen.NO
                for p in params}
    call: Callable[..., Any] = compiled.LaneCall(
        program=lane.program, fallback=types.MethodType(lane.entry, owner),
        failed=functools.partial(_c_hits.raise_failed, owner, lane.plan),
        allowed=_freeze.LANE, kept=lane.kept, names=tuple(names), kwonly=tuple(lane.kwonly),
        positional_only=sum(p.kind is p.POSITIONAL_ONLY for p in params),
        statics=tuple(i for i, n in enumerate(names) if n in layout.static), calls=owner._stats.calls,
        defaults=tuple(defaults[n] for n in names), missing=_codegen.NO)
    return call


_KEEPABLE: frozenset[type] = frozenset({
    types.FunctionType, types.BuiltinFunctionType, type, type(jax.jit(operator.pos))})
"""The types of static values the lane keeps when their module holds them under their names."""


__all__ = ["Lane", "eligible", "may_be_exact"]
