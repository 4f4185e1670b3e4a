"""The layers ARCHITECTURE.md draws hold, and the contracts that state them catch a module that breaks them.

The contracts are import-linter's, in ``pyproject.toml`` (``[tool.importlinter]``). Each case below copies the
packages, adds one import that breaks the map, and checks that ``lint-imports`` refuses it, naming the import.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"]


def _lint(where: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(where), "NO_COLOR": "1"}
    return subprocess.run([*LINT, str(where / "pyproject.toml"), "--no-cache"], cwd=where, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_contracts_are_kept() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def _copy(tmp: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.c")
    shutil.copytree(ROOT / "jaxstatic", tmp / "jaxstatic", ignore=ignore)
    shutil.copytree(ROOT / "mypy_plugin", tmp / "jaxstatic_mypy", ignore=ignore)
    shutil.copytree(ROOT / "jaxstatic_pytest", tmp / "jaxstatic_pytest", ignore=ignore)
    shutil.copytree(ROOT / "jaxstatic_check", tmp / "jaxstatic_check", ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    return tmp


LAYERS, CYCLES = "The runtime's layers", "No circular imports"
CHECK = "jaxstatic-check imports neither jax nor the runtime"


@pytest.mark.parametrize(("module", "added", "broken", "named"), [
    # a type the key layer would take from the core, under TYPE_CHECKING: a back-import, and a circle
    ("jaxstatic/_freeze.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._transform import StaticFunction\n",
     {LAYERS, CYCLES}, "jaxstatic._freeze -> jaxstatic._transform"),
    # the hit paths reaching into the core for a helper: the circle the core once had
    ("jaxstatic/_compiled.py", "from ._core import Core\n", {LAYERS, CYCLES},
     "jaxstatic._compiled -> jaxstatic._core"),
    # two modules of one layer importing each other, inside a function: a circle all the same
    ("jaxstatic/_keys.py", "def _later() -> None:\n    from . import _freeze\n", {CYCLES}, "._keys -> ._freeze"),
    # jaxstatic-check runs the plugin: jax in the plugin would be jax in the command's start-up too
    ("jaxstatic_mypy/_messages.py", "import jax\n", {"The mypy plugin imports neither jax nor the runtime", CHECK},
     "jaxstatic_mypy._messages -> jax"),
    ("jaxstatic/_options.py", "import libcst\n", {"The runtime never imports LibCST"}, "jaxstatic._options -> libcst"),
    ("jaxstatic/migrate/_common.py", "from .. import _freeze\n", {LAYERS}, "jaxstatic.migrate._common -> jaxstatic._freeze"),
    # jaxstatic-check reaching for the runtime would import jax before mypy starts
    ("jaxstatic_check/_project.py", "import jaxstatic\n", {CHECK}, "jaxstatic_check._project -> jaxstatic"),
])
def test_an_import_against_the_map_is_refused(tmp_path: Path, module: str, added: str, broken: set[str],
                                              named: str) -> None:
    where = _copy(tmp_path)
    with open(where / module, "a") as f:
        f.write("\n" + added)
    result = _lint(where)
    assert result.returncode == 1, result.stdout
    verdicts = [line for line in result.stdout.splitlines() if " BROKEN" in line or " KEPT" in line]
    assert len(verdicts) == 5
    assert {next(c for c in (LAYERS, CYCLES, *broken) if line.startswith(c)) for line in verdicts if "BROKEN" in line} \
        == broken
    assert named in result.stdout


def test_the_map_lists_the_layers_the_contract_checks() -> None:
    # ARCHITECTURE.md's code map, row by row, names the modules of each layer of the contract, in its order
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]
    contract = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]
    layers = [sorted(m.strip() for m in layer.replace("|", ":").split(":")) for layer in contract["layers"]]
    text = (ROOT / "ARCHITECTURE.md").read_text()
    table = text[text.index("| layer | modules |"):].split("\n\n")[0].splitlines()[2:]
    rows = [sorted(re.findall(r"`([\w.]+)`", row.split("|")[2])) for row in table]
    assert rows == layers
    assert sorted(m for layer in layers for m in layer) == sorted(
        p.stem if p.suffix == ".py" else p.name for p in (ROOT / "jaxstatic").iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists())


_NUMBERS = {"seven": 7, "eight": 8, "nine": 9, "ten": 10}


def test_the_ideas_a_call_needs_are_at_most_ten_and_each_is_there_to_open() -> None:
    """The bird's-eye table is what a reader meets following one call: at most ten ideas, the count the prose gives,
    and every module and object each row points to exists (a rename that leaves the map behind fails here)."""
    import importlib

    text = (ROOT / "ARCHITECTURE.md").read_text()
    said = re.search(r"To follow one call a reader holds (\w+) ideas", text)
    assert said is not None, "ARCHITECTURE.md no longer says how many ideas a reader holds"
    table = text[said.end():].split("\n\n", 2)[1]
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| idea")]
    assert len(rows) == _NUMBERS[said.group(1)] <= 10
    modules = {path.stem for path in (ROOT / "jaxstatic").glob("_*.py")}
    for row in rows:
        where = row.rsplit("|", 2)[1]
        named = re.findall(r"`([^`]+)`", where)
        assert named, row
        for name in named:
            if name.startswith("_") and "." not in name:
                assert name in modules or name == "_hits.c", f"{name}: no such module ({row})"
        for mod, obj in re.findall(r"`(\w+)` \(`(_\w+)`", where):
            assert hasattr(importlib.import_module(f"jaxstatic.{obj}"), mod), f"{mod} is not in {obj} ({row})"
