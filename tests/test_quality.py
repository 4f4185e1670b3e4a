"""The project's own code passes ruff and mypy --strict (the plugin also mypy's proper_plugin), and keeps its
functions short."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *cmd], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff() -> None:
    result = _run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict() -> None:
    result = _run("mypy", "--no-incremental")
    assert result.returncode == 0, result.stdout + result.stderr


def test_public_names_are_exported_and_documented() -> None:
    import jaxstatic

    readme = (ROOT / "README.md").read_text()
    for name in jaxstatic.__all__:
        assert hasattr(jaxstatic, name)
    for name in ("Static", "jit", "trace_report", "static_argnames", "static_argnums", "RetraceError",
                 "NonStaticValueError", "NonArrayArgumentError", "AnnotationError", "StaticMismatchError"):
        assert name in readme, name
    assert jaxstatic.RetraceError.__module__ == "jaxstatic"


def test_readme_opens_with_the_commands_ci_runs() -> None:
    """The README's first code block holds the set-up and test commands, and .ci/run runs exactly those (pip's
    ``-q`` aside), so the two commands a newcomer copies are the ones CI proves on a fresh machine."""
    readme = (ROOT / "README.md").read_text()
    first_block = readme.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line for line in first_block.splitlines() if line.strip()]
    ci = (ROOT / ".ci" / "run").read_text().replace("pip install -q ", "pip install ")
    assert len(commands) == 2 and "examples/quickstart.py" in commands[0] and "pytest" in commands[1], commands
    for command in commands:
        assert command in ci, command


_PACKAGES = ("jaxstatic", "mypy_plugin", "jaxstatic_check", "jaxstatic_pytest")
_MAX_LINES = 40


def _length(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """A function's lines from its ``def`` to its last, its docstring aside."""
    lines = (node.end_lineno or node.lineno) - node.lineno + 1
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        lines -= (first.end_lineno or first.lineno) - first.lineno + 1
    return lines


def test_no_function_is_longer_than_forty_lines() -> None:
    """A function a reader takes in at once: past 40 lines (its docstring aside), split out what it does in steps."""
    long = []
    for package in _PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _length(node) > _MAX_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.name} has {_length(node)} lines")
    assert not long, f"over {_MAX_LINES} lines, docstrings aside (split them into steps):\n" + "\n".join(long)
