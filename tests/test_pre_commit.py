"""The hooks of ``.pre-commit-hooks.yaml``, run by pre-commit itself over a small git repository.

pre-commit would install the hook repository into a fresh environment from the package index; here each hook is
declared ``repo: local`` with the manifest's own ``entry``, ``args`` and file filters, run with the jaxstatic
installed in this environment, so the test needs no network and checks what a user's configuration runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("pre_commit")
pytest.importorskip("libcst")

_MANIFEST = Path(__file__).resolve().parents[1] / ".pre-commit-hooks.yaml"

_BAD = textwrap.dedent(
    """\
    from functools import partial

    import jax
    import jax.numpy as jnp
    from jaxstatic import Static, jit


    @partial(jax.jit, static_argnums=1)
    def scale(x, n):
        return x * n


    @jit
    def step(x, cfg: Static[dict]):
        return x


    def train(x):
        return step(x, {"w": jnp.zeros(3)}), scale(x, 2)
    """
)
_GOOD = textwrap.dedent(
    """\
    from jaxstatic import Static, jit


    @jit
    def step(x, cfg: Static[dict[str, int]]):
        return x


    def train(x):
        return step(x, {"depth": 2})
    """
)


def _hooks() -> list[dict[str, Any]]:
    return yaml.safe_load(_MANIFEST.read_text())  # type: ignore[no-any-return]


def _pre_commit(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_manifest_is_valid(tmp_path: Path) -> None:
    done = _pre_commit("validate-manifest", str(_MANIFEST), cwd=tmp_path, home=tmp_path / "home")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [h["id"] for h in _hooks()] == ["jaxstatic-check", "jaxstatic-migrate"]


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_hooks_fail_on_findings_and_pass_on_clean_code(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir()
    local = []
    for hook in _hooks():  # the manifest's hook as a user's configuration runs it, from this environment
        keep = {k: v for k, v in hook.items() if k not in ("language", "additional_dependencies", "description")}
        local.append({**keep, "language": "system"})
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": local}]}))
    (repo / "train.py").write_text(_BAD)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "."], cwd=repo, check=True)

    failed = _pre_commit("run", "--all-files", cwd=repo, home=home)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert 'train.py:19: error: Argument "cfg" to "step" cannot be static: "Array" is an array' in failed.stdout
    assert "[jaxstatic-unhashable]" in failed.stdout
    assert "jaxstatic-migrate --check" in failed.stdout and "would change" in failed.stdout.lower()
    assert (repo / "train.py").read_text() == _BAD  # --check writes nothing

    (repo / "train.py").write_text(_GOOD)
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    passed = _pre_commit("run", "--all-files", cwd=repo, home=home)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.count("Passed") == 2


_CONFIG = "import dataclasses\n\n\n@dataclasses.dataclass(frozen=True)\nclass Cfg:\n    lr: float\n"
_USER = textwrap.dedent(
    """\
    from config import Cfg
    from jaxstatic import Static, jit


    @jit
    def step(x, cfg: Static[Cfg]):
        return x * cfg.lr


    def train(x):
        return step(x, Cfg(0.1))
    """
)


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_the_check_hook_finds_what_a_staged_file_breaks_in_a_file_not_staged(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir()
    (hook,) = [h for h in _hooks() if h["id"] == "jaxstatic-check"]
    keep = {k: v for k, v in hook.items() if k not in ("language", "additional_dependencies", "description")}
    config = {"repos": [{"repo": "local", "hooks": [{**keep, "language": "system"}]}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    (repo / "config.py").write_text(_CONFIG)
    (repo / "train.py").write_text(_USER)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start"], cwd=repo,
                   check=True)

    # the class made mutable, only config.py staged: the call in train.py no longer passes a hashable static
    (repo / "config.py").write_text(_CONFIG.replace("(frozen=True)", ""))
    subprocess.run(["git", "add", "config.py"], cwd=repo, check=True)
    failed = _pre_commit("run", cwd=repo, home=home)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert ('train.py:11: error: Argument "cfg" to "step" cannot be static: "Cfg" is a dataclass with eq=True, '
            "frozen=False") in failed.stdout
