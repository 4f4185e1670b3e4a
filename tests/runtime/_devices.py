"""The devices the runtime tests run on, so that the suite runs the same with an accelerator as the default device.

Multi-device tests (meshes, shardings) build their meshes from the host's CPU devices, eight of them whatever the
default backend is (``tests/conftest.py`` asks XLA for them); on a CPU-only machine these are the default devices,
so nothing changes there. Tests that start another Python pin it to the CPU: an accelerator is held by one process
at a time (a TPU's runtime refuses a second), and the parent holds it.
"""

from __future__ import annotations

import contextlib
import math
import os

import jax
import numpy as np
from jax.sharding import Mesh

CPUS = jax.devices("cpu")
"""The host's CPU devices: eight (``tests/conftest.py``)."""

ACCELERATOR = jax.default_backend() != "cpu"
"""Whether the default device is an accelerator (``JAX_PLATFORMS=tpu,cpu``; see docs/contributing.md)."""


def cpu_mesh(shape: tuple[int, ...], names: tuple[str, ...], **options: object) -> Mesh:
    """A mesh of ``shape`` over the first CPU devices."""
    return Mesh(np.array(CPUS[:math.prod(shape)]).reshape(shape), names, **options)  # type: ignore[arg-type]


def one_cpu() -> contextlib.AbstractContextManager[None]:
    """Computations in this block run on one CPU device: the reference a multi-device result on the CPU devices is
    compared with (an accelerator computes ``tanh`` and matrix products to fewer digits)."""
    return jax.default_device(CPUS[0])  # type: ignore[no-any-return]  # typed Any by JAX


def cpu_env(**extra: str) -> dict[str, str]:
    """The environment for a child Python, pinned to the CPU."""
    return {**os.environ, "JAX_PLATFORMS": "cpu", **extra}
