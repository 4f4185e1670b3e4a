"""pytest-xdist's ``--dist loadgroup`` with the groups read from the test modules themselves.

A module whose tests share an expensive fixture, or write into the checkout, declares ``pytestmark =
pytest.mark.xdist_group("<name>")``, and all its tests run in one worker. pytest-xdist (3.8) marks such tests by
appending ``@<name>`` to their node ids, which pytest 9.2 no longer lets a plugin change: every test would become a
unit of its own, and each worker would build the module's fixture again. The scheduler here reads the group from the
module's source instead; it is the controller's (``tests/conftest.py`` registers it), which never imports the tests.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from xdist.scheduler import LoadGroupScheduling

_ROOT = Path(__file__).resolve().parent.parent
_GROUP = re.compile(r"""^pytestmark = pytest\.mark\.xdist_group\(["']([^"']+)["']\)""", re.MULTILINE)


@functools.cache
def group_of(module: str) -> str | None:
    """The group a test module (a path relative to the repository root) declares, if any."""
    path = _ROOT / module
    if path.suffix != ".py" or not path.is_file():
        return None
    found = _GROUP.search(path.read_text())
    return found[1] if found else None


class ModuleGroupScheduling(LoadGroupScheduling):
    """Each test a unit of its own, but the tests of a grouped module one unit; the largest units go first."""

    def _split_scope(self, nodeid: str) -> str:
        scope = super()._split_scope(nodeid)
        if scope != nodeid:  # pytest-xdist marked the group itself
            return scope
        group = group_of(nodeid.split("::", 1)[0])
        return f"group:{group}" if group else nodeid


def make_scheduler(config: Any, log: Any) -> ModuleGroupScheduling | None:
    return ModuleGroupScheduling(config, log) if config.getvalue("dist") == "loadgroup" else None
