"""Typed libraries built on jaxstatic and their downstream users, under every type checker jaxstatic supports: mypy
--strict (with and without the jaxstatic plugin), pyright strict, basedpyright recommended, pyrefly and ty. Four
samples: tests/checkers/mylib with user.py (functions, dataclasses, methods); tests/checkers/optlib with
optlib_user.py (written as optimizer and model libraries are: a generic trainer, a config-first loss, a jitted
``__call__`` passed as a Protocol, classmethods, staticmethods and properties over ``js.jit``, overloads, partials);
tests/checkers/trainlib with trainlib_user.py (a training library: gradients called by keyword, a ``Model``
protocol bounding a generic ``Trainer``, overloaded schedules, partial-jitted steps); and tests/checkers/zoo with
zoo_user.py (Equinox-style modules generic over their dtype, with jitted methods).

Every line of a sample without a mark is correct code that must check clean; each line ending in ``# mistake``
must be reported on that line by every checker, and each ending in ``# mistake: plugin`` (a value check, or a type
only the plugin can compute) by mypy with the plugin. What a checker cannot express is said on the line, and on
docs/type-checking/checkers.md with the workaround: ``# ok, rejected by: pyright basedpyright`` (correct code those
checkers report), ``# mistake, missed by: mypy pyrefly`` (a mistake they let through). The checkers run once, side by
side (one fixture), on one copy of both samples; each test reads its share. ``python tests/test_checkers.py`` prints
the table of false positives and mistakes caught per checker and sample (``-v``: which).
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

# One pytest-xdist worker runs them all: every checker runs once over the samples (``reports``) for all the tests here.
pytestmark = pytest.mark.xdist_group("checkers")

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "checkers"
BIN = Path(sys.executable).parent  # CI's PATH may not hold the venv's bin
# each sample: its library package and the user module that calls it
SAMPLES = {"user.py": "mylib", "optlib_user.py": "optlib", "trainlib_user.py": "trainlib", "zoo_user.py": "zoo"}
FILES = [f for user, lib in SAMPLES.items() for f in (f"{lib}/__init__.py", user)]

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
project-includes = {includes}
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
    config = PYPROJECT.format(python=sys.executable, prefix=sys.prefix, plugins='plugins = ["jaxstatic_mypy"]\n',
                              includes=json.dumps([p for user, lib in SAMPLES.items() for p in (lib, user)]))
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


MARK = re.compile(r"# (?P<kind>mistake(?:: plugin)?|ok)(?:, (?:missed|rejected) by: (?P<checkers>[\w -]+))?$")


@dataclass(frozen=True)
class Mark:
    path: str  # the user module
    line: int
    mistake: bool
    plugin_only: bool
    limited: frozenset[str]  # checkers that cannot do what the line asks (documented on checkers.md)


def marks(user: str | None = None) -> dict[tuple[str, int], Mark]:
    """The marked lines of one user module, or of every sample's."""
    out = {}
    for path in [user] if user else list(SAMPLES):
        for i, text in enumerate((SAMPLE / path).read_text().splitlines(), 1):
            m = MARK.search(text)
            if m is not None:
                limited = frozenset((m["checkers"] or "").split())
                assert limited <= set(CHECKERS), f"{path}:{i}: unknown checker in {sorted(limited)}"
                out[path, i] = Mark(path, i, m["kind"] != "ok", m["kind"] == "mistake: plugin", limited)
    return out


def mistakes(user: str | None = None) -> dict[tuple[str, int], Mark]:
    return {k: m for k, m in marks(user).items() if m.mistake}


def expected(checker: str, user: str | None = None) -> set[tuple[str, int]]:
    """The mistakes ``checker`` must report."""
    return {k for k, m in mistakes(user).items()
            if (not m.plugin_only or checker == "mypy-plugin") and checker not in m.limited}


