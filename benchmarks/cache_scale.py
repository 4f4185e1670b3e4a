"""The scale of the cache: jaxstatic.jit beside jax.jit (``static_argnums``) with many static keys.

Three shapes, each compiled by both contenders, interleaved key by key in one process:

- one function with many int keys (jaxstatic's exact-key lane, whose programs JAX's own cache holds);
- one function with many float keys (jaxstatic's general path, whose programs its own cache holds);
- many functions with a few int keys each.

For each: the mean time of a first call per key (trace and compile), the median of a second call (a hit), and, after both
contenders have filled their caches, the time of an unrelated ``jax.jit`` hit (what a full cache costs everything
else); then ``cache_info()`` of jaxstatic's functions, whose ``currsize`` never exceeds ``maxsize``.

Run: python benchmarks/cache_scale.py [--keys 200] [--functions 50] [--per-function 3] (a few minutes on a quiet 2-core
machine); ``--full`` runs the full size (10,000 keys, 1,000 functions: hours).
"""

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

import jaxstatic as js
from jaxstatic import Static

x = jnp.ones(8)


def timed_ms(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    jax.block_until_ready(fn())
    return (time.perf_counter() - start) * 1e3


def unrelated_hit_us(calls: int = 2000) -> float:
    """A hit of a jax.jit that has nothing to do with the caches filled."""
    g = UNRELATED
    jax.block_until_ready(g(x, 2))
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            g(x, 2)
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def _unrelated(x: jax.Array, n: int) -> jax.Array:
    return x - n


UNRELATED = jax.jit(_unrelated, static_argnums=(1,))


def make_pair() -> dict[str, Callable[[jax.Array, Any], Any]]:
    """A new function, jitted by each contender."""
    def f(x: jax.Array, n: Static[Any]) -> jax.Array:
        return x * n

    return {"jax.jit": jax.jit(f, static_argnums=(1,)), "jaxstatic.jit": js.jit(f)}


def run_shape(name: str, functions: list[dict[str, Callable[..., Any]]], keys: list[Any]) -> None:
    """First calls (compile) and second calls (hits) of every key of every function, the contenders interleaved."""
    compile_ms = {"jax.jit": 0.0, "jaxstatic.jit": 0.0}
    hit_us: dict[str, list[float]] = {"jax.jit": [], "jaxstatic.jit": []}
    for pair in functions:
        for key in keys:
            for contender, fn in pair.items():
                compile_ms[contender] += timed_ms(lambda fn=fn, key=key: fn(x, key))
    for pair in functions:
        for key in keys:
            for contender, fn in pair.items():
                start = time.perf_counter()
                fn(x, key)
                hit_us[contender].append((time.perf_counter() - start) * 1e6)
    n = len(functions) * len(keys)
    print(f"{name:44} {compile_ms['jax.jit'] / n:9.2f} {compile_ms['jaxstatic.jit'] / n:9.2f} "
          f"{compile_ms['jaxstatic.jit'] / compile_ms['jax.jit']:6.2f} {statistics.median(hit_us['jax.jit']):8.2f} "
          f"{statistics.median(hit_us['jaxstatic.jit']):8.2f} {unrelated_hit_us():10.2f}")
    info = functions[-1]["jaxstatic.jit"].cache_info()  # type: ignore[attr-defined]
    print(f"{'':44} jaxstatic cache_info() of the last function: {info}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=200, help="static keys of the one-function shapes")
    parser.add_argument("--functions", type=int, default=50, help="functions of the many-functions shape")
    parser.add_argument("--per-function", type=int, default=3, help="keys of each of those functions")
    parser.add_argument("--full", action="store_true", help="10,000 keys and 1,000 functions")
    args = parser.parse_args()
    if args.full:
        args.keys, args.functions = 10_000, 1_000
    print(f"jax {jax.__version__}; per key: first call (ms), hit (us); then a hit of an unrelated jax.jit (us, "
          f"{unrelated_hit_us():.2f} before any)")
    print(f"{'shape':44} {'jax ms':>9} {'js ms':>9} {'js/jax':>6} {'jax us':>8} {'js us':>8} {'unrelated':>10}")
    run_shape(f"one function, {args.keys} int keys (lane)", [make_pair()], list(range(args.keys)))
    run_shape(f"one function, {args.keys} float keys", [make_pair()], [i + 0.5 for i in range(args.keys)])
    run_shape(f"{args.functions} functions, {args.per_function} int keys each",
              [make_pair() for _ in range(args.functions)], list(range(args.per_function)))


if __name__ == "__main__":
    main()
