"""flax's examples/lm1b/train.py (github.com/google/flax): its loss, metrics, learning-rate schedule, train_step and
eval_step as written, and the training loop of train_and_evaluate with its jax.jit call forms (static_argnums,
donate_argnums, in/out_shardings), at CPU size: a one-device mesh, 6 steps of batches 2 x 8, evaluated every 3.
What needs TensorFlow data, checkpoints or clu (input pipeline, writers, hooks) is left out, and models.TransformerLM
is a small linen model with the same call (embedding, one dense layer, dropout) in place of the 6-layer Transformer.
"""

import dataclasses

from flax import linen as nn
from flax.training import common_utils, train_state
import jax
from jax import random
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P, Mesh, NamedSharding
import numpy as np
import optax


@dataclasses.dataclass(frozen=True)
class TransformerConfig:
  vocab_size: int = 32
  emb_dim: int = 16
  dropout_rate: float = 0.1
  deterministic: bool = False
  dtype: object = jnp.float32


class TransformerLM(nn.Module):
  config: TransformerConfig

  @nn.compact
  def __call__(self, inputs, inputs_positions=None, inputs_segmentation=None):
    cfg = self.config
    x = nn.Embed(cfg.vocab_size, cfg.emb_dim)(inputs)
    x = nn.Dropout(rate=cfg.dropout_rate)(x, deterministic=cfg.deterministic)
    return nn.Dense(cfg.vocab_size)(nn.relu(x))


class models:  # the names train.py uses from its models module
  TransformerLM = TransformerLM


def rsqrt_schedule(
    init_value: float,
    shift: int = 0,
):
  def schedule(count):
    return init_value * (count + shift) ** -0.5 * shift**0.5

  return schedule


def create_learning_rate_schedule(learning_rate: float, warmup_steps: int):
  """Creates a rsqrt schedule with linear warmup."""
  return optax.join_schedules(
      [
          optax.linear_schedule(
              init_value=0,
              end_value=learning_rate,
              transition_steps=warmup_steps,
          ),
          rsqrt_schedule(init_value=learning_rate, shift=warmup_steps),
      ],
      boundaries=[warmup_steps],
  )


def compute_weighted_cross_entropy(
    logits, targets, weights=None, label_smoothing=0.0
):
  if logits.ndim != targets.ndim + 1:
    raise ValueError(
        "Incorrect shapes. Got shape %s logits and %s targets"
        % (str(logits.shape), str(targets.shape))
    )
  vocab_size = logits.shape[-1]
  confidence = 1.0 - label_smoothing
  low_confidence = (1.0 - confidence) / (vocab_size - 1)
  normalizing_constant = -(
      confidence * jnp.log(confidence)
      + (vocab_size - 1) * low_confidence * jnp.log(low_confidence + 1e-20)
  )
  soft_targets = common_utils.onehot(
      targets, vocab_size, on_value=confidence, off_value=low_confidence
  )

  loss = -jnp.sum(soft_targets * nn.log_softmax(logits), axis=-1)
  loss = loss - normalizing_constant

  normalizing_factor = np.prod(targets.shape)
  if weights is not None:
    loss = loss * weights
    normalizing_factor = weights.sum()

  return loss.sum(), normalizing_factor


def compute_weighted_accuracy(logits, targets, weights=None):
  if logits.ndim != targets.ndim + 1:
    raise ValueError(
        "Incorrect shapes. Got shape %s logits and %s targets"
        % (str(logits.shape), str(targets.shape))
    )
  loss = jnp.equal(jnp.argmax(logits, axis=-1), targets)
  normalizing_factor = np.prod(logits.shape[:-1])
  if weights is not None:
    loss = loss * weights
    normalizing_factor = weights.sum()

  return loss.sum(), normalizing_factor


def compute_metrics(logits, labels, weights, label_smoothing=0.0):
  """Compute summary metrics."""
  loss, weight_sum = compute_weighted_cross_entropy(
      logits, labels, weights, label_smoothing
  )
  acc, _ = compute_weighted_accuracy(logits, labels, weights)
  metrics = {
      "loss": loss,
      "accuracy": acc,
      "denominator": weight_sum,
  }
  return metrics


