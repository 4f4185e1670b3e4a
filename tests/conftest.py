"""Test configuration: JAX on the CPU with several host devices, and the venv's tools on PATH."""

from __future__ import annotations

import os
import sys

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
