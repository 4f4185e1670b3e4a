"""The plugin's own code: mypy --strict with mypy's proper_plugin, ruff, and no runtime imports.

mypy loads the plugin in its own process, so it must never import jax or the jaxstatic runtime.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]
_PLUGIN = _REPO / "mypy_plugin"
_BIN = Path(sys.executable).parent


def test_plugin_passes_mypy_strict_with_proper_plugin() -> None:
    cmd = [sys.executable, "-m", "mypy", "--config-file", str(_REPO / "pyproject.toml"), "--strict"]
    cmd.append("mypy_plugin")
    done = subprocess.run(cmd, cwd=_REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def test_plugin_passes_ruff() -> None:
    ruff = _BIN / "ruff"
    command = [str(ruff)] if ruff.exists() else [sys.executable, "-m", "ruff"]
    done = subprocess.run(
        [*command, "check", "mypy_plugin"], cwd=_REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_plugin_imports_neither_jax_nor_the_runtime() -> None:
    for path in sorted(_PLUGIN.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                root = name.split(".")[0]
                assert root not in {"jax", "jaxlib", "jaxstatic", "numpy"}, (
                    f"{path.name} imports {name}"
                )


def test_entry_point() -> None:
    import jaxstatic_mypy
    from mypy.plugin import Plugin

    assert issubclass(jaxstatic_mypy.plugin("2.4.1"), Plugin)
    assert os.path.samefile(jaxstatic_mypy.__file__, _PLUGIN / "__init__.py")  # a link in a strict editable install
