"""The command: files and folders, --diff, --check, files that do not parse, the summary, the console script."""

from __future__ import annotations

import importlib.metadata
import pathlib
import subprocess
import sys

import pytest

from jaxstatic.migrate import main

BEFORE = """\
from functools import partial

import jax


@partial(jax.jit, static_argnames="n")  # compiled once per n
def f(x, n: int):
    return x * n
"""
AFTER = """\
import jaxstatic as js
from jaxstatic import Static


@js.jit  # compiled once per n
def f(x, n: Static[int]):
    return x * n
"""


@pytest.fixture
def project(tmp_path: pathlib.Path) -> pathlib.Path:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text(BEFORE)
    (tmp_path / "pkg" / "broken.py").write_text("def f(:\n")
    (tmp_path / "pkg" / "sub" / "plain.py").write_text("x = 1\n")
    (tmp_path / "pkg" / ".hidden").mkdir()
    (tmp_path / "pkg" / ".hidden" / "skipped.py").write_text(BEFORE)
    return tmp_path / "pkg"


def test_rewrites_in_place_and_reports_what_does_not_parse(project: pathlib.Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(project)]) == 1  # one file did not parse
    out = capsys.readouterr().out
    assert (project / "a.py").read_text() == AFTER
    assert (project / "broken.py").read_text() == "def f(:\n"
    assert (project / ".hidden" / "skipped.py").read_text() == BEFORE
    assert f"{project / 'broken.py'}:1: not converted: it does not parse" in out
    assert f"{project / 'a.py'}:6: JS001 converted: f(): n now Static" in out
    assert out.splitlines()[-1] == ("jaxstatic.migrate: 1 sites converted, 0 left; 1 of 3 files rewritten; "
                                    "1 did not parse")


