"""The error catalogue covers every exception and warning class jaxstatic exports, and the error-code page every
code of the mypy plugin, each in a section of its own (a stable anchor, ``#nonstaticvalueerror``) holding an example
that shows it: a run block whose output names the class, or a mypy block whose output carries the code.

That the examples print what the pages show is checked by ``test_docs``; this checks that they exist. The pyright
page's example and the stubs page's, which ``test_docs`` cannot run, are checked here by pyright and by mypy with the
stubs.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from jaxstatic_mypy import _errorcodes
from mypy.errorcodes import ErrorCode

from jaxstatic import _public

from ._blocks import ROOT, Block, mypy_cache, normalize, parse

ERRORS = ROOT / "docs/reference/errors.md"
ERROR_CODES = ROOT / "docs/reference/error-codes.md"
PYRIGHT = ROOT / "docs/type-checking/pyright.md"
STUBS = ROOT / "docs/type-checking/stubs.md"

EXPORTED = sorted(name for names in _public.ERRORS.values() for name in names)


def _exported(name: str) -> type[BaseException]:
    """The class ``_public`` declares, from the module that defines it (``jaxstatic.<name>`` may be missing yet:
    ``tests/runtime/test_public.py`` says so)."""
    module = next(module for module, names in _public.ERRORS.items() if name in names)
    cls: type[BaseException] = getattr(importlib.import_module(f"jaxstatic.{module}"), name)
    return cls


CODES = sorted(c.code for c in vars(_errorcodes).values() if isinstance(c, ErrorCode))


def sections(page: Path) -> dict[str, list[Block]]:
    """The blocks under each ``## heading`` of ``page``, by heading."""
    lines = page.read_text().splitlines()
    starts = [(i + 1, line[3:].strip()) for i, line in enumerate(lines) if line.startswith("## ")]
    blocks = parse(page)
    found: dict[str, list[Block]] = {}
    for (start, title), (end, _) in zip(starts, [*starts[1:], (len(lines) + 1, "")]):
        found[title] = [b for b in blocks if start < b.line < end]
    return found


def test_the_catalogue_knows_the_classes_and_codes() -> None:
    # Guards the two lists below against an import that finds nothing, which would make every check pass.
    assert {"JaxstaticError", "NonStaticValueError", "HiddenStaticWarning"} <= set(EXPORTED)
    assert {"jaxstatic-unhashable", "jaxstatic-signature", "jaxstatic-argnames"} <= set(CODES)


@pytest.mark.parametrize("name", EXPORTED)
def test_every_exported_error_and_warning_has_a_section_with_an_example(name: str) -> None:
    found = sections(ERRORS)
    assert name in found, (f"{ERRORS.relative_to(ROOT)} has no '## {name}' section: add one (a run example whose "
                           f"Output shows {name}, then the fix), as every exported error and warning has")
    cls = _exported(name)
    # a base class is shown by one of its subclasses (JaxstaticError by the error it catches)
    shown = {n for n in EXPORTED if issubclass(_exported(n), cls)}
    examples = [b for b in found[name] if b.kind == "run" and b.expected is not None
                and shown & set(re.findall(r"\w+", b.expected))]
    assert examples, (f"'## {name}' in {ERRORS.relative_to(ROOT)} has no run example whose Output shows "
                      f"{name} (or a subclass of it)")


@pytest.mark.parametrize("name", EXPORTED)
def test_every_exported_error_and_warning_has_a_row_in_the_table(name: str) -> None:
    rows = [line for line in ERRORS.read_text().splitlines() if line.startswith(f"| [`{name}`](#{name.lower()}) |")]
    assert len(rows) == 1, (f"the table at the top of {ERRORS.relative_to(ROOT)} has no row for {name}: add "
                            f"`| [`{name}`](#{name.lower()}) | <base classes> | <raised or issued when> |`")


def test_every_section_of_the_catalogue_is_an_exported_class() -> None:
    stale = set(sections(ERRORS)) - set(EXPORTED)
    assert not stale, f"{ERRORS.relative_to(ROOT)} has sections for no exported class: {sorted(stale)}"


@pytest.mark.parametrize("code", CODES)
def test_every_error_code_has_a_section_with_a_mypy_example(code: str) -> None:
    found = sections(ERROR_CODES)
    assert code in found, f"{ERROR_CODES.relative_to(ROOT)} has no '## {code}' section"
    examples = [b for b in found[code] if b.kind == "mypy" and f"[{code}]" in (b.expected or "")]
    assert examples, (f"'## {code}' in {ERROR_CODES.relative_to(ROOT)} has no <!-- mypy --> example whose Output "
                      f"reports [{code}]")


def test_every_code_section_names_a_code_of_the_plugin() -> None:
    stale = {title for title in sections(ERROR_CODES) if title.startswith("jaxstatic-")} - set(CODES)
    assert not stale, f"{ERROR_CODES.relative_to(ROOT)} has sections for no error code: {sorted(stale)}"


def _pyright_examples() -> list[Block]:
    return [b for b in parse(PYRIGHT) if b.directive and "pyright checks it" in b.directive]


def test_the_pyright_page_shows_what_pyright_says(tmp_path: Path) -> None:
    examples = _pyright_examples()
    assert examples, f"{PYRIGHT.relative_to(ROOT)} has no example marked '<!-- not run: pyright checks it ... -->'"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYRIGHT_PYTHON_IGNORE_WARNINGS"] = "1"
    for block in examples:
        (tmp_path / "user.py").write_text(block.code)
        # --pythonpath: the page's own advice, so that jax and jaxstatic resolve from this environment
        done = subprocess.run([sys.executable, "-m", "pyright", "--pythonpath", sys.executable, "user.py"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        # pyright prints the file's path, then each diagnostic indented under it (continuation lines with
        # no-break spaces), then the summary
        lines = [line.replace(f"{tmp_path}/", "").replace("\xa0", " ") for line in done.stdout.splitlines()[1:]]
        shown = "\n".join(line[2:] if line.startswith("  ") else line for line in lines)
        assert normalize(shown) == normalize(block.expected or ""), f"{block.where}: pyright says\n{done.stdout}"


def test_the_stubs_page_shows_what_mypy_says_with_the_stubs(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    examples = [b for b in parse(STUBS) if b.directive and "mypy with the stubs" in b.directive]
    assert examples, f"{STUBS.relative_to(ROOT)} has no example marked '<!-- not run: mypy with the stubs ... -->'"
    (tmp_path / "mypy.ini").write_text(f"[mypy]\nmypy_path = {ROOT / 'typeshed_stubs'}\n")
    cache = mypy_cache(request, "docs-stubs-mypy", tmp_path / ".cache")
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    for block in examples:
        (tmp_path / "user.py").write_text(block.code)
        done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--no-error-summary",
                               "--cache-dir", str(cache), "user.py"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode in (0, 1), done.stdout + done.stderr
        assert normalize(done.stdout) == normalize(block.expected or ""), f"{block.where}: mypy says\n{done.stdout}"
