"""Transformed functions shared across rebuilds, as JAX shares compiled programs: ``js.jit(f)`` made again with the
same function (by identity) and equal options is the function made the first time, with its programs.

Code often applies a transform inside the function it calls (``def apply(x): return js.jit(f)(x)``, a library that
jits a user's callback, a notebook cell run again). ``jax.jit`` shares its compiled programs process-wide per
function and options, so that traces once; a jaxstatic function owns its cache, so without this it would trace on
every call (measured ~500x slower). The same holds for stacks: ``js.jit(js.grad(f))`` rebuilt finds the grad made
before, and then the jit made over it.

Where the shared functions are kept: in the user's function itself, under ``ATTRIBUTE`` in its ``__dict__``, keyed
by the transform and its options. A registry outside the function would keep every function alive for ever; kept
in the function, they go with it. What is kept there is the transform, with its core (``_core.Core``: the
programs, statistics and call shapes), which holds the function only weakly; ``js.jit(f)`` returns a handle sharing
the transform's ``__dict__``, core, class and hit in C, which holds ``f`` (the handle alive is returned again:
``js.jit(f) is js.jit(f)``). So no reference cycle runs through the function, and as with ``jax.jit`` an array a
closure captured is freed at the ``del`` of the last reference to the function and its jitted function, garbage
collector or not: when the function goes, its cores' programs go with it (``jax.jit``'s programs hold the arrays
they closed over), and a function not shared (a bound method, a partial) has a transform and a handle too, whose
programs go with the handle. The programs' bodies read the function through the transform at each trace, and hand
JAX, for its debug info, a stub of the function's code (``_naming.debug_stub``) that holds nothing of the
function's.

What is shared and what not:

- plain Python functions (``types.FunctionType``), objects that live across calls (a callable instance with a
  ``__dict__`` that is no pytree, a jaxstatic ``custom_vjp``), and the jaxstatic transforms made over them with
  equal options, which are frozen as static values are (``1`` and ``True`` differ), spelled any way JAX reads alike
  (``static_argnums=1`` or ``(1,)``, keywords in any order), and ``functools.partial`` objects; options that cannot
  be frozen, and any other callable (a bound method), make a function of their own;
- a closure, a partial or a function with defaults made again (``js.jit(make_train(config))`` in a sweep): of the
  same code, closing over values equal as static values are (``_closures``, read when it is wrapped), it joins the
  transform made before (``_CLOSURES``), kept in its own ``__dict__`` too; the latest ``RECENT`` are kept after their
  functions go, so that one made again after the last is dropped still finds them. One whose values changed since
  it was made joins nothing, and its trace runs a function that still closes over the values it is shared under
  (``traced_function``); one that cannot be joined says why at its first trace (``_closures.made_again``). A
  transform over one that closures share (``js.jit(js.vmap(make_train(config)))``) is kept in the handle's own
  closure: one per closure, released with it;
- a function whose code, defaults or annotations were replaced in place since (a debugger, autoreload) finds a
  function made again, with the new signature;
- transforms with state set after they are made (``custom_vjp``/``custom_jvp``, whose rules come later) are never
  shared themselves, nor ``pmap``, whose traced body JAX keeps until ``jax.clear_caches()`` (so the function's
  shared functions would be kept with it);
- at most ``LIMIT`` option sets per function, the oldest forgotten first (bounded memory: a forgotten one lives on
  while something holds it).

``jax.clear_caches()`` clears every shared function's programs (its static values released) and forgets them. The
statistics are the function's: ``trace_count``, ``retraces`` and ``cache_info()`` of a rebuilt wrapper count every
call made through any of its rebuilds, ``clear_cache()`` clears the programs they share, and ``max_traces`` bounds
them together, so a ``jaxstatic.testing`` budget sees each trace once.

Cost: building ``js.jit(f)`` again is one frozen key, one dict lookup and four identity tests (no signature read,
no code generated); a closure made again adds one read of what it closes over (``_closures``).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import operator
import sys
import threading
import types
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import jax

from . import _closures, _compat, _freeze
from ._errors import closure_changed_error
from ._options import as_tuple

ATTRIBUTE = "_jaxstatic_shared"
"""The name, in a function's ``__dict__``, of the transformed functions made from it (a ``Shared``). A single
underscore: ``functools.update_wrapper`` copies it to other wrappers, whose entries the key keeps apart, and
jaxstatic's own transforms copy no private attribute."""

