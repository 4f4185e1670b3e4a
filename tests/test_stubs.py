"""The partial jax stubs in typeshed_stubs/: generated parts current, stubtest clean, and both type checkers
agreeing with the test cases, the training-step sample and jaxstatic's public API.

Each checker runs once per configuration (module-scoped fixtures); the tests read their share of the output.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

# One pytest-xdist worker runs them all: the stubs are rendered into the checkout (``rendered_package``) and checked
# (``runs``) once for all the tests here.
pytestmark = pytest.mark.xdist_group("stubs")

ROOT = Path(__file__).resolve().parent.parent
STUBS = ROOT / "typeshed_stubs"
PACKAGE = STUBS / "partial"  # holds jax-stubs/: pyright's stubPath, and what `pip install` ships
TEST_CASES = STUBS / "@tests" / "test_cases"
SAMPLE = ROOT / "tests" / "stubs_sample" / "train_step.py"
API = ROOT / "tests" / "stubs_sample" / "check_jaxstatic_api.py"
BIN = Path(sys.executable).parent  # CI's PATH may not hold the venv's bin
MARK = "# error-with-stubs"


@dataclass(frozen=True)
class Diagnostic:
    path: Path
    line: int
    code: str
    message: str
    severity: str  # "error" or "note" (mypy) / "information" (pyright)


def _run(cmd: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


# --- mypy ----------------------------------------------------------------------------------------------------

_MYPY_LINE = re.compile(
    r"^(?P<path>[^:]+):(?P<line>\d+): (?P<sev>error|note): (?P<msg>.*?)(?:  \[(?P<code>[\w-]+)\])?$"
)


def mypy(
    tmp: Path, files: list[Path], mypy_path: list[Path], pythonpath: Path | None = None
) -> list[Diagnostic]:
    config = tmp / "mypy.ini"
    # jaxstatic's own modules are imported for their types only: their errors are for its own mypy run.
    config.write_text(
        "[mypy]\nstrict = True\nwarn_unused_ignores = True\n"
        # jax's own ShapeDtypeStruct and friends are unannotated; that is not what these checks are about
        "disable_error_code = no-untyped-call\n"
        f"mypy_path = {', '.join(str(p) for p in mypy_path)}\n"
        "[mypy-jaxstatic.*]\nignore_errors = True\n"
    )
    env = {"MYPYPATH": "", "PYTHONPATH": str(pythonpath) if pythonpath else ""}
    proc = _run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(config),
            "--cache-dir",
            str(tmp / "cache"),
            "--show-absolute-path",
            *map(str, files),
        ],
        env,
    )
    if proc.returncode not in (0, 1):
        pytest.fail(f"mypy crashed:\n{proc.stdout}\n{proc.stderr}")
    found = []
    for line in proc.stdout.splitlines():
        m = _MYPY_LINE.match(line)
        if m:
            found.append(
                Diagnostic(Path(m["path"]), int(m["line"]), m["code"] or "", m["msg"], m["sev"])
            )
    return found


# --- pyright -------------------------------------------------------------------------------------------------


def pyright(tmp: Path, files: list[Path], config: dict[str, object]) -> list[Diagnostic]:
    (tmp / "pyrightconfig.json").write_text(
        json.dumps(
            {
                    "typeCheckingMode": "standard",
                "reportUnnecessaryTypeIgnoreComment": "error",
                "reportMissingModuleSource": "none",
                # the editable install of jaxstatic is an import hook pyright cannot follow
                "extraPaths": [str(ROOT)],
                **config,
            }
        )
    )
    cmd = [
        str(BIN / "pyright"),
        "--outputjson",
        "--pythonpath",
        sys.executable,
        "-p",
        str(tmp / "pyrightconfig.json"),
        *map(str, files),
    ]
    # --outputjson also keeps pyright-python from asking PyPI for a newer version
    proc = _run(cmd, {"PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"})
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"pyright did not run (it needs node on PATH):\n{proc.stdout}\n{proc.stderr}")
    return [
        Diagnostic(
            Path(d["file"]),
            d["range"]["start"]["line"] + 1,
            d.get("rule", ""),
            d["message"],
            d["severity"],
        )
        for d in report["generalDiagnostics"]
    ]


# --- one run per checker and configuration -------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def rendered_package() -> None:
    """``partial/jax-stubs`` is rendered from the installed jax, never committed: render it first."""
    proc = _run([sys.executable, str(ROOT / "tools" / "gen_jax_stubs.py"), "--package-only"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, list[Diagnostic]]]:
    def tmp(name: str) -> Path:
        return tmp_path_factory.mktemp(name)

    checked = [SAMPLE, API, TEST_CASES]
    yield {
        "mypy-without": mypy(tmp("mypy-without"), [SAMPLE, API], [ROOT]),
        # the documented setup: mypy_path pointing at typeshed_stubs/
        "mypy-with": mypy(tmp("mypy-with"), checked, [STUBS, ROOT]),
        # what `pip install ./typeshed_stubs` provides: jax-stubs on sys.path
        "mypy-installed": mypy(tmp("mypy-installed"), checked, [ROOT], pythonpath=PACKAGE),
        "pyright-without": pyright(tmp("pyright-without"), [SAMPLE, API], {}),
        # the documented setup: stubPath pointing at typeshed_stubs/partial
        "pyright-with": pyright(tmp("pyright-with"), checked, {"stubPath": str(PACKAGE)}),
    }


def errors(diagnostics: list[Diagnostic], path: Path) -> list[Diagnostic]:
    return [d for d in diagnostics if d.severity == "error" and d.path.is_relative_to(path)]


def show(diagnostics: list[Diagnostic]) -> str:
    return "\n".join(f"{d.path.name}:{d.line}: [{d.code}] {d.message}" for d in diagnostics)


# --- generated parts and stubtest ----------------------------------------------------------------------------


def test_generated_parts_match_the_installed_jax() -> None:
    proc = _run([sys.executable, str(ROOT / "tools" / "gen_jax_stubs.py"), "--check"])
    assert proc.returncode == 0, f"run `python tools/gen_jax_stubs.py`:\n{proc.stdout}{proc.stderr}"


def _stub_names(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.ImportFrom, ast.Import)):
            names |= {a.asname for a in node.names if a.asname and not a.asname.startswith("_")}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return {n for n in names if not n.startswith("_") or n.startswith("__")}


@pytest.mark.parametrize("module", ["jax", "jax.custom_derivatives"])
def test_stub_binds_every_public_runtime_name(module: str) -> None:
    runtime = __import__(module, fromlist=["_"])
    stub = STUBS / (module.replace(".", "/") + ("/__init__.pyi" if module == "jax" else ".pyi"))
    public = {
        n
        for n in vars(runtime)
        if not n.startswith("_") and not isinstance(getattr(runtime, n), types.ModuleType)
    }
    missing = public - _stub_names(stub)
    assert not missing, f"{stub.relative_to(ROOT)} lacks {sorted(missing)}"


def test_stubtest_against_installed_jax() -> None:
    allowlist = STUBS / "@tests" / "stubtest_allowlist.txt"
    proc = _run(
        [
            sys.executable,
            "-m",
            "mypy.stubtest",
            "jax",
            "--concise",
            "--allowlist",
            str(allowlist),
            "--mypy-config-file",
            os.devnull,
        ],
        {"MYPYPATH": str(STUBS)},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_allowlist_entry_has_a_comment() -> None:
    lines = (STUBS / "@tests" / "stubtest_allowlist.txt").read_text().splitlines()
    for i, line in enumerate(lines):
        if line.strip() and not line.startswith("#"):
            assert "#" in line or (i and lines[i - 1].startswith("#")), f"uncommented entry: {line}"


def test_package_ships_exactly_the_rendered_stubs() -> None:
    setuptools = pytest.importorskip("setuptools")
    found = set(setuptools.find_namespace_packages(where=str(PACKAGE)))
    assert found == {"jax-stubs", "jax-stubs._src", "jax-stubs.nn", "jax-stubs.numpy"}
    assert (PACKAGE / "jax-stubs" / "py.typed").read_text() == "partial\n"


# --- the test cases: no error, no unneeded ignore ------------------------------------------------------------


@pytest.mark.parametrize("run", ["mypy-with", "mypy-installed", "pyright-with"])
def test_test_cases(runs: dict[str, list[Diagnostic]], run: str) -> None:
    found = errors(runs[run], TEST_CASES)
    assert not found, show(found)


# --- the sample: the stubs add exactly the marked errors -----------------------------------------------------


def _marked_lines() -> set[int]:
    return {
        i
        for i, line in enumerate(SAMPLE.read_text().splitlines(), 1)
        if line.rstrip().endswith(MARK)
    }


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
def test_sample_reports_wrong_calls_only_with_stubs(
    runs: dict[str, list[Diagnostic]], checker: str
) -> None:
    without = errors(runs[f"{checker}-without"], SAMPLE)
    with_stubs = errors(runs[f"{checker}-with"], SAMPLE)
    marked = _marked_lines()
    assert len(marked) >= 5
    assert not {d.line for d in without} & marked, show(without)
    new = [d for d in with_stubs if (d.line, d.code) not in {(w.line, w.code) for w in without}]
    assert {d.line for d in new} == marked, show(new)


def test_sample_same_under_installed_layout(runs: dict[str, list[Diagnostic]]) -> None:
    def seen(run: str) -> set[tuple[int, str]]:
        return {(d.line, d.code) for d in errors(runs[run], SAMPLE)}

    assert seen("mypy-installed") == seen("mypy-with")


# --- jaxstatic's public API under both checkers --------------------------------------------------------------


@pytest.mark.parametrize("run", ["mypy-without", "mypy-with", "pyright-without", "pyright-with"])
def test_jaxstatic_api(runs: dict[str, list[Diagnostic]], run: str) -> None:
    found = errors(runs[run], API)
    assert not found, show(found)
    reveals = {
        d.line: d.message
        for d in runs[run]
        if d.path == API
        and d.severity in ("note", "information")
        and d.message.startswith(("Revealed", "Type of"))
    }
    lines = API.read_text().splitlines()
    expected = {i: line for i, line in enumerate(lines, 1) if line.startswith("reveal_type(")}
    assert set(reveals) == set(expected)
    for line in expected:
        assert re.search(r"x: .*Array.*n: .*int", reveals[line]), reveals[line]
