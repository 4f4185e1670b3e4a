"""Every code block of the documentation and the README runs as shown, and the site builds without a warning.

How each block is run is described in ``_blocks``. The ``python`` blocks of all pages run in one subprocess (one
JAX import); the blocks marked ``<!-- mypy -->`` are checked by one mypy run with the jaxstatic plugin.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

import jaxstatic
from jaxstatic import _public

from ._blocks import ROOT, Block, mypy_cache, normalize, pages, parse

# One pytest-xdist worker runs them all: the pages run once (``outputs``, ``mypy_outputs``) for all the tests here.
pytestmark = pytest.mark.xdist_group("docs")

_HERE = Path(__file__).resolve().parent
PAGES = pages()


@pytest.fixture(scope="session")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    out = tmp_path_factory.mktemp("docs") / "outputs.json"
    subprocess.run([sys.executable, str(_HERE / "_run_pages.py"), *map(str, PAGES), "--json", str(out)],
                   cwd=ROOT, check=True, timeout=900)
    results: dict[str, dict[str, str]] = json.loads(out.read_text())
    return results


def _mypy_name(block: Block) -> str:
    return "ex_" + re.sub(r"\W", "_", block.page.removesuffix(".md")) + f"_{block.line}"


@pytest.fixture(scope="session")
def mypy_outputs(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> dict[str, str]:
    blocks = [b for page in PAGES for b in parse(page) if b.kind == "mypy"]
    if not blocks:
        return {}
    folder = tmp_path_factory.mktemp("docs-mypy")
    for block in blocks:
        (folder / f"{_mypy_name(block)}.py").write_text(block.code)
    (folder / "mypy.ini").write_text("[mypy]\nplugins = jaxstatic_mypy\n")
    cache = mypy_cache(request, "docs-mypy", folder / ".cache")
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--no-error-summary", "--cache-dir", str(cache),
         *(f"{_mypy_name(b)}.py" for b in blocks)],
        cwd=folder, capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    found: dict[str, list[str]] = {}
    for line in result.stdout.splitlines():
        name, _, rest = line.partition(".py:")
        found.setdefault(name, []).append("example.py:" + rest)
    return {name: "\n".join(lines) for name, lines in found.items()}


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_block_runs_as_shown(page: Path, outputs: dict[str, dict[str, str]],
                                   mypy_outputs: dict[str, str]) -> None:
    ran = outputs[_page_id(page)]
    failures = []
    for block in parse(page):
        if block.kind == "skip":
            assert (block.directive or "").startswith("not run:") and len(block.directive or "") > 12, (
                f"{block.where}: a {block.lang or 'plain'} block is not run; say why with <!-- not run: why -->")
            continue
        if block.kind == "toml":
            tomllib.loads(block.code)
            continue
        if block.kind == "mypy":
            actual = mypy_outputs.get(_mypy_name(block), "")
        elif str(block.line) in ran:
            actual = ran[str(block.line)]
        else:
            continue  # requires a module that is not installed here
        expected = normalize(block.expected or "")
        if normalize(actual) != expected:
            failures.append(f"{block.where} printed:\n{actual}\nbut the page shows:\n{expected}\n")
    assert not failures, "\n".join(failures)


def test_site_builds_strict(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stdout + result.stderr


def _api_page_for(name: str) -> str:
    """The API page a public name belongs on, by what ``jaxstatic/_public.py`` declares it to be."""
    if any(name == t.name for t in _public.TRANSFORMS):
        return "transforms.md"
    if any(name == t.wrapper for t in _public.TRANSFORMS):
        return "functions.md"
    if any(name in names for names in _public.ERRORS.values()):
        return "exceptions.md (warnings under '## Warnings')"
    return "the page that fits"


def test_api_reference_covers_every_public_name_once() -> None:
    api = ROOT / "docs/reference/api"
    documented: dict[str, list[str]] = {}
    for page in sorted(api.glob("*.md")):
        for name in re.findall(r"^::: jaxstatic\.(\w+)$", page.read_text(), re.MULTILINE):
            documented.setdefault(name, []).append(page.name)
    missing = [f"jaxstatic.{name} is public but has no API entry: add a line `::: jaxstatic.{name}` to "
               f"docs/reference/api/{_api_page_for(name)}" for name in jaxstatic.__all__ if name not in documented]
    assert not missing, "\n".join(missing)
    twice = {name: pages for name, pages in documented.items() if len(pages) > 1}
    assert not twice, f"documented more than once in docs/reference/api/ (keep one entry each): {twice}"
    stale = sorted(set(documented) - set(jaxstatic.__all__))
    assert not stale, f"docs/reference/api/ documents {stale}, which jaxstatic does not export (__all__)"

