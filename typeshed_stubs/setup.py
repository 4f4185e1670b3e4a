"""Builds ``jax-stubs`` rendered from the jax of the environment it is installed into.

The stubs re-export every other name of jax from where that jax defines it, which moves between jax versions, so
``tools/gen_jax_stubs.py --package-only`` renders them (into ``build/rendered``) when the package is built; nothing rendered is committed.
pip builds in an isolated environment holding setuptools only: the renderer runs in a child of the same interpreter
with pip's isolation variables removed, which sees the jax of the environment being installed into.
``JAX_STUBS_PYTHON`` names another interpreter (for a build frontend whose build environment is a separate venv).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import find_namespace_packages, setup

HERE = Path(__file__).resolve().parent
RENDERER = HERE.parent / "tools" / "gen_jax_stubs.py"
# Rendered here, not into partial/ (pyright's stubPath in a checkout, rendered from the checkout's own jax)
RENDERED = "build/rendered"
ISOLATION = ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME", "PYTHONSAFEPATH")


def render() -> None:
    # setuptools' build/ would otherwise keep files rendered from another jax version
    shutil.rmtree(HERE / "build", ignore_errors=True)
    if not RENDERER.exists():
        raise SystemExit(f"jax-stubs: {RENDERER} not found; build from a checkout of jaxstatic")
    python = os.environ.get("JAX_STUBS_PYTHON", sys.executable)
    env = {k: v for k, v in os.environ.items() if k not in ISOLATION}
    proc = subprocess.run(
        [python, str(RENDERER), "--package-only", "--out", str(HERE / RENDERED)], env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode:
        raise SystemExit(
            f"jax-stubs: rendering the stubs from the jax installed for {python} failed (install jax>=0.4.38"
            f" there first, or set JAX_STUBS_PYTHON to an interpreter that has it):\n{proc.stdout}{proc.stderr}"
        )


# Each build step setuptools runs imports this file; rendering is quick (about 2 s) and idempotent.
render()
# the folders jax ships .pyi files in vary with its version
setup(
    package_dir={"": RENDERED},
    packages=find_namespace_packages(where=str(HERE / RENDERED), include=["jax-stubs*"]),
)
