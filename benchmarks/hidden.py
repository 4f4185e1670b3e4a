"""What looking for hidden ``Static`` parameters costs: decoration and first call, with the check and without it.

The check runs where a transform reads a function's layout (the first call of a bare ``@js.jit``; the decoration
when options name parameters) and where a program's body is built (once per static key); the cache-hit path never
runs it (``dispatch.py`` measures that path). "decoration" passes ``donate_argnums=()`` so that the layout is read
then, and isolates the check; "first call" is a bare ``js.jit`` up to its first result (trace and compile included).
"without" swaps both hooks for no-ops in the same process, interleaved round by round, so the ratio is what the
check adds. Warnings are filtered out ("ignore"), as a project that has seen them would; ``jax.jit`` is printed for
scale.

Run: python benchmarks/hidden.py [--rounds 15] [--decorations 200]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import statistics
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp

import jaxstatic as js
from jaxstatic import Static, _hidden


def log_calls(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


class Logged:
    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


def make_static() -> Callable[..., Any]:
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    return f


def make_plain() -> Callable[..., Any]:
    def f(x: jax.Array, n: int) -> jax.Array:
        return x * n

    return f


CASES: dict[str, Callable[[], Callable[..., Any]]] = {
    "Static visible": make_static,
    "no Static": make_plain,
    "functools.wraps wrapper": lambda: functools.wraps(f := make_static())(log_calls(f)),
    "hidden: (*args, **kwargs)": lambda: log_calls(make_static()),
    "hidden: class-based": lambda: Logged(make_static()),
    "hidden: two stacked": lambda: log_calls(log_calls(make_static())),
}


@contextlib.contextmanager
def check(enabled: bool) -> Iterator[None]:
    saved = _hidden.warn_if_hidden, _hidden.explaining
    if not enabled:
        _hidden.warn_if_hidden = lambda fn, static, transform="": None  # type: ignore[assignment]
        _hidden.explaining = lambda fn, static, transform="": fn  # type: ignore[assignment]
    try:
        yield
    finally:
        _hidden.warn_if_hidden, _hidden.explaining = saved


def decoration_us(make: Callable[[], Callable[..., Any]], enabled: bool, count: int) -> float:
    fns = [make() for _ in range(count)]  # distinct functions, as in a module full of decorated ones
    with check(enabled):
        start = time.perf_counter()
        for fn in fns:
            js.jit(fn, donate_argnums=())
        return (time.perf_counter() - start) / count * 1e6


def jax_decoration_us(make: Callable[[], Callable[..., Any]], count: int) -> float:
    fns = [make() for _ in range(count)]
    start = time.perf_counter()
    for fn in fns:
        jax.jit(fn, donate_argnums=())
    return (time.perf_counter() - start) / count * 1e6


def first_call_ms(make: Callable[[], Callable[..., Any]], enabled: bool) -> float:
    """Decoration, trace and compile of a new function, up to its result."""
    x = jnp.ones(8)
    fn = make()
    with check(enabled):
        start = time.perf_counter()
        jax.block_until_ready(js.jit(fn)(x, 3))
        return (time.perf_counter() - start) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--decorations", type=int, default=200)
    args = parser.parse_args()
    warnings.simplefilter("ignore", js.HiddenStaticWarning)
    print(f"jax {jax.__version__}; medians over {args.rounds} interleaved rounds")
    print(f"{'case':27} {'decoration us: jax.jit':>22} {'js without':>10} {'js with':>8} {'ratio':>6}   "
          f"{'first call ms: without':>22} {'with':>6} {'ratio':>6}")
    for name, make in CASES.items():
        dec: dict[str, list[float]] = {"jax": [], "off": [], "on": []}
        first: dict[str, list[float]] = {"off": [], "on": []}
        for _ in range(args.rounds):
            dec["jax"].append(jax_decoration_us(make, args.decorations))
            for key, enabled in (("off", False), ("on", True)):
                dec[key].append(decoration_us(make, enabled, args.decorations))
                first[key].append(first_call_ms(make, enabled))
        d = {k: statistics.median(v) for k, v in dec.items()}
        f = {k: statistics.median(v) for k, v in first.items()}
        print(f"{name:27} {d['jax']:22.2f} {d['off']:10.2f} {d['on']:8.2f} {d['on'] / d['off']:6.2f}   "
              f"{f['off']:22.2f} {f['on']:6.2f} {f['on'] / f['off']:6.2f}")


if __name__ == "__main__":
    main()
