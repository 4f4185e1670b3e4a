"""JS004: jax.pmap(..., static_broadcasted_argnums=...), as a call and as a partial decorator."""

from functools import partial

import jax
import jax.numpy as jnp

TRACES: list[str] = []


@partial(jax.pmap, axis_name="i", static_broadcasted_argnums=(1,))
def total(x, scale):
    TRACES.append("total")
    return jax.lax.psum(x, "i") * scale


def shard_power(x, k):
    TRACES.append("shard_power")
    return x**k


mapped_power = jax.pmap(shard_power, "i", static_broadcasted_argnums=1, donate_argnums=0)


def run():
    n = jax.local_device_count()
    x = jnp.arange(2.0 * n).reshape(n, 2)
    return [total(x, 2), total(x, 2), mapped_power(x + 0, 3), mapped_power(x + 0, 3)]
