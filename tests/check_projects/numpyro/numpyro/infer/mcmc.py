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


def _run_while(update_fn, state, num_steps):
    update = jax.jit(update_fn, donate_argnums=0)
    i = 0
    while i < num_steps:
        new_state = update(state)  # seeded: jaxstatic-donated
        i += 1
    return new_state
