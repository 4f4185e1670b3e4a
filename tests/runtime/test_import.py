"""What ``import jaxstatic`` loads: what a call of a jitted function needs, the rest when first used
(``benchmarks/import_time.py`` measures the time)."""

from __future__ import annotations

import subprocess
import sys

from ._devices import cpu_env

_LEFT_FOR_LATER = ["typeguard", "jaxstatic.testing", "jaxstatic._testing", "jaxstatic._dataclass",
                   "jaxstatic._hidden", "jaxstatic._keytext", "jaxstatic._tree_diff", "jaxstatic._ad",
                   "jaxstatic._vmap_pmap", "jaxstatic._shard_map", "jaxstatic._aot"]


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env=cpu_env()).stdout


def test_importing_loads_nothing_else_and_a_hit_loads_nothing() -> None:
    code = (
        "import sys, jax, jax.numpy as jnp, jaxstatic as js\n"
        "from jaxstatic import Static\n"
        f"print(sorted(m for m in {_LEFT_FOR_LATER!r} if m in sys.modules))\n"
        "def f(x, n: Static[int]): return x * n\n"
        "g = js.jit(f); g(jnp.ones(2), 2)\n"  # the first call checks the value's type and looks for decorators
        "before = set(sys.modules); g(jnp.ones(2), 2); js.jit(f)(jnp.ones(2), 2)\n"
        "print(sorted(set(sys.modules) - before))"
    )
    assert _run(code).split() == ["[]", "[]"]


def test_every_public_name_is_there_when_asked_for() -> None:
    code = (
        "import jaxstatic as js\n"
        "missing = [n for n in js.__all__ if n not in dir(js)]\n"
        "ns = {}; exec('from jaxstatic import *', ns)\n"
        "print(missing, sorted(set(js.__all__) - set(ns)), js.grad.__module__, js.testing.__name__)"
    )
    assert _run(code).split() == ["[]", "[]", "jaxstatic._ad", "jaxstatic.testing"]


def test_an_unknown_name_is_an_attribute_error() -> None:
    import pytest

    import jaxstatic as js

    with pytest.raises(AttributeError, match="module 'jaxstatic' has no attribute 'jitt'"):
        js.jitt  # noqa: B018


def test_what_loads_later_comes_from_the_same_copy_of_the_package() -> None:
    # A copy imported under another name (vendored, or a benchmark's baseline) loads its own transforms on first
    # use, not those of the jaxstatic installed: their Static marks and their functions are that copy's.
    code = (
        "import importlib.util, sys, jaxstatic\n"
        "spec = importlib.util.spec_from_file_location('other', jaxstatic.__file__,\n"
        "    submodule_search_locations=[jaxstatic.__path__[0]])\n"
        "other = importlib.util.module_from_spec(spec); sys.modules['other'] = other; spec.loader.exec_module(other)\n"
        "print(other.vmap.__module__, other.testing.__name__, jaxstatic.vmap.__module__)"
    )
    assert _run(code).split() == ["other._vmap_pmap", "other.testing", "jaxstatic._vmap_pmap"]
