"""Cache-hit cost of jaxstatic.jit(jaxstatic.vmap(f)) against jax.jit(jax.vmap(...)) with the same statics and
equinox.filter_jit(equinox.filter_vmap(...)), measured in one process, interleaved (``dispatch.measure``).

The vmap runs only while the jit traces, so a cache hit should cost what jaxstatic.jit alone costs. The last rows
call the vmap outside any jit, where ``jax.vmap`` traces the body on every call: there jaxstatic adds its static key
and a lookup to JAX's own work.

Run: python benchmarks/vmap.py [--rounds 15] [--calls 2000]
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from dispatch import measure  # benchmarks/ is the script's directory

import jaxstatic as js
from jaxstatic import Static

xs, ys = jnp.ones((16, 8)), jnp.ones((16, 8))
Contenders = dict[str, Callable[[], Any]]


def _jitted(f: Callable[..., Any], in_axes: tuple[Any, ...], static: tuple[str, ...],
            *statics: Any) -> Contenders:
    """The three contenders, each called as ``fn(xs, ys, *statics)``."""
    j = jax.jit(jax.vmap(f, in_axes=in_axes), static_argnames=static)
    s, e = js.jit(js.vmap(f)), eqx.filter_jit(eqx.filter_vmap(f, in_axes=in_axes))
    return {"jax": lambda: j(xs, ys, *statics), "jaxstatic": lambda: s(xs, ys, *statics),
            "equinox": lambda: e(xs, ys, *statics)}


def case_int() -> Contenders:
    def f(x: jax.Array, y: jax.Array, n: Static[int]) -> jax.Array:
        return x * n + y

    return _jitted(f, (0, 0, None), ("n",), 3)


def case_function() -> Contenders:
    def f(x: jax.Array, y: jax.Array, act: Static[Callable[[jax.Array], jax.Array]]) -> jax.Array:
        return act(x) + y

    return _jitted(f, (0, 0, None), ("act",), jnp.tanh)


def case_four_statics() -> Contenders:
    def f(x: jax.Array, y: jax.Array, n: Static[int], mode: Static[str], flag: Static[bool],
          act: Static[Callable[[jax.Array], jax.Array]]) -> jax.Array:
        return act(x * n + y) if flag and mode == "train" else x

    return _jitted(f, (0, 0, None, None, None, None), ("n", "mode", "flag", "act"), 3, "train", True, jnp.tanh)


CONFIG = {f"k{i}": (float(i) if i % 3 else jnp.tanh) for i in range(10)}
CONFIG_TUPLE = tuple(sorted(CONFIG.items()))


def case_dict_config() -> Contenders:
    """A 10-entry dict for jaxstatic and equinox; jax.jit gets the equivalent pre-built tuple (it rejects dicts)."""
    def f(x: jax.Array, y: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        return x * dict(cfg)["k1"] + y

    out = _jitted(f, (0, 0, None), ("cfg",), CONFIG)
    j = jax.jit(jax.vmap(f, in_axes=(0, 0, None)), static_argnames=("cfg",))
    out["jax"] = lambda: j(xs, ys, CONFIG_TUPLE)
    return out


def case_outside_jit() -> Contenders:
    def f(x: jax.Array, y: jax.Array, n: Static[int]) -> jax.Array:
        return x * n + y

    j, s, e = jax.vmap(functools.partial(f, n=3)), js.vmap(f), eqx.filter_vmap(f)
    return {"jax": lambda: j(xs, ys), "jaxstatic": lambda: s(xs, ys, 3), "equinox": lambda: e(xs, ys, 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    cases = {
        "jit(vmap), int static": case_int,
        "jit(vmap), function static": case_function,
        "jit(vmap), four statics": case_four_statics,
        "jit(vmap), 10-entry dict": case_dict_config,
        "vmap alone, int static": case_outside_jit,
    }
    print(f"jax {jax.__version__}, equinox {eqx.__version__}; median us/call over {args.rounds} interleaved rounds "
          f"of {args.calls} calls (vmap alone: a tenth as many)")
    print(f"{'case':28} {'jax':>9} {'jaxstatic':>10} {'equinox':>9} {'js/jax':>7} {'eqx/jax':>8}")
    for name, make in cases.items():
        calls = args.calls if name.startswith("jit") else max(args.calls // 10, 1)
        m = measure(make(), args.rounds, calls)
        print(f"{name:28} {m['jax']:9.2f} {m['jaxstatic']:10.2f} {m['equinox']:9.2f} "
              f"{m['jaxstatic'] / m['jax']:7.3f} {m['equinox'] / m['jax']:8.2f}")


if __name__ == "__main__":
    main()
