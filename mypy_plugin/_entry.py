"""mypy's entry point: refuse an unsupported mypy before importing the checks, which lean on its internals."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._compat import refuse_unsupported

if TYPE_CHECKING:
    from mypy.plugin import Plugin


def plugin(version: str) -> type[Plugin]:
    """The plugin class for mypy ``version`` (``plugins = ["jaxstatic_mypy"]``); outside the supported range,
    mypy stops with the range and how to install a supported mypy."""
    refuse_unsupported(version)
    from ._main import JaxstaticPlugin  # only now: its imports assume a supported mypy

    return JaxstaticPlugin
