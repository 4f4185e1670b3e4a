"""Downstream code calling optlib: unmarked lines are correct and must check clean under every type checker; each line
ending in ``# mistake`` is a mistake every checker must report there. tests/test_checkers.py runs the checkers on it."""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import optlib
from optlib import MLP, SGD, Params, SGDConfig, Trainer

import jaxstatic as js

Array = jax.Array
x = jax.random.normal(jax.random.key(0), (3,))
w = jax.random.normal(jax.random.key(1), (3,))
cfg = SGDConfig(lr=0.1)
params: Params = {"w": w}

# --- correct code -----------------------------------------------------------------------------------------------

g: Params = optlib.sgd_grad(cfg, params, x)
gw: Array = g["w"]
value, grads = optlib.sgd_value_and_grad(cfg, params, x)
v: Array = value
grads_w: Array = grads["w"]
g = optlib.weighted_grad(w, params, x)
plain: Array = optlib.plain_grad(w, x)
params = SGD(cfg).update(params, x)
params = SGD(cfg).update_weighted(w, params, x)
loss, params = SGD(cfg).loss_and_update(params, x)

trainer = Trainer(params)
params = trainer.step(params)
step_count: int = trainer.step.trace_count
float_trainer = Trainer(w, lr=0.5)
state: Array = float_trainer.step(w)
retrace_count: int = len(trainer.step.retraces)

mlp = MLP(w, w)
a: Array = mlp(x)
a = optlib.apply_twice(mlp, x)  # ok, rejected by: pyright basedpyright
a = optlib.apply_callable(mlp, x)  # ok, rejected by: pyright basedpyright
a = optlib.run_layer(mlp, x)  # ok, rejected by: pyright basedpyright
as_protocol: optlib.ArrayFn = mlp  # ok, rejected by: pyright basedpyright
as_callable: Callable[[Array], Array] = mlp  # ok, rejected by: pyright basedpyright
a = optlib.apply_twice(mlp.__call__, x)  # the bound method: a Protocol's __call__ and a Callable under every checker
a = optlib.apply_callable(mlp.__call__, x)
mlp_call: js.JitMethod[[Array], Array] = mlp.__call__
call_count: int = mlp.__call__.trace_count
initial: MLP = MLP.init(3)
a = MLP.activation(x)
a = mlp.activation(x)
a = mlp.forward(x)
forward_count: int = mlp.forward.trace_count
a = optlib.apply_callable(MLP.activation, x)

mean: Array = optlib.moments(x)  # ok, rejected by: ty
mean_var: tuple[Array, Array] = optlib.moments(x, True)  # ok, rejected by: mypy pyright basedpyright ty
mean = optlib.moments_of(x)  # overloads kept under every checker: a plain function over a jitted one
mean_var = optlib.moments_of(x, True)
moments_count: int = optlib.moments.trace_count

decayed = optlib.make_decayed(0.9)
a = decayed(x, 3)
params = optlib.make_step(cfg)(params, x)
a = optlib.cube(x)
cube_count: int = optlib.cube.trace_count
a = optlib.power(x + 1.0, 3)

jit_traced_twice = functools.partial(js.jit, max_traces=2)


@jit_traced_twice
def square(x: Array) -> Array:
    return x * x


a = square(x)
square_count: int = square.trace_count

lowered = optlib.power.lower(x, 2)
lowered_text: str = lowered.as_text()
compiled = lowered.compile()
a = compiled(x + 1.0, 2)
compiled_text: str | None = compiled.as_text()
lowered_text = lowered.as_text(debug_info=True)


def cubed(x: Array, n: js.Static[int] = 3) -> Array:
    return x**n


a = js.jit(cubed, max_traces=3, donate_argnames="x")(x + 1.0)
a = js.jit(cubed, static_argnames="n", cache_size=4)(x)

# --- mistakes ---------------------------------------------------------------------------------------------------

bad_g: SGDConfig = js.grad(optlib.sgd_loss)(cfg, params, x)  # mistake: plugin
wrong_g: SGDConfig = optlib.sgd_grad(cfg, params, x)  # mistake
optlib.sgd_grad(params, cfg, x)  # mistake
optlib.sgd_grad(cfg, params)  # mistake
optlib.weighted_grad(w, w, x)  # mistake
optlib.plain_grad(w, "x")  # mistake
bad_plain: str = optlib.plain_grad(w, x)  # mistake
SGD(cfg).update(w, x)  # mistake
SGD("0.1")  # mistake
trainer.step(w)  # mistake
count = trainer.step.trace_counts  # mistake
bad_state: str = float_trainer.step(w)  # mistake
mlp("x")  # mistake
mlp(x, x)  # mistake
optlib.apply_twice(w, x)  # mistake
optlib.run_layer(optlib.cube, "x")  # mistake
bad_call: js.JitMethod[[Array, int], Array] = mlp.__call__  # mistake
count = mlp.__call__.trace_counts  # mistake
MLP.init("3")  # mistake
MLP.init(3, 4)  # mistake
bad_init: Array = MLP.init(3)  # mistake
MLP.activation(x, x)  # mistake
mlp.activation("x")  # mistake
mlp.forward(x, 2)  # mistake
count = mlp.forward.trace_counts  # mistake
bad_mean: tuple[Array, Array] = optlib.moments(x)  # mistake
bad_mean_var: Array = optlib.moments(x, True)  # mistake
bad_moments: tuple[Array, Array] = optlib.moments_of(x)  # mistake
bad_moments_var: Array = optlib.moments_of(x, True)  # mistake
optlib.moments(x, "yes")  # mistake
optlib.make_decayed(0.9)(x, "3")  # mistake
optlib.make_step(cfg)(x, params)  # mistake
optlib.cube(x, 2)  # mistake
optlib.power(x, 2.5)  # mistake
square(x, x)  # mistake, missed by: mypy pyrefly
count = square.trace_counts  # mistake
js.jit(cubed, max_trace=3)  # mistake
js.jit(cubed, donate_argnames=1)  # mistake
js.jit(cubed, cache_size="big")  # mistake
js.jit(max_traces="3")  # mistake
lowered.as_txt()  # mistake
compiled.as_txt()  # mistake
compiled(x, "2")  # mistake
lowered.compile()(x)  # mistake
