"""The layers ARCHITECTURE.md draws hold, and the contracts that state them catch a module that breaks them.

The contracts are import-linter's, in ``pyproject.toml`` (``[tool.importlinter]``). Each case below copies the
packages, adds one import that breaks the map, and checks that ``lint-imports`` refuses it, naming the import.
"""

from __future__ import annotations

import gc
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

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
    ("jaxstatic/_c_hits.py", "from ._core import Core\n", {LAYERS, CYCLES},
     "jaxstatic._c_hits -> jaxstatic._core"),
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


def _ideas() -> tuple[int, list[str], str]:
    """The bird's-eye table of ARCHITECTURE.md: how many ideas the prose says, each row's "where" cell, and the
    list of modules met on the way that a first read may skip."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    said = re.search(r"The map follows one call in (\w+) ideas", text)
    assert said is not None, "ARCHITECTURE.md no longer says in how many ideas it follows a call"
    table = text[text.index("| idea | hit | where |"):].split("\n\n")[0]
    rows = [line.rsplit("|", 2)[1] for line in table.splitlines()[2:]]
    skippable = text[text.index("Met on the way and skippable"):].split("\n\n")[0]
    return _NUMBERS[said.group(1)], rows, skippable


def _named(where: str) -> tuple[list[tuple[str, str]], list[str]]:
    """A row's objects, as ``(object, module)`` (written ``\u0060A\u0060, \u0060B\u0060 (\u0060_module\u0060)``), and its
    modules named alone."""
    objects = [(name, module) for names, module in re.findall(r"((?:`\w+`(?:, )?)+) \(`(_\w+)`", where)
               for name in re.findall(r"`(\w+)`", names)]
    modules = [name for name in re.findall(r"`(_\w+)`", where) if name not in {n for n, _ in objects}]
    return objects, modules


def _miss_path() -> list[tuple[str, str, str]]:
    """``(module, qualified name, class of self)`` of each jaxstatic frame a first call of a ``cfg: Static[dict]``
    function enters, in order (generated code counts as ``_codegen``'s)."""
    import jax.numpy as jnp

    import jaxstatic as js
    from jaxstatic import Static, _traceback

    @js.jit
    def step(x: Any, cfg: Static[dict[str, float]]) -> Any:
        return x * cfg["scale"]

    path: list[tuple[str, str, str]] = []

    def record(frame: Any, event: str, _: Any) -> None:
        if event == "call":
            module = frame.f_globals.get("__name__") or ""
            if frame.f_code.co_filename.startswith(_traceback.GENERATED):
                module = "jaxstatic._codegen"
            if module.startswith("jaxstatic"):
                owner = frame.f_locals.get("self", frame.f_locals.get("cls"))
                kind = owner.__name__ if isinstance(owner, type) else type(owner).__name__
                path.append((module, frame.f_code.co_qualname if sys.version_info >= (3, 11)
                             else frame.f_code.co_name, kind))

    x = jnp.ones(3)
    # no collection in the middle: a finalizer of another test's objects would put its frames on this path
    gc.collect()
    gc.disable()
    sys.setprofile(record)
    try:
        step(x, {"scale": 2.0})
    finally:
        sys.setprofile(None)
        gc.enable()
    assert step.trace_count == 1
    return path


def test_the_ideas_a_miss_meets_are_the_map_s_in_its_order() -> None:
    """The bird's-eye table is what a reader meets following one call: at most ten ideas, the count the prose gives.
    A first call, traced, meets every object and module each row names, the rows' first names in the table's
    order, and no jaxstatic module that is neither in the table nor in the list of those a first read may skip (a
    rename, or a new module on the path, that leaves the map behind fails here)."""
    import importlib

    count, rows, skippable = _ideas()
    assert len(rows) == count <= 10
    path = _miss_path()
    modules_met = {module.removeprefix("jaxstatic.") for module, _, _ in path}
    firsts = []
    for row in rows:
        objects, modules = _named(row)
        assert objects or modules, row
        for name, module in objects:
            assert hasattr(importlib.import_module(f"jaxstatic.{module}"), name), f"{name} is not in {module} ({row})"
            met = [i for i, (mod, qualname, kind) in enumerate(path) if mod == f"jaxstatic.{module}" and (
                qualname.split(".")[0] == name or kind == name)]
            assert met, f"a miss never meets {name} ({module}), which the map lists: {row}"
        for module in modules:
            assert module in modules_met or module == "_hits", f"a miss never meets {module}, which the map lists"
        anchor = re.findall(r"`(\w+)`", row)[0]  # the row's first name: an object, or a module
        of = dict(objects)
        firsts.append(next(i for i, (mod, qualname, kind) in enumerate(path) if (
            mod == f"jaxstatic.{of[anchor]}" and anchor in (qualname.split(".")[0], kind) if anchor in of
            else mod == f"jaxstatic.{anchor}")))
    assert firsts == sorted(firsts), "the table's rows are not in the order a miss meets them: " + ", ".join(
        f"{row.split('`')[1]} first met at {path[i]}" for row, i in zip(rows, firsts))
    listed = {m for row in rows for m in re.findall(r"`(_\w+)`", row)} | set(re.findall(r"`(_\w+)`", skippable))
    assert modules_met - {"jaxstatic"} <= listed, f"met on a miss, in no row and not listed as skippable: " \
        f"{sorted(modules_met - listed - {'jaxstatic'})}"
