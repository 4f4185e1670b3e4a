"""``jaxstatic-check PATH...`` (or ``python -m jaxstatic.check``): jaxstatic's own type checks, for any project.

Runs mypy with jaxstatic's plugin over the paths and prints only jaxstatic's diagnostics
(``file:line: error: ... [jaxstatic-...]``), exiting 1 when there are any; whatever else mypy would say is not
shown. Needs mypy: ``pip install 'jaxstatic[mypy]'``. ``import jaxstatic`` never loads this module.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Check the paths in ``argv`` (default: the command line); returns the exit status."""
    try:
        from ._check_cli import main as run
    except ModuleNotFoundError as error:
        if error.name != "mypy" and not str(error.name).startswith("mypy."):
            raise
        print("jaxstatic-check needs mypy: pip install 'jaxstatic[mypy]'", file=sys.stderr)
        return 2
    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
