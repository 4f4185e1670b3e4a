"""``jaxstatic-check`` over projects as they are configured: a real project's mypy configuration changes nothing of
what it reports, and the configuration is read as mypy reads it.

``check_projects/numpyro`` holds numpyro's own mypy configuration (``ignore_errors = true`` but for some modules,
untyped bodies unchecked) over files laid out as numpyro's are (two ``conftest.py``), ``check_projects/flax``
flax's (its examples ignored, ``attr-defined`` off); each seeded bug is marked ``# seeded: <code>`` on the line it
must be reported at.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from ._check import check as run_check

# One pytest-xdist worker runs them all: the tests here share one mypy cache (``shared_cache``: jax's types read once).
pytestmark = pytest.mark.xdist_group("check_projects")

pytest.importorskip("mypy")

PROJECTS = Path(__file__).resolve().parent / "check_projects"
_SEEDED = re.compile(r"#\s*seeded: (jaxstatic-[\w-]+)")
_REPORTED = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): error: .*\[(?P<code>jaxstatic-[\w-]+)\]$")


def _seeded(root: Path) -> set[tuple[str, int, str]]:
    found = set()
    for path in root.rglob("*.py"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = _SEEDED.search(line)
            if m:
                found.add((path.relative_to(root).as_posix(), number, m[1]))
    return found


def _reported(out: str) -> set[tuple[str, int, str]]:
    return {(m["file"], int(m["line"]), m["code"]) for m in map(_REPORTED.match, out.splitlines()) if m}


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # none in the user's home (the subprocess below runs with the default cache)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mypy-cache")


Check = Callable[[list[str]], int]


@pytest.fixture
def check(shared_cache: Path) -> Check:
    """``jaxstatic-check`` with one mypy cache for all the projects here: jax's types are read once."""
    return lambda argv: run_check(["--cache-dir", str(shared_cache), *argv])


