"""mypy plugin for jaxstatic: catch values that cannot be static, and decorators that hide Static parameters.

Enable it with ``plugins = ["jaxstatic_mypy"]`` in ``[tool.mypy]`` (or ``plugins = jaxstatic_mypy`` in mypy.ini).
"""

from ._entry import plugin as plugin

__all__ = ["plugin"]
