"""``Donate[T]``: buffer donation declared where the parameter is declared, and errors that name the donated path.

``Donate[T]`` is ``Annotated[T, DONATE]``, so to a type checker ``params: Donate[Params]`` is a ``Params``. ``js.jit``
and ``js.pmap`` read it as ``donate_argnames`` (adding to the options); transforms that cannot donate (``grad``,
``vmap``, ``shard_map``) keep the function's signature and annotations, so the mark reaches the jit above them.

Errors: a call that raises is looked at in ``_donate_errors`` (``explain_failure``, from the core's failure path
only), and when a dynamic argument held an array deleted before the call (not one the call itself consumed), or one
buffer is passed twice where one use is donated, JAX's error is
raised again as a ``DeletedArrayError`` that subclasses JAX's own class (so ``except ValueError`` still works) and
names the function, the parameter, the path inside it and, where jaxstatic donated it, the donating call.

Cost: nothing on the calls of functions that donate nothing. A donating program is wrapped (``recording``): each
call notes its donated arguments and the call site, in C where the extension is built (``benchmarks/donation.py``
measures the hit).
"""

from __future__ import annotations

import collections
import dataclasses
import inspect
import os
import re
import sys
import types
import warnings
import weakref
from collections.abc import Callable, Iterable
from typing import Annotated, Any, get_args, get_origin

import jax

from . import _extension, _lazy, _naming, _options, _traceback
from ._annotations import (
    DONATE as DONATE,
    STATIC,
    Donate as Donate,
    function_hints,
    unwrap,
)
from ._errors import AnnotationError, JaxstaticError, option_error
from ._options import ParamOptions
from ._public import name_as_exported


class DeletedArrayError(JaxstaticError):
    """A call received an array whose buffer was deleted (donated earlier, or ``x.delete()``), or one buffer
    twice where one use is donated. Raised as a subclass of the class JAX raised (``RuntimeError``,
    ``ValueError``), so ``except`` clauses written for JAX's error still catch it."""


class UnusableDonationError(JaxstaticError, RuntimeError):
    """Strict donation: a donated buffer could not be reused by the computation (no output of its shape and
    dtype), so donating it saved no memory. Raised instead of JAX's warning under ``strict_donation``."""


def is_deleted(leaf: Any) -> bool:
    """Whether ``leaf`` is an array whose buffer was deleted (donated, or ``x.delete()``)."""
    try:
        return bool(leaf.is_deleted())
    except Exception:  # not an array, or an object whose is_deleted is not JAX's
        return False


# -- reading the annotations ------------------------------------------------------------------------------------


def _markers(hint: object) -> tuple[object, ...]:
    return get_args(hint)[1:] if get_origin(hint) is Annotated else ()


def declared(fn: Callable[..., Any], function: str, signature: inspect.Signature,
             static: frozenset[str]) -> tuple[str, ...]:
    """The parameters ``fn`` annotates ``Donate[...]``, in signature order; an ``AnnotationError`` for a mark no
    transform can honour (on a Static parameter, on ``*args``/``**kwargs``)."""
    if not _lazy.declares(unwrap(fn)):
        return ()
    hints = function_hints(fn, function)
    out = []
    for p in signature.parameters.values():
        marks = _markers(hints.get(p.name))
        if not any(m is DONATE for m in marks):
            continue
        if any(m is STATIC for m in marks) or p.name in static:
            raise AnnotationError(
                f"{function}: parameter {p.name!r} is both Static and Donate. A Static value is a Python value "
                "compiled into the program: it has no buffer to donate. Drop Donate[...], or make it dynamic.")
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise AnnotationError(
                f"{function}: Donate[...] on {'*' if p.kind is p.VAR_POSITIONAL else '**'}{p.name} is not "
                "supported. Donate named parameters, or give donate_argnums= for the extras.")
        out.append(p.name)
    return tuple(out)


def with_declared(fn: Callable[..., Any], function: str, signature: inspect.Signature, static: frozenset[str],
                  params: ParamOptions) -> ParamOptions:
    """``params`` with the ``Donate[...]`` parameters added to the donated ones (options and marks combine)."""
    names = set(params.donate) | set(declared(fn, function, signature, static))
    return dataclasses.replace(params, donate=tuple(n for n in signature.parameters if n in names))


