"""JS004: jax.pmap(..., static_broadcasted_argnums=...), as a call and as a partial decorator."""

import jax
import jax.numpy as jnp
import jaxstatic as js
from jaxstatic import Donate, Static
from typing import Any

TRACES: list[str] = []


@js.pmap(axis_name="i")
def total(x, scale: Static[Any]):
    TRACES.append("total")
    return jax.lax.psum(x, "i") * scale


def shard_power(x: Donate[Any], k: Static[Any]):
    TRACES.append("shard_power")
    return x**k


mapped_power = js.pmap(shard_power, "i")


def run():
    n = jax.local_device_count()
    x = jnp.arange(2.0 * n).reshape(n, 2)
    return [total(x, 2), total(x, 2), mapped_power(x + 0, 3), mapped_power(x + 0, 3)]
