"""Settings for the YAML cases under this folder (pytest-mypy-plugins)."""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from mypy.version import __version__ as mypy_version

_HERE = Path(__file__).parent

# (tests/conftest.py puts this interpreter's bin directory on PATH: pytest-mypy-plugins runs the `mypy` there.)

_session_base: str | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _session_base
    option = config.option
    if not hasattr(option, "mypy_ini_file"):
        return  # pytest-mypy-plugins is not installed
    if option.mypy_ini_file is None and option.mypy_pyproject_toml_file is None:
        option.mypy_ini_file = str(_HERE / "mypy.ini")
    if option.mypy_testing_base == tempfile.gettempdir():
        # One mypy cache shared by all cases of this session (the cases import jax: ~10 s for mypy cold, well
        # under a second warm), private to the session so that concurrent runs never share a cache.
        _session_base = option.mypy_testing_base = tempfile.mkdtemp(prefix="jaxstatic-mypy-cases-")


def pytest_unconfigure(config: pytest.Config) -> None:
    if _session_base is not None:
        shutil.rmtree(_session_base, ignore_errors=True)


# Before 1.20, mypy's reveal_type spelled builtins in full ("builtins.float"); the cases are written in the newer
# spelling. On older mypy, a revealed type matches with or without the prefix: the plugin's results are the same,
# only mypy's formatting differs.
_FULL_BUILTIN_NAMES = tuple(int(part) for part in mypy_version.split("+")[0].split(".")[:2]) < (1, 20)
_BUILTIN = re.compile(r"(?<![\w.\\])(bool|bytes|complex|dict|float|frozenset|int|list|object|set|str|tuple|type)\b")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if not _FULL_BUILTIN_NAMES:
        return
    for item in items:
        expected = getattr(item, "expected_output", None)
        if expected is not None:
            item.expected_output = [_either_spelling(matcher) for matcher in expected]  # type: ignore[attr-defined]


def _either_spelling(matcher: Any) -> Any:
    prefix = "Revealed type is "
    if matcher.regex or not matcher.message.startswith(prefix):
        return matcher
    revealed = _BUILTIN.sub(r"(?:builtins\\.)?\1", re.escape(matcher.message[len(prefix) :]))
    return dataclasses.replace(matcher, message=re.escape(prefix) + revealed + "$", regex=True)
