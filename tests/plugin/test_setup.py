"""The checks run where users run them: installed as the README says, from a project outside this repository.

The install test builds a fresh venv and installs jaxstatic into it with the README's own ``pip install`` arguments,
the user's install from a clone and the development one (read from the README, so they cannot drift), adding only
``--no-deps``: the dependencies come from this venv's site-packages through a path entry, so no wheel is downloaded
again. A ``.pth`` path entry does not run the ``.pth``
files it points at, so this venv's own jaxstatic stays invisible there.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[2]

_USER_FILE = """\
from typing import Any

import jax
import jax.numpy as jnp

from jaxstatic import Static, jit


@jit
def step(x: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
    return x


x = jnp.zeros(3)
step(x, {"w": x})
step(x, {"lr": 0.1}, 3)
"""

_UNHASHABLE = (
    'user.py:15: error: Argument "cfg" to "step" cannot be static: "Array" is an array; pass a hashable value '
    "or a builtin container of them  [jaxstatic-unhashable]"
)


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH", "VIRTUAL_ENV")}
    env.update(extra)
    return env


def readme_pip_arguments(which: str, clone: Path = _REPO) -> list[str]:
    """The arguments of the first ``pip install`` of a README command: "development" is the README's opening set-up
    command, "user" the install into a user's own project (the block naming the clone, ``./jaxstatic``, which is
    replaced by ``clone``)."""
    blocks = [block.split("```", 1)[0] for block in (_REPO / "README.md").read_text().split("```bash\n")[1:]]
    block = blocks[0] if which == "development" else next(b for b in blocks if "./jaxstatic" in b)
    found = re.search(r"pip install (.+?)(?: &&| +#|$)", block, re.MULTILINE)
    assert found is not None, f"the README's {which} command must install with pip"
    return [arg.replace("./jaxstatic", str(clone)) for arg in shlex.split(found.group(1))]


def _clone(tmp_path: Path) -> Path:
    """A copy of this checkout as a fresh clone has it: pip builds in the tree it installs (``build/``, and the
    links of a strict editable install, which this checkout's own venv imports through), so a build here could
    change what tests running beside this one import."""
    made = ("build", "dist", "site", "node_modules", "__pycache__", "*.egg-info", "*.so", ".*")
    clone = tmp_path / "jaxstatic"
    shutil.copytree(_REPO, clone, ignore=shutil.ignore_patterns(*made))
    return clone


def _fresh_venv(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "dependencies-from-the-test-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def _mypy(python: Path, project: Path, *args: str) -> list[str]:
    done = subprocess.run([str(python), "-m", "mypy", "--no-error-summary", *args], cwd=project,
                          env=_clean_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.stdout.splitlines()


@pytest.mark.installs  # a fresh venv and two builds of jaxstatic: .ci/run runs it (``--installs``)
@pytest.mark.parametrize("which", ["user", "development"])
def test_readme_install_is_visible_to_mypy_and_pyright(tmp_path: Path, which: str) -> None:
    python, clone = _fresh_venv(tmp_path), _clone(tmp_path)
    install = [str(python), "-m", "pip", "install", "-q", "--no-deps", *readme_pip_arguments(which, clone)]
    done = subprocess.run(install, cwd=clone, env=_clean_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    project = tmp_path / "project"
    project.mkdir()
    (project / "user.py").write_text(_USER_FILE)
    (project / "mypy.ini").write_text("[mypy]\nplugins = jaxstatic_mypy\n")

    lines = _mypy(python, project, "user.py")
    assert _UNHASHABLE in lines, lines
    assert any(line.startswith("user.py:16: error: Too many arguments") for line in lines), lines
    assert not any("import-not-found" in line for line in lines), lines

    pyright = subprocess.run([str(python), "-m", "pyright", "--outputjson", "--pythonpath", str(python), "user.py"],
                             cwd=project, env=_clean_env(), capture_output=True, text=True, timeout=600)
    report = json.loads(pyright.stdout)
    errors = [(d["range"]["start"]["line"] + 1, d.get("rule", "")) for d in report["generalDiagnostics"]
              if d["severity"] == "error"]
    assert errors == [(16, "reportCallIssue")], pyright.stdout


def test_a_note_says_once_when_jaxstatic_cannot_be_found(tmp_path: Path) -> None:
    (tmp_path / "user.py").write_text(
        "from jaxstatic import Static\n\n\ndef f(n: Static[int]) -> None: ...\n\n\ndef g(n: Static[str]) -> None: ...\n"
    )
    (tmp_path / "mypy.ini").write_text("[mypy]\nplugins = jaxstatic_mypy\nignore_missing_imports = True\n")
    # --no-site-packages: mypy cannot see jaxstatic, as with an editable install through an import hook; the
    # plugin itself is still imported by Python.
    lines = _mypy(Path(sys.executable), tmp_path, "--no-site-packages", "user.py")
    assert lines == [
        'user.py:4: note: jaxstatic_mypy: module "jaxstatic" is not visible to mypy here, so no Static parameter '
        "is checked; install jaxstatic into the environment mypy runs in, editable installs with "
        '"pip install -e <jaxstatic> --config-settings editable_mode=strict"'
    ]


def test_quickstart_passes_mypy_strict_with_the_plugin(tmp_path: Path) -> None:
    (tmp_path / "mypy.ini").write_text("[mypy]\nplugins = jaxstatic_mypy\nstrict = True\n")
    example = _REPO / "examples" / "quickstart.py"
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(tmp_path / "mypy.ini"), "--cache-dir",
                           str(tmp_path / "cache"), str(example)], cwd=_REPO, env=_clean_env(),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


_PACKAGES = {"jaxstatic": "jaxstatic", "jaxstatic_mypy": "mypy_plugin", "jaxstatic_check": "jaxstatic_check",
             "jaxstatic_pytest": "jaxstatic_pytest"}
"""Each package by the folder of this checkout it is installed from (pyproject's ``package-dir``)."""


def test_the_tests_check_this_checkouts_code(tmp_path: Path) -> None:
    """mypy loads the plugin, and reads jaxstatic's types, as installed: from outside the checkout, ``import
    jaxstatic_mypy`` (the name an install gives ``mypy_plugin/``) and ``import jaxstatic`` find the development
    install, which (``editable_mode=strict``) links each file present when it ran. A module added since, or this
    venv installed from another clone, would leave the plugin's cases checking other code than this checkout's."""
    where = subprocess.run(
        [sys.executable, "-c", "import importlib.util, json; print(json.dumps({name: "
         "list(importlib.util.find_spec(name).submodule_search_locations) for name in "
         f"{sorted(_PACKAGES)!r}}}))"], cwd=tmp_path, capture_output=True, text=True, env=_clean_env(), check=True)
    found = json.loads(where.stdout)
    stale = []
    for name, folder in _PACKAGES.items():
        installed = Path(found[name][0])
        for source in sorted((_REPO / folder).rglob("*.py")):
            copy = installed / source.relative_to(_REPO / folder)
            if not copy.exists() or copy.resolve() != source.resolve():
                stale.append(f"{source.relative_to(_REPO)}: `import {name}` finds {copy if copy.exists() else 'none'}")
    assert not stale, ("the installed copy is not this checkout's code: run the README's set-up command again "
                       "(pip install -e '.[dev]' --config-settings editable_mode=strict)\n" + "\n".join(stale))
