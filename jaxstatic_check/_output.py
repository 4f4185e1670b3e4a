"""jaxstatic's diagnostics read from mypy's lines, and printed as text or as GitHub workflow commands."""

from __future__ import annotations

import re
from typing import NamedTuple

_PLUGIN_NOTE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?:(?P<col>\d+):)? note: (?P<message>jaxstatic_mypy: .*)$")
"""The plugin's own notes (jaxstatic not visible to mypy): shown, since without them silence would mean nothing."""

_LINE = re.compile(
    r"^(?P<file>.+?):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<severity>error|warning|note): "
    r"(?P<message>.*?)  \[(?P<code>jaxstatic-[\w-]+)\]$"
)


class Diagnostic(NamedTuple):
    file: str
    line: int
    column: int | None
    severity: str
    message: str
    code: str


def parse(lines: list[str]) -> list[Diagnostic]:
    """jaxstatic's diagnostics among mypy's output lines (column numbers shown, no pretty printing)."""
    found = []
    for raw in lines:
        m = _LINE.match(raw)
        code = m["code"] if m is not None else "jaxstatic"
        if m is None:
            m = _PLUGIN_NOTE.match(raw)
        if m is not None:
            col = m["col"]
            severity = m.groupdict().get("severity") or "note"
            found.append(Diagnostic(m["file"], int(m["line"]), int(col) if col else None, severity,
                                    m["message"], code))
    return found


def format_text(d: Diagnostic) -> str:
    code = f"  [{d.code}]" if d.code.startswith("jaxstatic-") else ""
    return f"{d.file}:{d.line}: {d.severity}: {d.message}{code}"


def format_github(d: Diagnostic) -> str:
    """A GitHub Actions workflow command: the diagnostic shows as an annotation on the file's line."""
    kind = "error" if d.severity == "error" else "warning" if d.severity == "warning" else "notice"
    where = f"file={_property(d.file)},line={d.line}" + (f",col={d.column}" if d.column else "")
    return f"::{kind} {where},title={_property(d.code)}::{_data(d.message)}"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
