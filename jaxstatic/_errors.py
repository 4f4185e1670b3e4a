"""Exception classes and the builders of their messages. Each is a ``TypeError`` (or ``RuntimeError``) subclass,
exported from ``jaxstatic``."""

from __future__ import annotations

import difflib


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


class OptionError(JaxstaticError, TypeError):
    """An option given to a transform (``donate_argnums``, ``static_argnames``, ``in_axes``, ``max_traces``, ...)
    does not fit the function; raised when the transform is applied, not at the first call."""


for _cls in (JaxstaticError, AnnotationError, NonStaticValueError, NonArrayArgumentError, StaticMismatchError,
             RetraceError, OptionError):
    _cls.__module__ = "jaxstatic"
del _cls


def option_error(option: str, function: str | None, problem: str, fix: str) -> OptionError:
    """``jaxstatic: donate_argnames of step names 'parms', which is not a parameter of step(params, batch). Name
    one of its parameters.``"""
    where = f"{option} of {function}" if function is not None else option
    return OptionError(f"jaxstatic: {where} {problem}. {fix}")


def retrace_limit_error(function: str, max_traces: int, number: int, why: str | None) -> RetraceError:
    """``f needs trace #3, but max_traces=2 allows at most 2 traces; it changed because n: 2 -> 3. ...``"""
    allowed = "no trace at all" if max_traces == 0 else f"at most {max_traces} trace{'s' * (max_traces != 1)}"
    because = f", because {why}" if why else ""
    return RetraceError(
        f"{function} needs trace #{number}{because}, but max_traces={max_traces} allows {allowed}. Mark a "
        "parameter Static only if it takes few values, keep shapes and dtypes fixed, or raise max_traces."
    )


def unknown_options_error(transform: str, function: str, unknown: set[str], known: frozenset[str]) -> OptionError:
    close = {u: difflib.get_close_matches(u, sorted(known), n=1) for u in sorted(unknown)}
    hints = "".join(f" (did you mean {c[0]!r} for {u!r}?)" for u, c in close.items() if c)
    return OptionError(f"jaxstatic.{transform}({function}): unknown option(s) {sorted(unknown)}{hints}; it accepts "
                       f"{sorted(known)}.")
