import dataclasses

import jax
import jax.numpy as jnp

from jaxstatic import Donate, Static, jit


@dataclasses.dataclass
class TrainConfig:
    learning_rate: float


@jit
def train_step(params, config: Static[TrainConfig]):
    return params * config.learning_rate


@jit
def sgd(params: Donate[jax.Array], grads):
    return params - grads


def main():
    params = jnp.ones(3)
    params = train_step(params, TrainConfig(0.1))  # seeded: jaxstatic-unhashable
    updated = sgd(params, params * 0.1)
    return updated - params  # seeded: jaxstatic-donated
