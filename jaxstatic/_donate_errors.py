"""JAX's errors about deleted and donated buffers, raised again naming the parameter and the path inside it.

JAX says ``Array has been deleted with shape=float32[1000].`` or ``Invalid buffer passed to Execute() as argument
0``: a flattened index, no name, and a wording that differs per backend and release (a TPU says ``Donation requested
for invalid buffer`` where the CPU says ``Buffer has been deleted or donated``). So the decision is made from the
arguments, never from the wording: the core hands every failed call here (``explain_failure``, on the failure path
only), and when it failed with one of JAX's classes while a dynamic argument holds a deleted leaf (or one buffer
twice, one use donated), the error is raised again as a subclass of JAX's own class and of ``DeletedArrayError``.
A call given a deleted array could not have succeeded, whatever else went wrong in it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import jax

from ._donate import DeletedArrayError, donation_of, is_deleted

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


def _leaves(plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """``(parameter, path, leaf)`` of every dynamic value of a call."""
    for name, src in plan.dynamics:
        try:
            value = src.get(args, kwargs)
        except Exception:
            continue
        for path, leaf in jax.tree_util.tree_flatten_with_path(value)[0]:
            yield name, name + jax.tree_util.keystr(path), leaf


def _aval(leaf: Any) -> str:
    return f"{leaf.dtype}[{','.join(map(str, leaf.shape))}]"


def explain_failure(function: str, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any],
                    donated: frozenset[str]) -> None:
    """Called while a call's exception is being handled: raise it again, named, when it is about a deleted or
    donated buffer; otherwise return and let it stand."""
    err = sys.exc_info()[1]
    # JAX's classes for a buffer it cannot use, on every backend: RuntimeError (an XLA runtime error, "Array has
    # been deleted") and ValueError (the runtime's INVALID_ARGUMENT)
    if not isinstance(err, (RuntimeError, ValueError)) or isinstance(err, DeletedArrayError):
        return
    message = _deleted_message(function, plan, args, kwargs) or _twice_message(function, plan, args, kwargs, donated)
    if message is not None:
        raise error_class(type(err))(message) from err


def _deleted_message(function: str, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    for name, path, leaf in _leaves(plan, args, kwargs):
        if is_deleted(leaf):
            return deleted_text(function, name, path, leaf)
    return None


def deleted_text(function: str, name: str, path: str, leaf: Any) -> str:
    """What a user sees when ``leaf`` at ``path`` of parameter ``name`` was deleted before this call."""
    head = f"{function}: parameter {name!r} got a deleted array at {path} ({_aval(leaf)})"
    donation = donation_of(leaf)
    if donation is None:
        return (f"{head}: its buffer was deleted (donated to a jax.jit with donate_argnums, or x.delete()) before "
                "this call. Pass a live array: the value the donating function returned, or a copy made before "
                "donating it.")
    at = "" if donation.parameter == name else f" as parameter {donation.parameter!r}"
    return (f"{head}: it was donated to {donation.function}{at} at {donation.site}, which consumed its buffer. "
            f"Use the value {donation.function} returned ({donation.parameter} = {donation.function}("
            f"{donation.parameter}, ...)), not the one passed in; or copy it before donating.")


def _twice_message(function: str, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any],
                   donated: frozenset[str]) -> str | None:
    """One buffer passed at two paths of a call, one of them donated: JAX names flattened indices."""
    seen: dict[int, tuple[str, str]] = {}
    for name, path, leaf in _leaves(plan, args, kwargs):
        if not hasattr(leaf, "is_deleted"):
            continue
        first = seen.setdefault(id(leaf), (name, path))
        if first[1] != path and (first[0] in donated or name in donated):
            gives = [p for n, p in (first, (name, path)) if n in donated]
            how = ("both are donated: a donated buffer is consumed by the call, so it cannot be donated twice"
                   if len(gives) == 2 else f"the one at {gives[0]} is donated: a donated buffer is consumed by the "
                   "call, so it cannot also be read")
            return (f"{function}: the same array is passed at {first[1]} and at {path}, and {how} in the same call. "
                    "Pass a copy at one of them (jnp.copy(x)), or donate neither.")
    return None


__all__ = ["deleted_text", "error_class", "explain_failure"]
