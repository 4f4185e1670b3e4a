from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static


@js.jit
def step(x: jax.Array, cfg: Static[dict[str, float]], *, mode: Static[str] = "train") -> jax.Array:
    return x * cfg["lr"] if mode == "train" else x


def test_compiled_keeps_the_signature_and_checks_statics() -> None:
    cfg = {"lr": 0.5}
    compiled = step.lower(jnp.ones(2), cfg).compile()
    assert compiled(jnp.ones(2), {"lr": 0.5}).tolist() == [0.5, 0.5]
    assert compiled(jnp.ones(2), cfg, mode="train").tolist() == [0.5, 0.5]
    assert "mul" in step.lower(jnp.ones(2), cfg).as_text()
    with pytest.raises(js.StaticMismatchError, match=r"^step\(\) was compiled ahead of time for other static "
                                                       r"arguments: cfg\['lr'\]: 0\.5 -> 0\.25\. Lower and compile"):
        compiled(jnp.ones(2), {"lr": 0.25})
    with pytest.raises(js.StaticMismatchError, match=r"mode: 'train' -> 'eval'"):
        compiled(jnp.ones(2), cfg, mode="eval")
    cfg["lr"] = 2.0  # changed in place: never the stale program
    with pytest.raises(js.StaticMismatchError):
        compiled(jnp.ones(2), cfg)


class Scaler:
    def __init__(self, k: float) -> None:
        self.k = k

    @js.jit
    def apply(self: Static[Scaler], x: jax.Array, n: Static[int]) -> jax.Array:
        return x * self.k * n


def test_compiled_method_is_bound_like_the_method() -> None:
    m = Scaler(2.0)
    compiled = m.apply.lower(jnp.ones(2), 3).compile()
    assert compiled(jnp.ones(2), 3).tolist() == [6.0, 6.0]
    assert compiled(jnp.ones(2), n=3).tolist() == [6.0, 6.0]
    with pytest.raises(js.StaticMismatchError, match=r"n: 3 -> 4"):
        compiled(jnp.ones(2), 4)
    unbound = Scaler.apply.lower(m, jnp.ones(2), 3).compile()  # through the class: self given, as for the function
    assert unbound(m, jnp.ones(2), 3).tolist() == [6.0, 6.0]
