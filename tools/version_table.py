"""Re-measure the supported-versions table: the runtime on each JAX minor from the floor to the newest release.

For each JAX minor (its newest patch; for the floor's minor, the floor itself), in a venv of its own under a
temporary folder: the oldest Python found that pip can install that JAX on (the Python it needs), jaxstatic installed
from this checkout with its C extension, then ``examples/quickstart.py`` and ``tests/runtime``. Prints a Markdown
table with the date, as ``docs/type-checking/versions.md`` shows it. Slow (a venv and the runtime suite per minor, a
few minutes each): run by hand, not in CI.

    python3 tools/version_table.py                   # every minor from the floor to the newest
    python3 tools/version_table.py --minors 0.4 0.10 0.12
    python3 tools/version_table.py --python ~/.pyenv/versions/3.13.0/bin/python3 --minors 0.12

Pythons are looked for from 3.10 to the newest ``Programming Language :: Python`` classifier of ``pyproject.toml``,
in pyenv's installed versions and then on the PATH. JAX before 0.7 runs with numpy, ml_dtypes and equinox held to
the releases of their time, as ``tools/ci_floor.sh`` holds them.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST_DEPS = ["pytest", "hypothesis", "attrs", "pyyaml", "equinox"]
OLD_JAX_HOLDS = ["numpy<2.5", "ml_dtypes<0.8", "equinox<0.14"]  # for JAX before 0.7, as tools/ci_floor.sh
_CHECK = ("import sys, jax, jaxlib, jaxstatic._extension as c; "
          "print(jax.__version__, jaxlib.__version__, sys.version.split()[0], c.extension is not None)")


@dataclasses.dataclass
class Row:
    jax: str
    python: str
    jaxlib: str = "-"
    extension: str = "-"
    quickstart: str = "-"
    runtime: str = "-"
    minutes: float = 0.0


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _pyproject() -> str:
    return (ROOT / "pyproject.toml").read_text()


def floor() -> str:
    found = re.search(r'"jax>=([0-9.]+)"', _pyproject())
    if not found:
        sys.exit("tools/version_table.py: no \"jax>=X\" line in pyproject.toml")
    return found[1]


def pythons() -> list[str]:
    """One interpreter per Python minor from 3.10 to the newest classifier, oldest first."""
    newest = max(int(m) for m in re.findall(r'"Programming Language :: Python :: 3\.(\d+)"', _pyproject()))
    pyenv = shutil.which("pyenv")
    root = subprocess.run([pyenv, "root"], capture_output=True, text=True).stdout.strip() if pyenv else ""
    found = []
    for minor in range(10, newest + 1):
        installed = sorted(Path(root, "versions").glob(f"3.{minor}.*/bin/python3"), reverse=True) if root else []
        for candidate in [*map(str, installed), f"python3.{minor}"]:
            if subprocess.run([candidate, "-c", ""], capture_output=True).returncode == 0:
                found.append(candidate)
                break
        else:
            print(f"tools/version_table.py: no Python 3.{minor} found (pyenv, PATH)", file=sys.stderr)
    return found


def releases(python: str) -> list[str]:
    """Every JAX release pip sees, newest first."""
    out = subprocess.run([python, "-m", "pip", "index", "versions", "jax"], capture_output=True, text=True,
                         check=True).stdout
    listed = re.search(r"Available versions: (.*)", out)
    if not listed:
        sys.exit(f"tools/version_table.py: pip lists no JAX release:\n{out}")
    return [v for v in listed[1].split(", ") if re.fullmatch(r"[0-9.]+", v)]


def newest_per_minor(versions: list[str], lowest: str) -> dict[str, str]:
    per_minor: dict[str, str] = {}
    for v in sorted(versions, key=_version):
        if _version(v) >= _version(lowest):
            minor = ".".join(v.split(".")[:2])
            per_minor[minor] = lowest if minor == ".".join(lowest.split(".")[:2]) else v
    return per_minor


def installable(python: str, jax: str) -> bool:
    return subprocess.run([python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q",
                           f"jax=={jax}", f"jaxlib=={jax}"], capture_output=True).returncode == 0


def measure(jax: str, python: str, where: Path) -> Row:
    start = time.monotonic()
    venv = where / f"jax-{jax}"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    pip, py = [str(venv / "bin/pip"), "install", "-q"], str(venv / "bin/python")
    holds = OLD_JAX_HOLDS if _version(jax) < (0, 7) else []
    row = Row(jax, "?")
    env = {k: v for k, v in os.environ.items() if k != "JAXSTATIC_PURE_PYTHON"}
    try:
        subprocess.run([*pip, f"jax=={jax}", f"jaxlib=={jax}", *holds, *TEST_DEPS], check=True, env=env)
        subprocess.run([*pip, "-e", str(ROOT)], check=True, env=env)
        found = subprocess.run([py, "-c", _CHECK], capture_output=True, text=True, check=True, cwd=where, env=env)
        _, row.jaxlib, row.python, extension = found.stdout.split()
        row.extension = "yes" if extension == "True" else "no"
        quick = subprocess.run([py, "examples/quickstart.py"], capture_output=True, text=True, cwd=ROOT, env=env)
        row.quickstart = "passes" if quick.returncode == 0 else "FAILS"
        tests = subprocess.run([py, "-m", "pytest", "tests/runtime", "-q", "-p", "no:cacheprovider"],
                               capture_output=True, text=True, cwd=ROOT, env=env)
        summary = [line for line in tests.stdout.splitlines() if re.search(r"\d+ (passed|failed)", line)]
        row.runtime = summary[-1].strip("= ") if summary else f"no summary (exit {tests.returncode})"
        if tests.returncode != 0:
            print(tests.stdout[-4000:], file=sys.stderr)
    except subprocess.CalledProcessError as error:
        row.runtime = f"install failed: {error.cmd[-1]}"
    row.minutes = (time.monotonic() - start) / 60
    shutil.rmtree(venv, ignore_errors=True)
    return row


def table(rows: list[Row], machine: str) -> str:
    command = " ".join(["python3 tools/version_table.py", *sys.argv[1:]])
    lines = [f"Measured {datetime.date.today().isoformat()} by `{command}` on {machine}:", "",
             "| JAX | jaxlib | Python | C extension | quickstart | `tests/runtime` |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r.jax} | {r.jaxlib} | {r.python} | {r.extension} | {r.quickstart} | {r.runtime} |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minors", nargs="*", help="JAX minors to measure (e.g. 0.4 0.10 0.12); default: all")
    parser.add_argument("--python", help="one interpreter for every minor, instead of the oldest each installs on")
    args = parser.parse_args()
    found = [args.python] if args.python else pythons()
    per_minor = newest_per_minor(releases(found[-1]), floor())
    if args.minors:
        per_minor = {m: v for m, v in per_minor.items() if m in args.minors}
    rows = []
    with tempfile.TemporaryDirectory(prefix="jaxstatic-versions-") as where:
        for jax in per_minor.values():
            python = next((p for p in found if installable(p, jax)), None)
            if python is None:
                rows.append(Row(jax, "none found", runtime="no Python found that installs it"))
                continue
            print(f"JAX {jax} on {python} ...", file=sys.stderr, flush=True)
            rows.append(measure(jax, python, Path(where)))
            print(f"  {rows[-1]}", file=sys.stderr, flush=True)
    cpus = os.cpu_count()
    print(table(rows, f"{cpus} CPU core{'s' if cpus != 1 else ''}, Linux"))


if __name__ == "__main__":
    main()
