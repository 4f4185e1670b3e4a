"""Test configuration: JAX on the CPU with several host devices, and the venv's tools on PATH."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

pytest_plugins = ["pytester"]  # the pytest plugin's tests run pytest on test files of their own

# Before jax is imported anywhere: eight CPU devices for pmap, sharding and mesh tests.
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

# pytest-mypy-plugins, mypy, ruff and pyright are found on PATH: make it the running interpreter's.
_bin = os.path.dirname(sys.executable)
if _bin not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _bin + os.pathsep + os.environ.get("PATH", "")

# projects jaxstatic-check is run over (tests/test_check_projects.py): their conftest.py files are theirs, not ours
collect_ignore = ["check_projects"]

# Hypothesis's per-example deadline is a wall-clock limit: on two shared CI cores, under pytest-xdist, or on an
# accelerator host it fails examples for being slow, not wrong. The properties assert values; speed is measured in
# benchmarks/.
try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # pragma: no cover
    pass
else:
    _hypothesis_settings.register_profile("jaxstatic", deadline=None)
    _hypothesis_settings.load_profile("jaxstatic")

def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--installs", action="store_true",
                     help="also run the tests marked installs: a fresh environment built with the README's commands, "
                          "other projects downloaded from the package index (.ci/run runs them after the suite)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "installs: builds a fresh environment or downloads from the package index; "
                                       "runs with --installs")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--installs"):
        return
    skip = pytest.mark.skip(reason="builds a fresh environment or downloads from the package index: run with "
                                   "--installs (.ci/run does)")
    for item in items:
        if item.get_closest_marker("installs") is not None:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _mypy_forgets_its_last_build() -> Iterator[None]:
    """A mypy build run in this process (``jaxstatic_check.main``, the plugin's own tests) leaves its modules in mypy's
    globals: ``modules_state``, the subtype caches (``typestate``) and ``types.instance_cache``, each enough to keep
    the whole build alive (1.7 million objects after one over jax on a cold cache), which every later
    ``gc.collect()`` of the worker walks (1.5 seconds each, and the runtime tests collect often). Dropped after each
    test, as mypy's own build resets them when it starts."""
    yield
    state = sys.modules.get("mypy.modules_state")
    if state is not None and state.modules_state.modules:
        state.modules_state.node_fixer = None
        state.modules_state.modules = {}
    typestate = sys.modules.get("mypy.typestate")
    if typestate is not None:
        typestate.reset_global_state()
    types = sys.modules.get("mypy.types")
    cache = getattr(types, "instance_cache", None)  # where this mypy has one
    if cache is not None:
        cache.reset()


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, which a run without it lacks
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` (pyproject's ``addopts``) with each module's ``xdist_group`` honoured: ``_xdist_groups``."""
    from ._xdist_groups import make_scheduler

    return make_scheduler(config, log)
