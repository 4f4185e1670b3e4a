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
