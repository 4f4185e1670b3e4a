"""Run JAX's own test files with JAX's transforms swapped for jaxstatic's: the drop-in yardstick.

Each file runs under pytest, as JAX's CI runs it on the CPU (8 host devices, JAX's warning filters,
``JAX_NUM_GENERATED_CASES=1``): as it is, and with an AST swap, token by token, of each transform named by ``--swap``
(``jit`` by default; ``jit,pmap,shard_map`` for ``pmap_test.py`` and ``shard_map_test.py``): ``jax.<name>`` (through
any name a jax module is imported as, ``api.jit`` included) and every ``<name>`` function the module imports from a
jax module become jaxstatic's. ``--control`` adds a third run with only ``shard_map`` swapped, for
``jax.jit(jax.shard_map(...))``: what a jitted shard_map alone changes. It prints the passed/failed/skipped counts
per file and run, and the tests that fail only swapped: each one a difference from JAX to fix or document.

It needs no network: give it a directory of JAX test files from the tag of the installed jax, e.g.

    git -C <jax checkout> archive jax-v0.10.2 tests | tar -x -C /tmp/jax-src
    python tools/jax_tests_swapped.py --tests /tmp/jax-src/tests export_test.py layout_test.py
    python tools/jax_tests_swapped.py --tests /tmp/jax-src/tests --swap jit,pmap,shard_map --control \
        pmap_test.py shard_map_test.py

``--platform tpu`` (or ``gpu``) runs on that accelerator instead of 8 CPU devices. JAX's tests need pytest,
``absl-py`` and ``hypothesis``, and ``export_test.py``'s serialization tests ``flatbuffers`` (they skip without it);
jaxstatic's ``dev`` extra has them all. Exit status 1 when a test fails only swapped.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent  # the jaxstatic the swapped tests import

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


CONTROL = "_jax_tests_control"
"""The control's module, written beside the tests: ``shard_map`` as ``jax.jit(jax.shard_map(...))``."""

CONTROL_SOURCE = '''import functools

import jax


def shard_map(f=None, /, **options):
    if f is None:
        return functools.partial(shard_map, **options)
    return jax.jit(jax.shard_map(f, **options))
'''


class _Swap(ast.NodeTransformer):
    """``<jax module>.<name>`` becomes ``<target>.<name>``; ``from jax... import <name> [as alias]`` becomes
    ``from <target> import <name> [as alias]``, where ``<name>`` is one of ``names`` and is a function there (not a
    module: ``from jax._src import pmap as pmap_lib`` stays)."""

    def __init__(self, jax_names: set[str], names: frozenset[str], target: str) -> None:
        self.jax_names, self.names, self.target, self.count = jax_names, names, target, 0

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if node.attr in self.names and isinstance(node.value, ast.Name) and node.value.id in self.jax_names:
            self.count += 1
            return ast.copy_location(ast.Attribute(ast.Name(self.target, ast.Load()), node.attr, node.ctx), node)
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST | list[ast.AST]:
        if (node.module or "").split(".")[0] != "jax":
            return node
        ours = [a for a in node.names if a.name in self.names and _is_function(node.module or "", a.name)]
        if not ours:
            return node
        self.count += len(ours)
        rest = [a for a in node.names if a not in ours]
        swapped = ast.copy_location(ast.ImportFrom(self.target, ours, 0), node)
        return [ast.copy_location(ast.ImportFrom(node.module, rest, node.level), node), swapped] if rest else swapped


def _is_function(module: str, name: str) -> bool:
    """Whether ``from module import name`` imports something other than a module (a module is not swapped)."""
    try:
        return not inspect.ismodule(getattr(importlib.import_module(module), name))
    except (ImportError, AttributeError):  # not there in this JAX (the file then fails as it is too): swapped
        return True


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


def swapped_source(source: str, names: Iterable[str] = ("jit",), target: str = "jaxstatic") -> tuple[str, int]:
    """The module's source with JAX's ``names`` (``jit``, ``pmap``, ...) swapped for ``target``'s, and how many
    were swapped."""
    tree = ast.parse(source)
    swap = _Swap(_jax_module_names(tree), frozenset(names), target)
    tree = swap.visit(tree)
    body = tree.body
    at = next((i for i, n in enumerate(body) if not (isinstance(n, ast.ImportFrom) and n.module == "__future__")
               and not (i == 0 and isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))), 0)
    body.insert(at, ast.Import([ast.alias(target)]))
    return ast.unparse(ast.fix_missing_locations(tree)), swap.count


