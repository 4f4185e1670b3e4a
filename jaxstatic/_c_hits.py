"""The cache hits in C (``_hits.c``) of the general path: what builds them from a function's call shapes, attaches
them to the function, and what they hand a failure to (the lane builds its own, ``_lane``; both stand on
``_extension``, and see the function through ``_parts.Owner``).

A hit in C does exactly what the generated Python code of the same call does (``_codegen``), for the calls it
can take whole, and hands every other call to that code unchanged; so the two can never disagree about what a call
means, and an install without a C compiler (or run with ``JAXSTATIC_PURE_PYTHON=1``) behaves the same, a little
slower. Python calls an object whose class defines ``__call__`` in Python through its argument-tuple protocol, and
then runs a frame; measured on a 2-core machine, that costs 5-10% of a 6 us ``jax.jit`` hit, and a same-object dict
config's identity check ~0.7 us more. The C objects are installed as the class-level ``__call__``
(``Core._specialize``), so no frame of jaxstatic's runs on a hit, and ``attach`` points the function's own
call slot at them (``Base``), so no argument tuple or keyword dict is built for it either.

- ``LaneCall``, the exact-key lane's hit (built by ``_lane``): the call's values in the lane's canonical order
  (static defaults left out filled in), each static value's type checked, the call counted, JAX's program called.
- ``KeyCall``, the general path's hit for one call shape (``_core``), the first positional one and each other shape
  met (keywords, fewer positionals) in front of it (``keyword_calls``): the flat key built as
  ``_codegen`` builds it, for atomic values, floats other than zeros and NaN, containers remembered by identity
  (``_memo``) that still hold the same objects, and dicts rebuilt from the same objects as one remembered by its
  contents; looked up in the same cache; on a miss, or any other value, the generated dispatcher.
- ``Base``, ``StaticFunction``'s base class (``_extension``): each function's own call slot, which ``attach``
  points at its hit.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any, NoReturn

from . import _codegen, _extension, _freeze, _traceback
from ._parts import Owner
from ._plan import Plan


def attach(owner: object, entry: Callable[..., Any] | None) -> None:
    """``owner``'s class was just made with ``entry`` as its ``__call__`` (None: is about to be its shared class's):
    calls of ``owner`` now go straight to ``entry`` where it is a hit in C, and through its class otherwise."""
    extension = _extension.extension
    if extension is not None:
        extension.attach(owner, entry if isinstance(entry, (extension.LaneCall, extension.KeyCall)) else None)

_MAX_DYNAMIC = 64  # KeyCall's bound: a shape with more dynamic values keeps its generated dispatcher


def shape_call(owner: Owner, plan: Plan, entry: Callable[..., Any],
               namespace: dict[str, Any]) -> Callable[..., Any]:
    """The ``__call__`` of a positional call shape: ``entry``, its generated dispatcher (``namespace``: its names),
    behind its hit in C where that was built and every value of the shape comes by position or is a constant
    default; in front of that, the hits of the keyword shapes the function has met (``keyword_calls``); else
    ``entry`` itself."""
    compiled = _extension.compiled
    if compiled is None:
        return entry
    head = _shape_hit(owner, plan, types.MethodType(entry, owner), namespace, None)
    return entry if head is None else _with_keywords(owner, head)


_MAX_KEYWORD_SHAPES = 8  # other call shapes with a hit in C; calls of any other go through the generated code


def keyword_calls(owner: Owner) -> None:
    """After a call shape is met: where ``owner``'s calls go to the general path (its hit in C, or its class's
    ``__call__`` where no positional shape could be specialized), a hit in C for the shape goes in front, so a
    static passed by keyword costs what it costs by position (without it, the call goes through the positional
    shape's generated ``__call__`` and then the keyword shape's dispatcher: measured ~20% of a ``jax.jit`` hit for
    a float static by keyword)."""
    compiled = _extension.compiled
    if compiled is None or (owner._lane is not None and not owner._lane.switched):
        return  # no hits in C, or the lane's (which takes keywords itself)
    head = owner._head()  # None: the transform's own __call__
    if isinstance(head, compiled.KeyCall) or head is None:  # None: no positional shape specialized
        new = _with_keywords(owner, head)
    else:
        return
    if new is not head:
        owner._specialize(new)


def _with_keywords(owner: Owner, head: Any) -> Any:
    """``head`` behind the hits of the other call shapes ``owner`` has met (by keyword, or with fewer positional
    values) that it does not have yet (at most ``_MAX_KEYWORD_SHAPES``), newest first. Each hands what it does not
    serve (a miss) to its own shape's generated ``entry``, which runs the ``_miss.Miss`` itself."""
    have, hit = set(), head
    while hit is not None:
        have.add((hit.nargs, hit.kwnames or ()))
        hit = hit.other
    for plan, code in list(owner._shapes.values()):
        if len(have) > _MAX_KEYWORD_SHAPES:
            break
        if (plan.nargs, plan.kwnames) not in have:
            found = _shape_hit(owner, plan, types.MethodType(code["entry"], owner), owner._namespace(plan), head)
            if found is not None:
                head = found
                have.add((plan.nargs, plan.kwnames))
    return head


def _shape_hit(owner: Owner, plan: Plan, fallback: Any, namespace: dict[str, Any],
               other: Any) -> Any:
    """The hit in C of one call shape (values by position or by keyword, static defaults constant), or None."""
    compiled = _extension.compiled
    assert compiled is not None
    if len(plan.dynamics) > _MAX_DYNAMIC:
        return None
    where = {name: plan.nargs + j for j, name in enumerate(plan.kwnames)}

    def position(src: Any) -> int | None:
        return src.index if src.kind == "arg" else where.get(src.names[0]) if src.kind == "kw" else None

    dynamics = [position(src) for _, src in plan.dynamics]
    statics: list[Any] = []
    for _, src in plan.statics:
        found: Any = _codegen.constant_pair(src.default) if src.kind == "default" else position(src)
        statics.append(found)
    if None in dynamics or None in statics:
        return None
    remembered, contents, nested, shallow = owner._memo.dicts
    return compiled.KeyCall(
        fallback=fallback, failed=functools.partial(raise_failed, owner, plan),
        cache=owner._programs.cache, remembered=remembered, contents=contents, nested=nested, shallow=shallow,
        atomic=_freeze.ATOMIC, calls=owner._stats.calls,
        touch=namespace["touch"], vid=plan.vid, nargs=plan.nargs, statics=tuple(statics),
        dynamics=tuple(dynamics), kwnames=tuple(plan.kwnames), other=other)


def raise_failed(owner: Owner, plan: Plan, err: BaseException, args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> NoReturn:
    """A call a hit in C made raised ``err``: raise what the generated code raises, from the same handlers (a
    dynamic value JAX cannot trace named by its parameter; the failure counted; jaxstatic's frames hidden)."""
    try:
        try:
            raise err
        except TypeError as type_err:
            raise owner._failed_dynamic(plan, args, kwargs, type_err)  # noqa: B904 (chained as the generated code)
        except BaseException:
            owner._failed(plan, args, kwargs)
            raise
    except BaseException as exc:
        _traceback.hide(exc)
        raise


__all__ = ["attach", "shape_call", "keyword_calls", "raise_failed"]
