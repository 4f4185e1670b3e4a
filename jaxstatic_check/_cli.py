"""The command's work once mypy is importable: the project loaded, checked, and what was found printed."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ._output import format_github, format_text
from ._project import Project, ProjectError, load
from ._run import BuildFailed, Checked, check


def run(paths: Sequence[str], github: bool = False, cache: str | None = None) -> int:
    try:
        project = load(paths, cache)
        checked = check(project)
    except SystemExit as error:  # mypy refused the configuration or the paths, and said why on stderr
        return error.code if isinstance(error.code, int) else 2
    except (ProjectError, BuildFailed) as error:
        print(str(error).rstrip(), file=sys.stderr)
        return 2
    show = format_github if github else format_text
    for d in checked.diagnostics:
        print(show(d))
    sys.stdout.flush()
    line = summary(project, checked)
    if line:
        print(line, file=sys.stderr)
    return 1 if any(d.severity == "error" for d in checked.diagnostics) else 0


def summary(project: Project, checked: Checked) -> str:
    """What was not checked and why, and what was checked that the project's configuration silences; empty
    when the project was checked whole, as given."""
    notes = []
    if checked.unparsed:
        notes.append(f"{_files(len(checked.unparsed))} not checked: mypy cannot parse "
                     + "; ".join(checked.unparsed))
    if project.ignored:
        notes.append(f"{_files(len(project.ignored))} not checked: the file ignores every error itself "
                     f"(# mypy: ignore-errors, or # type: ignore at its top): " + ", ".join(project.ignored))
    if project.excluded:
        notes.append(f"{_files(project.excluded)} not checked: excluded by the mypy configuration's exclude")
    if project.silenced:
        notes.append(f"{_files(project.silenced)} checked for jaxstatic's codes alone though the mypy "
                     "configuration sets ignore_errors")
    if project.bases:
        notes.append("module names read from the folders as mypy's explicit_package_bases reads them, since two "
                     "files were each module " + ", ".join(f'"{name}"' for name in project.bases))
    checked_files = len(project.sources) - len(checked.unparsed) - len(project.ignored)
    return f"jaxstatic-check: {_files(checked_files)} checked; " + "; ".join(notes) if notes else ""


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"
