"""A config held in a closure: ``js.jit`` of a closure, a ``functools.partial`` or a function with defaults made again
with equal closed-over values shares one program; one that cannot share says why at its first trace."""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js

X = jnp.ones(3)
LINE = make_train_line = 0  # set below: where train is defined, as the texts name it


class CartPole:
    """An environment: compared by identity, as objects without ``__eq__`` are."""

    def step(self, x: jax.Array) -> jax.Array:
        return x + 1


def make_train(config: dict[str, Any]) -> Any:
    def linear_schedule(count: int) -> float:
        return config["LR"] * (1 - count / config["T"])

    def train(x: jax.Array) -> jax.Array:
        return x * linear_schedule(0) + config["T"]

    return train


TRAIN = f"test_closures.py:{make_train.__code__.co_firstlineno + 4}"
FIX = (f"train (defined at {TRAIN}) was made again closing over other values, so it shares no program with the one "
       "made before; to share them, make these values Static parameters "
       "(docs/migration.md#a-config-held-in-a-closure).")


def make_env_train(config: dict[str, Any]) -> Any:
    env = CartPole()

    def train(x: jax.Array) -> jax.Array:
        return env.step(x) * config["LR"]

    return train


def test_equal_closures_made_again_share_one_program(hit_path: str) -> None:
    made = [js.jit(make_train({"LR": 0.1, "T": 16, "path": hit_path})) for _ in range(4)]
    for f in made:
        assert jnp.allclose(f(X), 16.1)
        assert jnp.allclose(f(X), 16.1)
    assert [f.trace_count for f in made] == [1, 1, 1, 1]
    assert made[0].cache_info().hits == 7
    assert all(f.retraces == made[0].retraces for f in made)  # one function


def test_a_changed_config_traces_anew_and_says_what_changed(hit_path: str) -> None:
    js.jit(make_train({"LR": 0.1, "T": 16, "path": hit_path}))(X)
    other = js.jit(make_train({"LR": 0.2, "T": 16, "path": hit_path}))
    assert jnp.allclose(other(X), 16.2)
    assert other.trace_count == 1
    assert [str(r) for r in other.retraces] == [
        "train was traced anew (trace #1 of a function made again) because "
        "train's closure: config['LR']: 0.1 -> 0.2; "
        "train's closure: linear_schedule's closure: config['LR']: 0.1 -> 0.2. " + FIX]
    assert other.retraces[0].changes[0] == "train's closure: config['LR']: 0.1 -> 0.2"
    row = next(line for line in js.trace_report().splitlines() if "config['LR']: 0.1 -> 0.2" in line)
    assert row.startswith("jit(train)")


def test_an_object_compared_by_identity_never_shares_and_says_why() -> None:
    first = js.jit(make_env_train({"LR": 0.1}))
    first(X)
    again = js.jit(make_env_train({"LR": 0.1}))
    again(X)
    assert again.trace_count == 1 and first.trace_count == 1
    assert again.retraces[0].changes == ("train's closure: env: a new CartPole object on each call, "
                                         "compared by identity",)


def test_an_array_closed_over_never_shares_nor_is_compared_by_value() -> None:
    def make(w: jax.Array) -> Any:
        return lambda x: x * w

    first = js.jit(make(jnp.ones(3)))
    first(X)
    again = js.jit(make(jnp.ones(3)))
    assert jnp.allclose(again(X), 1.0)
    assert again._core is not first._core
    assert again.retraces[0].changes == (
        "<lambda>'s closure: w: a jax.Array (float32[3]), which cannot be static (never compared by value)",)


def test_a_config_changed_after_wrapping_is_never_served_another_program(hit_path: str) -> None:
    config = {"LR": 0.1, "T": 16, "path": hit_path, "test": "changed"}
    first = js.jit(make_train(config))
    config["LR"] = 0.5  # after js.jit: first shares with nothing, so its first trace reads it, as jax.jit's would
    again = js.jit(make_train({**config, "LR": 0.1}))  # equal to what first was made with: not joined, first changed
    assert jnp.allclose(again(X), 16.1)
    assert jnp.allclose(first(X), 16.5)
    assert again._core is not first._core
    third = js.jit(make_train({**config, "LR": 0.1}))
    assert jnp.allclose(third(X), 16.1)
    assert third._core is again._core


def test_a_cell_rebound_after_sharing_is_refused_at_its_trace() -> None:
    def make(scale: float) -> tuple[Any, Any]:
        def f(x: jax.Array) -> jax.Array:
            return x * scale

        def rebind(value: float) -> None:
            nonlocal scale
            scale = value

        return f, rebind

    f1, rebind1 = make(2.0)
    f2, rebind2 = make(2.0)
    a, b = js.jit(f1), js.jit(f2)
    assert a._core is b._core
    rebind1(3.0)
    rebind2(4.0)
    with pytest.raises(js.StaticMismatchError, match=r"f \(defined at test_closures.py:\d+\) shares its programs .* "
                                                      r"but its own changed since: f's closure: scale: 2.0 -> 3.0"):
        a(X)
    assert a.trace_count == 0