def test_numpyro_as_configured_reports_every_seeded_bug(check: Check, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "numpyro"
    shutil.copytree(PROJECTS / "numpyro", root)
    seeded = _seeded(root)
    assert len(seeded) == 9
    monkeypatch.chdir(root)

    assert check([]) == 1
    configured, summary = capsys.readouterr()
    assert _reported(configured) == seeded
    # the project's configuration silences most of it, and the two conftest.py are one module to mypy: said
    assert summary == (
        "jaxstatic-check: 8 files checked; 6 files checked for jaxstatic's codes alone though the mypy "
        "configuration sets ignore_errors; module names read from the folders as mypy's explicit_package_bases "
        'reads them, since two files were each module "conftest"\n')

    (root / "pyproject.toml").unlink()
    assert check([]) == 1
    unconfigured, _ = capsys.readouterr()
    assert _reported(unconfigured) == seeded  # the catch rate without its configuration: the same


def test_what_silences_mypy_does_not_silence_jaxstatic(check: Check, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # every error ignored, untyped bodies unchecked, imports (jax and jaxstatic among them) skipped
    (tmp_path / "mypy.ini").write_text("[mypy]\nignore_errors = True\ncheck_untyped_defs = False\n"
                                       "follow_imports = skip\n")
    shutil.copy(PROJECTS / "numpyro" / "numpyro" / "util.py", tmp_path / "util.py")
    monkeypatch.chdir(tmp_path)
    assert check(["util.py"]) == 1
    out, summary = capsys.readouterr()
    assert _reported(out) == _seeded(tmp_path)
    assert ("util.py", 13, "jaxstatic-unhashable") in _seeded(tmp_path)
    assert summary == ("jaxstatic-check: 1 file checked; 1 file checked for jaxstatic's codes alone though the "
                       "mypy configuration sets ignore_errors\n")


@pytest.mark.parametrize("name", ["flax"])
def test_another_project_as_configured_reports_every_seeded_bug(check: Check, name: str, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / name
    shutil.copytree(PROJECTS / name, root)
    monkeypatch.chdir(root)
    assert check([]) == 1
    configured = _reported(capsys.readouterr().out)
    (root / "pyproject.toml").unlink()
    assert check([]) == 1
    assert configured == _reported(capsys.readouterr().out) == _seeded(root)


_TWO_CODES = textwrap.dedent("""\
    from typing import Any

    import jax
    import jax.numpy as jnp
    from jaxstatic import Static, jit


    @jit
    def f(x, table: Static[Any]):
        return x


    def g(x):
        return f(x, {"a": jnp.ones(2)})


    h = jax.jit(lambda x: x, static_argnames="nope")
    """)
_UNHASHABLE = ("m.py", 14, "jaxstatic-unhashable")
_ARGNAMES = ("m.py", 17, "jaxstatic-argnames")


@pytest.mark.parametrize(("file", "text", "reported"), [
    ("pyproject.toml", '[tool.mypy]\ndisable_error_code = ["jaxstatic-argnames"]\n', {_UNHASHABLE}),
    ("pyproject.toml", '[tool.mypy]\nenable_error_code = ["jaxstatic-donated"]\n', {_UNHASHABLE, _ARGNAMES}),
    ("pyproject.toml", '[[tool.mypy.overrides]]\nmodule = "m"\ndisable_error_code = ["jaxstatic-unhashable"]\n',
     {_ARGNAMES}),
    ("pyproject.toml", '[[tool.mypy.overrides]]\nmodule = "other"\ndisable_error_code = ["jaxstatic-unhashable"]\n',
     {_UNHASHABLE, _ARGNAMES}),
    ("mypy.ini", "[mypy]\ndisable_error_code = jaxstatic-unhashable\n[mypy-m]\nenable_error_code = jaxstatic-unhashable\n",
     {_UNHASHABLE, _ARGNAMES}),
    ("setup.cfg", "[mypy]\n[mypy-m]\ndisable_error_code = jaxstatic-argnames, jaxstatic-unhashable\n", set()),
], ids=["global-disable", "global-enable", "module-disable", "other-module", "ini-module-enable", "cfg-module"])
def test_jaxstatic_codes_in_the_configurations_error_code_lists(
        check: Check, file: str, text: str, reported: set[tuple[str, int, str]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.py").write_text(_TWO_CODES)
    (tmp_path / file).write_text(text)
    monkeypatch.chdir(tmp_path)
    assert check([]) == int(bool(reported))
    assert _reported(capsys.readouterr().out) == reported


def test_an_error_code_mypy_does_not_know_is_named(check: Check, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.py").write_text(_TWO_CODES)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mypy]\ndisable_error_code = ["jaxstatic-argnames"]\n\n'
        '[[tool.mypy.overrides]]\nmodule = "m"\nenable_error_code = ["jaxstatic-unhashabel"]\n')
    monkeypatch.chdir(tmp_path)
    from mypy import config_parser

    if hasattr(config_parser, "validate_codes"):  # an older mypy drops it as it reads the file, and says so
        assert check([]) == 1
        out, err = capsys.readouterr()
        assert _reported(out) == {_UNHASHABLE}
        assert err == 'pyproject.toml: [module = "m"]:enable_error_code: Invalid error code(s): jaxstatic-unhashabel\n'
        return
    assert check([]) == 2
    assert capsys.readouterr() == (
        "", "jaxstatic-check: Invalid error code(s) in the mypy configuration: jaxstatic-unhashabel\n")


def test_exclude_lists_and_a_configuration_in_a_parent_folder(check: Check, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".git").mkdir()  # mypy looks upward for its configuration as far as the repository's root
    (tmp_path / "pyproject.toml").write_text('[tool.mypy]\nexclude = ["^nothing/", "gen/"]\n')
    package = tmp_path / "src" / "pkg"
    (package / "gen").mkdir(parents=True)
    bad = textwrap.dedent("""\
        from jaxstatic import Static, jit


        @jit
        def f(x, table: Static[dict[str, list[int]]]):
            return x


        def g(x):
            return f(x, {"a": [1]})
        """)
    (package / "__init__.py").write_text("")
    (package / "gen" / "generated.py").write_text(bad)  # excluded, by the second pattern of the list
    (package / "model.py").write_text(bad.replace('{"a": [1]}', "{1: 2}"))
    monkeypatch.chdir(tmp_path / "src")

    assert check(["pkg"]) == 0
    assert capsys.readouterr() == ("", "jaxstatic-check: 2 files checked; 1 file not checked: excluded by the "
                                       "mypy configuration's exclude\n")


def test_files_mypy_cannot_parse_or_that_ignore_every_error_are_named(check: Check, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(PROJECTS / "numpyro" / "numpyro", tmp_path / "numpyro")
    (tmp_path / "numpyro" / "broken.py").write_text("def f(:\n    pass\n")
    util = (tmp_path / "numpyro" / "util.py").read_text()
    (tmp_path / "numpyro" / "quiet.py").write_text("# mypy: ignore-errors\n" + util)
    monkeypatch.chdir(tmp_path)
    assert check(["numpyro"]) == 1
    out, summary = capsys.readouterr()
    assert len(_reported(out)) == 7  # the others are checked all the same
    assert summary.startswith("jaxstatic-check: 6 files checked; 1 file not checked: mypy cannot parse "
                              "numpyro/broken.py:1:")
    assert summary.endswith("; 1 file not checked: the file ignores every error itself (# mypy: ignore-errors, "
                            "or # type: ignore at its top): numpyro/quiet.py\n")


def test_two_modules_of_one_name_mypy_cannot_tell_apart(check: Check, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "conftest.py").write_text("")
    (tmp_path / "mypy.ini").write_text("[mypy]\nexplicit_package_bases = True\nmypy_path = a, b\n")
    monkeypatch.chdir(tmp_path)
    assert check(["a", "b"]) == 2
    assert capsys.readouterr().err == (
        'jaxstatic-check: a/conftest.py and b/conftest.py are both module "conftest" to mypy, even with '
        "explicit_package_bases; set mypy_path to the folders imports start from, or exclude one of them (in the "
        "mypy configuration, or in [tool.jaxstatic])\n")


def test_imports_nothing_of_jax(tmp_path: Path) -> None:
    (tmp_path / "clean.py").write_text("def helper(x):\n    return x + 1\n")
    code = ("import sys; from jaxstatic_check import main; status = main(['clean.py']); "
            "print(status, sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib', 'jaxstatic')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert (done.stdout, done.stderr) == ("0 []\n", "")
