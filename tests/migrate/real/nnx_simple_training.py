"""flax's benchmarks/nnx_simple_training.py (github.com/google/flax), its "nnx" and "jax" modes, at CPU size:
width 8, depth 3, 6 steps, evaluated every 3; the data seeded; absl flags and timing left out. The step functions
and the loop are as written."""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx


def dataset(X, Y, batch_size):
  while True:
    idx = np.random.choice(len(X), size=batch_size)
    yield X[idx], Y[idx]


class Linear(nnx.Module):
  def __init__(self, din: int, dout: int, *, rngs: nnx.Rngs):
    self.w = nnx.Param(jax.random.uniform(rngs.params(), (din, dout)))
    self.b = nnx.Param(jnp.zeros((dout,)))

  def __call__(self, x):
    return x @ self.w + self.b


class Block(nnx.Module):
  def __init__(self, din: int, dout: int, *, rngs: nnx.Rngs):
    self.linear = Linear(din, dout, rngs=rngs)
    self.bn = nnx.BatchNorm(dout, rngs=rngs)

  def __call__(self, x):
    return nnx.relu(self.bn(self.linear(x)))


class Count(nnx.Variable):
  pass


class MLP(nnx.Module):
  def __init__(self, din, dhidden, dout, depth, *, rngs: nnx.Rngs):
    self.count = Count(jnp.array(0))
    self.linear_in = Block(din, dhidden, rngs=rngs)
    self.intermediates = nnx.List([
      Block(dhidden, dhidden, rngs=rngs) for _ in range(depth - 2)
    ])
    self.linear_out = Block(dhidden, dout, rngs=rngs)

  def __call__(self, x):
    self.count[...] += 1
    x = nnx.relu(self.linear_in(x))
    for layer in self.intermediates:
      x = nnx.relu(layer(x))
    x = self.linear_out(x)
    return x


def main(mode='all', total_steps=6, batch_size=4, width=8, depth=3, eval_every=3):
  np.random.seed(0)
  X = np.linspace(0, 1, 100)[:, None]
  Y = 0.8 * X**2 + 0.1 + np.random.normal(0, 0.1, size=X.shape)
  results = {}

  if mode == 'nnx' or mode == 'all':
    model = MLP(din=1, dhidden=width, dout=1, depth=depth, rngs=nnx.Rngs(0))
    tx = optax.sgd(1e-3)
    optimizer = nnx.Optimizer(model, tx, wrt=nnx.Param)

    @nnx.jit(donate_argnums=(0, 1))
    def train_step_nnx(model: MLP, optimizer: nnx.Optimizer, batch):
      x, y = batch

      def loss_fn(model: MLP):
        y_pred = model(x)
        return jnp.mean((y - y_pred) ** 2)

      grads: nnx.State = nnx.grad(loss_fn)(model)
      optimizer.update(model, grads)

    @nnx.jit(donate_argnums=0)
    def test_step_nnx(model: MLP, batch):
      x, y = batch
      y_pred = model(x)
      loss = jnp.mean((y - y_pred) ** 2)
      return {'loss': loss}

    logs = {'loss': jnp.array(0.0)}
    for step, batch in enumerate(dataset(X, Y, batch_size)):
      train_step_nnx(model, optimizer, batch)

      if step % eval_every == 0:
        logs = test_step_nnx(model, (X, Y))

      if step >= total_steps - 1:
        break

    results['nnx'] = (logs, nnx.state(model))

  if mode == 'jax' or mode == 'all':
    model = MLP(din=1, dhidden=width, dout=1, depth=depth, rngs=nnx.Rngs(0))
    tx = optax.sgd(1e-3)
    optimizer = nnx.Optimizer(model, tx, wrt=nnx.Param)

    @partial(jax.jit, donate_argnums=0)
    def train_step_jax(state, batch):
      model, optimizer = nnx.merge(graphdef, state)
      x, y = batch

      def loss_fn(model: MLP):
        y_pred = model(x)
        return jnp.mean((y - y_pred) ** 2)

      grads = nnx.grad(loss_fn)(model)
      optimizer.update(model,grads)

      return nnx.state((model, optimizer))

    @partial(jax.jit, donate_argnums=0)
    def test_step_jax(state, batch):
      model, optimizer = nnx.merge(graphdef, state)
      x, y = batch
      y_pred = model(x)
      loss = jnp.mean((y - y_pred) ** 2)
      state = nnx.state((model, optimizer))
      return state, {'loss': loss}

    graphdef, state = nnx.split((model, optimizer))
    first = state

    logs = {'loss': jnp.array(0.0)}
    for step, batch in enumerate(dataset(X, Y, batch_size)):
      state = train_step_jax(state, batch)

      if step % eval_every == 0:
        state, logs = test_step_jax(state, (X, Y))

      if step >= total_steps - 1:
        break

    model, optimizer = nnx.merge(graphdef, state)
    results['jax'] = (logs, state, [leaf.is_deleted() for leaf in jax.tree.leaves(first)])

  return results