LIMIT = 32
"""Option sets kept per function (``js.jit(f, static_argnums=i)`` for many ``i`` stays bounded)."""

# Held for dict operations only. Reentrant: a key holding an option of the user's (a policy callable, a mesh) may
# run its __eq__ in a lookup, and that may make a transformed function too.
_LOCK = threading.RLock()


class Shared(dict[Any, Any]):
    """The transformed functions made from an object, by ``(transform class, frozen options, inner key, id of the
    object)``, oldest first. Two functions may hold one (``functools.wraps`` copies it into a wrapper's
    ``__dict__``; IPython's autoreload gives the old and the new function one ``__dict__``): the id in the key
    keeps their entries apart, and an entry holds its object, so that id is not reused while the entry lives."""

    __slots__ = ("__weakref__",)

    def __reduce__(self) -> tuple[type[Shared], tuple[()]]:
        """Pickled empty (a function pickled by value takes its ``__dict__`` along): programs stay in their
        process."""
        return Shared, ()

    def __copy__(self) -> Shared:
        return Shared()

    def __deepcopy__(self, memo: dict[int, Any]) -> Shared:
        return Shared()


_ALL: weakref.WeakValueDictionary[int, Shared] = weakref.WeakValueDictionary()  # by id: a dict has no hash


def _key(cls: type, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any] | None:
    """``(object holding the entry, key)``, or None where this transform of ``fn`` is not shared."""
    if not getattr(cls, "_shares", True):
        return None
    # a jaxstatic transform made here (one copied by another wrapper's update_wrapper is not one)
    inner = fn.__dict__.get("_shared_as") if isinstance(type(fn), FindOrMake) else None
    if inner is not None:
        base_ref, inner_key = inner
        # over a transform closures share (``_closures``): kept in this handle's own closure, which it lives with
        base = fn._keep if "_closure_bases" in fn.__dict__ else base_ref()
        if base is None:
            return None
    elif type(fn) is types.FunctionType or type(fn) is functools.partial or _keeps(fn):
        base, inner_key = fn, None
    else:
        return None
    try:
        named = [(k, _frozen(as_tuple(v) if k in _SEQUENCES else v)) for k, v in kwargs.items()
                 if k not in _SEQUENCES or as_tuple(v)]  # None, () and leaving it out are one
        options = tuple(_frozen(v) for v in args), tuple(sorted(named) if len(named) > 1 else named)
    except (_freeze.Unfreezable, TypeError):
        return None
    return base, (cls, options, inner_key, id(base))


def _keeps(fn: Any) -> bool:
    """An object other than a function that lives across calls and keeps the transforms made from it: one of
    jaxstatic's own (a ``custom_vjp``, not shared itself since its rules come later), or an instance of a class
    that defines ``__call__`` in Python and has a ``__dict__`` (a model's ``__call__``); ``jax.jit`` rebuilt over
    either traces once."""
    t = type(fn)
    if isinstance(t, FindOrMake):
        return True
    call = next((c.__dict__["__call__"] for c in t.__mro__ if "__call__" in c.__dict__), None)
    if not isinstance(call, types.FunctionType) or type(getattr(fn, "__dict__", None)) is not dict:
        return False
    plain = _PLAIN.get(t)
    if plain is None:
        plain = _PLAIN[t] = jax.tree_util.all_leaves([fn])
    return plain


# Whether a class's instances are no pytree: a pytree (an equinox or flax module) is read attribute by attribute
# by its library (flax's nnx.split would take the transforms into the module's graph), so nothing is added to it.
_PLAIN: weakref.WeakKeyDictionary[type, bool] = weakref.WeakKeyDictionary()


