"""Cache-hit call cost of jaxstatic.pmap against jax.pmap(..., static_broadcasted_argnums=...) and
equinox.filter_pmap, on 8 CPU devices, measured in one process.

Each case runs every contender in turn (interleaved), ``ROUNDS`` times, each time ``CALLS`` calls; the table shows
the median microseconds per call and the ratios to jax.pmap given the same static value. Results are never waited
for inside the timed loop, so this is the Python-side cost of a call (the target for jaxstatic is <= 1.10x).

Run: python benchmarks/pmap.py [--rounds 15] [--calls 300]
"""

from __future__ import annotations

import os

# Before jax is imported: eight CPU devices to map over.
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import argparse
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from dispatch import measure  # benchmarks/ is the script's directory

import jaxstatic as js
from jaxstatic import Static

N = 8
a, b = jnp.arange(float(N)), jnp.arange(float(N)) + 1


def make_hypercube(a: jax.Array, b: jax.Array, c: float, c_func: Static[Callable[[float], float]]) -> jax.Array:
    arr = jnp.zeros((3, 3))
    arr += a
    arr *= b
    arr **= c_func(c)
    return arr


def double(c: float) -> float:
    return c * 2


def case_static_callable() -> dict[str, Callable[[], Any]]:
    """The request that started jaxstatic: a static callable beside an unmapped float."""
    axes = (0, 0, None, None)
    j = jax.pmap(make_hypercube, in_axes=axes, static_broadcasted_argnums=(3,))
    s = js.pmap(make_hypercube, in_axes=axes)
    e = eqx.filter_pmap(make_hypercube, in_axes=axes)
    return {"jax": lambda: j(a, b, 1.0, double), "jaxstatic": lambda: s(a, b, 1.0, double),
            "equinox": lambda: e(a, b, 1.0, double)}


def case_int() -> dict[str, Callable[[], Any]]:
    def f(x: jax.Array, y: jax.Array, n: Static[int]) -> jax.Array:
        return x * n + y

    j, s, e = jax.pmap(f, static_broadcasted_argnums=(2,)), js.pmap(f), eqx.filter_pmap(f)
    return {"jax": lambda: j(a, b, 3), "jaxstatic": lambda: s(a, b, 3), "equinox": lambda: e(a, b, 3)}


CONFIG = {f"k{i}": (float(i) if i % 3 else jnp.tanh) for i in range(10)}
CONFIG_TUPLE = tuple(sorted(CONFIG.items()))


def case_dict_config() -> dict[str, Callable[[], Any]]:
    """A 10-entry dict for jaxstatic and equinox; jax.pmap gets the equivalent pre-built tuple (it rejects dicts)."""
    def f(x: jax.Array, y: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        return x * dict(cfg)["k1"] + y

    j, s, e = jax.pmap(f, static_broadcasted_argnums=(2,)), js.pmap(f), eqx.filter_pmap(f)
    return {"jax": lambda: j(a, b, CONFIG_TUPLE), "jaxstatic": lambda: s(a, b, CONFIG),
            "equinox": lambda: e(a, b, CONFIG)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    cases = {"static callable (seed)": case_static_callable, "int static": case_int,
             "10-entry dict config": case_dict_config}
    print(f"jax {jax.__version__}, equinox {eqx.__version__}, {jax.local_device_count()} CPU devices; median us/call "
          f"over {args.rounds} interleaved rounds of {args.calls} calls")
    print(f"{'case':24} {'jax.pmap':>9} {'jaxstatic':>10} {'equinox':>9} {'js/jax':>7} {'eqx/jax':>8}")
    for name, make in cases.items():
        m = measure(make(), args.rounds, args.calls, settle=True)
        print(f"{name:24} {m['jax']:9.1f} {m['jaxstatic']:10.1f} {m['equinox']:9.1f} "
              f"{m['jaxstatic'] / m['jax']:7.3f} {m['equinox'] / m['jax']:8.2f}")


if __name__ == "__main__":
    main()
