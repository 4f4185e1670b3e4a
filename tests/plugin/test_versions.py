"""Which mypy versions the plugin accepts, and what a user under any other mypy sees.

The plugin reads mypy's internals, so it supports a tested range: the ``mypy`` extra installs a mypy inside it,
the README states it, and a mypy outside it stops the run with one message naming the range, never a traceback.
(The YAML cases run on the oldest supported mypy in CI, tools/ci_old_mypy.sh.)
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import jaxstatic_mypy
import pytest
import tomllib
from jaxstatic_mypy._compat import OLDEST, SUPPORTED, release
from mypy.errors import CompileError
from mypy.plugin import Plugin
from mypy.version import __version__ as running

_REPO = Path(__file__).resolve().parents[2]

_REFUSAL = (
    "jaxstatic_mypy supports mypy >=1.15,<2.5, but this is mypy {}. "
    "Install a supported mypy with: pip install 'mypy>=1.15,<2.5'"
)


@pytest.mark.parametrize("version", ["1.15.0", "1.18.2", "2.0.0", "2.4.1", "2.4.9+dev.abc123", running])
def test_supported_versions_get_the_plugin(version: str) -> None:
    assert issubclass(jaxstatic_mypy.plugin(version), Plugin)


@pytest.mark.parametrize("version", ["1.14.1", "1.0.0", "0.991", "2.5.0", "3.0.0", "nonsense"])
def test_other_versions_are_refused_with_the_range(version: str) -> None:
    with pytest.raises(CompileError) as refused:
        jaxstatic_mypy.plugin(version)
    assert refused.value.messages == [_REFUSAL.format(version)]


def test_the_extra_and_the_readme_carry_the_range() -> None:
    project = tomllib.loads((_REPO / "pyproject.toml").read_text())["project"]
    assert project["optional-dependencies"]["mypy"] == [f"mypy{SUPPORTED}"]
    readme = (_REPO / "README.md").read_text()
    assert f"`mypy{SUPPORTED}`" in readme
    assert "pip install 'jaxstatic[mypy]'" in readme


def test_ci_runs_the_cases_on_the_oldest_supported_mypy() -> None:
    script = (_REPO / "tools" / "ci_old_mypy.sh").read_text()
    pinned = re.search(r"^OLDEST=(\S+)$", script, re.MULTILINE)
    assert pinned is not None and release(pinned.group(1)) == OLDEST
    assert "tools/ci_old_mypy.sh" in (_REPO / ".ci" / "run").read_text()


_SHIM = """\
import jaxstatic_mypy


def plugin(version):
    return jaxstatic_mypy.plugin("1.14.1")  # what mypy 1.14.1 would pass
"""


def test_mypy_stops_cleanly_when_the_plugin_refuses(tmp_path: Path) -> None:
    # The refusal as mypy shows it: its own configuration-error path (exit status 2), no traceback, no
    # INTERNAL ERROR. A shim stands in for the older mypy by passing its version on.
    (tmp_path / "shim.py").write_text(_SHIM)
    (tmp_path / "mypy.ini").write_text("[mypy]\nplugins = shim.py\n")
    (tmp_path / "user.py").write_text("x: int = 1\n")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--no-incremental", "user.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert _REFUSAL.format("1.14.1") in output
    assert "Traceback" not in output and "INTERNAL ERROR" not in output
