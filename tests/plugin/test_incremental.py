"""The plugin gives the same errors cold, from mypy's incremental cache, with --strict, and under dmypy.

A library module declares Static parameters (and a dataclass and a ``__hash__ = None`` class the plugin must
remember as unhashable); another module calls it. Types from the library then come from the cache, where
``Static[...]`` survives only as a type alias, and the two classes only as the metadata the plugin recorded (a
cached class has no body to read). jax is not followed here, to keep these fast:
the YAML cases cover jax's types (they share one warm cache).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from jaxstatic_mypy._compat import EXTRA_ATTRS_CACHED

_REPO = Path(__file__).resolve().parents[2]

_LIB = """\
import dataclasses
import functools
from typing import Any, Callable

from jaxstatic import Static, jit


@dataclasses.dataclass
class Config:
    lr: float


class Weights:
    __hash__ = None  # type: ignore[assignment]


def erase(fn: Callable[..., Any]) -> Callable[..., Any]:
    return fn


def f(x: float, option: {annotation}) -> float:
    return x


@jit
def g(x: float, n: Static[int], cfg: Static[object] = None) -> float:
    return x
"""

_USE = """\
from lib import Config, Weights, erase, f, g
from jaxstatic import Static, jit

f(1.0, Config(0.1))
f(1.0, option=[Weights()])
g(1.0, 2, cfg={"a": Config(0.2)})
g(1.0, 2, cfg=(1, 2))


@jit
@erase
def h(x: float, n: Static[int]) -> float:
    return x
"""

_CONFIG = """\
[mypy]
plugins = jaxstatic_mypy
{extra}

[mypy-jaxstatic.*]
ignore_errors = True
{skip}
"""
_SKIP_JAX = """
[mypy-jax.*,jaxlib.*,numpy.*]
follow_imports = skip
"""

_EXPECTED = [
    'use.py:4: error: Argument "option" to "f" cannot be static: "Config" is a dataclass with eq=True, '
    "frozen=False; pass a hashable value or a builtin container of them  [jaxstatic-unhashable]",
    'use.py:5: error: Argument "option" to "f" cannot be static: "Weights" sets __hash__ to None; '
    "pass a hashable value or a builtin container of them  [jaxstatic-unhashable]",
    'use.py:6: error: Argument "cfg" to "g" cannot be static: "Config" is a dataclass with eq=True, '
    "frozen=False; pass a hashable value or a builtin container of them  [jaxstatic-unhashable]",
    'use.py:10: error: "jit" cannot see the Static parameters of "h": decorator "erase" returns '
    'Callable[..., Any]; annotate "erase" with ParamSpec (functools.wraps keeps no types), or move "jit" below it  [jaxstatic-signature]',
]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["MYPYPATH"] = str(_REPO)
    return env


def _write(
    tmp: Path, annotation: str = "Static[object]", extra: str = "", skip_jax: bool = True
) -> None:
    (tmp / "lib.py").write_text(_LIB.format(annotation=annotation))
    (tmp / "use.py").write_text(_USE)
    (tmp / "mypy.ini").write_text(_CONFIG.format(extra=extra, skip=_SKIP_JAX if skip_jax else ""))


def _mypy(tmp: Path, *args: str) -> list[str]:
    cmd = [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--no-error-summary", *args]
    done = subprocess.run(cmd, cwd=tmp, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if "jaxstatic-" in line]


@pytest.mark.parametrize("extra", ["", "strict = True"], ids=["default", "strict"])
def test_cold_and_cached_runs_agree(tmp_path: Path, extra: str) -> None:
    _write(tmp_path, extra=extra)
    cold = _mypy(tmp_path, "use.py", "lib.py")
    assert cold == _EXPECTED
    # Only use.py changes: lib.py (Static parameters, the dataclass) now comes from the cache.
    (tmp_path / "use.py").write_text(_USE + "\n# edited\n")
    warm = _mypy(tmp_path, "use.py", "lib.py")
    assert warm == cold
    # Nothing changes: everything comes from the cache.
    assert _mypy(tmp_path, "use.py", "lib.py") == cold


def test_dmypy_follows_edits_to_the_library(tmp_path: Path) -> None:
    # dmypy itself fails on follow_imports=skip for numpy (KeyError in find_reachable_changed_modules): follow all.
    _write(tmp_path, skip_jax=False)
    status = str(tmp_path / "dmypy.json")
    dmypy = [sys.executable, "-m", "mypy.dmypy", "--status-file", status]

    def check() -> list[str]:
        done = subprocess.run(
            [*dmypy, "check", "use.py", "lib.py"],
            cwd=tmp_path,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode in (0, 1), done.stdout + done.stderr
        return [line for line in done.stdout.splitlines() if "jaxstatic-" in line]

    start = [*dmypy, "start", "--", "--config-file", "mypy.ini", "--no-error-summary"]
    subprocess.run(start, cwd=tmp_path, env=_env(), check=True, capture_output=True, timeout=120)
    try:
        assert check() == _EXPECTED
        # The parameter stops being Static: its call sites in use.py go quiet.
        _write(tmp_path, annotation="object", skip_jax=False)
        assert check() == _EXPECTED[2:]
        # And back.
        _write(tmp_path, skip_jax=False)
        assert check() == _EXPECTED
    finally:
        subprocess.run([*dmypy, "stop"], cwd=tmp_path, env=_env(), capture_output=True, timeout=60)


_DATACLASS_LIB = """\
import dataclasses