def false_positives(diagnostics: list[Diagnostic], checker: str) -> list[Diagnostic]:
    """Reports on correct code, but for the documented limits of ``checker``."""
    marked = marks()
    return [d for d in diagnostics if (d.path, d.line) not in marked
            or (not marked[d.path, d.line].mistake and checker not in marked[d.path, d.line].limited)]


def caught(diagnostics: list[Diagnostic]) -> set[tuple[str, int]]:
    marked = mistakes()
    return {(d.path, d.line) for d in diagnostics if (d.path, d.line) in marked}


def show(diagnostics: list[Diagnostic]) -> str:
    return "\n".join(f"{d.path}:{d.line}: [{d.code}] {d.message}" for d in diagnostics)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, list[Diagnostic]]]:
    yield run_checkers(tmp_path_factory.mktemp("checkers"))


@pytest.mark.parametrize("checker", CHECKERS)
def test_correct_code_checks_clean(reports: dict[str, list[Diagnostic]], checker: str) -> None:
    found = false_positives(reports[checker], checker)
    assert not found, show(found)


@pytest.mark.parametrize("checker", CHECKERS)
def test_every_mistake_is_reported(reports: dict[str, list[Diagnostic]], checker: str) -> None:
    missed = expected(checker) - caught(reports[checker])
    assert not missed, "\n".join(f"{path}:{i}: {(SAMPLE / path).read_text().splitlines()[i - 1]}"
                                  for path, i in sorted(missed))


@pytest.mark.parametrize("checker", CHECKERS)
def test_the_documented_limits_hold(reports: dict[str, list[Diagnostic]], checker: str) -> None:
    """Each limit said on a line (and on checkers.md) is still the checker's: a stale one would send users to a
    workaround they no longer need. (The newest releases are run without this test: a checker may lift a limit.)"""
    reported = {(d.path, d.line) for d in reports[checker]}
    limits = [m for m in marks().values() if checker in m.limited]
    stale = [m for m in limits if ((m.path, m.line) in reported) == m.mistake]
    assert not stale, "\n".join(f"{m.path}:{m.line}: no longer a limit of {checker}" for m in stale)


@pytest.mark.parametrize("user", SAMPLES)
def test_the_correct_code_runs(user: str) -> None:
    """What the checkers must accept is correct: the library and the user's correct part run."""
    source = (SAMPLE / user).read_text()
    correct = source[: source.index("# --- mistakes")]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", correct], cwd=SAMPLE, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.parametrize(("user", "least", "plugin_only"), [("user.py", 28, 2), ("optlib_user.py", 40, 1), ("trainlib_user.py", 32, 0),
                                                          ("zoo_user.py", 14, 0)])
def test_the_sample_has_the_mistakes_it_claims(user: str, least: int, plugin_only: int) -> None:
    assert len(mistakes(user)) >= least
    assert sum(m.plugin_only for m in mistakes(user).values()) >= plugin_only


def table(results: dict[str, list[Diagnostic]], verbose: bool = False) -> str:
    """False positives on correct code and mistakes caught, per checker and sample."""
    rows = ["| checker | sample | false positives | mistakes caught | documented limits |", "|---|---|---|---|---|"]
    notes = []
    for name in CHECKERS:
        for user, lib in SAMPLES.items():
            diags = [d for d in results[name] if d.path in (user, f"{lib}/__init__.py")]
            want = expected(name, user)
            limits = sum(name in m.limited for m in marks(user).values())
            rows.append(f"| {name} | {lib} | {len(false_positives(diags, name))} | {len(caught(diags) & want)}/{len(want)} "
                        f"| {limits} |")
            if verbose:
                notes += [f"## {name} on {lib}", show(false_positives(diags, name)),
                          f"missed: {sorted(i for _, i in want - caught(diags))}"]
    return "\n".join(rows + notes)


if __name__ == "__main__":  # the table: false positives on correct code, mistakes caught
    with tempfile.TemporaryDirectory() as tmp:
        print(table(run_checkers(Path(tmp)), verbose="-v" in sys.argv))