def train_step(
    state,
    batch,
    config,
    learning_rate_fn,
    label_smoothing=0.0,
    dropout_rng=None,
):
  """Perform a single training step."""
  train_keys = ["inputs", "inputs_position", "inputs_segmentation"]
  (inputs, inputs_positions, inputs_segmentation) = (
      batch.get(k, None) for k in train_keys
  )

  weights = jnp.where(inputs > 0, 1, 0).astype(jnp.float32)

  dropout_rng = jax.random.fold_in(dropout_rng, state.step)

  def loss_fn(params):
    """loss function used for training."""
    logits = models.TransformerLM(config).apply(
        {"params": params},
        inputs,
        inputs_positions=inputs_positions,
        inputs_segmentation=inputs_segmentation,
        rngs={"dropout": dropout_rng},
    )

    loss, weight_sum = compute_weighted_cross_entropy(
        logits, inputs, weights, label_smoothing
    )
    mean_loss = loss / weight_sum
    return mean_loss, logits

  step = state.step
  lr = learning_rate_fn(step)
  grad_fn = jax.value_and_grad(loss_fn, has_aux=True)
  (_, logits), grads = grad_fn(state.params)
  new_state = state.apply_gradients(grads=grads)
  metrics = compute_metrics(logits, inputs, weights)
  metrics["learning_rate"] = lr

  return new_state, metrics


def eval_step(params, batch, config, label_smoothing=0.0):
  """Calculate evaluation metrics on a batch."""
  inputs = batch["inputs"]
  weights = jnp.where(inputs > 0, 1.0, 0.0)
  logits = models.TransformerLM(config).apply({"params": params}, inputs)

  return compute_metrics(logits, inputs, weights, label_smoothing)


def train_and_evaluate(num_train_steps=6, eval_every_steps=3, batch_size=2, max_len=8):
  rng = jax.random.PRNGKey(0)
  rng, init_rng = jax.random.split(rng)
  train_config = TransformerConfig()
  eval_config = dataclasses.replace(train_config, deterministic=True)
  m = models.TransformerLM(eval_config)
  learning_rate_fn = create_learning_rate_schedule(learning_rate=0.0016, warmup_steps=2)
  optimizer = optax.adamw(
      learning_rate_fn,
      b1=0.9,
      b2=0.98,
      eps=1e-9,
      weight_decay=0.1,
  )
  params = m.init(init_rng, jnp.ones((batch_size, max_len), jnp.int32))["params"]
  state = train_state.TrainState.create(apply_fn=m.apply, params=params, tx=optimizer)
  first = state
  mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
  state_mesh_annotations = NamedSharding(mesh, P())
  data_sharding = NamedSharding(mesh, P("data"))
  data = np.random.RandomState(0).randint(0, 32, size=(num_train_steps + 1, batch_size, max_len))
  train_iter = iter([{"inputs": jnp.asarray(b)} for b in data[:-1]])
  eval_batch = {"inputs": jnp.asarray(data[-1])}

  # compile multidevice versions of train/eval/predict step fn.
  jit_train_step = jax.jit(
      train_step,
      in_shardings=(
          state_mesh_annotations,
          data_sharding,
          None,
      ),  # type: ignore
      out_shardings=(state_mesh_annotations, None),  # type: ignore
      static_argnums=(2, 3, 4),
      donate_argnums=0,
  )

  jit_eval_step = jax.jit(
      eval_step,
      in_shardings=(
          state_mesh_annotations,
          data_sharding,
      ),  # type: ignore
      out_shardings=None,  # type: ignore
      static_argnums=(2, 3),
  )

  dropout_rngs = rng
  train_metrics = []
  eval_metrics = []
  for step in range(0, num_train_steps):
    is_last_step = step == num_train_steps - 1

    batch = next(train_iter)
    batch = jax.tree_util.tree_map(lambda x: jnp.array(x), batch)
    state, metrics = jit_train_step(
        state, batch, train_config, learning_rate_fn, 0.0, dropout_rngs
    )
    train_metrics.append(metrics)

    if step % eval_every_steps == 0 or is_last_step:
      eval_metrics.append(jit_eval_step(state.params, eval_batch, eval_config))

  deleted = [leaf.is_deleted() for leaf in jax.tree.leaves(first) if isinstance(leaf, jax.Array)]
  return train_metrics, eval_metrics, state.params, deleted