def _env(platform: str) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("JAX_NUM_GENERATED_CASES", "1")  # as JAX's CI runs its parameterized tests
    # the checkout's jaxstatic first: the tests run in their own folder, where an installed copy would come first
    env["PYTHONPATH"] = os.pathsep.join([str(CHECKOUT), *filter(None, [env.get("PYTHONPATH")])])
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
    parser.add_argument("--swap", default="jit", help="the transforms swapped, comma-separated: jit,pmap,shard_map")
    parser.add_argument("--control", action="store_true", help="also run with shard_map as jax.jit(jax.shard_map)")
    parser.add_argument("--only", choices=("both", "plain", "swapped"), default="both")
    parser.epilog = "Arguments after -- are passed to pytest (-k ...)."
    argv = sys.argv[1:] if argv is None else argv
    cut = argv.index("--") if "--" in argv else len(argv)
    args, extra = parser.parse_args(argv[:cut]), argv[cut + 1:]
    names = tuple(n.strip() for n in args.swap.split(",") if n.strip())
    plain_label, ours_label = ", ".join(f"jax.{n}" for n in names), ", ".join(f"jaxstatic.{n}" for n in names)
    missing_only = 0
    with tempfile.TemporaryDirectory(prefix="jax_tests_swapped_") as tmp:
        root = Path(tmp)
        for path in args.tests.glob("*.py"):  # siblings too: some test files import each other
            shutil.copy(path, root / path.name)
        (root / "pytest.ini").write_text(PYTEST_INI)
        (root / f"{CONTROL}.py").write_text(CONTROL_SOURCE)
        for name in args.files:
            source = (args.tests / name).read_text()
            runs: dict[str, dict[str, str]] = {}
            if args.only in ("both", "plain"):
                runs["plain"] = _run(root, name, args.platform, extra)
                print(f"{name} [{plain_label}]: {_counts(runs['plain'])}", flush=True)
            if args.only in ("both", "swapped"):
                swapped, count = swapped_source(source, names)
                runs["ours"] = _run_as(root, "swapped", name, swapped, args.platform, extra)
                print(f"{name} [{ours_label}, {count} swapped]: {_counts(runs['ours'])}", flush=True)
            control, count = swapped_source(source, ("shard_map",), CONTROL)
            if args.control and count:  # a file without shard_map: nothing to control
                runs["control"] = _run_as(root, "control", name, control, args.platform, extra)
                print(f"{name} [control: jax.jit(jax.shard_map), {count} swapped]: {_counts(runs['control'])}",
                      flush=True)
            missing_only += _report(runs)
    return 1 if missing_only else 0


def _run_as(root: Path, prefix: str, name: str, source: str, platform: str, extra: list[str]) -> dict[str, str]:
    """Run ``source`` as the file ``<prefix>_<name>``; outcomes by the test ids of ``name``."""
    (root / f"{prefix}_{name}").write_text(source)
    return {k.replace(f"{prefix}_", "", 1): v for k, v in _run(root, f"{prefix}_{name}", platform, extra).items()}


def _report(runs: dict[str, dict[str, str]]) -> int:
    """Print the tests that fail only swapped (marked where the control fails too) and those that fail in every
    run; how many fail only swapped."""
    only: list[str] = []
    if "plain" in runs and "ours" in runs:
        plain, ours, control = runs["plain"], runs["ours"], runs.get("control", {})
        only = sorted(t for t, o in ours.items() if o == "failed" and plain.get(t) != "failed")
        for test in only:
            print(f"  fails only swapped{' (the control too)' * (control.get(test) == 'failed')}: {test}")
        for test in sorted(t for t, o in control.items() if o == "failed" and plain.get(t) != "failed"
                           and ours.get(t) != "failed"):
            print(f"  fails only in the control: {test}")
    both = sorted(t for t in set.intersection(*(set(r) for r in runs.values())) if all(r[t] == "failed"
                                                                                      for r in runs.values()))
    for test in both:  # JAX's own: the machine or the JAX build, not the swap (or, run alone, what fails)
        print(f"  fails{' in every run' * (len(runs) > 1)}: {test}")
    return len(only)


if __name__ == "__main__":
    sys.exit(main())
