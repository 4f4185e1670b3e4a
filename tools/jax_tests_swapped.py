"""Run JAX's own test files with every ``jit`` swapped for ``jaxstatic.jit``: the drop-in yardstick.

Each file runs twice under pytest, as JAX's CI runs it on the CPU (8 host devices, JAX's warning filters): as it is,
and with an AST swap of ``jax.jit`` (through any name a jax module is imported as, ``api.jit`` included) and of every
``jit`` the module imports from a jax module, for ``jaxstatic.jit``. It prints the passed/failed/skipped counts per
file and run, and the tests that fail only swapped: each one a difference from ``jax.jit`` to fix or document.

It needs no network: give it a directory of JAX test files from the tag of the installed jax, e.g.

    git -C <jax checkout> archive jax-v0.10.2 tests | tar -x -C /tmp/jax-src
    python tools/jax_tests_swapped.py --tests /tmp/jax-src/tests export_test.py layout_test.py

``--platform tpu`` (or ``gpu``) runs on that accelerator instead of 8 CPU devices. JAX's tests need pytest,
``absl-py`` and ``hypothesis``, and ``export_test.py``'s serialization tests ``flatbuffers`` (they skip without it);
jaxstatic's ``dev`` extra has them all. Exit status 1 when a test fails only swapped.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

# JAX's pyproject.toml [tool.pytest.ini_options] filterwarnings, as its CI reads them (jax-v0.10.2)
PYTEST_INI = """[pytest]
markers =
    multiaccelerator: a test that can use several accelerators
    SlurmMultiNodeGpuTest: multinode GPU
filterwarnings =
    error
    default:.*not machine-readable.*:UserWarning
    default:Special cases found for .* but none were parsed.*:UserWarning
    ignore:Transparent hugepages
    ignore:jax.cloud_tpu_init was deprecated
addopts = --import-mode=importlib
"""


class _Swap(ast.NodeTransformer):
    """``<jax module>.jit`` becomes ``jaxstatic.jit``; ``from jax... import jit [as name]`` becomes
    ``from jaxstatic import jit [as name]``."""

    def __init__(self, jax_names: set[str]) -> None:
        self.jax_names, self.count = jax_names, 0

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if node.attr == "jit" and isinstance(node.value, ast.Name) and node.value.id in self.jax_names:
            self.count += 1
            return ast.copy_location(ast.Attribute(ast.Name("jaxstatic", ast.Load()), "jit", node.ctx), node)
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST | list[ast.AST]:
        if (node.module or "").split(".")[0] != "jax":
            return node
        jits = [a for a in node.names if a.name == "jit"]
        if not jits:
            return node
        self.count += len(jits)
        rest = [a for a in node.names if a.name != "jit"]
        swapped = ast.copy_location(ast.ImportFrom("jaxstatic", jits, 0), node)
        return [ast.copy_location(ast.ImportFrom(node.module, rest, node.level), node), swapped] if rest else swapped


def _jax_module_names(tree: ast.Module) -> set[str]:
    """The names a jax module is bound to: ``import jax``, ``import jax as J``, ``from jax._src import api``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name for a in node.names if a.name.split(".")[0] == "jax" and
                      (a.asname or "." not in a.name)}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "jax":
            names |= {a.asname or a.name for a in node.names if a.name in ("api", "pjit")}
    return names


def swapped_source(source: str) -> tuple[str, int]:
    """The module's source with its jits swapped for ``jaxstatic.jit``, and how many were swapped."""
    tree = ast.parse(source)
    swap = _Swap(_jax_module_names(tree))
    tree = swap.visit(tree)
    body = tree.body
    at = next((i for i, n in enumerate(body) if not (isinstance(n, ast.ImportFrom) and n.module == "__future__")
               and not (i == 0 and isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))), 0)
    body.insert(at, ast.Import([ast.alias("jaxstatic")]))
    return ast.unparse(ast.fix_missing_locations(tree)), swap.count


def _env(platform: str) -> dict[str, str]:
    env = dict(os.environ)
    if platform == "cpu":  # JAX's CPU CI: 8 host devices
        env["JAX_PLATFORMS"] = "cpu"
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
    else:  # the accelerator, with the host's CPU beside it (tests that copy across clients need both)
        env["JAX_PLATFORMS"] = f"{platform},cpu"
    return env


def _run(root: Path, name: str, platform: str, extra: list[str]) -> dict[str, str]:
    """Run one file under pytest; each test's outcome (passed, failed, skipped) by its id."""
    report = root / f"{name}.xml"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-c",
           str(root / "pytest.ini"), "--rootdir", str(root), f"--junitxml={report}", str(root / name), *extra]
    subprocess.run(cmd, cwd=root, env=_env(platform), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    outcomes: dict[str, str] = {}
    if not report.exists():
        return {"<collection>": "failed"}
    for case in ET.parse(report).getroot().iter("testcase"):
        test = f"{case.get('classname', '')}::{case.get('name', '')}"
        tags = {child.tag for child in case}
        outcomes[test] = "failed" if tags & {"failure", "error"} else "skipped" if "skipped" in tags else "passed"
    return outcomes


def _counts(outcomes: dict[str, str]) -> str:
    values = list(outcomes.values())
    return (f"{values.count('passed')} passed, {values.count('failed')} failed, {values.count('skipped')} skipped"
            f" (passed {values.count('passed')}/{values.count('passed') + values.count('failed')})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="test files, by name inside --tests (export_test.py ...)")
    parser.add_argument("--tests", required=True, type=Path, help="a directory of JAX's test files (its tests/)")
    parser.add_argument("--platform", default="cpu", help="cpu (8 host devices, JAX's CI), tpu or gpu")
    parser.add_argument("--only", choices=("both", "plain", "swapped"), default="both")
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER, help="after --: passed to pytest (-k ...)")
    args = parser.parse_args(argv)
    extra = [a for a in args.pytest_args if a != "--"]
    missing_only = 0
    with tempfile.TemporaryDirectory(prefix="jax_tests_swapped_") as tmp:
        root = Path(tmp)
        for path in args.tests.glob("*.py"):  # siblings too: some test files import each other
            shutil.copy(path, root / path.name)
        (root / "pytest.ini").write_text(PYTEST_INI)
        for name in args.files:
            source = (args.tests / name).read_text()
            swapped, count = swapped_source(source)
            (root / f"swapped_{name}").write_text(swapped)
            runs = {}
            if args.only in ("both", "plain"):
                runs["jax.jit"] = _run(root, name, args.platform, extra)
                print(f"{name} [jax.jit]: {_counts(runs['jax.jit'])}", flush=True)
            if args.only in ("both", "swapped"):
                runs["jaxstatic.jit"] = {k.replace("swapped_", "", 1): v for k, v in
                                         _run(root, f"swapped_{name}", args.platform, extra).items()}
                print(f"{name} [jaxstatic.jit, {count} swapped]: {_counts(runs['jaxstatic.jit'])}", flush=True)
            if len(runs) == 2:
                plain, ours = runs["jax.jit"], runs["jaxstatic.jit"]
                only = sorted(t for t, o in ours.items() if o == "failed" and plain.get(t) != "failed")
                missing_only += len(only)
                for test in only:
                    print(f"  fails only swapped: {test}")
            both = sorted(t for t in set.intersection(*(set(r) for r in runs.values()))
                          if all(r[t] == "failed" for r in runs.values()))
            for test in both:  # JAX's own: the machine or the JAX build, not the swap
                print(f"  fails in every run: {test}")
    return 1 if missing_only else 0


if __name__ == "__main__":
    sys.exit(main())
