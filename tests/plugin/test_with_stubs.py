"""With the jax stubs enabled, the plugin also reaches call sites of functions jitted by plain ``jax.jit``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]

_SOURCE = """\
import functools
from typing import Any

import jax
import jax.numpy as jnp

from jaxstatic import Static


@functools.partial(jax.jit, static_argnames=("n",))
def f(x: jax.Array, n: Static[object]) -> jax.Array:
    return x


@functools.partial(jax.jit, static_argnames=("config",))
def g(x: jax.Array, config: dict[str, Any]) -> jax.Array:
    return x


f(jnp.ones(1), jnp.ones(1))
f(jnp.ones(1), (1, 2))
"""


def _mypy(tmp_path: Path, stubs: bool) -> list[str]:
    (tmp_path / "use.py").write_text(_SOURCE)
    (tmp_path / "mypy.ini").write_text("[mypy]\nplugins = jaxstatic_mypy\nstrict = true\n")
    path = [str(_REPO / "typeshed_stubs")] if stubs else []
    env = {**os.environ, "MYPYPATH": os.pathsep.join([*path, str(_REPO)])}
    result = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "use.py"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    return [line for line in result.stdout.splitlines() if "[jaxstatic-" in line]


def test_call_sites_of_plain_jax_jit_are_checked_with_the_stubs(tmp_path: Path) -> None:
    assert _mypy(tmp_path, stubs=True) == [
        'use.py:15: error: Static argument "config" of "g" is not hashable: "dict" sets __hash__ to None; use a '
        "hashable type (tuple, frozenset, frozen dataclass) or jaxstatic.Static  [jaxstatic-unhashable]",
        'use.py:20: error: Argument "n" to "f" cannot be static: "Array" is an array; pass a hashable value or a '
        "builtin container of them  [jaxstatic-unhashable]",
    ]


def test_without_the_stubs_only_the_decoration_is_checked(tmp_path: Path) -> None:
    assert [line.split(":")[1] for line in _mypy(tmp_path, stubs=False)] == ["15"]
