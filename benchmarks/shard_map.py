"""Call cost of jaxstatic.shard_map against jax.shard_map and jax.jit(jax.shard_map(...)), on 8 CPU devices, in one
process.

Outside a jit, ``js.shard_map`` runs as ``jax.shard_map`` does: eagerly, its body over the shards' values on every
call (it keeps one ``jax.shard_map`` per static key, never a compiled program). The first case compares that with
``jax.shard_map`` given the same static value (the cost jaxstatic adds) and with ``jax.jit(jax.shard_map(...))``
(what an eager call costs against a compiled one, the program ``js.shard_map`` was before). The second compares a
cache-hit ``js.jit(js.shard_map(f))`` with ``jax.jit(jax.shard_map(...))``. Medians of interleaved rounds, in
microseconds per call, and the ratios to each case's reference (the first column).

Run: python benchmarks/shard_map.py [--rounds 7] [--calls 30]
"""

from __future__ import annotations

import os

# Before jax is imported: eight CPU devices to shard over.
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import argparse
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from dispatch import measure  # benchmarks/ is the script's directory
from jax.sharding import Mesh, PartitionSpec as P

import jaxstatic as js
from jaxstatic import Static

MESH = Mesh(np.array(jax.devices()[:8]), ("batch",))
x, w = jnp.ones((64, 16)), jnp.ones((16, 4))


def step(x: jax.Array, w: jax.Array, n: Static[int]) -> jax.Array:
    return jax.lax.psum(jnp.tanh(x @ w).sum() * n, "batch")


def _jax(f: Callable[..., Any]) -> Callable[..., Any]:
    return jax.shard_map(f, mesh=MESH, in_specs=(P("batch"), P()), out_specs=P())


def case_eager() -> dict[str, Callable[[], Any]]:
    plain, jitted = _jax(functools.partial(step, n=3)), jax.jit(_jax(functools.partial(step, n=3)))
    ours = js.shard_map(step, mesh=MESH, in_specs=(P("batch"), P()), out_specs=P())
    return {"jax.shard_map": lambda: plain(x, w), "js.shard_map": lambda: ours(x, w, 3),
            "jax.jit(jax.shard_map)": lambda: jitted(x, w)}


def case_under_jit() -> dict[str, Callable[[], Any]]:
    jitted = jax.jit(_jax(functools.partial(step, n=3)))
    ours = js.jit(js.shard_map(step, mesh=MESH, in_specs=(P("batch"), P()), out_specs=P()))
    return {"jax.jit(jax.shard_map)": lambda: jitted(x, w), "js.jit(js.shard_map)": lambda: ours(x, w, 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args()
    print(f"jax {jax.__version__}, {jax.local_device_count()} CPU devices; median us/call over {args.rounds} "
          f"interleaved rounds of {args.calls} calls")
    for name, make in {"outside a jit": case_eager, "cache hit under a jit": case_under_jit}.items():
        m = measure(make(), args.rounds, args.calls, settle=True)
        reference = next(iter(m.values()))
        print(f"{name}: " + ", ".join(f"{k} {v:.1f} ({v / reference:.3g}x)" for k, v in m.items()))


if __name__ == "__main__":
    main()