def donate_argnames(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The names of ``fn``'s ``Donate`` parameters, for ``jax.jit(fn, donate_argnames=...)``."""
    function = _naming.display_name(fn)
    return declared(fn, function, _lazy.signature(fn), frozenset())


def donate_argnums(fn: Callable[..., Any]) -> tuple[int, ...]:
    """The positions of ``fn``'s positional ``Donate`` parameters, for ``donate_argnums=``."""
    names = set(donate_argnames(fn))
    return tuple(i for i, n in enumerate(_options.positional(_lazy.signature(fn))) if n in names)


# -- recording donations ----------------------------------------------------------------------------------------

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


@dataclasses.dataclass(frozen=True)
class Donation:
    """Where jaxstatic donated a buffer: the function, its parameter and the caller's ``file:line``."""

    function: str
    parameter: str
    site: str


# Each donating call that succeeds records its donated arguments and where it was made (the caller's code and the
# offset of its last instruction: ``f_lineno`` maps that offset to a line on every read, ~0.4 us, so the line is
# found only when an error needs it); a deleted leaf met later is looked up newest first. Held strongly, the last
# few: a donated buffer is deleted by the call, so what is held is Python objects, not memory, and recording costs
# no walk over the leaves (a weak reference per leaf cost ~0.3 us a leaf: benchmarks/donation.py). A program whose first call shows a donation JAX could not use
# (its warning) records weak references instead, so that no buffer it did not consume is kept alive.
_held: collections.deque[tuple[Any, str, str, types.CodeType, int]] = collections.deque(maxlen=4)
_weak: collections.deque[tuple[tuple[weakref.ref[Any], ...], str, str, types.CodeType, int]] = collections.deque(
    maxlen=64)


def donation_of(leaf: object) -> Donation | None:
    """Where jaxstatic donated ``leaf``, among its latest donating calls."""
    for value, function, name, code, offset in reversed(_held):
        if any(x is leaf for x in jax.tree_util.tree_leaves(value)):
            return Donation(function, name, f"{code.co_filename}:{_line(code, offset)}")
    for refs, function, name, code, offset in reversed(_weak):
        if any(ref() is leaf for ref in refs):
            return Donation(function, name, f"{code.co_filename}:{_line(code, offset)}")
    return None


def _line(code: types.CodeType, offset: int) -> int:
    """The source line of the instruction at byte ``offset`` of ``code`` (what ``frame.f_lineno`` reads)."""
    for start, end, line in code.co_lines():
        if start <= offset < end and line is not None:
            return line
    return code.co_firstlineno


def _caller(frame: types.FrameType) -> types.FrameType:
    """The first frame outside jaxstatic (its package and its generated code)."""
    while frame.f_back is not None and (frame.f_code.co_filename.startswith(_PACKAGE)
                                        or frame.f_code.co_filename.startswith(_traceback.GENERATED)):
        frame = frame.f_back
    return frame


def _weakly(value: Any) -> tuple[weakref.ref[Any], ...]:
    return tuple(weakref.ref(leaf) for leaf in jax.tree_util.tree_leaves(value) if hasattr(leaf, "is_deleted"))


def recording(program: Callable[..., Any], function: str, donated: Iterable[tuple[int, str]],
              strict: bool | None) -> Callable[..., Any]:
    """``program`` (a ``jax.jit``) that records where its donated arguments were donated; under ``strict``, one that
    raises ``UnusableDonationError`` where JAX would warn that donated buffers were not usable.

    With the extension, a ``Recorder`` in C takes the calls once the first has shown how to record (~0.1 us over
    the program's own call, no frame); without it, or for the first call, strict donation and weak records, the
    Python ``call`` below (~0.9 us: a frame, ``*args`` and ``sys._getframe``; ``benchmarks/donation.py``)."""
    pairs = tuple(donated)
    held, getframe, ours = _held.append, sys._getframe, (_PACKAGE, _traceback.GENERATED)
    switch = _Switch
    # Whether the program's donations are recorded weakly: unknown (None) until the first call compiles. A list the
    # Recorder reads too, so that neither holds the other (no cycle keeps a dropped program alive until a collection)
    weak: list[bool | None] = [None]

    def call(*args: Any, **kwargs: Any) -> Any:
        if weak[0] is None or (switch.strict if strict is None else strict):
            result, unusable = _watched(program, function, pairs, args, kwargs, strict)
            weak[0] = weak[0] or unusable
        else:
            result = program(*args, **kwargs)
        frame = getframe(1)  # recorded once the call succeeded: a refused call donated nothing
        if frame.f_code.co_filename.startswith(ours):
            frame = _caller(frame)
        code, offset = frame.f_code, frame.f_lasti
        del frame
        for i, name in pairs:
            if i < len(args):
                if weak[0]:
                    _weak.append((_weakly(args[i]), function, name, code, offset))
                else:
                    held((args[i], function, name, code, offset))
        return result

    extension = _extension.compiled
    if extension is not None:  # takes the calls itself once ``weak`` reads False
        recorder: Callable[..., Any] = extension.Recorder(
            program=program, watch=call, append=held, function=function, pairs=pairs, ours=ours,
            strict=-1 if strict is None else int(strict), weak=weak)
        return recorder
    for name in ("lower", "trace", "eval_shape", "clear_cache"):
        if hasattr(program, name):
            setattr(call, name, getattr(program, name))
    return call


# -- strict donation --------------------------------------------------------------------------------------------

_UNUSABLE = "Some donated buffers were not usable"


def _from_environment() -> bool:
    return os.environ.get("JAXSTATIC_STRICT_DONATION", "") not in ("", "0", "false", "False")


class _Switch:
    strict = _from_environment()  # JAXSTATIC_STRICT_DONATION=1, read on import and by set_strict_donation(None)


def set_strict_donation(strict: bool | None) -> None:
    """Make donation strict (``True``) or not for every ``js.jit`` that does not say otherwise (``strict_donation=``);
    ``None`` reads the ``JAXSTATIC_STRICT_DONATION`` environment variable again. Checked when a program compiles."""
    _Switch.strict = _from_environment() if strict is None else bool(strict)
    if _extension.extension is not None:
        _extension.extension.strict_donation(_Switch.strict)  # what a Recorder in C reads


set_strict_donation(None)


def check_strict(function: str, value: Any) -> bool | None:
    if value is not None and type(value) is not bool:
        raise option_error("strict_donation", function, f"is {value!r}",
                           "Give True (raise where a donated buffer is not usable), False or None.")
    return value


def _watched(program: Callable[..., Any], function: str, pairs: tuple[tuple[int, str], ...], args: tuple[Any, ...],
             kwargs: dict[str, Any], strict: bool | None) -> tuple[Any, bool]:
    """The call, and whether JAX warned that donated buffers were not usable (re-issued, or raised when strict).
    JAX warns while it compiles; warnings are process-wide state, so strict mode is for single-threaded loops."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = program(*args, **kwargs)
    unusable = [w for w in caught if str(w.message).startswith(_UNUSABLE)]
    if unusable and (_Switch.strict if strict is None else strict):
        getattr(program, "clear_cache", lambda: None)()  # compiled again next time, so it raises again
        raise UnusableDonationError(_unusable_message(function, str(unusable[0].message), pairs, args))
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return result, bool(unusable)


def _aval(leaf: Any) -> str:
    return f"{leaf.dtype}[{','.join(map(str, leaf.shape))}]"


def _unusable_message(function: str, text: str, pairs: tuple[tuple[int, str], ...], args: tuple[Any, ...]) -> str:
    # "float32[3,4], int32[]." (jax 0.5 and later) or "ShapedArray(float32[3,4]), ..." (before)
    listed = re.findall(r"\w+\[[\d,\s]*\]", text.split("\n")[0])
    listed = [aval.replace(" ", "") for aval in listed]
    wanted: dict[str, int] = {}
    for aval in listed:
        wanted[aval] = wanted.get(aval, 0) + 1
    paths = []
    for i, name in pairs:
        for path, leaf in jax.tree_util.tree_flatten_with_path(args[i] if i < len(args) else None)[0]:
            aval = _aval(leaf) if hasattr(leaf, "shape") else ""
            if wanted.get(aval):
                wanted[aval] -= 1
                paths.append(f"{name}{jax.tree_util.keystr(path)} ({aval})")
    where = ", ".join(paths) or ", ".join(listed)
    return (f"{function}: donated buffers could not be reused, so donating them saves no memory: {where}. An "
            "input buffer is reused only for an output of the same shape and dtype. Return a value of that shape, "
            "or stop donating it (drop Donate[...] or its donate_argnums entry); strict_donation=False warns instead.")


__all__ = ["DONATE", "DeletedArrayError", "Donate", "Donation", "UnusableDonationError", "declared", "donate_argnames",
           "donate_argnums", "is_deleted", "donation_of", "check_strict", "recording", "set_strict_donation",
           "with_declared"]


name_as_exported(globals())  # last, so that every class _public.ERRORS declares here is defined