def _version(base: Any) -> tuple[Any, ...]:
    """What a function's transforms were made from that a debugger or autoreload replaces in place (its code,
    defaults, annotations; an instance's class): an entry made from other ones is made again."""
    if type(base) is not types.FunctionType:  # a transform's class changes as it specializes (_core.Core._specialize): not read
        return () if isinstance(type(base), FindOrMake) else (type(base),)
    return base.__code__, base.__defaults__, base.__kwdefaults__, _annotations(base)


_annotations = operator.attrgetter("__annotate__" if sys.version_info >= (3, 14) else "__annotations__")


# Options one item of which may be given alone, or a sequence of any kind: one spelling for the key, as JAX
# resolves them into one program (``static_argnums=1``, ``(1,)`` and ``[1]`` are one function). Keyword order
# never counts either: the names are sorted.
_SEQUENCES = frozenset({"static_argnums", "static_argnames", "donate_argnums", "donate_argnames"})


def _frozen(value: Any) -> Any:
    """An option's key, as a static value's (``1`` and ``True`` differ): most are atomic (None, ints, bools,
    strings), keyed by type and value at once, where ``freeze`` of the whole call cost ~5x the lookup."""
    t = type(value)
    return (t, value) if t in _freeze.ATOMIC else _freeze.freeze(value)


def _holder(base: Any, create: bool) -> Shared | None:
    """The ``Shared`` in ``base``'s ``__dict__``, made if asked."""
    found = base.__dict__.get(ATTRIBUTE)
    if isinstance(found, Shared) or not create:
        return found if isinstance(found, Shared) else None
    holder = base.__dict__[ATTRIBUTE] = Shared()
    _ALL[id(holder)] = holder
    return holder


