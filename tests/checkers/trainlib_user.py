"""Downstream code calling trainlib: unmarked lines are correct and must check clean under every type checker; each
line ending in ``# mistake`` is a mistake every checker must report there. tests/test_checkers.py runs the checkers
on it."""

from __future__ import annotations

from collections.abc import Callable

import jax
import trainlib
from trainlib import MLP, Classifier, Linear, Model, Params, Scaled, TrainConfig, Trainer
from typing_extensions import assert_type

Array = jax.Array
x = jax.random.normal(jax.random.key(0), (3,))
y = jax.random.normal(jax.random.key(1), (3,))
w = jax.random.normal(jax.random.key(2), (3,))
step = jax.random.uniform(jax.random.key(3), ())
batch = jax.random.normal(jax.random.key(4), (2, 3))
cfg = TrainConfig()
params: Params = {"w": w, "b": y}

# --- correct code -----------------------------------------------------------------------------------------------

grads = trainlib.grad_fn(params=params, x=x, y=y, cfg=cfg)
grads = trainlib.grad_fn(params, x, y, cfg=cfg)
checked_1 = assert_type(trainlib.grad_fn(params, x, y, cfg), Params)
gw: Array = grads["w"]
loss, grads = trainlib.value_and_grad_fn(params, x=x, y=y, cfg=cfg)
checked_2 = assert_type(trainlib.value_and_grad_fn(params, x, y, cfg), tuple[Array, Params])
aux_grads, pred = trainlib.aux_grad_fn(params, x, y)
checked_3 = assert_type(aux_grads, Params)
checked_4 = assert_type(pred, Array)
params = trainlib.train_step(params, x, y, cfg)
params, loss = trainlib.train(params, x, y, cfg)

layer = Linear(w, w)
mlp = MLP(layer, layer)
out: Array = mlp(x)
out = mlp(x, train=True)
out = trainlib.predict(mlp, x)  # ok, rejected by: mypy mypy-plugin pyright basedpyright
out = trainlib.predict(layer, x)  # ok, rejected by: pyright basedpyright
out = trainlib.predict_fn(mlp, x)  # ok, rejected by: pyright basedpyright
model: Model = mlp  # ok, rejected by: mypy mypy-plugin pyright basedpyright
as_callable: Callable[[Array], Array] = layer  # ok, rejected by: pyright basedpyright
trainer = Trainer(mlp, cfg)  # ok, rejected by: mypy mypy-plugin pyright basedpyright
typed_trainer: Trainer[MLP] = Trainer(mlp, cfg)  # ok, rejected by: mypy mypy-plugin pyright basedpyright
out = typed_trainer.evaluate(x, y)
out = trainer.model(x, train=True)  # ok, rejected by: pyright basedpyright

rate: Array = trainlib.learning_rate_jit(step)  # ok, rejected by: ty
rate_and_warmup: tuple[Array, Array] = trainlib.learning_rate_jit(step, 10)  # ok, rejected by: mypy pyright basedpyright ty
rate = trainlib.learning_rate(step)
rate_and_warmup = trainlib.learning_rate(step, 10)
schedule_traces: int = trainlib.learning_rate_jit.trace_count

out = trainlib.scale_step(x, 2.0)
out = trainlib.scale_step(x, 2.0, "down")
out = trainlib.batched_norm(batch)

# the spellings every checker types: a plain __call__ over a jitted method, overloads over a jitted function,
# options-only transforms instead of functools.partial
clf = Classifier(w)
out = trainlib.predict(clf, x)
out = trainlib.predict_fn(clf, x)
clf_model: Model = clf
clf_trainer: Trainer[Classifier] = Trainer(clf, cfg)
out = clf_trainer.model(x, train=True)
out = trainlib.predict(mlp.__call__, x)
logits_traces: int = clf.logits.trace_count
rate = trainlib.learning_rate_of(step)
rate_and_warmup = trainlib.learning_rate_of(step, 10)
scaled = Scaled(w)
out = trainlib.predict(scaled, x)
out = trainlib.predict_fn(scaled, x)
scaled_model: Model = scaled
scaled_trainer: Trainer[Scaled] = Trainer(scaled, cfg)
out = scaled_trainer.model(x, train=True)
out = scaled(x, train=True)
rate = trainlib.warmup_rate(step)
rate_and_warmup = trainlib.warmup_rate(step, 10)
out = trainlib.scale_step_typed(x, 2.0, "down")
out = trainlib.batched_norm_typed(batch)

# --- mistakes ---------------------------------------------------------------------------------------------------

trainlib.grad_fn(params=params, x=x, y=y, cfg="cfg")  # mistake
trainlib.grad_fn(params=params, x=x, cfg=cfg)  # mistake
trainlib.grad_fn(params, x, y, cfg, 1)  # mistake
trainlib.grad_fn(parms=params, x=x, y=y, cfg=cfg)  # mistake
bad_grads: Array = trainlib.grad_fn(params, x, y, cfg)  # mistake
bad_value: Params = trainlib.value_and_grad_fn(params, x, y, cfg)[0]  # mistake
bad_vgrads: Array = trainlib.value_and_grad_fn(params, x, y, cfg)[1]  # mistake
bad_aux: Params = trainlib.aux_grad_fn(params, x, y)[1]  # mistake
trainlib.train_step(params, x, y, "cfg")  # mistake
mlp("x")  # mistake
mlp(x, True)  # mistake
mlp(x, train="yes")  # mistake
trainlib.predict(w, x)  # mistake
trainlib.predict(trainlib.sgd, x)  # mistake
bad_model: Model = cfg  # mistake
Trainer(cfg, cfg)  # mistake
bad_trainer: Trainer[MLP] = Trainer(layer, cfg)  # mistake
bad_rate: tuple[Array, Array] = trainlib.learning_rate_jit(step)  # mistake
bad_rate_warmup: Array = trainlib.learning_rate_jit(step, 10)  # mistake
trainlib.learning_rate_jit(step, "10")  # mistake
trainlib.scale_step(x, "2.0")  # mistake, missed by: mypy pyrefly
trainlib.scale_step(x, 2.0, "sideways")  # mistake, missed by: mypy pyrefly
trainlib.scale_step(x, 2.0, "up", 1)  # mistake, missed by: mypy pyrefly
trainlib.batched_norm(batch, "eps")  # mistake, missed by: mypy pyrefly
bad_norm: str = trainlib.batched_norm(batch)  # mistake, missed by: mypy pyrefly
clf("x")  # mistake
bad_clf_trainer: Trainer[Classifier] = Trainer(mlp, cfg)  # mistake
bad_rate_of: tuple[Array, Array] = trainlib.learning_rate_of(step)  # mistake
bad_rate_of_warmup: Array = trainlib.learning_rate_of(step, 10)  # mistake
scaled("x")  # mistake
scaled(x, train="yes")  # mistake
bad_scaled_trainer: Trainer[Scaled] = Trainer(clf, cfg)  # mistake
bad_warmup_rate: tuple[Array, Array] = trainlib.warmup_rate(step)  # mistake
bad_warmup_rate_warmup: Array = trainlib.warmup_rate(step, 10)  # mistake
trainlib.warmup_rate(step, "10")  # mistake
trainlib.scale_step_typed(x, "2.0")  # mistake
trainlib.scale_step_typed(x, 2.0, "sideways")  # mistake
trainlib.batched_norm_typed(batch, "eps")  # mistake
