"""Pytree cost of ``jaxstatic.dataclass`` against ``jax.tree_util.register_dataclass`` and ``equinox.Module``.

The same model three ways: an MLP whose layers are ``Linear(w, b)`` nodes and whose activation is a static field,
with 10 leaves (5 layers) and 100 leaves (50 layers). Each operation runs every contender in turn (interleaved),
``ROUNDS`` times, each time ``CALLS`` calls; the table shows median microseconds per call and the ratios to
``register_dataclass``. Results are never waited for inside the timed loops, so jit rows are the Python-side cost
of a cache hit. Operations:

- flatten / unflatten: ``jax.tree_util.tree_flatten(model)`` and ``tree_unflatten(treedef, leaves)``;
- jax.jit hit / jaxstatic.jit hit: calling a jitted ``f(model, x)`` again with the same model;
- build: constructing the model from its layers (jaxstatic checks and freezes the static field here);
- dict static: the 10-leaf model with a 10-entry ``dict`` static field (a tuple of pairs for the others, which
  reject dicts), whose flatten freezes it again on every call to catch changes made in place.

Run: python benchmarks/dataclass.py [--rounds 41] [--calls 200]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from dispatch import samples_us  # benchmarks/ is the script's directory

import jaxstatic as js
from jaxstatic import Static

Activation = Callable[[jax.Array], jax.Array]


@js.dataclass
class JsLinear:
    w: jax.Array
    b: jax.Array


@js.dataclass
class JsMLP:
    layers: list[JsLinear]
    activation: Static[Activation]
    config: Static[Any] = None


@dataclasses.dataclass(frozen=True)
class RdLinear:
    w: jax.Array
    b: jax.Array


@dataclasses.dataclass(frozen=True)
class RdMLP:
    layers: list[RdLinear]
    activation: Activation
    config: Any = None


jax.tree_util.register_dataclass(RdLinear, data_fields=["w", "b"], meta_fields=[])
jax.tree_util.register_dataclass(RdMLP, data_fields=["layers"], meta_fields=["activation", "config"])


class EqLinear(eqx.Module):
    w: jax.Array
    b: jax.Array


class EqMLP(eqx.Module):
    layers: list[EqLinear]
    activation: Activation = eqx.field(static=True)
    config: Any = eqx.field(static=True, default=None)


KINDS: dict[str, tuple[type, type]] = {
    "register_dataclass": (RdLinear, RdMLP),
    "jaxstatic": (JsLinear, JsMLP),
    "equinox": (EqLinear, EqMLP),
}
CONFIG = {f"k{i}": float(i) for i in range(10)}


def model(kind: str, leaves: int, config: Any = None) -> Any:
    linear, mlp = KINDS[kind]
    layers = [linear(jnp.full((4, 4), float(i)), jnp.full((4,), float(i))) for i in range(leaves // 2)]
    if config is not None and kind != "jaxstatic":
        config = tuple(config.items())
    return mlp(layers, jnp.tanh, config)


def forward(m: Any, x: jax.Array) -> jax.Array:
    return x + m.layers[0].b


def operations(leaves: int, config: Any = None) -> dict[str, dict[str, Callable[[], Any]]]:
    models = {kind: model(kind, leaves, config) for kind in KINDS}
    flat = {kind: jax.tree_util.tree_flatten(m) for kind, m in models.items()}
    x = jnp.ones(4)
    jitted, js_jitted = jax.jit(forward), js.jit(forward)

    def bind(fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
        return lambda: fn(*args)

    ops = {
        "flatten": {k: bind(jax.tree_util.tree_flatten, m) for k, m in models.items()},
        "unflatten": {k: bind(jax.tree_util.tree_unflatten, flat[k][1], flat[k][0]) for k in models},
        "jax.jit hit": {k: bind(jitted, m, x) for k, m in models.items()},
        "jaxstatic.jit hit": {k: bind(js_jitted, m, x) for k, m in models.items()},
    }
    if config is None:
        layers = {k: list(m.layers) for k, m in models.items()}
        ops["build"] = {k: bind(KINDS[k][1], layers[k], jnp.tanh) for k in models}
    return ops


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    print(f"jax {jax.__version__}, equinox {eqx.__version__}; median us/call over {args.rounds} interleaved rounds "
          f"of {args.calls} calls; ratios of medians to register_dataclass, and of the best rounds (steadier on a "
          "busy machine)")
    print(f"{'case':36} {'reg_dc':>8} {'jaxstatic':>10} {'equinox':>9} {'js/rd':>7} {'eqx/rd':>7} {'best js/rd':>11}")
    cases = [(f"{n}-leaf", operations(n)) for n in (10, 100)]
    cases.append(("10-leaf, dict static", operations(10, CONFIG)))
    for size, ops in cases:
        for op, contenders in ops.items():
            samples = samples_us(contenders, args.rounds, args.calls)
            rd, ours, eq = (statistics.median(samples[k]) for k in ("register_dataclass", "jaxstatic", "equinox"))
            best = min(samples["jaxstatic"]) / min(samples["register_dataclass"])
            print(f"{size + ' ' + op:36} {rd:8.2f} {ours:10.2f} {eq:9.2f} {ours / rd:7.3f} {eq / rd:7.2f} "
                  f"{best:11.3f}")


if __name__ == "__main__":
    main()
