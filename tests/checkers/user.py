"""Downstream code calling mylib: every line without a mark is correct and must check clean under every type
checker; each line ending in ``# mistake`` is a typical mistake that every checker must report there (``# mistake:
plugin``: a value check only the mypy plugin makes). tests/test_checkers.py runs the checkers on it."""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import mylib

import jaxstatic as js
from jaxstatic import Static

x = jax.random.normal(jax.random.key(0), (3,))
w = jax.random.normal(jax.random.key(1), (3,))
p = mylib.Params(w)

# --- correct code -----------------------------------------------------------------------------------------------

a: jax.Array = mylib.scale(x, 2)
a = mylib.scale(x, 2, mode="eval")
a = mylib.scale(x, n=3)
count: int = mylib.scale.trace_count
info: js.CacheInfo = mylib.scale.cache_info()
a = mylib.configured(x, {"scale": 2.0})
a = mylib.shift(x, 1.0)
g: jax.Array = mylib.grad_loss(w, x, 2)
value_grad: tuple[jax.Array, jax.Array] = mylib.value_and_grad_loss(w, x, 2)
a = mylib.clip(x, 1.0, w)
params: dict[str, jax.Array] = mylib.train_step({"w": w}, x, 0.1)
a = mylib.replicate(x[None], 2)
scaler = mylib.make_scaler(2.0)
a = mylib.make_shifter(1.0)(x, 2)
a = mylib.straight_through(x, "round")
a = scaler(x, 3)
layer = mylib.Layer(w, jnp.tanh)
act: Callable[[jax.Array], jax.Array] = layer.activation
a = p.apply(x, 2)
a = p(x, act="tanh")
a = mylib.Params.apply(p, x, 2)
a = p.rows(jnp.stack([x, x]))
rows_count: int = p.rows.trace_count
a = mylib.Model(2).apply(x)
a = mylib.Model(2).apply.lower(x).compile()(x)
method_count: int = p.apply.trace_count
a = p.apply.lower(x, 2).compile()(x, 2)
compiled = mylib.scale.lower(x, 3).compile()
a = compiled(x, 3)
lowered_text: str = mylib.scale.lower(x, 3).as_text()
a = js.jit(mylib.scale)(x, 2)
a = jax.vmap(mylib.scale, in_axes=(0, None))(x, 2)
apply: Callable[[jax.Array, int], jax.Array] = p.apply
as_callable: Callable[[jax.Array, int], jax.Array] = mylib.scale
mylib.scale.clear_cache()


def local(x: jax.Array, n: Static[int]) -> jax.Array:
    return x * n


def factory() -> js.JitFunction[[jax.Array, int], jax.Array]:
    return js.jit(local)


a = factory()(x, 1)
a = mylib.tagged(x, ("any", "hashable", 1))
tagged = mylib.Tagged(w, tag="t")

# --- mistakes ---------------------------------------------------------------------------------------------------

mylib.scale(x, "2")  # mistake
mylib.scale(x)  # mistake
mylib.scale(x, 2, 3)  # mistake
mylib.scale(x, 2, mood="eval")  # mistake
mylib.scale(x, 2, mode=1)  # mistake
s: str = mylib.scale(x, 2)  # mistake
count = mylib.scale.trace_counts  # mistake
mylib.configured(x, {"scale": "big"})  # mistake
mylib.configured(x, {"scale": [1.0]})  # mistake
mylib.shift(x, "1")  # mistake
mylib.grad_loss(w, x, "2")  # mistake
mylib.grad_loss(w, x)  # mistake
mylib.value_and_grad_loss(w, x, n="2")  # mistake
mylib.clip(x, "1", w)  # mistake
mylib.clip(x, 1.0)  # mistake
mylib.train_step(w, x, 0.1)  # mistake
mylib.replicate(x, 2.5)  # mistake
mylib.make_scaler(2.0)(x, "3")  # mistake
mylib.make_scaler("2")  # mistake
mylib.make_shifter(1.0)(x, 2.0)  # mistake
mylib.straight_through(x, 1)  # mistake
mylib.Layer(w)  # mistake
mylib.Layer(w, jnp.tanh, scale="big")  # mistake
layer.scale = 2.0  # mistake
p.apply(x, "2")  # mistake
p.apply(p, x, 2)  # mistake
p(x, act=1)  # mistake
count = p.apply.trace_counts  # mistake
p.rows.lower(x)  # mistake
mylib.Model(2).apply(x, 2)  # mistake
p.apply.lower(x, "2")  # mistake
mylib.scale.lower(x, "3")  # mistake
compiled(x, "3")  # mistake
mylib.scale(x, {"n": 2})  # mistake
mylib.tagged(x, x)  # mistake: plugin
mylib.Tagged(w, tag=w)  # mistake: plugin
