"""The command's entry point: ``jaxstatic-migrate`` and ``python -m jaxstatic.migrate`` call ``main``, which says how
to install LibCST where it is missing instead of failing on the import."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the migration on ``argv`` (default: the command line); returns the exit status."""
    try:
        from ._cli import main as run
    except ModuleNotFoundError as error:
        if error.name != "libcst":
            raise
        print("jaxstatic.migrate needs LibCST: pip install 'jaxstatic[migrate]'", file=sys.stderr)
        return 2
    return run(argv)

