"""Cache-hit cost of jaxstatic's transforms under js.jit, against hand-written jax and equinox, in one process.

Each case builds the same computation three ways: jaxstatic (``js.jit(js.value_and_grad(loss))``, Static read from
the signature), plain jax with the same statics (``jax.jit(jax.value_and_grad(loss), static_argnames=...)``; a dict
config given to it as the equivalent pre-built hashable tuple, since it rejects dicts) and equinox
(``eqx.filter_jit(eqx.filter_value_and_grad(loss))``, where every non-array is static). The contenders run
interleaved, ``--rounds`` times ``--calls`` calls each, and the table shows median microseconds per call and the
ratios to jax. Under ``js.jit`` the inner transform costs nothing per call (the jit's program holds it), so the ratio
is the jit's dispatch.

To add a case (``js.jit(js.vmap(f))``, ...): write a function returning ``{"jax": ..., "jaxstatic": ...,
"equinox": ...}`` (equinox may be left out) of zero-argument calls, and list it in ``CASES``.

Run: python benchmarks/transforms.py [--rounds 15] [--calls 2000]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from dispatch import measure

import jaxstatic as js
from jaxstatic import Static

params, x = jnp.linspace(-1.0, 1.0, 16), jnp.ones(16)
CONFIG = {"act": jnp.tanh, "scale": 2.0, "depth": 3}
CONFIG_TUPLE = tuple(sorted(CONFIG.items(), key=lambda kv: kv[0]))


def case_value_and_grad_int() -> dict[str, Callable[[], Any]]:
    def loss(params: jax.Array, x: jax.Array, n: Static[int]) -> jax.Array:
        return jnp.sum((params * x) ** n)

    j = jax.jit(jax.value_and_grad(loss), static_argnames=("n",))
    s = js.jit(js.value_and_grad(loss))
    e = eqx.filter_jit(eqx.filter_value_and_grad(loss))
    return {"jax": lambda: j(params, x, 2), "jaxstatic": lambda: s(params, x, 2), "equinox": lambda: e(params, x, 2)}


def case_value_and_grad_dict() -> dict[str, Callable[[], Any]]:
    def loss(params: jax.Array, x: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        cfg = dict(cfg)
        for _ in range(cfg["depth"]):
            params = cfg["act"](params * x)
        return jnp.sum(params) * cfg["scale"]

    j = jax.jit(jax.value_and_grad(loss), static_argnames=("cfg",))
    s = js.jit(js.value_and_grad(loss))
    e = eqx.filter_jit(eqx.filter_value_and_grad(loss))
    return {"jax": lambda: j(params, x, CONFIG_TUPLE), "jaxstatic": lambda: s(params, x, CONFIG),
            "equinox": lambda: e(params, x, CONFIG)}


def case_value_and_grad_aux_keyword() -> dict[str, Callable[[], Any]]:
    def loss(params: jax.Array, x: jax.Array, *, act: Static[Callable[..., Any]] = jnp.tanh
             ) -> tuple[jax.Array, jax.Array]:
        y = act(params * x)
        return jnp.sum(y), y

    j = jax.jit(jax.value_and_grad(loss, has_aux=True), static_argnames=("act",))
    s = js.jit(js.value_and_grad(loss, has_aux=True))
    e = eqx.filter_jit(eqx.filter_value_and_grad(loss, has_aux=True))
    return {"jax": lambda: j(params, x, act=jnp.sin), "jaxstatic": lambda: s(params, x, act=jnp.sin),
            "equinox": lambda: e(params, x, act=jnp.sin)}


def case_grad_of_checkpoint() -> dict[str, Callable[[], Any]]:
    def loss(params: jax.Array, x: jax.Array, n: Static[int]) -> jax.Array:
        return jnp.sum(jnp.sin(params * x) ** n)

    j = jax.jit(jax.grad(jax.checkpoint(loss, static_argnums=(2,))), static_argnames=("n",))
    s = js.jit(js.grad(js.checkpoint(loss)))
    e = eqx.filter_jit(eqx.filter_grad(eqx.filter_checkpoint(loss)))
    return {"jax": lambda: j(params, x, 2), "jaxstatic": lambda: s(params, x, 2), "equinox": lambda: e(params, x, 2)}


def case_grad_of_custom_vjp() -> dict[str, Callable[[], Any]]:
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x**n

    def fwd(x: jax.Array, n: int) -> tuple[jax.Array, jax.Array]:
        return x**n, x

    def bwd(n: int, x: jax.Array, g: jax.Array) -> tuple[jax.Array]:
        return (n * x ** (n - 1) * g,)

    theirs = jax.custom_vjp(f, nondiff_argnums=(1,))
    theirs.defvjp(fwd, bwd)
    ours = js.custom_vjp(f)
    ours.defvjp(fwd, bwd)

    def loss_jax(params: jax.Array, n: int) -> jax.Array:
        return jnp.sum(theirs(params, n))

    def loss_js(params: jax.Array, n: Static[int]) -> jax.Array:
        return jnp.sum(ours(params, n))

    j = jax.jit(jax.grad(loss_jax), static_argnames=("n",))
    s = js.jit(js.grad(loss_js))
    return {"jax": lambda: j(params, 3), "jaxstatic": lambda: s(params, 3)}


CASES: dict[str, Callable[[], dict[str, Callable[[], Any]]]] = {
    "jit(value_and_grad), int": case_value_and_grad_int,
    "jit(value_and_grad), dict": case_value_and_grad_dict,
    "jit(value_and_grad aux), kw": case_value_and_grad_aux_keyword,
    "jit(grad(checkpoint)), int": case_grad_of_checkpoint,
    "jit(grad(custom_vjp)), int": case_grad_of_custom_vjp,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    print(f"jax {jax.__version__}, equinox {eqx.__version__}; median us/call over {args.rounds} interleaved rounds "
          f"of {args.calls} calls (cache hits)")
    print(f"{'case':30} {'jax':>8} {'jaxstatic':>10} {'equinox':>9} {'js/jax':>7} {'eqx/jax':>8}")
    for name, make in CASES.items():
        m = measure(make(), args.rounds, args.calls)
        eqx_us, eqx_ratio = (f"{m['equinox']:9.2f}", f"{m['equinox'] / m['jax']:8.2f}") if "equinox" in m else (
            f"{'-':>9}", f"{'-':>8}")
        print(f"{name:30} {m['jax']:8.2f} {m['jaxstatic']:10.2f} {eqx_us} {m['jaxstatic'] / m['jax']:7.3f} "
              f"{eqx_ratio}")


if __name__ == "__main__":
    main()
