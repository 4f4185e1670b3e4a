"""What the mypy plugin costs, and what it says about real code.

Times cold runs (a fresh cache directory each time; CPU time of the mypy process and wall time) of ``mypy -p equinox`` and ``mypy -p jax`` with and without
``plugins = jaxstatic_mypy``, interleaved so that machine noise hits both alike, and prints the medians and their
ratio (target: <= 1.05x). The runs with the plugin double as the false-positive sweep: every ``[jaxstatic-...]``
error in these packages is printed, and a crash fails the script. ``--sweep-only`` skips the timing repeats and by
default sweeps jax, equinox, optax, flax, chex and diffrax (those not installed are said and skipped; install them
with ``.venv/bin/pip install flax chex diffrax``).

    .venv/bin/python benchmarks/mypy_overhead.py                 # 3 interleaved pairs per package
    .venv/bin/python benchmarks/mypy_overhead.py --repeat 5 --packages equinox
    .venv/bin/python benchmarks/mypy_overhead.py --sweep-only
    .venv/bin/python benchmarks/mypy_overhead.py --packages equinox --mypy /work/venvs-mypy/1.15.0/bin/python .venv/bin/python

``--mypy`` takes the interpreters whose mypy is timed (each needs jaxstatic and the packages installed); the
oldest and the newest supported mypy are the two to quote.

On a busy machine two cold runs of the same command, one after the other, differ by more than the plugin costs.
``--together`` starts the two runs of each pair at once, so that both meet the same load. ``--share`` also times,
in one run per interpreter, every call mypy makes into the plugin (outermost calls only, so work nested in them
counts once; wall time of each call, an upper bound of its CPU time, less what timing a call adds) and prints
their sum as a share of the run's CPU time: what the plugin's own code adds, with contention slowing both alike.
Work mypy does differently because a hook exists is outside that share; the pair ratio includes it.

    .venv/bin/python benchmarks/mypy_overhead.py --together --repeat 5 --packages equinox --mypy ...

    .venv/bin/python benchmarks/mypy_overhead.py --share --repeat 0 --packages equinox --mypy /work/venvs-mypy/1.15.0/bin/python
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
{plugins}
python_version = {major}.{minor}
"""


_SWEPT = ["jax", "equinox", "optax", "flax", "chex", "diffrax"]


