"""Quickstart: a static config dict holding a function, which plain ``jax.jit`` rejects.

Run: .venv/bin/python examples/quickstart.py
"""

from __future__ import annotations

import inspect
from string import ascii_uppercase
from typing import Any

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree

import jaxstatic as js
from jaxstatic import Static

key_length, key_vals = jax.random.split(jax.random.PRNGKey(314159))
lengths = jax.random.choice(key_length, jnp.arange(1, 20), (10,))
elements = {
    letter: jax.random.normal(k, (int(n),))
    for letter, k, n in zip(ascii_uppercase[:10], jax.random.split(key_vals, 10), lengths)
}
vals, unravel = ravel_pytree(elements)


@js.jit
def total(vals: jax.Array, config: Static[dict[str, Any]]) -> jax.Array:
    """Sum one entry of the raveled pytree, scaled: ``config`` is static, so it may hold functions."""
    scaled: jax.Array = config["fn"](vals)[config["letter"]].sum() * config["scale"]
    return scaled


if __name__ == "__main__":
    try:
        plain = inspect.unwrap(total)  # the undecorated function
        jax.jit(plain, static_argnames=("config",))(vals, {"fn": unravel, "letter": "B", "scale": 1.0})
    except ValueError as err:
        print("plain jax.jit:", str(err).splitlines()[0][:90], "...")

    print("total   =", total(vals, {"fn": unravel, "letter": "B", "scale": 1.0}))
    print("again   =", total(vals, {"fn": unravel, "letter": "B", "scale": 1.0}), "(an equal config, a new dict)")
    print("traces  =", total.trace_count, total.cache_info())
    print("changed =", total(vals, {"fn": unravel, "letter": "B", "scale": 2.0}))
    print("traces  =", total.trace_count)
    print("why     :", total.retraces[-1])
    print()
    print(js.trace_report())
