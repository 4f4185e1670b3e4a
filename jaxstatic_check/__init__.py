"""``jaxstatic-check``: mypy with jaxstatic's plugin over a project as its mypy configuration describes it,
reporting jaxstatic's own diagnostics alone. It imports neither jax nor jaxstatic's runtime."""

from ._main import main as main, script as script

__all__ = ["main", "script"]