from jaxstatic import Static


@dataclasses.dataclass({options})
class Config:
    lr: {field}


def make() -> Config:
    return Config({value})


DEFAULT = make()


def f(x: float, cfg: Static[object]) -> float:
    return x
"""

# use.py never names Config: only the verdicts at its call sites tie it to the class's options.
_DATACLASS_USE = """\
from lib import DEFAULT, f, make

f(1.0, DEFAULT)
f(1.0, cfg=make())
"""

_MUTABLE = '"Config" is a dataclass with eq=True, frozen=False'
_LIST_FIELD = 'field "lr" of "Config": "list" sets __hash__ to None'

# (options, field type, field value, the reason reported at both call sites or None)
_STEPS = [
    ("frozen=True", "float", "0.1", None),
    ("", "float", "0.1", _MUTABLE),
    ("eq=False", "float", "0.1", None),
    ("", "float", "0.1", _MUTABLE),
    ("frozen=True", "float", "0.1", None),
    ("frozen=True", "list[float]", "[0.1]", _LIST_FIELD),
    ("frozen=True", "float", "0.1", None),
    ("unsafe_hash=True", "list[float]", "[0.1]", _LIST_FIELD),
    ("eq=False", "list[float]", "[0.1]", None),
]


def test_dmypy_follows_dataclass_options_in_another_module(tmp_path: Path) -> None:
    _write(tmp_path, skip_jax=False)
    (tmp_path / "use.py").write_text(_DATACLASS_USE)
    status = str(tmp_path / "dmypy.json")
    dmypy = [sys.executable, "-m", "mypy.dmypy", "--status-file", status]
    start = [*dmypy, "start", "--", "--config-file", "mypy.ini", "--no-error-summary"]
    subprocess.run(start, cwd=tmp_path, env=_env(), check=True, capture_output=True, timeout=120)
    try:
        seen = []
        for options, field, value, _ in _STEPS:
            lib = _DATACLASS_LIB.format(options=options, field=field, value=value)
            (tmp_path / "lib.py").write_text(lib)
            done = subprocess.run([*dmypy, "check", "use.py", "lib.py"], cwd=tmp_path, env=_env(),
                                  capture_output=True, text=True, timeout=300)
            assert done.returncode in (0, 1), done.stdout + done.stderr
            seen.append([line for line in done.stdout.splitlines() if "jaxstatic-" in line])
        expected = [
            [] if reason is None else [
                f'use.py:{line}: error: Argument "cfg" to "f" cannot be static: {reason}; pass a hashable value '
                "or a builtin container of them  [jaxstatic-unhashable]"
                for line in (3, 4)
            ]
            for _, _, _, reason in _STEPS
        ]
        assert seen == expected
    finally:
        subprocess.run([*dmypy, "stop"], cwd=tmp_path, env=_env(), capture_output=True, timeout=60)


_JIT_LIB = """\
from functools import partial
from typing import Any

import jax


def f(x: jax.Array, cfg: Any) -> jax.Array:
    return x


step = jax.jit(f, static_argnames="cfg")


@partial(jax.jit, static_argnums=1)
def g(x: jax.Array, n: object) -> jax.Array:
    return x
"""

_JIT_USE = """\
import jax
import jax.numpy as jnp
from lib import f, g, step

step(jnp.zeros(1), {"a": 1})
g(jnp.zeros(1), [1])
local = jax.jit(f, static_argnames="cfg")
local(jnp.zeros(1), {"a": 1})
"""


def test_plain_jax_jit_call_sites_agree_cold_and_cached(tmp_path: Path) -> None:
    # The static parameters travel in the type jax.jit returns, which mypy caches from 1.18 on; before, only calls
    # in the module that applied jax.jit are checked, on every run alike.
    _write(tmp_path, skip_jax=False)
    (tmp_path / "lib.py").write_text(_JIT_LIB)
    (tmp_path / "use.py").write_text(_JIT_USE)
    cold = _mypy(tmp_path, "use.py", "lib.py")
    lines = [line.split(":")[1] for line in cold]
    assert lines == (["5", "6", "8"] if EXTRA_ATTRS_CACHED else ["8"])
    assert cold[-1] == (
        'use.py:8: error: Argument "cfg" to "local" is static under jax.jit and must be hashable: "dict" sets '
        "__hash__ to None; pass a hashable value (tuple, frozenset, frozen dataclass), or mark the parameter "
        "jaxstatic.Static and compile with jaxstatic.jit  [jaxstatic-unhashable]"
    )
    (tmp_path / "use.py").write_text(_JIT_USE + "\n# edited\n")
    assert _mypy(tmp_path, "use.py", "lib.py") == cold
    assert _mypy(tmp_path, "use.py", "lib.py") == cold
