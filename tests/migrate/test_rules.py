"""Each rule's before/after files: the tool turns one into the other, changes nothing more on a second run, and
both modules compute the same values with the same number of traces."""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys
from types import ModuleType

import jax
import numpy as np
import pytest

from jaxstatic.migrate._cli import migrate_source

CASES = pathlib.Path(__file__).parent / "cases"
NAMES = sorted(p.name.removesuffix(".before.py") for p in CASES.glob("*.before.py"))


def load(path: pathlib.Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def converted(name: str) -> tuple[str, list[str]]:
    module, sites = migrate_source((CASES / f"{name}.before.py").read_text(), f"{name}.py")
    return module.code, [str(s) for s in sites]


@pytest.mark.parametrize("name", NAMES)
def test_before_becomes_after(name: str) -> None:
    code, sites = converted(name)
    assert code == (CASES / f"{name}.after.py").read_text()
    rule = name[:5].upper()
    # JS010 converts the donation options the static rules keep, in the same run
    assert sites and all(f"{rule} converted" in s or "JS010 converted" in s for s in sites), sites
    assert any(f"{rule} converted" in s for s in sites), sites


@pytest.mark.parametrize("name", NAMES)
def test_a_second_run_changes_nothing(name: str) -> None:
    after = (CASES / f"{name}.after.py").read_text()
    module, sites = migrate_source(after, f"{name}.py")
    assert module.code == after
    assert sites == []


@pytest.mark.parametrize("name", NAMES)
def test_converted_module_computes_the_same_with_the_same_traces(name: str) -> None:
    before = load(CASES / f"{name}.before.py", f"migrate_{name}_before")
    after = load(CASES / f"{name}.after.py", f"migrate_{name}_after")
    expected, got = before.run(), after.run()
    jax.tree_util.tree_map(np.testing.assert_array_equal, expected, got)
    assert after.TRACES == before.TRACES
    assert "jaxstatic" in {type(v).__module__.split(".")[0] for v in vars(after).values()} | {
        getattr(v, "__module__", "").split(".")[0] for v in vars(after).values()}


def test_converted_code_passes_ruff_pyflakes() -> None:
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--select", "F",
                             *map(str, CASES.glob("*.after.py"))], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
