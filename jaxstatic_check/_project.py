"""The project as its mypy configuration describes it, read by mypy's own machinery, with jaxstatic's checks on.

mypy finds and reads the configuration (``mypy.ini``, ``.mypy.ini``, ``pyproject.toml``, ``setup.cfg``: the nearest
upward from the working folder, up to the repository's root), so its lists, per-module sections, ``exclude``,
``mypy_path`` and namespace packages mean here what they mean to ``mypy``. Then what would keep jaxstatic's checks
from the project's own code is undone: ``ignore_errors`` and unchecked untyped bodies silence mypy's other errors,
which this command never shows anyway. ``[tool.jaxstatic]`` in the nearest ``pyproject.toml`` sets mypy options for
this command alone, and ``paths``, what it checks when given none.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import importlib.util
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import jaxstatic_mypy._errorcodes  # noqa: F401 -- jaxstatic's error codes, which a configuration may name
from mypy.config_parser import parse_section, toml_config_types
from mypy.errorcodes import error_codes
from mypy.find_sources import InvalidSourceList, create_source_list
from mypy.fscache import FileSystemCache
from mypy.main import process_options
from mypy.modulefinder import BuildSource, matches_exclude
from mypy.options import Options

if sys.version_info >= (3, 11):
    import tomllib
else:  # mypy depends on tomli before 3.11
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

PLUGIN = "jaxstatic_mypy"

_FORCED = {"ignore_errors": False, "check_untyped_defs": True}
"""What a project may set to silence mypy, set back wherever it is set: jaxstatic's checks run in that code too.
(``follow_imports`` does not reach the files checked, which mypy reads whatever it says.)"""

_SKIPPED = ("__pycache__", "site-packages", "node_modules")
"""Folders mypy never looks into (nor at names starting with a dot), so not counted as excluded."""


class Project(NamedTuple):
    sources: list[BuildSource]
    options: Options
    fscache: FileSystemCache
    silenced: int
    """Files checked that the project's configuration marks ``ignore_errors``."""
    excluded: int
    """Python files under the folders given that the configuration's ``exclude`` leaves out."""
    bases: list[str]
    """Module names two files shared, told apart as mypy's ``explicit_package_bases`` does."""
    ignored: list[str]
    """Files that silence every error themselves (``# mypy: ignore-errors``, ``# type: ignore`` at the top)."""


class ProjectError(Exception):
    """The project cannot be checked as given: the message says why and what to set."""


def load(paths: Sequence[str], cache: str | None = None) -> Project:
    """The files to check (``paths``, else ``[tool.jaxstatic] paths``, else the configuration's ``files``, else
    the working folder) and mypy's options for them; mypy's cache in ``cache``, else in the user's cache folder."""
    fscache = FileSystemCache()
    own, base = _tool_jaxstatic()
    _, options = process_options([], require_targets=False, fscache=fscache)
    if own:
        _apply(options, own, base)
    targets = list(paths) or _own_paths(own, base) or list(options.files or ()) or ["."]
    if options.config_file is None:  # no mypy configuration: imported modules are read, not reported
        options.follow_imports = "silent"
        options.ignore_missing_imports = True
    sources = _sources(targets, options, fscache)
    sources, bases = _modules_once(sources, targets, options, fscache)
    _known_codes(options)
    silenced = _silenced(sources, options)
    _force_checks(options)
    _set_output(options, Path(cache) if cache else cache_dir(Path.cwd()))
    excluded = _excluded(targets, options, fscache)
    return Project(sources, options, fscache, silenced, excluded, bases, _ignored_inline(sources))


def _tool_jaxstatic() -> tuple[dict[str, Any], Path]:
    """``[tool.jaxstatic]`` of the nearest ``pyproject.toml`` upward (mypy's search), and its folder."""
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        file = folder / "pyproject.toml"
        if file.is_file():
            with file.open("rb") as f:
                return dict(tomllib.load(f).get("tool", {}).get("jaxstatic", {})), folder
        if (folder / ".git").exists() or (folder / ".hg").exists():
            break
    return {}, here


