"""``jaxstatic-check PATH...`` (or ``python -m jaxstatic_check``): jaxstatic's own type checks, for any project.

Runs mypy with jaxstatic's plugin over the project as its mypy configuration describes it and prints only
jaxstatic's diagnostics (``file:line: error: ... [jaxstatic-...]``), exiting 1 when there are any; whatever else
mypy would say is not shown. When part of the project was left out (excluded by its configuration, or a file mypy
cannot parse) or checked though its configuration silences it, a last line on stderr says how much and why.
Needs mypy: ``pip install 'jaxstatic[mypy]'``. Imports nothing of jax.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn


def main(argv: Sequence[str] | None = None) -> int:
    """Check the paths in ``argv`` (default: the command line); returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        from ._cli import run
    except ModuleNotFoundError as error:
        if error.name != "mypy" and not str(error.name).startswith("mypy."):
            raise
        print("jaxstatic-check needs mypy: pip install 'jaxstatic[mypy]'", file=sys.stderr)
        return 2
    return run(args.paths, github=args.format == "github", cache=args.cache_dir)


def script() -> NoReturn:
    """The console script (and ``python -m jaxstatic_check``): ``main``, then an exit that frees nothing, as
    ``mypy`` itself exits (its ``fast_exit``): tearing down mypy's graph of a project costs about as much CPU as
    checking it cold (``benchmarks/check_overhead.py``)."""
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jaxstatic-check",
        description="Report the values that cannot be static and the decorators that hide Static parameters "
                    "(mypy with jaxstatic's plugin, over the project as its mypy configuration describes it; "
                    "nothing else mypy finds is shown).",
    )
    parser.add_argument("paths", nargs="*",
                        help="files or folders (default: [tool.jaxstatic] paths, the mypy configuration's files, or .)")
    parser.add_argument("--cache-dir", metavar="DIR",
                        help="mypy's cache (default: a folder per project in the user's cache folder); one a CI "
                             "job keeps between runs makes a check after a small change take a fraction of a cold one")
    parser.add_argument("--format", choices=("text", "github"), default="text",
                        help="github: workflow commands, shown as annotations on the pull request")
    return parser
