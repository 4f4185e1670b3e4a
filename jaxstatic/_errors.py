"""Exception and warning classes, and the builders of their messages; each is exported from ``jaxstatic``."""

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


class HiddenStaticWarning(UserWarning):
    """A decorator below a jaxstatic transform hides the ``Static`` parameters of the function it wraps, so they
    are traced as arrays. ``warnings.filterwarnings("error", category=HiddenStaticWarning)`` makes it an error."""


def hidden_static_message(transform: str, inner: str, params: tuple[str, ...], decorators: tuple[str, ...],
                          wrapper: str, class_based: bool) -> str:
    """The ``HiddenStaticWarning`` text: what hides which parameters of which function, behind what, and the fix."""
    names, one = ", ".join(map(repr, params)), len(params) == 1
    return (f"{transform} cannot see the Static parameter{'' if one else 's'} {names} of {inner}: "
            f"{_hiders(decorators)} {'it' if one else 'them'} behind {wrapper}, which has no __wrapped__, "
            f"so {names} {'is' if one else 'are'} traced as {'an array' if one else 'arrays'}. "
            f"{_hidden_fix(transform, decorators, class_based)}")


def hidden_static_note(transform: str, inner: str, params: tuple[str, ...], decorators: tuple[str, ...],
                       class_based: bool) -> str:
    """The note added to JAX's tracer errors raised where a hidden ``Static`` parameter was traced."""
    names, one = ", ".join(map(repr, params)), len(params) == 1
    return (f"{names} {'is' if one else 'are'} declared Static in {inner}, but {_hiders(decorators)} "
            f"{'it' if one else 'them'}, so {transform} traced {'it as an array' if one else 'them as arrays'}. "
            f"{_hidden_fix(transform, decorators, class_based)}")


def _hiders(decorators: tuple[str, ...]) -> str:
    if len(decorators) == 1:
        return f"decorator {decorators[0]} hides"
    return f"decorators {', '.join(decorators)} hide"


def _hidden_fix(transform: str, decorators: tuple[str, ...], class_based: bool) -> str:
    each = "the wrapper" if len(decorators) == 1 else "each wrapper"
    in_class = " (functools.update_wrapper(self, fn) in a class)" if class_based else ""
    return f"Decorate {each} with @functools.wraps(fn){in_class}, or apply {transform} below @{decorators[-1]}."


for _cls in (JaxstaticError, AnnotationError, NonStaticValueError, NonArrayArgumentError, StaticMismatchError,
             RetraceError, HiddenStaticWarning):
    _cls.__module__ = "jaxstatic"
del _cls