def _own_paths(own: dict[str, Any], base: Path) -> list[str]:
    paths = own.get("paths", [])
    return [os.path.relpath(base / p) for p in ([paths] if isinstance(paths, str) else paths)]


def _apply(options: Options, own: dict[str, Any], base: Path) -> None:
    section = {k: v for k, v in own.items() if k != "paths"}
    updates, _ = parse_section(f"{base / 'pyproject.toml'}: [tool.jaxstatic]: ", options, lambda: None, section,
                               toml_config_types, sys.stderr)
    for key, value in updates.items():
        setattr(options, key, value)


def _sources(targets: list[str], options: Options, fscache: FileSystemCache) -> list[BuildSource]:
    try:
        return create_source_list(targets, options, fscache)
    except InvalidSourceList as error:
        raise ProjectError(f"jaxstatic-check: {error}") from None


def _modules_once(sources: list[BuildSource], targets: list[str], options: Options,
                  fscache: FileSystemCache) -> tuple[list[BuildSource], list[str]]:
    """Two files that are one module to mypy (two ``conftest.py`` in folders without ``__init__.py``) stop it
    before it checks anything: they are named from the working folder and ``mypy_path`` instead, as mypy's
    ``explicit_package_bases`` names them (``test.conftest``, ``test.pyroapi.conftest``)."""
    shared = _shared_names(sources)
    if not shared:
        return sources, []
    if not options.explicit_package_bases:
        options.explicit_package_bases = options.namespace_packages = True
        again = _sources(targets, options, fscache)
        if not _shared_names(again):
            return again, sorted(shared)
        shared = _shared_names(again)
    name, files = sorted(shared.items())[0]
    raise ProjectError(
        f'jaxstatic-check: {" and ".join(files)} are both module "{name}" to mypy, even with '
        "explicit_package_bases; set mypy_path to the folders imports start from, or exclude one of them "
        "(in the mypy configuration, or in [tool.jaxstatic])")


def _shared_names(sources: list[BuildSource]) -> dict[str, list[str]]:
    files = collections.defaultdict(list)
    for source in sources:
        files[source.module].append(str(source.path))
    return {name: paths for name, paths in files.items() if len(paths) > 1}


def _known_codes(options: Options) -> None:
    """mypy knows a plugin's error codes once it has imported the plugin, which its build does before it reads
    the options of a module (where ``disable_error_code`` and ``enable_error_code`` are applied); they are read
    here first, so the configuration's plugins are imported now (jaxstatic's codes are, above). A code still
    unknown is said, as ``mypy`` says it."""
    for name in options.plugins:
        module = name.rsplit(":", 1)[0] if ":" in os.path.basename(name) else name
        if not module.endswith(".py"):  # a plugin given by its file is loaded by the build alone
            with contextlib.suppress(Exception):  # the build says why
                importlib.import_module(module)
    named = {*options.disable_error_code, *options.enable_error_code}
    for section in options.per_module_options.values():
        for key in ("disable_error_code", "enable_error_code"):
            codes = section.get(key, ())
            named.update(codes if isinstance(codes, list) else ())
    unknown = sorted(named - error_codes.keys())
    if unknown:
        raise ProjectError(f"jaxstatic-check: Invalid error code(s) in the mypy configuration: {', '.join(unknown)}")


def _silenced(sources: list[BuildSource], options: Options) -> int:
    return sum(options.clone_for_module(s.module).ignore_errors for s in sources)


_INLINE = re.compile(rb"^#\s*mypy:.*\bignore[-_]errors\b(?!\s*=\s*False)", re.MULTILINE | re.IGNORECASE)
_TOP_IGNORE = re.compile(rb"\A(?:[ \t]*(?:#[^\n]*)?\r?\n)*?[ \t]*#\s*type:\s*ignore\s*(?:#.*)?$", re.MULTILINE)