def test_diff_prints_and_writes_nothing(project: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    main([str(project / "a.py"), "--diff"])
    out, err = capsys.readouterr()
    assert (project / "a.py").read_text() == BEFORE
    assert f"--- {project / 'a.py'}\n+++ {project / 'a.py'}\n" in out
    for line in ('-@partial(jax.jit, static_argnames="n")  # compiled once per n', "+@js.jit  # compiled once per n",
                 "-def f(x, n: int):", "+def f(x, n: Static[int]):"):
        assert f"\n{line}\n" in out
    assert "would change" in err.splitlines()[-1]  # stdout is the patch alone
    assert "jaxstatic.migrate" not in out


def test_check_fails_until_converted_then_passes(project: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = str(project / "a.py")
    assert main([a, "--check"]) == 1
    assert (project / "a.py").read_text() == BEFORE
    # nothing was written: the report says what would happen, not that it did
    assert capsys.readouterr().out.splitlines()[-2:] == [
        f"{a}:6: JS001 would convert: f(): n now Static",
        "jaxstatic.migrate: 1 sites would convert, 0 left; 1 of 1 files would change"]
    assert main([a]) == 0
    assert main([a, "--check"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "jaxstatic.migrate: 0 sites would convert, 0 left; 0 of 1 files would change")


def test_runs_as_a_module_and_a_console_script() -> None:
    (script,) = importlib.metadata.entry_points(group="console_scripts", name="jaxstatic-migrate")
    assert script.value == "jaxstatic.migrate:main"
    result = subprocess.run([sys.executable, "-m", "jaxstatic.migrate", "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    for code in ("JS001", "JS002", "JS003", "JS004", "JS005", "JS006", "JS010", "JS011"):
        assert code in result.stdout


def test_the_runtime_does_not_import_libcst() -> None:
    code = "import sys, jaxstatic; assert 'libcst' not in sys.modules, 'libcst imported'"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_a_function_jitted_in_another_file_given_too(tmp_path: pathlib.Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "ops.py").write_text("def power(x, k):\n    return x**k\n\n\ndef shift(x, by):\n    return x + by\n")
    (pkg / "model.py").write_text(
        "import jax\n\nfrom pkg.ops import power\nfrom .ops import shift\n\n"
        "fast = jax.jit(power, static_argnums=1)\nsame = jax.jit(power, static_argnames='k')\n"
        "a = jax.jit(shift, static_argnums=1)\nb = jax.jit(shift, static_argnums=0)\n")
    assert main([str(pkg)]) == 0
    assert (pkg / "ops.py").read_text() == (
        "from jaxstatic import Static\nfrom typing import Any\n\n"
        "def power(x, k: Static[Any]):\n    return x**k\n\n\ndef shift(x, by):\n    return x + by\n")
    model = (pkg / "model.py").read_text()
    assert "fast = js.jit(power)\nsame = js.jit(power)\n" in model
    assert "a = jax.jit(shift, static_argnums=1)\nb = jax.jit(shift, static_argnums=0)\n" in model
    assert main([str(pkg), "--check"]) == 0


def test_a_function_of_a_file_not_given_is_left(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ops.py").write_text("def power(x, k):\n    return x**k\n")
    source = "import jax\n\nfrom ops import power\n\nfast = jax.jit(power, static_argnums=1)\n"
    (tmp_path / "model.py").write_text(source)
    assert main([str(tmp_path / "model.py")]) == 0
    assert (tmp_path / "model.py").read_text() == source
    assert ("model.py:5: JS003 left: power is defined in another file (from ops import power) not given"
            in capsys.readouterr().out)


# files Python accepts that a text diff gets wrong: the patch must give the converted file byte for byte
ODD_FILES = {
    "no final newline": BEFORE.rstrip("\n").encode(),
    "utf-8 BOM": b"\xef\xbb\xbf" + BEFORE.encode(),
    "latin-1 header": ("# -*- coding: latin-1 -*-\n" + BEFORE.replace("# compiled", "# \xe9 compiled")).encode("latin-1"),
    "CRLF": BEFORE.replace("\n", "\r\n").encode(),
}


@pytest.mark.parametrize("tool", ["patch", "git"])
@pytest.mark.parametrize("case", ODD_FILES)
def test_diff_is_a_patch_that_applies(tmp_path: pathlib.Path, case: str, tool: str) -> None:
    original = ODD_FILES[case]
    (tmp_path / "a.py").write_bytes(original)
    result = subprocess.run([sys.executable, "-m", "jaxstatic.migrate", "a.py", "--diff"], cwd=tmp_path,
                            capture_output=True, check=True)
    assert b"jaxstatic.migrate: 1 sites would convert" in result.stderr
    assert main([str(tmp_path / "a.py")]) == 0
    converted = (tmp_path / "a.py").read_bytes()
    assert converted != original and converted.startswith(original[:3] if case == "utf-8 BOM" else b"")
    (tmp_path / "a.py").write_bytes(original)
    command = ["patch", "-p0", "--quiet"] if tool == "patch" else ["git", "apply", "-p0", "-"]
    if tool == "git":
        subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(command, cwd=tmp_path, input=result.stdout, check=True)
    assert (tmp_path / "a.py").read_bytes() == converted


def test_a_folder_skips_virtual_environments_and_what_git_ignores(tmp_path: pathlib.Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("build/\n")
    skipped = ["venv/lib/python3.12/site-packages/pkg/a.py", "env/pkg/a.py", "lib/site-packages/pkg/a.py",
               "build/lib/pkg/a.py"]
    for path in [*skipped, "src/a.py"]:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(BEFORE)
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert main([str(tmp_path)]) == 0
    assert (tmp_path / "src" / "a.py").read_text() == AFTER
    for path in skipped:
        assert (tmp_path / path).read_text() == BEFORE, path
    assert main([str(tmp_path / "build" / "lib" / "pkg" / "a.py")]) == 0  # a file named is always taken
    assert (tmp_path / "build" / "lib" / "pkg" / "a.py").read_text() == AFTER
