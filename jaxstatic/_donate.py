"""``Donate[T]``: buffer donation declared where the parameter is declared, and errors that name the donated path.

``Donate[T]`` is ``Annotated[T, DONATE]``, so to a type checker ``params: Donate[Params]`` is a ``Params``. ``js.jit``
and ``js.pmap`` read it as ``donate_argnames`` (adding to the options); transforms that cannot donate (``grad``,
``vmap``, ``shard_map``) keep the function's signature and annotations, so the mark reaches the jit above them.

Errors: a call that raises is looked at here (``explain_failure``, from the core's failure path only), and when a
dynamic argument holds a deleted array, or one buffer is passed twice where one use is donated, JAX's error is
raised again as a ``DeletedArrayError`` that subclasses JAX's own class (so ``except ValueError`` still works) and
names the function, the parameter, the path inside it and, where jaxstatic donated it, the donating call.

Cost: nothing on the calls of functions that donate nothing. A donating program is wrapped (``recording``): each
call notes, per donated leaf, a weak reference and the call site (``benchmarks/donation.py`` measures the hit).
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import sys
import warnings
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias, TypeVar, get_args, get_origin

import jax

from . import _options, _traceback
from ._annotations import STATIC, _Marker, function_hints, unwrap
from ._errors import AnnotationError, JaxstaticError, option_error
from ._options import ParamOptions

_T = TypeVar("_T")

DONATE = _Marker("DONATE")
"""The marker inside ``Donate[T]``, which is ``Annotated[T, DONATE]``."""

if TYPE_CHECKING:
    Donate: TypeAlias = Annotated[_T, DONATE]
else:

    class Donate:
        """``Donate[T]``: a dynamic parameter of type ``T`` whose buffers ``jaxstatic.jit`` and ``jaxstatic.pmap``
        donate to the computation (``donate_argnames``): the caller's arrays are deleted by the call, and their
        memory reused for the result. Use the value the function returns, not the one passed in."""

        def __class_getitem__(cls, item: object) -> object:
            return Annotated[item, DONATE]


class DeletedArrayError(JaxstaticError):
    """A call received an array whose buffer was deleted (donated earlier, or ``x.delete()``), or one buffer
    twice where one use is donated. Raised as a subclass of the class JAX raised (``RuntimeError``,
    ``ValueError``), so ``except`` clauses written for JAX's error still catch it."""


class UnusableDonationError(JaxstaticError, RuntimeError):
    """Strict donation: a donated buffer could not be reused by the computation (no output of its shape and
    dtype), so donating it saved no memory. Raised instead of JAX's warning under ``strict_donation``."""


for _cls in (DeletedArrayError, UnusableDonationError):
    _cls.__module__ = "jaxstatic"


# -- reading the annotations ------------------------------------------------------------------------------------


def _markers(hint: object) -> tuple[object, ...]:
    return get_args(hint)[1:] if get_origin(hint) is Annotated else ()


def declared(fn: Callable[..., Any], function: str, signature: inspect.Signature,
             static: frozenset[str]) -> tuple[str, ...]:
    """The parameters ``fn`` annotates ``Donate[...]``, in signature order; an ``AnnotationError`` for a mark no
    transform can honour (on a Static parameter, on ``*args``/``**kwargs``)."""
    if not getattr(unwrap(fn), "__annotations__", None):
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
    function = _options.display_name(fn)
    return declared(fn, function, inspect.signature(fn), frozenset())


def donate_argnums(fn: Callable[..., Any]) -> tuple[int, ...]:
    """The positions of ``fn``'s positional ``Donate`` parameters, for ``donate_argnums=``."""
    names = set(donate_argnames(fn))
    return tuple(i for i, n in enumerate(_options.positional(inspect.signature(fn))) if n in names)


# -- recording donations ----------------------------------------------------------------------------------------

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


@dataclasses.dataclass(frozen=True)
class Donation:
    """Where jaxstatic donated a buffer: the function, its parameter and the caller's ``file:line``."""

    function: str
    parameter: str
    site: str


_donated: dict[int, tuple[weakref.ref[Any], Donation]] = {}


def _forget(key: int) -> Callable[[weakref.ref[Any]], None]:
    def forget(ref: weakref.ref[Any]) -> None:
        entry = _donated.get(key)
        if entry is not None and entry[0] is ref:  # not a newer object that took this id
            del _donated[key]
    return forget


def _site() -> str:
    """The caller's ``file:line``: the first frame outside jaxstatic (its package and its generated code)."""
    frame = sys._getframe(2)
    while frame.f_back is not None and (frame.f_code.co_filename.startswith(_PACKAGE)
                                        or frame.f_code.co_filename.startswith(_traceback.GENERATED)):
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _note(function: str, donated: Sequence[tuple[int, str]], args: tuple[Any, ...]) -> None:
    site = None
    leaves = jax.tree_util.tree_leaves
    for i, name in donated:
        if i >= len(args):
            continue
        record = None
        leaf: Any
        for leaf in leaves(args[i]):
            if not hasattr(leaf, "is_deleted"):
                continue
            if record is None:
                site = site or _site()
                record = Donation(function, name, site)
            key = id(leaf)
            entry = _donated.get(key)
            if entry is not None and leaf.is_deleted() and entry[0]() is leaf:
                continue  # donated again after it was consumed: the call fails, and the first donation is the news
            _donated[key] = (weakref.ref(leaf, _forget(key)), record)


def donation_of(leaf: object) -> Donation | None:
    """Where jaxstatic donated ``leaf``, if it did."""
    entry = _donated.get(id(leaf))
    return entry[1] if entry is not None and entry[0]() is leaf else None


def recording(program: Callable[..., Any], function: str, donated: Iterable[tuple[int, str]],
              strict: bool | None) -> Callable[..., Any]:
    """``program`` (a ``jax.jit``) that notes where each donated leaf was donated; under ``strict``, one that raises
    ``UnusableDonationError`` where JAX would warn that donated buffers were not usable."""
    pairs = tuple(donated)
    note, switch = _note, _Switch

    def call(*args: Any, **kwargs: Any) -> Any:
        note(function, pairs, args)
        if not (switch.strict if strict is None else strict):
            return program(*args, **kwargs)
        return _strictly(program, function, pairs, args, kwargs)

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


def pop_strict(function: str, options: dict[str, Any]) -> bool | None:
    value = options.pop("strict_donation", None)
    if value is not None and type(value) is not bool:
        raise option_error("strict_donation", function, f"is {value!r}",
                                    "Give True (raise where a donated buffer is not usable), False or None.")
    return value


def _strictly(program: Callable[..., Any], function: str, pairs: tuple[tuple[int, str], ...],
              args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    # JAX warns while it compiles; process-wide warning state, so strict mode is for single-threaded loops
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = program(*args, **kwargs)
    unusable = [w for w in caught if str(w.message).startswith(_UNUSABLE)]
    for w in caught:
        if w not in unusable:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if unusable:
        getattr(program, "clear_cache", lambda: None)()  # compiled again next time, so it raises again
        raise UnusableDonationError(_unusable_message(function, str(unusable[0].message), pairs, args))
    return result


def _aval(leaf: Any) -> str:
    return f"{leaf.dtype}[{','.join(map(str, leaf.shape))}]"


def _unusable_message(function: str, text: str, pairs: tuple[tuple[int, str], ...], args: tuple[Any, ...]) -> str:
    listed = text[len(_UNUSABLE):].lstrip(": ").split("\n")[0].rstrip(".").split(", ")
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
           "donate_argnums", "donation_of", "pop_strict", "recording", "set_strict_donation",
           "with_declared"]
