"""``jaxstatic-check``: mypy, run in-process with jaxstatic's plugin, reduced to jaxstatic's own diagnostics.

A project that does not use mypy has no mypy configuration, untyped imports and errors mypy would report
everywhere: none of that is the user's question. So missing imports are ignored, untyped function bodies are
checked (jaxstatic's call sites are in them too, and most training loops are unannotated; a project's own
configuration keeps this on unless it sets ``check_untyped_defs`` itself), every diagnostic but ``[jaxstatic-...]`` is dropped, and mypy's
cache lives in the user's cache folder, not in the project. A project that does use mypy keeps its configuration
(its plugins, overrides and ``python_version``), with jaxstatic's plugin added; ``[tool.jaxstatic]`` in
``pyproject.toml`` sets mypy options for this command alone (and ``paths``, what it checks by default).
"""

from __future__ import annotations

import argparse
import configparser
import hashlib
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from mypy import api

if sys.version_info >= (3, 11):
    import tomllib
else:  # mypy depends on tomli before 3.11
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

PLUGIN = "jaxstatic_mypy"

_DEFAULTS: dict[str, Any] = {
    "ignore_missing_imports": True,
    "check_untyped_defs": True,
    "follow_imports": "silent",
}
"""mypy options for a project without a mypy configuration."""

_INI_CONFIGS = ("mypy.ini", ".mypy.ini")

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


def parse(output: str) -> list[Diagnostic]:
    """jaxstatic's diagnostics among mypy's output lines (``--show-column-numbers``, no pretty printing)."""
    found = []
    for raw in output.splitlines():
        m = _LINE.match(raw)
        if m is not None:
            col = m["col"]
            found.append(Diagnostic(m["file"], int(m["line"]), int(col) if col else None, m["severity"],
                                    m["message"], m["code"]))
            continue
        m = _PLUGIN_NOTE.match(raw)
        if m is not None:
            col = m["col"]
            found.append(Diagnostic(m["file"], int(m["line"]), int(col) if col else None, "note",
                                    m["message"], "jaxstatic"))
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


# --- configuration --------------------------------------------------------------------------------------------


class Config(NamedTuple):
    sections: dict[str, dict[str, Any]]
    """mypy's options: ``"mypy"`` the global ones, ``"mypy-<pattern>"`` per module, as in ``mypy.ini``."""
    paths: list[str]
    """What to check when no path is given."""


def read_config(root: Path) -> Config:
    """The project's mypy configuration (mypy's own search order) with ``[tool.jaxstatic]`` over it; mypy's
    defaults for a project without one."""
    pyproject = _toml(root / "pyproject.toml")
    own = pyproject.get("tool", {}).get("jaxstatic", {})
    sections = _mypy_sections(root, pyproject)
    if sections is None:
        sections = {"mypy": dict(_DEFAULTS)}
    paths = own.get("paths", ["."])
    # Training loops are rarely annotated, and mypy skips an unannotated body unless told: jaxstatic's codes are
    # the only ones reported here, so checking those bodies adds nothing else to the output.
    sections["mypy"].setdefault("check_untyped_defs", True)
    sections["mypy"].update({k: v for k, v in own.items() if k != "paths"})
    plugins = _listed(sections["mypy"].get("plugins", []))
    if PLUGIN not in plugins:
        sections["mypy"]["plugins"] = [*plugins, PLUGIN]
    return Config(sections, [paths] if isinstance(paths, str) else list(paths))


def _mypy_sections(root: Path, pyproject: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
    for name in _INI_CONFIGS:
        if (root / name).is_file():
            return _ini(root / name)
    tool = pyproject.get("tool", {})
    if "mypy" in tool:
        options = dict(tool["mypy"])
        sections: dict[str, dict[str, Any]] = {"mypy": options}
        for override in options.pop("overrides", []):
            modules = _listed(override.get("module", []))
            rest = {k: v for k, v in override.items() if k != "module"}
            sections[f"mypy-{','.join(modules)}"] = rest
        return sections
    if (root / "setup.cfg").is_file():
        found = _ini(root / "setup.cfg")
        if "mypy" in found:
            return found
    return None


def _ini(path: Path) -> dict[str, dict[str, Any]]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path, encoding="utf-8")
    return {name: dict(parser[name]) for name in parser.sections() if name == "mypy" or name.startswith("mypy-")}


def _toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    with path.open("rb") as f:
        loaded: dict[str, Any] = tomllib.load(f)
    return loaded


def _listed(value: object) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else []


def render_ini(sections: dict[str, dict[str, Any]]) -> str:
    lines = []
    for name, options in sections.items():
        lines.append(f"[{name}]")
        lines += [f"{key} = {_ini_value(value)}" for key, value in options.items()]
        lines.append("")
    return "\n".join(lines)


def _ini_value(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    return str(value)


def _make_jaxstatic_visible(options: dict[str, Any], tmp: Path) -> None:
    """An editable install of jaxstatic is found by Python through an import hook mypy does not follow: then mypy
    is shown the package through a folder holding only a link to it (the checkout's other folders, ``tests``
    among them, must not shadow the project's)."""
    package = Path(__file__).resolve().parent  # jaxstatic's folder, which holds this module
    if package.parent.name in ("site-packages", "dist-packages"):
        return
    shown = tmp / "jaxstatic-path"
    shown.mkdir()
    (shown / "jaxstatic").symlink_to(package, target_is_directory=True)
    options["mypy_path"] = [*_listed(options.get("mypy_path", [])), str(shown)]


def cache_dir(root: Path) -> Path:
    """mypy's cache for this project, outside it: a project that does not use mypy gets no ``.mypy_cache``."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    digest = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    return base / "jaxstatic-check" / digest


# --- the command ------------------------------------------------------------------------------------------------


def run(paths: Sequence[str], root: Path, extra: Iterable[str] = ()) -> tuple[list[Diagnostic], str, int]:
    """mypy over ``paths`` with the plugin: jaxstatic's diagnostics, mypy's own output, and mypy's status."""
    config = read_config(root)
    with tempfile.TemporaryDirectory(prefix="jaxstatic-check-") as tmp:
        _make_jaxstatic_visible(config.sections["mypy"], Path(tmp))
        ini = Path(tmp) / "mypy.ini"
        ini.write_text(render_ini(config.sections), encoding="utf-8")
        args = [
            "--config-file", str(ini),
            "--cache-dir", str(cache_dir(root)),
            "--show-column-numbers", "--show-error-codes", "--no-pretty", "--no-error-summary",
            "--hide-error-context", "--soft-error-limit=-1", "--no-color-output",
            *extra,
            *(paths or config.paths),
        ]
        stdout, stderr, status = api.run(args)
    return parse(stdout), stdout + stderr, status


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="jaxstatic-check",
        description="Report the values that cannot be static and the decorators that hide Static parameters "
                    "(mypy with jaxstatic's plugin; nothing else mypy finds is shown).",
    )
    parser.add_argument("paths", nargs="*", help="files or folders (default: [tool.jaxstatic] paths, or .)")
    parser.add_argument("--format", choices=("text", "github"), default="text",
                        help="github: workflow commands, shown as annotations on the pull request")
    args = parser.parse_args(argv)
    found, output, status = run(args.paths, Path.cwd())
    if status == 2 and not found:  # mypy could not run: a bad option, a syntax error, a crash
        print(output.rstrip(), file=sys.stderr)
        return 2
    show = format_github if args.format == "github" else format_text
    for d in found:
        print(show(d))
    return 1 if any(d.severity == "error" for d in found) else 0
