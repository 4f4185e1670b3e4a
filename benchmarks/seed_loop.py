"""The loop jaxstatic was started for: flat parameters, and a config dict holding the ``unravel`` function, rebuilt
on every step (as a training loop builds its config from settings each step or epoch).

``jax.jit`` cannot take the dict as a static argument ("Non-hashable static arguments are not supported"), so users
write ``jax.jit(functools.partial(step, config=config))`` inside the loop: a new function each step, so a trace and
a compile each step. Contenders, each running ``--steps`` steps of gradient descent on the same data:

- ``jaxstatic.jit`` with ``config: Static[dict]``, the dict rebuilt each step (equal dicts share one program);
- ``jax.jit`` over a ``functools.partial`` rebuilt each step (what users write when the dict cannot be static);
- ``jax.jit`` over one ``functools.partial``, hoisted out of the loop by hand (the best plain JAX does).

Each contender's first step (trace and compile) is left out of its median; the partial rebuilt each step has no
such first step, every step compiles. Prints median milliseconds per step (wall clock, each step's result waited
for) and the ratio to the hoisted ``jax.jit``, and checks that all three end with the same parameters.

Run: python benchmarks/seed_loop.py [--dim 2048] [--steps 30] [--rebuilt-steps 5]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import string
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

import jaxstatic as js
from jaxstatic import Static


def elements(dim: int) -> dict[str, jax.Array]:
    """The seed's data: ten named vectors of random lengths, ``dim`` values in all."""
    rng = np.random.default_rng(314159)
    cuts = np.sort(rng.choice(np.arange(1, dim), 9, replace=False))
    sizes = np.diff(np.concatenate([[0], cuts, [dim]]))
    return {letter: jnp.asarray(rng.normal(size=int(n)), dtype=jnp.float32)
            for letter, n in zip(string.ascii_uppercase, sizes)}


def loss(vals: jax.Array, config: dict[str, Any]) -> jax.Array:
    tree = config["fn"](vals)
    return sum((jnp.tanh(v) ** 2).sum() for v in tree.values()) * config["scale"]


def step(vals: jax.Array, config: dict[str, Any]) -> jax.Array:
    return vals - config["lr"] * jax.grad(loss)(vals, config)


def step_static(vals: jax.Array, config: Static[dict[str, Any]]) -> jax.Array:
    return step(vals, config)


def run(make_step: Callable[[dict[str, Any]], Callable[[jax.Array], jax.Array]], vals: jax.Array,
        unravel: Callable[..., Any], steps: int) -> tuple[jax.Array, list[float]]:
    """``steps`` steps, the config rebuilt before each; the time of each step, in ms."""
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        config = {"fn": unravel, "lr": 0.1, "scale": 1.0}  # rebuilt each step, as the loop builds it
        vals = jax.block_until_ready(make_step(config)(vals))
        times.append((time.perf_counter() - start) * 1e3)
    return vals, times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, default=2048, help="parameters, in ten vectors")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--rebuilt-steps", type=int, default=5, help="steps of the partial rebuilt each step "
                        "(each one compiles)")
    args = parser.parse_args()
    vals, unravel = ravel_pytree(elements(args.dim))

    stepped = js.jit(step_static)
    hoisted = jax.jit(functools.partial(step, config={"fn": unravel, "lr": 0.1, "scale": 1.0}))
    contenders: dict[str, tuple[Callable[[dict[str, Any]], Callable[[jax.Array], jax.Array]], int, int]] = {
        "jaxstatic.jit, Static[dict]": (lambda config: functools.partial(stepped, config=config), args.steps, 1),
        "jax.jit(partial) rebuilt each step": (lambda config: jax.jit(functools.partial(step, config=config)),
                                               args.rebuilt_steps, 0),
        "jax.jit(partial) hoisted by hand": (lambda config: hoisted, args.steps, 1),
    }
    results, medians = {}, {}
    for name, (make, steps, warm) in contenders.items():
        results[name], times = run(make, vals, unravel, steps)
        medians[name] = statistics.median(times[warm:])
    base = medians["jax.jit(partial) hoisted by hand"]
    device = jax.devices()[0]
    print(f"jax {jax.__version__} on {device.device_kind} ({device.platform}); {vals.size} parameters; median ms "
          "per step after the first (every step for the partial rebuilt each step)")
    print(f"{'contender':36} {'ms/step':>9} {'ratio':>8}")
    for name, ms in medians.items():
        print(f"{name:36} {ms:9.3f} {ms / base:8.2f}")
    print(f"jaxstatic.jit traces: {stepped.trace_count} over {args.steps} steps")
    ends = {name: np.asarray(v) for name, v in results.items()}
    same = [name for name in ends if name.endswith("rebuilt each step")]
    rebuilt, _ = run(contenders["jax.jit(partial) hoisted by hand"][0], vals, unravel, args.rebuilt_steps)
    np.testing.assert_allclose(ends[same[0]], np.asarray(rebuilt), rtol=1e-5)
    np.testing.assert_allclose(ends["jaxstatic.jit, Static[dict]"], ends["jax.jit(partial) hoisted by hand"],
                               rtol=1e-5)


if __name__ == "__main__":
    main()
