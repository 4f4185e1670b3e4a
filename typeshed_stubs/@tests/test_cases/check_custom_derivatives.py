from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax.custom_derivatives import custom_jvp, custom_vjp
from typing_extensions import assert_type

x = jnp.ones(3)


@jax.custom_jvp
def softplus(x: jax.Array, beta: float) -> jax.Array:
    return jnp.log1p(jnp.exp(beta * x)) / beta


@softplus.defjvp
def softplus_jvp(primals: tuple[jax.Array, float], tangents: tuple[jax.Array, float]) -> tuple[jax.Array, jax.Array]:
    x, beta = primals
    return softplus(x, beta), jax.nn.sigmoid(beta * x) * tangents[0]


softplus_type: custom_jvp[[jax.Array, float], jax.Array] = softplus
assert_type(softplus(x, 1.0), jax.Array)
softplus(x)  # type: ignore
softplus(x, "1")  # type: ignore


@jax.custom_vjp
def clip_gradient(x: jax.Array, lo: float, hi: float) -> jax.Array:
    return x


def clip_fwd(x: jax.Array, lo: float, hi: float) -> tuple[jax.Array, tuple[float, float]]:
    return x, (lo, hi)


def clip_bwd(res: tuple[float, float], g: jax.Array) -> tuple[jax.Array, None, None]:
    return jnp.clip(g, *res), None, None


clip_gradient.defvjp(clip_fwd, clip_bwd)
assert_type(clip_gradient(x, -1.0, 1.0), jax.Array)
clip_gradient(x, -1.0)  # type: ignore


# nondiff_argnums. (`@functools.partial(jax.custom_vjp, nondiff_argnums=...)` keeps the parameters
# under mypy; pyright's partial support drops the type arguments of generic classes.)
def _apply(n: int, x: jax.Array) -> jax.Array:
    return x * n


apply_fn = jax.custom_vjp(_apply, nondiff_argnums=(0,))
apply_fn_type: custom_vjp[[int, jax.Array], jax.Array] = apply_fn
apply_fn_wrong: custom_vjp[[jax.Array, int], jax.Array] = apply_fn  # type: ignore
assert_type(apply_fn(2, x), jax.Array)
apply_fn(x, 2)  # type: ignore

# Custom-derivative functions go through the other transforms with their parameters.
assert_type(jax.jit(softplus)(x, 2.0), jax.Array)
assert_type(jax.grad(clip_gradient)(x, 0.0, 1.0), Any)
jax.jit(softplus)(x)  # type: ignore