def _ignored_inline(sources: list[BuildSource]) -> list[str]:
    """The files mypy reads with every error ignored whatever the configuration says: an inline
    ``# mypy: ignore-errors``, or ``# type: ignore`` before the first statement. Said, since they cannot be undone."""
    ignored = []
    for source in sources:
        if source.path is None:
            continue
        with open(source.path, "rb") as f:
            text = f.read()
        if _INLINE.search(text) or _TOP_IGNORE.match(text):
            ignored.append(source.path)
    return ignored


def _force_checks(options: Options) -> None:
    for key, value in _FORCED.items():
        setattr(options, key, value)
    for section in options.per_module_options.values():
        section.update({key: value for key, value in _FORCED.items() if key in section})
    # the plugin judges jaxstatic's and jax's types: read them whatever the project says of imports (skipped,
    # jax.Array would be Any, which the plugin accepts)
    for package in ("jaxstatic.*", "jax.*", "jaxlib.*"):
        options.per_module_options.setdefault(package, {}).update(follow_imports="silent")
    options.build_per_module_cache()  # clone_for_module cached the sections as they were


def _set_output(options: Options, cache: Path) -> None:
    """One line per diagnostic, with its column and code; the cache outside the project; nothing else written."""
    options.show_column_numbers = True
    options.hide_error_codes = False
    options.pretty = options.show_error_context = options.show_error_end = options.show_absolute_path = False
    options.show_error_code_links = options.color_output = options.error_summary = False
    options.many_errors_threshold = -1
    options.report_dirs = {}
    options.junit_xml = None
    options.incremental = True
    options.cache_dir = str(cache)
    # given to mypy's build as an object (_run): mypy loads the plugins a configuration names only where there
    # is a configuration file, and one named twice would run twice
    options.plugins = [name for name in options.plugins if name != PLUGIN]
    options.mypy_path = [*options.mypy_path, *_jaxstatic_visible(Path(options.cache_dir))]


def _jaxstatic_visible(cache: Path) -> list[str]:
    """An editable install of jaxstatic is found by Python through an import hook mypy does not follow: then mypy
    is shown the package through a folder holding only a link to it (the checkout's other folders, ``tests``
    among them, must not shadow the project's). The folder stays where it is, so mypy's cache stays valid."""
    spec = importlib.util.find_spec("jaxstatic")  # finds the package without importing it (nor jax)
    if spec is None or spec.origin is None:
        return []
    package = Path(spec.origin).resolve().parent
    if package.parent.name in ("site-packages", "dist-packages"):
        return []
    shown = cache / "jaxstatic-path"
    link = shown / "jaxstatic"
    if not (link.is_symlink() and link.resolve() == package):
        shown.mkdir(parents=True, exist_ok=True)
        link.unlink(missing_ok=True)
        link.symlink_to(package, target_is_directory=True)
    return [str(shown)]


def cache_dir(root: Path) -> Path:
    """mypy's cache for this project, outside it: a project that does not use mypy gets no ``.mypy_cache``."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    digest = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    return base / "jaxstatic-check" / digest


def _excluded(targets: list[str], options: Options, fscache: FileSystemCache) -> int:
    excludes = list(options.exclude)
    return sum(_excluded_below(t, excludes, fscache) for t in targets if excludes and os.path.isdir(t))


def _excluded_below(folder: str, excludes: list[str], fscache: FileSystemCache) -> int:
    count = 0
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name in _SKIPPED or name.startswith("."):
            continue
        if matches_exclude(path, excludes, fscache, False):
            count += _python_files(path)
        elif os.path.isdir(path):
            count += _excluded_below(path, excludes, fscache)
    return count


def _python_files(path: str) -> int:
    if not os.path.isdir(path):
        return int(path.endswith((".py", ".pyi")))
    return sum(name.endswith((".py", ".pyi")) for _, _, names in os.walk(path) for name in names)

