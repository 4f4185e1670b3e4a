"""Call sites of functions jitted by plain ``jax.jit``, with the jax stubs and without them."""

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
f(jnp.ones(1), {"a": 1})
"""


def _mypy(tmp_path: Path, stubs: bool, source: str = _SOURCE) -> list[str]:
    (tmp_path / "use.py").write_text(source)
    (tmp_path / "mypy.ini").write_text("[mypy]\nplugins = jaxstatic_mypy\nstrict = true\n")
    path = [str(_REPO / "typeshed_stubs")] if stubs else []
    env = {**os.environ, "MYPYPATH": os.pathsep.join([*path, str(_REPO)])}
    result = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "use.py"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    return [line for line in result.stdout.splitlines() if "[jaxstatic-" in line]


_DECLARED = (
    'use.py:15: error: Static argument "config" of "g" is not hashable: "dict" sets __hash__ to None; use a '
    "hashable type (tuple, frozenset, frozen dataclass) or jaxstatic.Static  [jaxstatic-unhashable]"
)
_DICT_VALUE = (
    'use.py:22: error: Argument "n" to "f" is static under jax.jit and must be hashable: "dict" sets __hash__ to '
    "None; pass a hashable value (tuple, frozenset, frozen dataclass), or mark the parameter jaxstatic.Static and "
    "compile with jaxstatic.jit  [jaxstatic-unhashable]"
)


def test_call_sites_of_plain_jax_jit_are_checked_with_the_stubs(tmp_path: Path) -> None:
    # The stubs give the call its parameters: Static[object] is judged by jaxstatic's rule, and what that rule
    # accepts but jax.jit cannot hash (a dict: jax.jit freezes nothing) by hash().
    assert _mypy(tmp_path, stubs=True) == [
        _DECLARED,
        'use.py:20: error: Argument "n" to "f" cannot be static: "Array" is an array; pass a hashable value or a '
        "builtin container of them  [jaxstatic-unhashable]",
        _DICT_VALUE,
    ]


def test_without_the_stubs_call_sites_are_judged_by_hash(tmp_path: Path) -> None:
    # jax's own types give the call no parameters: the static ones travel in the type jax.jit returns.
    assert _mypy(tmp_path, stubs=False) == [
        _DECLARED,
        'use.py:20: error: Argument "n" to "f" is static under jax.jit and must be hashable: "Array" is an array; '
        "pass a hashable value (tuple, frozenset, frozen dataclass), or mark the parameter jaxstatic.Static and "
        "compile with jaxstatic.jit  [jaxstatic-unhashable]",
        _DICT_VALUE,
    ]


_OPTIONS_FIRST = """\
import functools
from typing import Any

import jax
import jax.numpy as jnp


def f(x: jax.Array, cfg: Any) -> jax.Array:
    return x


def listy(x: jax.Array, sizes: list[int]) -> jax.Array:
    return x


x = jnp.ones(1)
jax.jit(static_argnames="cfg")(f)(x, {"a": 1})
jax.jit(static_argnames="sizes")(listy)
pmapped = jax.pmap(f, static_broadcasted_argnums=1)
pmapped(x, (1,))
pmapped(x, [1])
functools.partial(jax.pmap, static_broadcasted_argnums=1)(f)(x, {1})
"""


def test_options_first_and_pmap_with_the_stubs(tmp_path: Path) -> None:
    # The stubs type jax.pmap's result, so its call sites are judged as jax.jit's are.
    errors = _mypy(tmp_path, stubs=True, source=_OPTIONS_FIRST)
    value = (
        'error: Argument "{param}" to "{callee}" is static under {by} and must be hashable: "{cls}" sets __hash__ '
        "to None; pass a hashable value (tuple, frozenset, frozen dataclass), or mark the parameter "
        "jaxstatic.Static and compile with jaxstatic.jit  [jaxstatic-unhashable]"
    )
    assert errors == [
        "use.py:17: " + value.format(param="cfg", callee="f", by="jax.jit", cls="dict"),
        'use.py:18: error: Static argument "sizes" of "listy" is not hashable: "list" sets __hash__ to None; use a '
        "hashable type (tuple, frozenset, frozen dataclass) or jaxstatic.Static  [jaxstatic-unhashable]",
        "use.py:21: " + value.format(param="cfg", callee="pmapped", by="jax.pmap", cls="list"),
        "use.py:22: " + value.format(param="cfg", callee="f", by="jax.pmap", cls="set"),
    ]
