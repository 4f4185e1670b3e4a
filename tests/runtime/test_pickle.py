"""Pickling as ``jax.jit`` functions pickle: module-level transformed functions by reference (themselves, their
programs kept), local and ``__main__`` ones by value under cloudpickle, loadable in a fresh process."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import cloudpickle
import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static

from ._devices import cpu_env


@js.jit
def scaled(x: jax.Array, n: Static[int]) -> jax.Array:
    return x * n


@pytest.mark.parametrize("module", [pickle, cloudpickle], ids=["pickle", "cloudpickle"])
def test_a_module_level_function_pickles_as_itself_without_a_retrace(module: object) -> None:
    scaled(jnp.ones(2), 3)
    traces = scaled.trace_count
    loaded = pickle.loads(module.dumps(scaled))  # type: ignore[attr-defined]
    assert loaded is scaled
    assert loaded(jnp.ones(2), 3).tolist() == [3.0, 3.0]
    assert scaled.trace_count == traces


def test_a_local_function_is_refused_by_pickle_as_jax_jit_is() -> None:
    def local(x: jax.Array, n: Static[int]) -> jax.Array:
        return x + n

    for f in (jax.jit(local, static_argnums=1), js.jit(local)):
        with pytest.raises((pickle.PicklingError, AttributeError), match="local"):
            pickle.dumps(f)


def test_a_local_stack_round_trips_by_value_under_cloudpickle() -> None:
    def power(x: jax.Array, n: Static[int]) -> jax.Array:
        return jnp.sum(x**n)

    f = js.jit(js.grad(power), max_traces=4)
    loaded = cloudpickle.loads(cloudpickle.dumps(f))
    assert loaded is not f and isinstance(loaded, js.JitFunction)
    assert loaded(jnp.arange(3.0), 2).tolist() == [0.0, 2.0, 4.0]
    assert loaded.trace_count == 1 and f.trace_count == 0  # its own programs: the function is a copy
    assert loaded.cache_info().maxsize == 8192


def test_a_custom_vjp_keeps_its_rules_by_value() -> None:
    def clip(x: jax.Array, hi: Static[float]) -> jax.Array:
        return jnp.minimum(x, hi)

    f = js.custom_vjp(clip)
    f.defvjp(lambda x, hi: (clip(x, hi), None), lambda hi, res, g: (g * 10,))
    loaded = cloudpickle.loads(cloudpickle.dumps(f))
    assert jax.grad(lambda x: loaded(x, 1.0))(0.5) == 10.0


SCRIPT = """
import sys
import cloudpickle
import jax
import jax.numpy as jnp
import jaxstatic as js
from jaxstatic import Static

@js.jit
def scale(x: jax.Array, n: Static[int]) -> jax.Array:
    return x * n

def make():
    offset = 10.0

    @js.jit
    def shifted(x: jax.Array, cfg: Static[dict]) -> jax.Array:
        return x * cfg["k"] + offset

    return shifted

with open(sys.argv[1], "wb") as out:
    cloudpickle.dump([scale, make(), js.vmap(make())], out)
"""

LOAD = """
import sys
import cloudpickle
import jax.numpy as jnp

with open(sys.argv[1], "rb") as f:
    scale, shifted, mapped = cloudpickle.load(f)
print(scale(jnp.ones(2), 3).tolist(), shifted(jnp.ones(2), {"k": 2.0}).tolist(),
      mapped(jnp.ones((2, 1)), {"k": 3.0}).tolist(), scale.trace_count, type(scale).__name__)
"""


def test_main_and_local_functions_load_in_a_fresh_process(tmp_path: Path) -> None:
    script, payload = tmp_path / "make.py", tmp_path / "fns.pkl"
    script.write_text(textwrap.dedent(SCRIPT))
    subprocess.run([sys.executable, str(script), str(payload)], check=True, timeout=300, env=cpu_env())
    done = subprocess.run([sys.executable, "-c", LOAD, str(payload)], check=True, timeout=300, capture_output=True,
                          text=True, env=cpu_env())
    assert done.stdout.split("\n")[0] == "[3.0, 3.0] [12.0, 12.0] [[13.0], [13.0]] 1 JitFunction"
