"""JAX's errors about deleted and donated buffers, raised again naming the parameter and the path inside it.

JAX says ``Array has been deleted with shape=float32[1000].`` or ``Invalid buffer passed to Execute() as argument
0``: a flattened index, no name, and a wording that differs per backend and release (a TPU says ``Donation requested
for invalid buffer`` where the CPU says ``Buffer has been deleted or donated``). So the decision is made from the
arguments, not from the wording: the core hands every failed call here (``explain_failure``, on the failure path
only), and when it failed with one of JAX's classes while a dynamic argument holds a leaf deleted before the call
(or one buffer twice, one use donated), the error is raised again as a subclass of JAX's own class and of
``DeletedArrayError``.

"Deleted before this call" is told apart from "consumed by this call", with nothing noted on the hit path: JAX
refuses a call given a deleted array before running it, so a refused call consumed nothing, and a call that ran
(and failed in its program, as a callback that raises) was given live arrays and consumed its donated ones. A
deleted leaf where the call donates nothing, or one that jaxstatic saw donated by an earlier call, was deleted
before. Where every deleted leaf is one this call donates, the error's own kind says whether the program ran: a
runtime error of another status than ``INVALID_ARGUMENT`` (JAX's refusal of an input buffer, on every backend) comes
from running it, and stands. Errors raised after the program returned (strict donation, a cache insert) and
jaxstatic's own (``RetraceError``, ...) are never read as a deleted argument.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import jax

from ._donate import DeletedArrayError, donation_of, is_deleted
from ._errors import JaxstaticError
from ._options import ParamOptions, program_extras

if TYPE_CHECKING:
    from ._plan import Plan

_classes: dict[type[BaseException], type[BaseException]] = {}


def error_class(base: type[BaseException]) -> type[BaseException]:
    """``DeletedArrayError`` that is also a ``base`` (JAX's class), made once per class."""
    cls = _classes.get(base)
    if cls is None:
        try:
            cls = type("DeletedArrayError", (DeletedArrayError, base), {"__module__": "jaxstatic"})
        except TypeError:  # a class that cannot be a base beside another: the builtin it derives from
            cls = error_class(ValueError if issubclass(base, ValueError) else RuntimeError)
        _classes[base] = cls
    return cls


def _leaves(plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any],
            params: ParamOptions) -> Iterator[tuple[str, str, Any, bool]]:
    """``(parameter, path, leaf, donated)`` of every dynamic value of a call: a ``*args`` extra at the index the
    caller wrote (``args[2]``, static extras counted: ``_options.program_extras``), a ``**kwargs`` entry by keyword."""
    for name, src in plan.dynamics:
        try:
            value = src.get(args, kwargs)
        except Exception:
            continue
        if src.kind == "varpos":
            extras = program_extras(plan.nargs - src.index, plan.layout.static_extras)
            items = [(f"{name}[{k}]", v, k in params.donate_extras) for k, v in zip(extras, value)]
        elif src.kind == "varkw":
            items = [(f"{name}[{k!r}]", v, k in params.donate_keywords) for k, v in value.items()]
        else:
            items = [(name, value, name in params.donate)]
        for label, v, donated in items:
            for path, leaf in jax.tree_util.tree_flatten_with_path(v)[0]:
                yield name, label + jax.tree_util.keystr(path), leaf, donated


def _aval(leaf: Any) -> str:
    return f"{leaf.dtype}[{','.join(map(str, leaf.shape))}]"


def explain_failure(function: str, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any],
                    params: ParamOptions) -> None:
    """Called while a call's exception is being handled, when it raised before its program returned: raise it again,
    named, when it is about an array deleted before this call or one buffer passed twice where one use is donated;
    otherwise return and let it stand (what this call's own program consumed is no fault of its arguments)."""
    err = sys.exc_info()[1]
    # JAX's classes for a buffer it cannot use, on every backend: RuntimeError (an XLA runtime error, "Array has
    # been deleted") and ValueError (the runtime's INVALID_ARGUMENT); jaxstatic's own errors say what happened
    if not isinstance(err, (RuntimeError, ValueError)) or isinstance(err, JaxstaticError):
        return
    leaves = list(_leaves(plan, args, kwargs, params))
    message = _deleted_message(function, leaves, err) or (None if _ran(err) else _twice_message(function, leaves))
    if message is not None:
        raise error_class(type(err))(message) from err


def _deleted_message(function: str, leaves: list[tuple[str, str, Any, bool]], err: BaseException) -> str | None:
    """The first deleted leaf named, when the call was refused (so every deleted leaf was deleted before it): a
    deleted leaf it does not donate (a call deletes nothing else), one jaxstatic saw donated by an earlier call, or
    an error that did not come from running the program."""
    deleted = [(name, path, leaf, donated) for name, path, leaf, donated in leaves if is_deleted(leaf)]
    refused = any(not donated for *_, donated in deleted) or not _ran(err) or any(
        donation_of(leaf) is not None for _, _, leaf, _ in deleted)
    if not deleted or not refused:
        return None
    name, path, leaf, _ = deleted[0]
    return deleted_text(function, name, path, leaf)


def _ran(err: BaseException) -> bool:
    """Whether ``err`` came from running the program (a callback that raised, say), which consumes the donated
    buffers: an XLA runtime error of any status but ``INVALID_ARGUMENT``, the one JAX's runtimes give an input buffer
    they refuse (deleted, or donated twice) before running anything."""
    return type(err).__name__ in ("JaxRuntimeError", "XlaRuntimeError") and not str(err).startswith(
        "INVALID_ARGUMENT")


def deleted_text(function: str, name: str, path: str, leaf: Any) -> str:
    """What a user sees when ``leaf`` at ``path`` of parameter ``name`` was deleted before this call."""
    head = f"{function}: parameter {name!r} got a deleted array at {path} ({_aval(leaf)})"
    donation = donation_of(leaf)
    if donation is None:
        return (f"{head}: its buffer was deleted (donated to a jax.jit with donate_argnums, or x.delete()) before "
                "this call. Pass a live array: the value the donating function returned, or a copy made before "
                "donating it.")
    given = donation.parameter
    same = path.startswith(given) and path[len(given):][:1] in ("", "[", ".")
    at = "" if same else f" as parameter {given!r}"
    return (f"{head}: it was donated to {donation.function}{at} at {donation.site}, which consumed its buffer. "
            f"Use the value {donation.function} returned ({given} = {donation.function}({given}, ...)), not the "
            "one passed in; or copy it before donating.")


def _twice_message(function: str, leaves: list[tuple[str, str, Any, bool]]) -> str | None:
    """One buffer passed at two paths of a call, one of them donated: JAX names flattened indices."""
    seen: dict[int, tuple[str, bool]] = {}
    for _, path, leaf, donated in leaves:
        if not hasattr(leaf, "is_deleted"):
            continue
        first = seen.setdefault(id(leaf), (path, donated))
        if first[0] != path and (first[1] or donated):
            gives = [p for p, d in (first, (path, donated)) if d]
            how = ("both are donated: a donated buffer is consumed by the call, so it cannot be donated twice"
                   if len(gives) == 2 else f"the one at {gives[0]} is donated: a donated buffer is consumed by the "
                   "call, so it cannot also be read")
            return (f"{function}: the same array is passed at {first[0]} and at {path}, and {how} in the same call. "
                    "Pass a copy at one of them (jnp.copy(x)), or donate neither.")
    return None


__all__ = ["deleted_text", "error_class", "explain_failure"]
