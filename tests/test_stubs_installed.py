"""The stub package as a user installs it: ``pip install ./typeshed_stubs`` (here into a throwaway ``--target``
folder), then mypy --strict, pyright, basedpyright, pyrefly and ty over the stub test cases and the training-step
sample, with the package on the checker's path and without it.

Every line of the test cases ending in ``# type: ignore`` and every line of the sample ending in
``# error-with-stubs`` is a mistake: here the comment is replaced by a mark, so that a checker has to report the
line. Any other line a checker reports is a false positive. mypy and pyright catch every mistake with no false
positive; basedpyright (standard mode), pyrefly and ty are held to the figures in ``KNOWN`` (their known limits,
listed in docs/type-checking/stubs.md), so that a change either way shows. ``python tests/test_stubs_installed.py``
prints the table.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typing_extensions import ParamSpec, TypeVar

# One pytest-xdist worker runs them all: the stubs are installed (``site``) and checked (``outcomes``) once for all
# the tests here.
pytestmark = pytest.mark.xdist_group("stubs_installed")

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
CASES = [*sorted((ROOT / "typeshed_stubs" / "@tests" / "test_cases").glob("check_*.py")),
         ROOT / "tests" / "stubs_sample" / "train_step.py"]
MARK = "# MISTAKE"
# The environment whose jax is checked against (and the stubs rendered from): this one unless told, e.g.
# JAXSTATIC_STUBS_PYTHON=.venv-floor/bin/python python tests/test_stubs_installed.py for the floor jax.
PYTHON = os.path.abspath(os.environ.get("JAXSTATIC_STUBS_PYTHON", sys.executable))
CHECKERS = ["mypy", "pyright", "basedpyright", "pyrefly", "ty"]

# (file, line) a checker gets wrong with the stubs installed: false positives on correct lines, and mistakes missed.
KNOWN: dict[str, dict[str, set[tuple[str, str]]]] = {
    "mypy": {},
    "pyright": {},
    "basedpyright": {},
    # pyrefly types functools.partial from typeshed's `partial` alone, so `partial(jax.jit, ...)` (and
    # `partial(jax.checkpoint, ...)`) return Any: no false positive, no check. It does not see the overloaded
    # `__call__` as satisfying jax.stages.Wrapped.
    "pyrefly": {
        "false": {("check_jit.py", "as_wrapped: Wrapped = bare")},
        "lost": {
            ("check_jit.py", "assert_type(model.power(x, 2), jax.Array)"),
            ("check_jit.py", "assert_type(partial_argnums(x, 2), tuple[jax.Array, int])"),
            ("check_jit.py", "assert_type(partial_jit(x, 2), jax.Array)"),
            ("check_jit.py", "assert_type(stacked(x, 2), jax.Array)"),
            ("check_transforms.py", "assert_type(layer(x, 2), jax.Array)"),
        },
        "missed": {
            ("check_jit.py", 'model.power(x, "2")'),
            ("check_jit.py", "partial_argnums(x)"),
            ("check_jit.py", 'partial_jit(x, "2")'),
            ("check_jit.py", 'stacked(x, "2")'),
            ("check_transforms.py", 'layer(x, "2")'),
            ("train_step.py", "train_step(params, x, lr=0.05)"),
            ("train_step.py", 'train_step(params, x, y, lr="fast")'),
            # jit of vmap of grad: the call is not checked
            ("check_transforms.py", "composed(x)"),
        },
    },
    # ty leaves the options-only form `@jax.jit(static_argnames=...)` Unknown (no check, no false positive).
    "ty": {
        "lost": {("check_jit.py", "assert_type(factory(x, 2), jax.Array)")},
        "missed": {("check_jit.py", 'factory(x, "2")')},
    },
}


def install(target: Path) -> None:
    """What a user runs: pip builds the package, rendering it from the jax of this interpreter."""
    proc = subprocess.run(
        [PYTHON, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(ROOT / "typeshed_stubs")],
        capture_output=True, text=True, check=False, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def copy_cases(work: Path) -> None:
    cases = work / "cases"
    cases.mkdir()
    for path in CASES:
        text = re.sub(r"# (type: ignore\b.*|error-with-stubs)$", MARK, path.read_text(), flags=re.M)
        (cases / path.name).write_text(text)


def marked(work: Path) -> set[tuple[str, int]]:
    return {(p.name, i) for p in (work / "cases").glob("*.py")
            for i, line in enumerate(p.read_text().splitlines(), 1) if line.endswith(MARK)}


Line = tuple[str, int]  # file name, line number
# A failed assert_type: the type was lost (Any, Unknown) or differs; no error a user sees in code without them.
ASSERT_TYPE = {"assert-type", "reportAssertTypeFailure", "type-assertion-failure"}


def run_checkers(work: Path, stubs: Path | None) -> dict[str, dict[Line, set[str]]]:
    """The lines each checker reports (errors, and basedpyright's warnings) with their codes, run side by side."""
    python = PYTHON
    extra = [str(stubs)] if stubs else []
    (work / "pyproject.toml").write_text(
        "[tool.mypy]\nstrict = true\n"
        # jax's own ShapeDtypeStruct and friends are unannotated: not what these checks are about
        'disable_error_code = ["no-untyped-call"]\n'
        f'[tool.pyrefly]\nproject-includes = ["cases"]\npython-interpreter-path = "{python}"\n'
        f"search-path = {json.dumps(extra)}\n"
        f'[tool.ty.environment]\npython = "{python}"\nextra-paths = {json.dumps(extra)}\n'
    )
    # standard mode for both: the stubs are about the types of calls, not recommended mode's style rules
    (work / "pyrightconfig.json").write_text(json.dumps(
        {"typeCheckingMode": "standard", "reportMissingModuleSource": "none", "extraPaths": extra}))
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    env |= {"PYRIGHT_PYTHON_IGNORE_WARNINGS": "1", "NO_COLOR": "1"}
    commands = {
        "mypy": [sys.executable, "-m", "mypy", "--python-executable", python, "--no-error-summary", "--cache-dir", str(work / ".mypy"), "cases"],
        "pyright": [str(BIN / "pyright"), "--outputjson", "--pythonpath", python, "cases"],
        "basedpyright": [str(BIN / "basedpyright"), "--outputjson", "--pythonpath", python, "cases"],
        "pyrefly": [str(BIN / "pyrefly"), "check", "--output-format", "json", "--summary=none"],
        "ty": [str(BIN / "ty"), "check", "--output-format", "concise", "--no-progress", "cases"],
    }
    # mypy finds a stub package on the interpreter's path only (it ignores `-stubs` folders on its mypy_path)
    envs = {name: env | {"PYTHONPATH": os.pathsep.join(extra)} if name == "mypy" else env for name in commands}
    procs = {name: subprocess.Popen(cmd, cwd=work, env=envs[name], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True) for name, cmd in commands.items()}
    found: dict[str, dict[Line, set[str]]] = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=600)
        seen: list[tuple[str, int, str]] = []
        try:
            if name == "mypy":
                if proc.returncode not in (0, 1):
                    raise ValueError(f"exit status {proc.returncode}")
                seen = [(m[1], int(m[2]), m[3] or "") for m in re.finditer(
                    r"^cases/(\w+\.py):(\d+): error: .*?(?:  \[([\w-]+)\])?$", out, re.M)]
            elif name == "ty":
                seen = [(m[1], int(m[2]), m[3]) for m in re.finditer(
                    r"^cases/(\w+\.py):(\d+):\d+: (?:error|warning)\[([\w-]+)\]", out, re.M)]
            elif name.endswith("pyright"):
                seen = [(Path(d["file"]).name, d["range"]["start"]["line"] + 1, d.get("rule", ""))
                        for d in json.loads(out)["generalDiagnostics"] if d["severity"] in ("error", "warning")]
            else:
                seen = [(Path(d["path"]).name, d["line"], d["name"])
                        for d in json.loads(out)["errors"] if d["severity"] in ("error", "warn")]
        except (ValueError, KeyError) as exc:
            raise RuntimeError(f"{name} did not run ({exc}):\n{out[-3000:]}\n{err[-3000:]}") from None
        found[name] = {}
        for file, line, code in seen:
            found[name].setdefault((file, line), set()).add(code)
    return found


