import dataclasses

import jax

from jaxstatic import Donate, Static, jit


@dataclasses.dataclass
class SamplerConfig:
    num_warmup: int
    step_size: float


@jit
def sample_step(state, config: Static[SamplerConfig]):
    return state * config.step_size


@jit
def apply_update(state: Donate[jax.Array], delta):
    return state + delta


def run(state, delta):
    state = sample_step(state, SamplerConfig(10, 0.1))  # seeded: jaxstatic-unhashable
    new_state = apply_update(state, delta)
    return new_state + state  # seeded: jaxstatic-donated
