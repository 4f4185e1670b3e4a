"""optax's examples/gradient_accumulation_and_microbatching.ipynb (github.com/google-deepmind/optax), its cells in
order as one function, at CPU size: hidden size 16, 2 heads, 1 layer, vocabulary 32, sequences of 8, batches of 2,
3 accumulation steps; timing and printing left out, results returned. The step functions are as written."""

import functools

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class TransformerBlock(nnx.Module):
  def __init__(self, hidden_size: int, num_heads: int, *, rngs: nnx.Rngs):
    self.norm1 = nnx.LayerNorm(hidden_size, rngs=rngs)
    self.mha = nnx.MultiHeadAttention(num_heads, hidden_size, rngs=rngs)
    self.norm2 = nnx.LayerNorm(hidden_size, rngs=rngs)
    self.mlp = nnx.Sequential(
        nnx.Linear(hidden_size, 4*hidden_size, rngs=rngs),
        jax.nn.gelu,
        nnx.Linear(4*hidden_size, hidden_size, rngs=rngs),
    )

  def __call__(self, x: jax.Array) -> jax.Array:
    attention_output = self.mha(self.norm1(x), self.norm1(x), self.norm1(x), decode=False)
    x = x + attention_output
    mlp_output = self.mlp(self.norm2(x))
    return x + mlp_output

class Transformer(nnx.Module, pytree=False):
  def __init__(self, vocab_size: int, num_layers: int, hidden_size: int, num_heads: int = 8, *, rngs: nnx.Rngs):
    self.embedding = nnx.Embed(vocab_size, hidden_size, rngs=rngs)
    self.layers = [TransformerBlock(hidden_size, num_heads, rngs=rngs) for _ in range(num_layers)]
    self.final_layer = nnx.Linear(hidden_size, vocab_size, rngs=rngs)

  def __call__(self, x: jax.Array):
    x = self.embedding(x)

    for layer in self.layers:
      x = layer(x)

    logits = self.final_layer(x)
    return logits


def main():
  hidden_size = 16
  num_heads = 2
  num_layers = 1
  vocab_size = 32
  sequence_length = 8
  batch_size = 2
  accumulation_steps = 3

  model = Transformer(vocab_size, num_layers, hidden_size, num_heads, rngs=nnx.Rngs(0))
  key = jax.random.key(0)
  batch = jax.random.randint(key, (batch_size, sequence_length), 0, vocab_size)

  graphdef, params = nnx.split(model, nnx.Variable)

  adamw = optax.adamw(0.01)
  opt_state = adamw.init(params)
  first = (params, opt_state)

  def loss_fn(params, batch):
    model = nnx.merge(graphdef, params)
    logits = model(batch)
    return optax.softmax_cross_entropy_with_integer_labels(
        logits[:, :-1], labels=batch[:,1:]
    ).mean()


  @functools.partial(jax.jit, donate_argnums=(0,1))
  def update_fn(params, opt_state, batch):
    loss, grads = jax.value_and_grad(loss_fn)(params, batch)
    updates, opt_state = adamw.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    return params, opt_state

  update_fn.lower(params, opt_state, batch).compile()

  @functools.partial(jax.jit, donate_argnums=(2,))
  def add_gradient(params, batch, accumulated_gradients):
    grad = jax.grad(loss_fn)(params, batch)
    return jax.tree.map(jnp.add, grad, accumulated_gradients)


  @functools.partial(jax.jit, donate_argnums=(0, 1, 2))
  def update_params(params, opt_state, accumulated_gradients):
    updates, opt_state = adamw.update(accumulated_gradients, opt_state, params)
    params = optax.apply_updates(params, updates)
    return params, opt_state, optax.tree.zeros_like(accumulated_gradients)

  accumulated_gradients = optax.tree.zeros_like(params)
  add_gradient.lower(params, batch, accumulated_gradients).compile()
  update_params.lower(params, opt_state, accumulated_gradients).compile()

  for i in range(accumulation_steps):
    accumulated_gradients = add_gradient(params, batch, accumulated_gradients)

  params, opt_state, accumulated_gradients = jax.block_until_ready(
      update_params(params, opt_state, accumulated_gradients)
  )
  accumulated = jax.device_get((params, opt_state))  # the next steps donate them

  multi_adam = optax.MultiSteps(adamw, accumulation_steps)

  @functools.partial(jax.jit, donate_argnums=(0, 2))
  def update_fn_v2(params, batch, opt_state):
    grads = jax.grad(loss_fn)(params, batch)
    updates, opt_state = multi_adam.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    return params, opt_state

  multi_opt_state = multi_adam.init(params)
  update_fn_v2.lower(params, batch, multi_opt_state).compile()

  for i in range(accumulation_steps):
    params, multi_opt_state = update_fn_v2(params, batch, multi_opt_state)

  jax.block_until_ready((params, multi_opt_state))
  multi_steps = jax.device_get((params, multi_opt_state))

  params, opt_state = update_fn(params, opt_state, batch)

  deleted = [leaf.is_deleted() for leaf in jax.tree.leaves(first)]
  return accumulated, multi_steps, (params, opt_state), deleted