def _target(package: str, workdir: Path) -> list[str]:
    """``-p package``; a package without ``py.typed`` (optax) is copied out of site-packages and checked as
    sources (mypy refuses ``-p`` for it, and checking it in place makes site-packages shadow the stdlib)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return ["-p", package]
    location = Path(next(iter(spec.submodule_search_locations)))
    if (location / "py.typed").exists():
        return ["-p", package]
    copy = workdir / "src" / package
    if not copy.exists():
        shutil.copytree(location, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return [str(copy)]


def _version(python: str) -> str:
    done = subprocess.run(
        [python, "-m", "mypy", "--version"], capture_output=True, text=True, check=True
    )
    return done.stdout.split()[1]


_Result = tuple[float, float, list[str]]
"""One cold run: wall seconds, CPU seconds of that mypy process, the jaxstatic errors it printed."""


def _pair(
    python: str, package: str, workdir: Path, order: tuple[bool, bool], together: bool
) -> dict[bool, _Result]:
    """A cold run without and one with the plugin, keyed by ``with_plugin``: one after the other in ``order``, or
    ``together`` (started at once, so that both meet the same load on a busy machine)."""
    results: dict[bool, _Result] = {}
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        if together:
            running = {_start(python, package, p, workdir, Path(tmp)): p for p in order}
            while running:
                # Whichever ends first; wait4 gives each process's own CPU time, not its twin's.
                pid, status, usage = os.wait4(-1, 0)
                with_plugin = running.pop(pid)
                results[with_plugin] = _finish(package, with_plugin, Path(tmp), status, usage)
        else:
            for with_plugin in order:
                results[with_plugin] = _run(python, package, with_plugin, workdir, Path(tmp))
    return results


def _run(python: str, package: str, with_plugin: bool, workdir: Path, tmp: Path) -> _Result:
    _, status, usage = os.wait4(_start(python, package, with_plugin, workdir, tmp), 0)
    return _finish(package, with_plugin, tmp, status, usage)


_STARTED: dict[bool, float] = {}


def _start(python: str, package: str, with_plugin: bool, workdir: Path, tmp: Path) -> int:
    name = "with" if with_plugin else "without"
    config = workdir / f"{name}.ini"
    config.write_text(
        _CONFIG.format(
            plugins="plugins = jaxstatic_mypy" if with_plugin else "",
            major=sys.version_info.major,
            minor=sys.version_info.minor,
        )
    )
    cmd = [
        python,
        "-m",
        "mypy",
        "--config-file",
        str(config),
        "--cache-dir",
        str(tmp / f"cache-{name}"),
    ]
    with open(tmp / f"{name}.out", "w") as out:
        proc = subprocess.Popen(
            [*cmd, *_target(package, workdir)], cwd=workdir, stdout=out, stderr=subprocess.STDOUT
        )
    _STARTED[with_plugin] = time.perf_counter()
    return proc.pid


def _finish(
    package: str, with_plugin: bool, tmp: Path, status: int, usage: resource.struct_rusage
) -> _Result:
    elapsed = time.perf_counter() - _STARTED[with_plugin]
    output = (tmp / f"{'with' if with_plugin else 'without'}.out").read_text()
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        sys.exit(f"mypy crashed on {package} (plugin={with_plugin}):\n{output[-8000:]}")
    return (
        elapsed,
        usage.ru_utime + usage.ru_stime,
        [x for x in output.splitlines() if "[jaxstatic-" in x],
    )


# Run by ``--share`` in the timed interpreter: wraps the plugin's hook getters and hooks before mypy loads it.
_SHARE_DRIVER = """\
import sys, time
from collections import Counter
from jaxstatic_mypy import _definitions, _main

inside = Counter()  # seconds per outermost hook (perf_counter: process_time is a system call, too slow here)
calls = Counter()
depth = [0]

def timed(name, fn):
    def wrapper(*args, **kwargs):
        if depth[0]:
            return fn(*args, **kwargs)
        depth[0] = 1
        calls[name] += 1
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            inside[name] += time.perf_counter() - start
            depth[0] = 0
    return wrapper

# What the timing itself adds to each call it records (the getters are called ~10^5 times, each well under a
# microsecond): measured on a function that does nothing, and taken off every call recorded.
noop = timed("noop", lambda self, name: None)
for _ in range(100_000):
    noop(None, "builtins.int")
bias = inside.pop("noop") / calls.pop("noop")

cls = _main.JaxstaticPlugin
for name, value in list(vars(cls).items()):
    if callable(value) and name.startswith(("get_", "_")) and not name.startswith("__"):
        setattr(cls, name, timed(name, value))
hook = _definitions.GuardedHook
hook.__call__ = timed("type analysis", hook.__call__)

from mypy.main import main
try:
    main(args=sys.argv[1:], clean_exit=True)
except SystemExit:
    pass
for name in inside:
    inside[name] = max(0.0, inside[name] - calls[name] * bias)
print(f"SHARE {sum(inside.values()):.3f} {time.process_time():.3f}")
for name, seconds in inside.most_common(5):
    print(f"HOOK {name} {calls[name]} {seconds:.3f}")
