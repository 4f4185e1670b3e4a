"""Where a retrace's blame lands: on the earlier trace closest over all parameters together, and on the body, not the
caller, when the body changed its own ``Static`` value."""

from __future__ import annotations

import logging
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static

X = jnp.ones(3)


def test_a_sweep_is_compared_with_the_closest_trace_not_the_latest(hit_path: str) -> None:
    @js.jit
    def sweep(x: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        return x * cfg["LR"] + cfg["T"]

    for cfg in ({"LR": 0.00025, "T": 16384}, {"LR": 0.001, "T": 16384}, {"LR": 0.00025, "T": 2048}):
        sweep(X, cfg)
    assert [r.changes for r in sweep.retraces] == [("cfg['LR']: 0.00025 -> 0.001",), ("cfg['T']: 16384 -> 2048",)]


def test_the_closest_trace_counts_every_parameter_together() -> None:
    @js.jit
    def f(x: jax.Array, a: Static[dict[str, int]], b: Static[int]) -> jax.Array:
        return x + a["p"] + a["q"] + b

    f(X, {"p": 1, "q": 1}, 1)  # two leaves away from the last call
    f(X, {"p": 2, "q": 2}, 2)  # three leaves away
    f(X, {"p": 2, "q": 1}, 1)
    assert f.retraces[-1].changes == ("a['p']: 1 -> 2",)


BODY = ("config['NUM_UPDATES']: added (10) by the body, not the caller (step's own body changed its Static parameter "
        "'config' in place while trace #1 ran, so the caller's value no longer matches the key of the program made "
        "for it; copy it before changing it (config = dict(config), or copy.copy))")


def test_a_body_that_changes_its_static_value_is_named_at_its_trace(hit_path: str,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    @js.jit(max_traces=1)
    def step(x: jax.Array, config: Static[dict[str, Any]]) -> jax.Array:
        config["NUM_UPDATES"] = 10
        return x * config["LR"]

    config = {"LR": 0.5}
    with caplog.at_level(logging.WARNING, logger="jaxstatic"):
        step(X, config)
    assert [r.getMessage() for r in caplog.records] == [BODY]
    with pytest.raises(js.RetraceError) as raised:
        step(X, config)
    assert str(raised.value) == (
        f"step needs trace #2, because {BODY}, but max_traces=1 allows at most 1 trace. Mark a parameter Static only "
        "if it takes few values, keep shapes and dtypes fixed, or raise max_traces.")


def test_a_body_that_copies_before_changing_traces_once(hit_path: str) -> None:
    @js.jit(max_traces=1)
    def step(x: jax.Array, config: Static[dict[str, Any]]) -> jax.Array:
        config = dict(config)
        config["NUM_UPDATES"] = 10
        return x * config["LR"]

    config = {"LR": 0.5}
    for _ in range(3):
        step(X, config)
    assert step.trace_count == 1 and config == {"LR": 0.5}
