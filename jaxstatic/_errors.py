"""Exception classes. Each is a ``TypeError`` (or ``RuntimeError``) subclass, exported from ``jaxstatic``."""

from __future__ import annotations


class JaxstaticError(Exception):
    """Base of every error raised by jaxstatic."""


class AnnotationError(JaxstaticError, TypeError):
    """An annotation could not be resolved, so jaxstatic cannot tell which parameters are static."""


class NonStaticValueError(JaxstaticError, TypeError):
    """A value bound to a ``Static`` parameter is not static-hashable (an array, an unhashable object)."""


class NonArrayArgumentError(JaxstaticError, TypeError):
    """A function, string or other non-array was given to a parameter that is not ``Static``."""


class StaticMismatchError(JaxstaticError, TypeError):
    """An ahead-of-time compiled function was called with static values other than those it was compiled for."""


class RetraceError(JaxstaticError, RuntimeError):
    """A function was traced more often than its ``max_traces`` allows."""


for _cls in (JaxstaticError, AnnotationError, NonStaticValueError, NonArrayArgumentError, StaticMismatchError,
             RetraceError):
    _cls.__module__ = "jaxstatic"
del _cls


# ---------------------------------------------------------------------------------------------------------------
# Message builders for jaxstatic.dataclass.


def static_field_message(owner: str, field: str, where: str, found: str, reason: str, when: str = "") -> str:
    """``MLP(): field 'activation' is Static, but MLP.activation['w'] is a jax.Array ...``"""
    return (
        f"{owner}(): field {field!r} is Static, but {where} is a {found}{when}, which cannot be static: {reason}. "
        "Drop Static[...] from the field to make it a traced child, or store a static-hashable value there "
        "(hashable, or a builtin container of hashable values)."
    )


def unhashable_instance_message(owner: str, where: str, found: str) -> str:
    """Why an instance holding arrays has no hash, and where it belongs instead."""
    return (
        f"unhashable {owner}: {where} is a {found}. An instance holding arrays is a pytree: it compares by value "
        "but has no hash, so it cannot be a static value. Pass it to a parameter that is not Static, where its "
        "arrays are traced and its Static fields still select the program."
    )