@dataclass(frozen=True)
class Outcome:
    """One checker's run, each line named by its file and its source text."""

    false: set[tuple[str, str]]  # errors on correct lines
    lost: set[tuple[str, str]]  # correct lines whose only report is a failed assert_type (the type was lost)
    missed: set[tuple[str, str]]  # mistakes not reported
    caught: int


def outcome(work: Path, reported: dict[Line, set[str]]) -> Outcome:
    def text(line: Line) -> tuple[str, str]:
        source = (work / "cases" / line[0]).read_text().splitlines()[line[1] - 1]
        return line[0], source.removesuffix(MARK).strip()

    mistakes = marked(work)
    wrong = {line: codes for line, codes in reported.items() if line not in mistakes}
    return Outcome(
        false={text(line) for line, codes in wrong.items() if codes - ASSERT_TYPE},
        lost={text(line) for line, codes in wrong.items() if not codes - ASSERT_TYPE},
        missed={text(line) for line in mistakes - set(reported)},
        caught=len(mistakes & set(reported)),
    )


def check(work: Path, stubs: Path | None) -> dict[str, Outcome]:
    work.mkdir()
    copy_cases(work)
    return {name: outcome(work, reported) for name, reported in run_checkers(work, stubs).items()}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    install(target)
    return target


@pytest.fixture(scope="module")
def outcomes(site: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    return check(tmp_path_factory.mktemp("checked") / "work", site)


def test_the_package_holds_the_stubs_of_the_installed_jax(site: Path) -> None:
    version = subprocess.run([PYTHON, "-c", "import jax; print(jax.__version__)"], capture_output=True, text=True,
                             check=True).stdout.strip()
    package = site / "jax-stubs"
    assert (package / "py.typed").read_text() == "partial\n"
    assert f"installed jax {version} by" in (package / "numpy" / "__init__.pyi").read_text()
    assert "def jit(" in (package / "__init__.pyi").read_text()


def _renderer() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("gen_jax_stubs", ROOT / "tools" / "gen_jax_stubs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


_P = ParamSpec("_P")
_R = TypeVar("_R")


def typed_jit(fun: Callable[_P, _R], /, **options: object) -> Callable[_P, _R]:
    """What a jax release typing jit itself looks like: the parameters kept by a ParamSpec."""
    return fun


def test_the_stubs_step_aside_when_jax_types_jit_itself(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import jax

    renderer = _renderer()
    assert not renderer.jax_types_jit(jax.jit)  # the jax installed here: the stubs apply
    assert renderer.jax_types_jit(typed_jit)
    monkeypatch.setattr(jax, "jit", typed_jit)
    monkeypatch.setattr(renderer, "PACKAGE", Path("/nonexistent/jax-stubs"))  # nothing may be written
    assert renderer.main(["--package-only"]) == 3
    assert "types jax.jit itself (with a ParamSpec): the stubs step aside" in capsys.readouterr().err


@pytest.mark.parametrize("checker", CHECKERS)
def test_false_positives(outcomes: dict[str, Outcome], checker: str) -> None:
    assert outcomes[checker].false == KNOWN[checker].get("false", set())


@pytest.mark.parametrize("checker", CHECKERS)
def test_types_lost(outcomes: dict[str, Outcome], checker: str) -> None:
    assert outcomes[checker].lost == KNOWN[checker].get("lost", set())


@pytest.mark.parametrize("checker", CHECKERS)
def test_mistakes_caught(outcomes: dict[str, Outcome], checker: str) -> None:
    assert outcomes[checker].missed == KNOWN[checker].get("missed", set())


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        install(Path(tmp) / "site")
        before, after = check(Path(tmp) / "without", None), check(Path(tmp) / "with", Path(tmp) / "site")
    total = after["mypy"].caught + len(after["mypy"].missed)
    print(f"{total} mistakes. Per checker: false positives, types lost / mistakes caught, without -> with the stubs")
    for name in CHECKERS:
        b, a = before[name], after[name]
        print(f"{name:13} {len(b.false):2}, {len(b.lost):2} / {b.caught:2}  ->  {len(a.false):2}, {len(a.lost):2} / {a.caught:2}")
        for kind in ("false", "lost", "missed"):
            for file, line in sorted(getattr(a, kind)):
                print(f"    {kind:6} {file}: {line}")