def test_a_counter_closed_over_keeps_its_traces() -> None:
    def make() -> tuple[Any, list[int]]:
        calls: list[int] = []

        def f(x: jax.Array) -> jax.Array:
            calls.append(1)
            return x + 1

        return f, calls

    for _ in range(3):
        f, calls = make()
        js.jit(f)(X)
        assert calls == [1]  # the earlier counter changed at its trace: not joined


def test_partials_and_defaults_made_again_share(hit_path: str) -> None:
    def step(x: jax.Array, config: dict[str, float]) -> jax.Array:
        return x * config["LR"]

    def scaled(lr: float) -> Any:
        return lambda x, lr=lr: x * lr

    partials = [js.jit(functools.partial(step, config={"LR": 0.5, "path": hit_path})) for _ in range(3)]
    defaults = [js.jit(scaled(0.5)) for _ in range(3)]
    for f in (*partials, *defaults):
        assert jnp.allclose(f(X), 0.5)
    assert [f.trace_count for f in partials] == [1, 1, 1]
    assert [f.trace_count for f in defaults] == [1, 1, 1]
    other = js.jit(functools.partial(step, config={"LR": 0.25, "path": hit_path}))
    other(X)
    assert other.retraces[0].changes == ("partial(step)'s closure: config['LR']: 0.5 -> 0.25",)
    lr = js.jit(scaled(0.25))
    lr(X)
    assert lr.retraces[0].changes == ("<lambda>'s closure: lr (default): 0.5 -> 0.25",)


def test_a_lambda_closing_over_nothing_rebuilt_in_a_loop_says_so() -> None:
    made = []
    for _ in range(2):
        made.append(js.jit(lambda x: x * 2))
        made[-1](X)
    where = f"test_closures.py:{made[0].__wrapped__.__code__.co_firstlineno}"
    assert [str(r) for r in made[1].retraces] == [
        "<lambda> was traced anew (trace #1 of a function made again) because <lambda>: a new function of the same "
        f"code (defined at {where}) on each call, compared by identity, as jax.jit compares it. Define it once, "
        "outside the loop or call that makes it."]


def test_a_jaxstatic_budget_sees_one_trace_over_rebuilt_closures() -> None:
    with js.testing.expect_traces(n=1):
        for _ in range(3):
            js.jit(make_train({"LR": 0.3, "T": 2}))(X)


def test_closures_over_closures_share_when_those_are_equal(hit_path: str) -> None:
    def make(config: dict[str, Any]) -> Any:
        def scale(x: jax.Array) -> jax.Array:
            return x * config["LR"]

        def countdown(n: int) -> int:  # closes over itself
            return n if n <= 0 else countdown(n - 1)

        def train(x: jax.Array) -> jax.Array:
            return scale(x) + countdown(2) + config["T"]

        return train

    made = [js.jit(make({"LR": 2.0, "T": 1, "path": hit_path})) for _ in range(3)]
    assert [float(f(X)[0]) for f in made] == [3.0, 3.0, 3.0]
    assert [f.trace_count for f in made] == [1, 1, 1]


def test_the_same_code_over_other_globals_is_another_function() -> None:
    import types

    train = make_train({"LR": 1.0, "T": 1, "test": "globals"})
    other = types.FunctionType(train.__code__, dict(train.__globals__), train.__name__, None, train.__closure__)
    a, b = js.jit(train), js.jit(other)
    a(X), b(X)
    assert a._core is not b._core and b.trace_count == 1


def test_a_lambda_made_and_called_in_a_loop_is_explained_though_the_earlier_one_is_gone() -> None:
    with js.testing.trace_log() as log:
        for _ in range(2):
            js.jit(lambda x: x * 3)(X)
    assert [event.explanation.split(" (defined at")[0] for event in log] == [
        "the first", "because <lambda>: a new function of the same code"]


def test_a_jit_over_a_vmap_of_equal_closures_keeps_its_programs_while_it_lives() -> None:
    made = []
    for _ in range(3):
        made.append(js.jit(js.vmap(make_train({"LR": 2.0, "T": 1, "test": "stack"}))))
        assert made[-1](X[:, None]).tolist() == [[3.0], [3.0], [3.0]]
        del made[:-1]  # the earlier closure goes: the jit over this one keeps its programs
        assert made[-1](X[:, None]).tolist() == [[3.0], [3.0], [3.0]]
        assert made[-1].trace_count == 1 and made[-1].retraces == ()
