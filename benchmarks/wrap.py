"""What making a jitted function costs: ``js.jit(f)`` of a function made before, and ``js.jit(make_train(config))``
of a closure made again over an equal 20-entry config (read and frozen when it is wrapped, so that it shares the
programs of the one made before), beside ``jax.jit`` of the same closure; then a wrapper made and called once, as a
sweep or a notebook cell run again does (a hit where the closure shares, a trace and a compile where it cannot).

Prints the median microseconds per wrapper over ``--rounds`` rounds. Run it with another checkout's interpreter to
compare (``/path/to/other/.venv/bin/python benchmarks/wrap.py``): the script imports the jaxstatic it finds.

Run: python benchmarks/wrap.py [--rounds 7] [--n 200] [--calls 20]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

import jaxstatic as js

CONFIG = {f"k{i}": float(i) for i in range(18)} | {"LR": 0.1, "ENV": "CartPole-v1"}


def make_train(config: dict[str, Any]) -> Callable[[jax.Array], jax.Array]:
    def train(x: jax.Array) -> jax.Array:
        return x * config["LR"] + config["k3"]

    return train


def step(x: jax.Array) -> jax.Array:
    return x * 2


def _per_call(fn: Callable[[], Any], n: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    x = jnp.ones(3)
    js.jit(step)(x)
    js.jit(make_train(dict(CONFIG)))(x)
    cases = {
        "js.jit(f), f made before": (lambda: js.jit(step), args.n),
        "js.jit(make_train(config)), an equal config": (lambda: js.jit(make_train(dict(CONFIG))), args.n),
        "jax.jit(make_train(config))": (lambda: jax.jit(make_train(dict(CONFIG))), args.n),
        "js.jit(make_train(config))(x), made and called": (lambda: js.jit(make_train(dict(CONFIG)))(x), args.calls),
        "jax.jit(make_train(config))(x), made and called": (lambda: jax.jit(make_train(dict(CONFIG)))(x),
                                                            args.calls),
    }
    print(f"jaxstatic from {js.__file__}")
    for name, (fn, n) in cases.items():
        print(f"{name:50s} {_per_call(fn, n, args.rounds):10.1f} us")


if __name__ == "__main__":
    main()
