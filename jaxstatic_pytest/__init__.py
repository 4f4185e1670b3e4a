"""jaxstatic's pytest plugin: retrace budgets for a test suite (``@pytest.mark.max_traces``, ``--jaxstatic-report``,
``--jaxstatic-max-retraces``).

pytest loads it through the ``pytest11`` entry point installed with jaxstatic, named ``jaxstatic``: ``-p no:jaxstatic``
turns it off, and ``-p jaxstatic`` (or ``-p jaxstatic_pytest``) loads it where entry points are not loaded
(``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``). It is a package of its own, beside ``jaxstatic``, so that loading it imports
neither the runtime nor JAX: they are imported when a test carries the marker or an option asks for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """``-p jaxstatic_pytest`` registers this package: it registers the hooks under the entry point's name, once,
    so that entry points loaded as well (or ``-p no:jaxstatic``) find them there and do not add them twice."""
    from . import _plugin

    if not pluginmanager.has_plugin("jaxstatic") and not pluginmanager.is_blocked("jaxstatic"):
        pluginmanager.register(_plugin, "jaxstatic")
