import dataclasses

from jaxstatic import Static, jit


@dataclasses.dataclass
class Setting:
    chains: int


@jit
def fixture_step(x, setting: Static[Setting]):
    return x * setting.chains


def make(x):
    return fixture_step(x, Setting(2))  # seeded: jaxstatic-unhashable
