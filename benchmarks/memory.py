"""Memory a function made and jitted once leaves behind once it is gone: ``js.jit`` against ``jax.jit``.

Code that makes functions as it runs (a local function per call, ``js.jit(self.step)``, a lambda, a notebook cell
run again) jits each once and drops it. Each case makes ``N`` fresh local functions, jits each, calls it once (one
trace, one compile) and drops it; then collects garbage and counts the bytes still allocated (``tracemalloc``, after
a warm-up round so that one-off caches are not counted). "cleared" instead calls ``clear_cache()`` ``N`` times on one
``js.jit`` function (calling it again after each), the other way a program is made again. The table shows the
median bytes kept per function over the rounds and the ratio to ``jax.jit`` (with ``static_argnums`` for the same
static parameter), and the ``linecache`` entries left. What "cleared" keeps is each retrace's record
(``retraces``, the latest 1024 kept): bounded, where generated source once grew without end.

Run: python benchmarks/memory.py [--rounds 5] [--functions 150]
"""

from __future__ import annotations

import argparse
import gc
import linecache
import statistics
import tracemalloc
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

import jaxstatic as js
from jaxstatic import Static

X = jnp.ones(3)


def _fresh() -> Callable[..., Any]:
    def step(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    return step


def _fresh_float() -> Callable[..., Any]:
    def step(x: jax.Array, s: Static[float]) -> jax.Array:
        return x * s

    return step


def _jax_jit(count: int) -> None:
    for _ in range(count):
        jax.jit(_fresh(), static_argnums=1)(X, 2).block_until_ready()


def _js_jit(count: int) -> None:
    for _ in range(count):
        js.jit(_fresh())(X, 2).block_until_ready()


def _js_jit_float(count: int) -> None:  # a float static: the general path (generated dispatcher) rather than the lane
    for _ in range(count):
        js.jit(_fresh_float())(X, 2.5).block_until_ready()


_CLEARED = js.jit(_fresh())


def _js_cleared(count: int) -> None:
    for _ in range(count):
        _CLEARED.clear_cache()
        _CLEARED(X, 2).block_until_ready()


CASES: dict[str, Callable[[int], None]] = {
    "jax.jit": _jax_jit, "js.jit": _js_jit, "js.jit, float static": _js_jit_float,
    "js.jit clear_cache()": _js_cleared,
}


def _kept(case: Callable[[int], None], count: int) -> tuple[int, int]:
    """Bytes still allocated, and linecache entries added, after ``case(count)`` and a collection."""
    gc.collect()
    lines = len(linecache.cache)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    case(count)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return after - before, len(linecache.cache) - lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--functions", type=int, default=150)
    args = parser.parse_args()
    for case in CASES.values():
        case(10)  # warm-up: JAX's and jaxstatic's one-off caches
    kept: dict[str, list[int]] = {name: [] for name in CASES}
    entries: dict[str, int] = {}
    for _ in range(args.rounds):
        for name, case in CASES.items():
            size, entries[name] = _kept(case, args.functions)
            kept[name].append(size)
    base = statistics.median(kept["jax.jit"]) / args.functions
    print(f"{args.functions} functions jitted once and dropped, median of {args.rounds} rounds")
    print(f"{'case':<24}{'bytes kept each':>16}{'vs jax.jit':>12}{'linecache +':>13}")
    for name, sizes in kept.items():
        each = statistics.median(sizes) / args.functions
        print(f"{name:<24}{each:>16.0f}{each / base:>12.2f}{entries[name]:>13}")


if __name__ == "__main__":
    main()
