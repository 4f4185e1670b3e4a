"""A failure inside a transformed body: the traceback shows the user's lines, and jaxstatic's own frames only with
``JAX_TRACEBACK_FILTERING=off``, as JAX does for its own."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static

from ._devices import cpu_env

PACKAGE = str(Path(js.__file__).resolve().parent)
# A bare ``raise`` re-raises the traceback the error was caught with before Python 3.11, so the frames above JAX's
# own boundary can be dropped from 3.11 on only (``_traceback.hide``).
pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="frames above JAX's boundary are hidden on 3.11+")
x = jnp.ones(3)


@contextlib.contextmanager
def filtering(mode: str) -> Iterator[None]:
    before = jax.config.jax_traceback_filtering  # type: ignore[attr-defined]
    jax.config.update("jax_traceback_filtering", mode)
    try:
        yield
    finally:
        jax.config.update("jax_traceback_filtering", before)


def frames(call: Callable[[], Any], error: type[BaseException] = ValueError) -> list[tuple[str, str]]:
    """``(where, function)`` of each frame of the failure's traceback, ``where`` being ``jaxstatic``, ``jax`` or
    this file's name."""
    with pytest.raises(error) as info:
        call()
    out = []
    for frame in traceback.extract_tb(info.value.__traceback__):
        path = frame.filename
        resolved = str(Path(path).resolve()) if os.path.exists(path) else path
        where = ("jaxstatic" if resolved.startswith(PACKAGE) or path.startswith("<jaxstatic>") else
                 "test" if path == __file__ else "jax" if "/jax/" in path else path)
        out.append((where, frame.name))
    return out


def inner(x: jax.Array, n: int) -> jax.Array:
    raise ValueError("boom")


@js.jit
def step(x: jax.Array, n: Static[int]) -> jax.Array:
    return inner(x, n)


@js.jit
def stacked(x: jax.Array, n: Static[int]) -> jax.Array:
    return js.vmap(step_body)(x, n)


def step_body(x: jax.Array, n: Static[int]) -> jax.Array:
    return inner(x, n)


CALLS: dict[str, Callable[[], Any]] = {
    "first call": lambda: step(x, 2),
    "a later call, with a new static value": lambda: step(x, 3),
    "keywords": lambda: step(x=x, n=4),
    "a stack of transforms": lambda: stacked(x, 2),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_failure_in_the_body_shows_the_users_lines_only(name: str) -> None:
    with filtering("auto"):
        found = frames(CALLS[name])
    assert found[:2] == [("test", "frames"), ("test", "<lambda>")]  # where the call is made
    assert found[-2:] == [("test", "step_body" if name.startswith("a stack") else "step"), ("test", "inner")]
    assert [f for f in found if f[0] not in ("test",)] == []


@pytest.mark.parametrize("name", list(CALLS))
def test_filtering_off_shows_jaxstatics_frames(name: str) -> None:
    with filtering("off"):
        found = frames(CALLS[name])
    assert ("jaxstatic", "body") in found
    # the generated code, or the handler a hit in C (_hits) hands a failure to
    assert any(f[0] == "jaxstatic" and f[1] in ("entry", "dispatch", "__call__", "raise_failed") for f in found)
    assert ("jax", "reraise_with_filtered_traceback") in found
    assert found[-1] == ("test", "inner")


def test_jaxstatics_own_errors_point_at_the_call() -> None:
    with filtering("auto"):
        found = frames(lambda: step(x, [jnp.ones(1)]), js.NonStaticValueError)
    assert found == [("test", "frames"), ("test", "<lambda>")]


def test_the_environment_variable_decides(tmp_path: Path) -> None:
    """``JAX_TRACEBACK_FILTERING`` set before the process starts, as users set it."""
    script = ("import traceback, jax.numpy as jnp, jaxstatic as js\n"
              "@js.jit\n"
              "def f(x, n: js.Static[int]):\n"
              "    raise ValueError('boom')\n"
              "try:\n"
              "    f(jnp.ones(1), 2)\n"
              "except ValueError as e:\n"
              "    print(''.join(traceback.format_exception(e)))\n")
    path = tmp_path / "user.py"
    path.write_text(script)
    outputs = {}
    for mode in ("", "off"):
        env = cpu_env(JAX_TRACEBACK_FILTERING=mode)
        if not mode:
            del env["JAX_TRACEBACK_FILTERING"]
        run = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True, timeout=120)
        outputs[mode] = re.sub(r"\n *[~^]+ *(?=\n)", "", run.stdout)  # Python 3.13 underlines whole calls too
    assert outputs[""].startswith(f'Traceback (most recent call last):\n  File "{path}", line 6, in <module>\n'
                                  f"    f(jnp.ones(1), 2)\n  File \"{path}\", line 4, in f\n"
                                  "    raise ValueError('boom')\nValueError: boom\n")
    # a first call runs in the call itself, then the lane's body
    assert "/jaxstatic/_transform.py" in outputs["off"] and "/jaxstatic/_lane.py" in outputs["off"]
