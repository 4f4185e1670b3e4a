"""mypy's build, in this process, over the project's sources: the lines it prints, and the files it could not read.

A file mypy cannot parse stops its whole build; here that file is left out and the build run again, so one
syntax error costs the check of one file, and the summary names it.
"""

from __future__ import annotations

import io
from typing import NamedTuple

from jaxstatic_mypy import plugin
from mypy import build
from mypy.errors import CompileError
from mypy.version import __version__ as mypy_version

from ._output import Diagnostic, parse
from ._project import Project


class Checked(NamedTuple):
    diagnostics: list[Diagnostic]
    unparsed: list[str]
    """For each file left out, mypy's first line about it."""


class BuildFailed(Exception):
    """mypy stopped for a reason no file of the project explains (a bad option, a plugin, a crash)."""


def check(project: Project) -> Checked:
    sources = list(project.sources)
    unparsed: list[str] = []
    while True:
        lines: list[str] = []
        try:
            _build(project, sources, lines)
        except CompileError as error:
            lines += error.messages
            blocked = [s for s in sources if s.module == error.module_with_blocker and s.path is not None]
            if not blocked or not lines:
                raise BuildFailed("\n".join(lines)) from None
            sources.remove(blocked[0])
            unparsed.append(next((line for line in lines if line.startswith(str(blocked[0].path))), lines[0]))
            continue
        return Checked(parse(lines), unparsed)


def _build(project: Project, sources: list[build.BuildSource], lines: list[str]) -> None:
    def flush(_file: str | None, messages: list[str], _serious: bool) -> None:
        lines.extend(messages)

    out = io.StringIO()
    # the plugin's report_config_data (its rules' version and sources) keeps mypy's cache true to it
    extra = [plugin(mypy_version)(project.options)]
    result = build.build(sources, project.options, None, flush, project.fscache, out, out, extra)
    close = getattr(result.manager.metastore, "close", None)  # mypy 2's SQLite cache is written on close
    if close is not None:
        close()
