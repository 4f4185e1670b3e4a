"""``python -m jaxstatic.migrate PATH... [--diff] [--check]``: move JAX code to ``Static[...]`` annotations.

Needs LibCST: ``pip install 'jaxstatic[migrate]'``. The rules live in ``_migrate_*``; ``import jaxstatic`` never
loads this module.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the migration on ``argv`` (default: the command line); returns the exit status."""
    try:
        from ._migrate_cli import main as run
    except ModuleNotFoundError as error:
        if error.name != "libcst":
            raise
        print("jaxstatic.migrate needs LibCST: pip install 'jaxstatic[migrate]'", file=sys.stderr)
        return 2
    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
