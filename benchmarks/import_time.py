"""What ``import jaxstatic`` costs in a process that has imported JAX already, as a program using both pays it.

Each run is a fresh interpreter that imports ``jax`` (not timed), then times ``import jaxstatic`` (and, for scale,
``import equinox`` in another fresh interpreter): wall-clock and CPU milliseconds (the CPU time is the steadier on a
loaded machine). Runs alternate between the two, so they share the machine's load; the table shows the medians and
the wall-clock range over the runs. Bytecode is cached as an installed package's is (``PYTHONDONTWRITEBYTECODE`` is
ignored; the cache goes to a temporary ``PYTHONPYCACHEPREFIX``, written by a first run that is not counted). ``--modules`` also lists, from one
``python -X importtime`` run, the modules ``import jaxstatic`` loads that take longest (cumulative microseconds).

Run: python benchmarks/import_time.py [--runs 11] [--modules]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

_TIMED = ("import jax, time; t, c = time.perf_counter(), time.process_time(); import {0}; "
          "print(time.perf_counter() - t, time.process_time() - c)")
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _once(module: str) -> tuple[float, float]:
    """Wall-clock and CPU milliseconds of ``import module`` after ``import jax``, in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", _TIMED.format(module)], capture_output=True, text=True, check=True,
                         env=_ENV)
    wall, cpu = map(float, out.stdout.split())
    return wall * 1000, cpu * 1000


def _slowest(count: int = 15) -> list[tuple[int, str]]:
    """The modules below ``import jaxstatic`` (after jax) by cumulative import time, from ``-X importtime``."""
    code = "import jax; import jaxstatic"
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                         check=True, env=_ENV).stderr.splitlines()
    start = max(i for i, line in enumerate(err) if line.rstrip().endswith("| jax"))
    rows = []
    for line in err[start + 1:]:
        _, cumulative, name = line.split("|")
        rows.append((int(cumulative), name.rstrip()))
    return sorted(rows, reverse=True)[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--modules", action="store_true")
    args = parser.parse_args()
    _ENV["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="import-time-")
    times: dict[str, list[tuple[float, float]]] = {"jaxstatic": [], "equinox": []}
    for module in times:
        _once(module)  # writes the bytecode cache
    for _ in range(args.runs):
        for module, got in times.items():
            got.append(_once(module))
    base = statistics.median(cpu for _, cpu in times["jaxstatic"])
    print(f"import after jax, {args.runs} fresh interpreters each (bytecode cached)")
    print(f"{'module':<12}{'wall ms':>10}{'range ms':>14}{'CPU ms':>10}{'CPU vs jaxstatic':>18}")
    for module, got in times.items():
        walls, cpus = [w for w, _ in got], [c for _, c in got]
        spread = f"{min(walls):.1f}-{max(walls):.1f}"
        cpu = statistics.median(cpus)
        print(f"{module:<12}{statistics.median(walls):>10.1f}{spread:>14}{cpu:>10.1f}{cpu / base:>18.2f}")
    if args.modules:
        print("\nslowest modules under import jaxstatic (one -X importtime run, cumulative us):")
        for cumulative, name in _slowest():
            print(f"{cumulative:>10}  {name}")


if __name__ == "__main__":
    main()