"""


def _share(python: str, package: str, workdir: Path) -> None:
    config = workdir / "share.ini"
    config.write_text(
        _CONFIG.format(
            plugins="plugins = jaxstatic_mypy",
            major=sys.version_info.major,
            minor=sys.version_info.minor,
        )
    )
    with tempfile.TemporaryDirectory(dir=workdir) as cache:
        cmd = [python, "-c", _SHARE_DRIVER, "--config-file", str(config), "--cache-dir", cache]
        done = subprocess.run(
            [*cmd, *_target(package, workdir)], cwd=workdir, capture_output=True, text=True
        )
    line = next((x for x in done.stdout.splitlines() if x.startswith("SHARE ")), None)
    if line is None:
        sys.exit(f"mypy crashed on {package}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    inside, total = (float(x) for x in line.split()[1:])
    print(
        f"{package}, mypy {_version(python)}: {inside:.2f} s of {total:.2f} s CPU inside the plugin's hooks "
        f"({100 * inside / total:.1f}%, so about {total / (total - inside):.3f}x); the most costly:"
    )
    for hook in (x.split() for x in done.stdout.splitlines() if x.startswith("HOOK ")):
        print(f"    {hook[1]:<24} {int(hook[2]):>8} calls {float(hook[3]):6.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--packages", nargs="+", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--mypy",
        nargs="+",
        type=os.path.abspath,  # mypy runs in a scratch directory
        default=[sys.executable],
        metavar="PYTHON",
        help="interpreters whose mypy is timed",
    )
    parser.add_argument(
        "--sweep-only", action="store_true", help="one run with the plugin per package, no timing"
    )
    parser.add_argument(
        "--together",
        action="store_true",
        help="start the two runs of each pair at once (a busy machine)",
    )
    parser.add_argument(
        "--share",
        action="store_true",
        help="also time the plugin's hooks inside one run per interpreter",
    )
    args = parser.parse_args()
    packages = args.packages or (_SWEPT if args.sweep_only else ["equinox", "jax"])

    with tempfile.TemporaryDirectory(prefix="jaxstatic-mypy-bench-") as tmp:
        workdir = Path(tmp)
        for package in packages:
            if importlib.util.find_spec(package) is None:
                print(f"{package}: not installed, skipped")
                continue
            for python in args.mypy:
                if args.sweep_only:
                    with tempfile.TemporaryDirectory(dir=workdir) as run_dir:
                        elapsed, _, found = _run(python, package, True, workdir, Path(run_dir))
                    print(f"{package}: {len(found)} jaxstatic errors ({elapsed:.1f} s)")
                    for line in found:
                        print(f"    {line}")
                elif args.repeat:
                    _time(python, package, args.repeat, workdir, args.together)
                if args.share:
                    _share(python, package, workdir)


def _time(python: str, package: str, repeat: int, workdir: Path, together: bool) -> None:
    wall: dict[bool, list[float]] = {False: [], True: []}
    cpu: dict[bool, list[float]] = {False: [], True: []}
    found: list[str] = []
    for i in range(repeat):
        # Alternate which goes first, so drift (thermal, page cache) does not favour one side.
        order = (i % 2 == 1, i % 2 == 0)
        for with_plugin, (elapsed, used, lines) in _pair(
            python, package, workdir, order, together
        ).items():
            wall[with_plugin].append(elapsed)
            cpu[with_plugin].append(used)
            if with_plugin:
                found = lines
    kind = "pairs run together" if together else "pairs, one run after the other"
    print(f"{package}, mypy {_version(python)} ({repeat} {kind}, cold cache each run):")
    # CPU time is the steadier figure on a shared machine; wall time is what users wait.
    for label, runs in (("cpu ", cpu), ("wall", wall)):
        without, with_ = statistics.median(runs[False]), statistics.median(runs[True])
        print(
            f"    {label}: without {without:6.2f} s, with {with_:6.2f} s, ratio {with_ / without:.3f}x  "
            f"(without {[round(t, 1) for t in runs[False]]}, with {[round(t, 1) for t in runs[True]]})"
        )
    print(f"    {len(found)} jaxstatic errors")
    for line in found:
        print(f"    {line}")


if __name__ == "__main__":
    main()
