"""Fixtures shared by the runtime tests."""

from __future__ import annotations

import jax
import pytest

from jaxstatic import _extension, _shared

from ._devices import ACCELERATOR

if ACCELERATOR:
    # The tests compare float32 results with NumPy's, or with the same program on the host's CPU devices; an
    # accelerator's default float32 matrix product keeps fewer bits (about three digits on a TPU).
    jax.config.update("jax_default_matmul_precision", "highest")


@pytest.fixture(autouse=True)
def _closures_of_their_own() -> None:
    """Each test's functions share no program with another test's functions of the same code closing over equal
    values (a test run over both hit paths would run the second over the first one's programs)."""
    _shared.forget_closures()


@pytest.fixture(params=["C hit", "generated hit"])
def hit_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A test run twice: with the cache hits in C (``jaxstatic._hits``, where it was built) and with the
    generated Python code alone, as an install without a C compiler (or with ``JAXSTATIC_PURE_PYTHON=1``) runs."""
    if request.param == "C hit" and _extension.compiled is None:
        pytest.skip("jaxstatic._hits was not built here")
    if request.param == "generated hit":
        monkeypatch.setattr(_extension, "compiled", None)
    return str(request.param)