def find_or_make(cls: type, make: Callable[..., Any], fn: Any, args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> Any:
    """The transformed function ``cls(fn, *args, **kwargs)``: the one made before with this function and equal
    options, or with a function of the same code closing over equal values (``_closures``); else
    ``make(fn, *args, **kwargs)`` (kept for the next rebuild where it can be)."""
    found = _key(cls, fn, args, kwargs)
    closed = None
    if found is not None:
        base, key = found
        version = _version(base)
        with _LOCK:
            holder = _holder(base, create=False)
            made = None if holder is None else holder.pop(key, None)
            if holder is not None and made is not None and _same(made._version, version):
                holder[key] = made  # the most recently used last
                return made._handle(fn)
        closed = _closures.read(base) if key[2] is None else None
        if closed is not None and (joined := _join(base, key, closed, fn)) is not None:
            return joined
    made = make(fn, *args, **kwargs)
    made._made = (args, kwargs)  # what pickling by value rebuilds it from, with its function
    if found is None:
        return _own(made, fn)
    try:
        base_ref = weakref.ref(base, functools.partial(_released, weakref.ref(made)))
    except TypeError:  # an object without weak references: a function of its own
        return made
    with _LOCK:
        holder = _holder(base, create=True)
        assert holder is not None
        shared = holder.setdefault(key, made)  # another thread made it first: that one is shared
        if shared is made:
            # The transform, kept in base's __dict__, holds its function weakly (no reference cycle keeps the
            # function and the arrays it captured alive); the handle returned holds it.
            made._shared_as, made._version, made._base_ref = (base_ref, key), version, base_ref
            made._fn_ref, made._keep = weakref.ref(made._keep), None
            if closed is not None:
                _index(made, key, closed, base_ref)
        made = shared
        while len(holder) > LIMIT:
            del holder[next(iter(holder))]
        return made._handle(fn)


# Transforms of closures, by (transform class, options, family, closed-over key): a function of the same code closing
# over equal values joins the one found. Weak: a transform lives while a function holding it (in its ``__dict__``)
# does. ``_LATEST`` holds what the latest made per family closes over (bounded, ``LATEST`` families), to say why the
# next one could not join it, though the function is gone (``js.jit(lambda ...)(x)`` in a loop).
_CLOSURES: weakref.WeakValueDictionary[Any, Any] = weakref.WeakValueDictionary()
_LATEST: collections.OrderedDict[Any, _closures.Closed] = collections.OrderedDict()
LATEST = 256
# The latest shared ones, kept after their functions are gone: ``js.jit(make_train(config))(rng)`` in a sweep or a
# notebook cell run again drops each function before the next is made. Bounded; the oldest is released first.
_RECENT: collections.OrderedDict[int, Any] = collections.OrderedDict()
RECENT = 32


def _keep(made: Any) -> None:
    """``made`` kept as one of the ``RECENT`` latest shared, the oldest let go of (under ``_LOCK``)."""
    _RECENT[id(made)] = made
    _RECENT.move_to_end(id(made))
    while len(_RECENT) > RECENT:
        _, old = _RECENT.popitem(last=False)
        if not any(ref() is not None for ref in old._closure_bases):
            old._release()


def _index(made: Any, key: tuple[Any, ...], closed: _closures.Closed, base_ref: weakref.ref[Any]) -> None:
    """Make ``made`` the transform that functions closing over values equal to ``closed`` join (under ``_LOCK``);
    where an earlier one of the same code could not be joined, say why at its first trace."""
    made._closed, made._closure_bases, made._joined = closed, [base_ref], False
    family = (key[0], key[1], closed.family)
    earlier = _LATEST.get(family)
    _latest(family, closed)
    if closed.key is not None and closed.labels:  # a function closing over nothing is itself, as for jax.jit
        with contextlib.suppress(TypeError):  # a value whose hash fails: not shared
            if _CLOSURES.setdefault((*family, closed.key), made) is made:
                _keep(made)
    if earlier is not None:
        made._core._stats.made_again = _closures.made_again(earlier, closed)


def _latest(family: tuple[Any, ...], closed: _closures.Closed) -> None:
    """``closed`` the latest of its family (under ``_LOCK``); the oldest family forgotten past ``LATEST``."""
    _LATEST[family] = closed
    _LATEST.move_to_end(family)
    while len(_LATEST) > LATEST:
        _LATEST.popitem(last=False)


def _join(base: Any, key: tuple[Any, ...], closed: _closures.Closed, fn: Any) -> Any:
    """A handle over the transform of a function closing over values equal to ``closed``'s, kept in ``base`` too;
    None where there is none."""
    if closed.key is None:
        return None
    with _LOCK:
        try:
            made = _CLOSURES.get((key[0], key[1], closed.family, closed.key))
        except TypeError:
            return None
        if made is None or not _current(made):
            return None
        try:
            ref = weakref.ref(base, functools.partial(_released, weakref.ref(made)))
        except TypeError:
            return None
        holder = _holder(base, create=True)
        assert holder is not None
        holder[key] = made
        made._closure_bases = [*(r for r in made._closure_bases if r() is not None), ref]
        made._joined = True
        _latest((key[0], key[1], closed.family), closed)
        if made._fn_ref() is None:
            made._fn_ref = ref
        _keep(made)
        return made._handle(fn)


def _current(made: Any) -> bool:
    """Whether the functions ``made`` is kept in (if any lives) still close over the values it is shared under;
    if not, it is forgotten (under ``_LOCK``)."""
    closed = made.__dict__.get("_closed")
    live = [fn for ref in made._closure_bases if (fn := ref()) is not None]
    if closed is not None and (not live or any(_closures.matches(fn, closed) for fn in live)):
        return True
    _forget(made)
    return False


def traced_function(made: Any) -> Any:
    """The function a trace of ``made`` runs: one of its live handles' whose closed-over values are still those it
    is shared under (a cell rebound or a dict changed since it was made are not). None matches: a transform never
    joined is no longer shared, and runs its function as it is now (as ``jax.jit`` would); one joined by functions
    of other wrappers raises, naming what changed."""
    closed = made.__dict__.get("_closed")
    fn = made._fn
    if closed is None or closed.key is None:
        return fn
    functions = [h._keep for h in made._core._alive()] or [fn]
    for one in functions:
        if _closures.matches(one, closed):
            return one
    now = _closures.read(functions[0])
    if not made._joined:
        with _LOCK:
            _forget(made)
        return functions[0]
    raise closure_changed_error(closed.name, closed.where, _closures.why_not_shared(closed, now)[0])


def after_trace(made: Any, fn: Any) -> None:
    """A trace of ``made`` ran ``fn``: where it changed what ``fn`` closes over (a counter or log appended to), the
    programs depend on more than the values it is shared under, and no function joins it any more."""
    closed = made.__dict__.get("_closed")
    if closed is not None and not _closures.matches(fn, closed):
        with _LOCK:
            _forget(made)


def forget_closures() -> None:
    """No function made from now on joins one made before (tests of their own); those made go on as they are."""
    with _LOCK:
        kept = list(_RECENT.values())
        _RECENT.clear()
        _CLOSURES.clear()
        _LATEST.clear()
    for made in kept:
        if not any(ref() is not None for ref in made._closure_bases):
            made._release()


def _forget(made: Any) -> None:
    """``made`` no longer takes functions joining it."""
    _RECENT.pop(id(made), None)
    for k, v in list(_CLOSURES.items()):
        if v is made:
            del _CLOSURES[k]
    made._closed = None


def _own(made: Any, fn: Any) -> Any:
    """A function of its own (not shared), as ``jax.jit`` makes one: the handle returned holds ``fn``, and the
    programs go when the handle goes (its core's closures hold each other, which only the garbage collector frees)."""
    try:
        made._fn_ref = weakref.ref(made._keep)
    except TypeError:  # a callable without weak references: the object holds it itself
        return made
    made._keep = None
    handle = made._handle(fn)
    made._watch = weakref.ref(handle, functools.partial(_released, weakref.ref(made)))
    return handle


def _released(core: weakref.ref[Any], _: Any, finalizing: Callable[[], bool] = sys.is_finalizing) -> None:
    """The function a transform was kept in is gone: its programs go with it (``Core._release``)."""
    found = core()
    if found is not None and not finalizing():  # at exit, JAX's own modules may be gone already
        bases = found.__dict__.get("_closure_bases")
        alive = [ref for ref in bases if ref() is not None] if bases else None
        if alive:  # another function closing over equal values holds it still
            found._closure_bases, found._fn_ref = alive, alive[0]
            return
        if id(found) in _RECENT:  # kept for the next function closing over equal values
            return
        found._release()


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return len(a) == len(b) and all(map(operator.is_, a, b))


def clear_all() -> None:
    """``jax.clear_caches()``: every shared function's programs cleared, and none shared any more."""
    with _LOCK:
        holders = list(_ALL.values())
        made = [f for holder in holders for f in holder.values()]
        for holder in holders:
            holder.clear()
        _CLOSURES.clear()
        _LATEST.clear()
        made.extend(_RECENT.values())
        _RECENT.clear()
    for f in made:
        f.clear_cache()


class _ClearedWithJax:
    """What JAX's cache registry calls on ``jax.clear_caches()``."""

    def cache_clear(self) -> None:
        clear_all()

    def cache_info(self) -> None:
        return None

    def cache_keys(self) -> list[Any]:
        return []


_CLEARED_WITH_JAX = _ClearedWithJax()
_compat.register_jax_cache(_CLEARED_WITH_JAX, "jaxstatic: transformed functions shared across rebuilds")


class FindOrMake(type):
    """The metaclass of jaxstatic's transformed functions: making one goes through ``find_or_make``."""

    if not TYPE_CHECKING:  # type checkers read the class's own __init__ for its calls

        def __call__(cls, fn, /, *args, **kwargs):
            return find_or_make(cls, super().__call__, fn, args, kwargs)


__all__ = ["ATTRIBUTE", "LIMIT", "RECENT", "Shared", "FindOrMake", "after_trace", "clear_all", "find_or_make",
           "forget_closures", "traced_function"]
