"""A typed library built on jaxstatic (tests/checkers/mylib) and its downstream user (tests/checkers/user.py), under
every type checker jaxstatic supports: mypy --strict (with and without the jaxstatic plugin), pyright strict,
basedpyright recommended, pyrefly and ty.

Every line of the sample without a mark is correct code that must check clean; each line ending in ``# mistake``
must be reported on that line by every checker, and each ending in ``# mistake: plugin`` (a value check) by mypy with
the plugin. The checkers run once, side by side (one fixture), on one copy of the sample; each test reads its share.
``python tests/test_checkers.py`` prints the table of false positives and mistakes caught per checker.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "checkers"
BIN = Path(sys.executable).parent  # CI's PATH may not hold the venv's bin
FILES = ["mylib/__init__.py", "user.py"]

# The configuration each checker runs with, written into the copy's pyproject.toml: what the docs recommend.
PYPROJECT = """\
[tool.mypy]
strict = true
{plugins}
[tool.pyright]
typeCheckingMode = "strict"
reportMissingModuleSource = "none"

[tool.basedpyright]
typeCheckingMode = "recommended"
reportMissingModuleSource = "none"

[tool.pyrefly]
project-includes = ["mylib", "user.py"]
python-interpreter-path = "{python}"

[tool.ty.environment]
python = "{prefix}"
"""


@dataclass(frozen=True)
class Diagnostic:
    path: str  # relative to the sample
    line: int
    code: str
    message: str


def _mypy(out: str) -> list[Diagnostic]:
    line = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): error: (?P<msg>.*?)(?:  \[(?P<code>[\w-]+)\])?$")
    return [Diagnostic(m["path"], int(m["line"]), m["code"] or "", m["msg"])
            for m in map(line.match, out.splitlines()) if m]


def _pyright(out: str, cwd: Path) -> list[Diagnostic]:
    # basedpyright's recommended mode reports most rules as warnings, and fails on them: both count
    return [Diagnostic(str(Path(d["file"]).relative_to(cwd)), d["range"]["start"]["line"] + 1, d.get("rule", ""),
                       d["message"])
            for d in json.loads(out)["generalDiagnostics"] if d["severity"] in ("error", "warning")]


def _pyrefly(out: str, cwd: Path) -> list[Diagnostic]:
    return [Diagnostic(str(cwd / d["path"] if Path(d["path"]).is_absolute() else d["path"]), d["line"], d["name"],
                       d["description"])
            for d in json.loads(out)["errors"] if d["severity"] in ("error", "warn")]


def _ty(out: str) -> list[Diagnostic]:
    line = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):\d+: (?:error|warning)\[(?P<code>[\w-]+)\] (?P<msg>.*)$")
    return [Diagnostic(m["path"], int(m["line"]), m["code"], m["msg"]) for m in map(line.match, out.splitlines()) if m]


CHECKERS = ["mypy", "mypy-plugin", "pyright", "basedpyright", "pyrefly", "ty"]


def _commands(work: Path) -> dict[str, list[str]]:
    mypy = [sys.executable, "-m", "mypy", "--no-error-summary", "--no-pretty"]
    return {
        "mypy": [*mypy, "--cache-dir", str(work / ".cache-mypy"), "--config-file", "mypy-without-plugin.ini", *FILES],
        "mypy-plugin": [*mypy, "--cache-dir", str(work / ".cache-plugin"), *FILES],
        "pyright": [str(BIN / "pyright"), "--outputjson", "--pythonpath", sys.executable, *FILES],
        "basedpyright": [str(BIN / "basedpyright"), "--outputjson", "--pythonpath", sys.executable, *FILES],
        "pyrefly": [str(BIN / "pyrefly"), "check", "--output-format", "json", "--summary", "none", *FILES],
        "ty": [str(BIN / "ty"), "check", "--output-format", "concise", "--no-progress", *FILES],
    }


def run_checkers(work: Path) -> dict[str, list[Diagnostic]]:
    """Copy the sample into ``work``, run every checker on it at once, and parse what each reports."""
    shutil.copytree(SAMPLE, work, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    config = PYPROJECT.format(python=sys.executable, prefix=sys.prefix, plugins='plugins = ["jaxstatic_mypy"]\n')
    (work / "pyproject.toml").write_text(config)
    (work / "mypy-without-plugin.ini").write_text("[mypy]\nstrict = True\n")  # the same, without the plugin
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    env |= {"PYRIGHT_PYTHON_IGNORE_WARNINGS": "1", "NO_COLOR": "1"}
    procs = {name: subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True) for name, cmd in _commands(work).items()}
    found: dict[str, list[Diagnostic]] = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=600)
        try:
            if name.startswith("mypy"):
                if proc.returncode not in (0, 1):
                    raise ValueError(f"exit status {proc.returncode}")
                found[name] = _mypy(out)
            elif name.endswith("pyright"):
                found[name] = _pyright(out, work)
            elif name == "pyrefly":
                found[name] = _pyrefly(out, work)
            else:
                found[name] = _ty(out)
        except (ValueError, KeyError) as exc:
            raise RuntimeError(f"{name} did not run ({exc}):\n{out[-3000:]}\n{err[-3000:]}") from None
    return found


@dataclass(frozen=True)
class Mistake:
    line: int
    plugin_only: bool


def mistakes() -> dict[int, Mistake]:
    lines = (SAMPLE / "user.py").read_text().splitlines()
    out = {}
    for i, text in enumerate(lines, 1):
        if text.endswith("# mistake"):
            out[i] = Mistake(i, False)
        elif text.endswith("# mistake: plugin"):
            out[i] = Mistake(i, True)
    return out


def expected(checker: str) -> set[int]:
    return {m.line for m in mistakes().values() if not m.plugin_only or checker == "mypy-plugin"}


def false_positives(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    marked = mistakes()
    return [d for d in diagnostics if not (d.path == "user.py" and d.line in marked)]


def caught(diagnostics: list[Diagnostic]) -> set[int]:
    marked = mistakes()
    return {d.line for d in diagnostics if d.path == "user.py" and d.line in marked}


def show(diagnostics: list[Diagnostic]) -> str:
    return "\n".join(f"{d.path}:{d.line}: [{d.code}] {d.message}" for d in diagnostics)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, list[Diagnostic]]]:
    yield run_checkers(tmp_path_factory.mktemp("checkers"))


@pytest.mark.parametrize("checker", CHECKERS)
def test_correct_code_checks_clean(reports: dict[str, list[Diagnostic]], checker: str) -> None:
    found = false_positives(reports[checker])
    assert not found, show(found)


@pytest.mark.parametrize("checker", CHECKERS)
def test_every_mistake_is_reported(reports: dict[str, list[Diagnostic]], checker: str) -> None:
    missed = expected(checker) - caught(reports[checker])
    lines = (SAMPLE / "user.py").read_text().splitlines()
    assert not missed, "\n".join(f"user.py:{i}: {lines[i - 1]}" for i in sorted(missed))


def test_the_correct_code_runs() -> None:
    """What the checkers must accept is correct: the library and the user's correct part run."""
    source = (SAMPLE / "user.py").read_text()
    correct = source[: source.index("# --- mistakes")]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", correct], cwd=SAMPLE, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_the_sample_has_the_mistakes_it_claims() -> None:
    assert len(mistakes()) >= 28
    assert sum(m.plugin_only for m in mistakes().values()) >= 2


if __name__ == "__main__":  # the table: false positives on correct code, mistakes caught
    with tempfile.TemporaryDirectory() as tmp:
        results = run_checkers(Path(tmp))
    for name in CHECKERS:
        diags = results[name]
        print(f"{name:13} false positives {len(false_positives(diags)):3}   caught "
              f"{len(caught(diags) & expected(name)):2} of {len(expected(name))}")
        if "-v" in sys.argv:
            print(show(false_positives(diags)))
            missed = sorted(expected(name) - caught(diags))
            print("missed:", missed)
