"""``jaxstatic-check`` run as a user runs it, for the tests of it."""

from __future__ import annotations

import subprocess
import sys


def check(argv: list[str]) -> int:
    """``jaxstatic-check *argv`` in a process of its own, in this one's folder and environment, its output written to
    this one's (where ``capsys`` reads it), its status returned. Not ``jaxstatic_check.main`` in this process: the
    console script exits without tearing down mypy's graph of the project (as mypy does), and a teardown here costs
    the collector as much CPU as the check, which the tests that collect after it in this worker would pay."""
    done = subprocess.run([sys.executable, "-m", "jaxstatic_check", *argv], capture_output=True, text=True,
                          check=False)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.returncode
