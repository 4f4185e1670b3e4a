"""Downstream code calling zoo: unmarked lines are correct and must check clean under every type checker; each line
ending in ``# mistake`` is a mistake every checker must report there. tests/test_checkers.py runs the checkers on
it."""

from __future__ import annotations

from collections.abc import Callable

import jax
import zoo
from typing_extensions import assert_type
from zoo import Activation, BFloat16, Dense, Float32, Layer

Array = jax.Array
x = jax.random.normal(jax.random.key(0), (2, 3))
y = jax.random.normal(jax.random.key(1), (2, 4))

# --- correct code -----------------------------------------------------------------------------------------------

layer = zoo.dense(3, 4, Float32)
checked_1 = assert_type(layer, Dense[Float32])
half = zoo.dense(3, 4, BFloat16)
out: Array = layer(x)
out = layer.scaled(x, 2.0)
out = half(x)
scaled_traces: int = layer.scaled.trace_count
net = zoo.compose([layer, Activation(), zoo.dense(4, 2, Float32)])  # ok, rejected by: pyright basedpyright
out = net(x)
as_layer: Layer = layer  # ok, rejected by: pyright basedpyright
as_fn: Callable[[Array], Array] = Activation("relu")  # ok, rejected by: pyright basedpyright
g = zoo.mse_grad(layer, x, y)
checked_2 = assert_type(g, Dense[Float32])
g = zoo.mse_grad(model=layer, x=x, y=y)
loss, g = zoo.mse_value_and_grad(layer, x, y)
checked_3 = assert_type(loss, Array)
layer = zoo.fit(layer, x, y)
made: Dense[Float32] = zoo.FACTORIES["dense"](3, 4)

# --- mistakes ---------------------------------------------------------------------------------------------------

layer("x")  # mistake
layer.scaled(x, "2")  # mistake
layer.scaled(x)  # mistake
count = layer.scaled.trace_counts  # mistake
zoo.dense(3, 4, str)  # mistake
bad_half: Dense[Float32] = zoo.dense(3, 4, BFloat16)  # mistake
bad_fn: Layer = layer.scaled  # mistake
bad_layer: Layer = Float32()  # mistake
zoo.mse_grad(half, x, y)  # mistake
zoo.mse_grad(model=layer, x=x)  # mistake
bad_g: Array = zoo.mse_grad(layer, x, y)  # mistake
bad_loss: Dense[Float32] = zoo.mse_value_and_grad(layer, x, y)[0]  # mistake
zoo.fit(half, x, y)  # mistake
Activation(3)  # mistake
