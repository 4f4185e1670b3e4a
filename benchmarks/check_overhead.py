"""What ``jaxstatic-check`` costs beside the ``mypy`` command with jaxstatic's plugin and the same options.

The project checked is a copy of an installed package's sources (equinox by default, as its own code: jax's
types read from site-packages) with a ``mypy.ini`` both commands read: ``plugins = jaxstatic_mypy``, untyped
bodies checked, missing imports ignored, imports followed silently. Each round runs the two commands as a user
would (``mypy PATH`` and ``jaxstatic-check PATH``, each a fresh process) cold, with an empty cache, then warm,
again over the cache the cold run left; the two commands alternate so that machine noise hits both alike. It
prints the median CPU time (user + system of the process) and wall time of each, and their ratio (target: within
1.2x, cold and warm).

    .venv/bin/python benchmarks/check_overhead.py                  # 3 rounds over equinox
    .venv/bin/python benchmarks/check_overhead.py --repeat 5 --package diffrax
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CONFIG = """\
[mypy]
plugins = jaxstatic_mypy
check_untyped_defs = True
ignore_missing_imports = True
follow_imports = silent
"""

_BIN = Path(sys.executable).parent


def _project(package: str, where: Path) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"{package} is not installed: .venv/bin/pip install {package}")
    root = where / "project"
    shutil.copytree(next(iter(spec.submodule_search_locations)), root / package,
                    ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    (root / "mypy.ini").write_text(_CONFIG)
    return root


def _timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """CPU seconds (user + system) and wall seconds of one run of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.exit(f"{command[0]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", default="equinox", help="the installed package whose sources are checked")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (each: both commands, cold then warm)")
    args = parser.parse_args()
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="check-overhead-") as tmp:
        root = _project(args.package, Path(tmp))
        for round_ in range(args.repeat):
            for name in (("mypy", "jaxstatic-check") if round_ % 2 == 0 else ("jaxstatic-check", "mypy")):
                cache = Path(tmp) / f"cache-{name}-{round_}"
                env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
                command = [str(_BIN / name), args.package]
                if name == "mypy":
                    command[1:1] = ["--cache-dir", str(cache / "mypy")]
                for state in ("cold", "warm"):
                    times.setdefault((name, state), []).append(_timed(command, root, env))
    print(f"{args.package}, {args.repeat} rounds; medians, CPU s (wall s)")
    for state in ("cold", "warm"):
        (cpu_m, wall_m), (cpu_c, wall_c) = (
            tuple(statistics.median(t[i] for t in times[(name, state)]) for i in (0, 1))
            for name in ("mypy", "jaxstatic-check"))
        print(f"{state}: mypy {cpu_m:.2f} ({wall_m:.2f})  jaxstatic-check {cpu_c:.2f} ({wall_c:.2f})  "
              f"ratio {cpu_c / cpu_m:.2f} ({wall_c / wall_m:.2f})")


if __name__ == "__main__":
    main()
