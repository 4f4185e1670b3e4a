"""``jaxstatic-check`` over a small project that does not use mypy: only jaxstatic's diagnostics, exit 1 with them,
quiet and 0 without; GitHub annotations; ``[tool.jaxstatic]`` and the project's mypy configuration read."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ._check import check

# One pytest-xdist worker runs them all: the tests here share one mypy cache (mypy over jax, cold, takes a while).
pytestmark = pytest.mark.xdist_group("check")

pytest.importorskip("mypy")

# Untyped imports, an untyped function and a type error mypy would report: none of it is jaxstatic's to say.
_TRAIN = textwrap.dedent(
    """\
    import dataclasses

    import jax.numpy as jnp
    import not_installed_anywhere

    from jaxstatic import Static, jit


    @dataclasses.dataclass
    class Cfg:
        lr: float


    @jit
    def step(x, cfg: Static[Cfg]):
        return x * cfg.lr


    def train():
        step(jnp.zeros(3), Cfg(0.1))
        wrong: int = "not an int"
        return not_installed_anywhere.go(wrong)
    """
)
_CLEAN = "def helper(x):\n    return x + 1\n"
_MESSAGE = (
    'Argument "cfg" to "step" cannot be static: "Cfg" is a dataclass with eq=True, frozen=False; '
    "pass a hashable value or a builtin container of them"
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    (root / "train.py").write_text(_TRAIN)
    (root / "clean.py").write_text(_CLEAN)
    return root


@pytest.fixture(autouse=True)
def _in_project(project: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    # one cache for the module's runs (mypy cold over jax takes a while), none in the user's home
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


def test_reports_only_jaxstatic_diagnostics(capsys: pytest.CaptureFixture[str]) -> None:
    assert check(["train.py", "clean.py"]) == 1
    out, err = capsys.readouterr()
    assert out == f"train.py:20: error: {_MESSAGE}  [jaxstatic-unhashable]\n"
    assert err == ""
    assert not (Path.cwd() / ".mypy_cache").exists()


def test_quiet_and_zero_when_nothing_is_found(capsys: pytest.CaptureFixture[str]) -> None:
    assert check(["clean.py"]) == 0
    assert capsys.readouterr() == ("", "")


def test_github_annotations(capsys: pytest.CaptureFixture[str]) -> None:
    assert check(["--format", "github", "train.py"]) == 1
    # the message is data: only %, CR and LF are escaped there
    assert capsys.readouterr().out == f"::error file=train.py,line=20,col=24,title=jaxstatic-unhashable::{_MESSAGE}\n"


def test_tool_jaxstatic_paths_and_options_over_the_mypy_configuration(project: Path) -> None:
    from jaxstatic_check import _project

    (project / "pyproject.toml").write_text(
        '[tool.mypy]\npython_version = "3.12"\nfiles = ["clean.py"]\n\n'
        '[tool.jaxstatic]\npaths = ["train.py"]\npython_version = "3.11"\n')
    try:
        loaded = _project.load([])
    finally:
        (project / "pyproject.toml").unlink()
    assert [s.path for s in loaded.sources] == ["train.py"]
    assert loaded.options.python_version == (3, 11)
    assert loaded.options.config_file == "pyproject.toml"


def test_unannotated_loops_are_checked_under_the_projects_own_configuration(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text("[tool.mypy]\nignore_missing_imports = true\n")
    (project / "loop.py").write_text(textwrap.dedent(
        """\
        import jax

        step = jax.jit(lambda state, batch: state + batch, donate_argnums=0)


        def train(state, batches):
            for batch in batches:
                new = step(state, batch)
            wrong: int = "not an int"
            return state
        """
    ))
    try:
        assert check(["loop.py"]) == 1
    finally:
        (project / "pyproject.toml").unlink()
        (project / "loop.py").unlink()
    assert capsys.readouterr().out == (
        'loop.py:8: error: "state" was donated to "step" (line 8) in the previous iteration of this loop, and not '
        'rebound since: its buffers are deleted; use the value "step" returned (state = step(...))  '
        "[jaxstatic-donated]\n"
    )


def test_python_dash_m(project: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "jaxstatic_check", "clean.py"], capture_output=True, text=True,
                          cwd=project, timeout=600)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
