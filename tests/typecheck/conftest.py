"""Settings for the YAML cases under this folder (pytest-mypy-plugins)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

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
