"""The general path's cache hit in C (``_hits.KeyCall``) changes nothing but the cost: each test runs with it
and with the generated dispatcher alone, and asserts what a user sees (values, traces, hits, order of eviction,
errors) for the values it keys itself (atomic ones, floats, containers remembered by identity) and those it hands
back (zeros, NaN, containers changed in place, other objects)."""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import sys
import sysconfig
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static, _extension

from ._threads import run_together


def _scaled() -> tuple[js.JitFunction[Any, Any], list[Any]]:
    seen: list[Any] = []

    @js.jit
    def f(x: jax.Array, cfg: Static[Any], scale: Static[float] = 1.0) -> jax.Array:
        seen.append((cfg, scale))
        if cfg == {"fail": True}:
            raise ValueError("bad config")
        return x * (cfg["a"] if isinstance(cfg, dict) else len(cfg)) * scale  # type: ignore[no-any-return]

    return f, seen


def test_a_config_passed_again_is_a_hit_until_it_changes_in_place(hit_path: str) -> None:
    f, seen = _scaled()
    x = jnp.ones(1)
    cfg = {"a": 2.0, "act": jnp.tanh}
    assert [f(x, cfg).tolist() for _ in range(3)] == [[2.0]] * 3
    assert (type(type(f).__call__).__name__ == "KeyCall") == (hit_path == "C hit")
    assert f.cache_info().hits == 2 and len(seen) == 1
    cfg["a"] = 3.0  # changed in place: never the stale program
    assert f(x, cfg).tolist() == [3.0]
    cfg["a"] = 2.0  # back to the first values: the first program
    assert f(x, cfg).tolist() == [2.0]
    cfg["b"] = 1  # a new entry
    assert f(x, cfg).tolist() == [2.0]
    assert len(seen) == 3
    items = [1, 2, 3]
    assert f(x, items).tolist() == [3.0] and f(x, items).tolist() == [3.0]
    items.append(4)
    assert f(x, items).tolist() == [4.0]
    assert len(seen) == 5
    assert f.cache_info() == js.CacheInfo(hits=4, misses=5, maxsize=8192, currsize=5, evictions=0)


class Optimizer(NamedTuple):
    update: Any
    scale: float


def _update(g: Any) -> Any:
    return -g


def test_a_config_rebuilt_from_the_same_objects_is_a_hit_and_from_others_is_not(hit_path: str) -> None:
    f, seen = _scaled()
    x = jnp.ones(1)
    lr, other = 0.5, 0.25
    for _ in range(3):
        assert f(x, {"a": lr, "opt": Optimizer(_update, lr)}).tolist() == [0.5]
    assert len(seen) == 1 and f.cache_info().hits == 2
    assert f(x, {"a": other, "opt": Optimizer(_update, lr)}).tolist() == [0.25]  # another value object
    assert f(x, {"opt": Optimizer(_update, lr), "a": lr}).tolist() == [0.5]  # another order: another key
    assert f(x, {"a": lr, "opt": Optimizer(_update, other)}).tolist() == [0.5]  # inside the named tuple
    assert f(x, {"a": lr, "opt": (_update, lr)}).tolist() == [0.5]  # a plain tuple is not the named tuple
    assert f(x, {"a": lr, "opt": Optimizer(_update, lr)}).tolist() == [0.5]
    assert len(seen) == 5
    assert f.cache_info() == js.CacheInfo(hits=3, misses=5, maxsize=8192, currsize=5, evictions=0)
    assert f(x, {"a": 0.5, "opt": Optimizer(_update, 0.5)}).tolist() == [0.5]  # equal objects, found by freezing
    assert len(seen) == 5 and f.cache_info().hits == 4


def test_floats_zeros_and_nan_keep_their_own_programs(hit_path: str) -> None:
    f, seen = _scaled()
    x = jnp.ones(1)
    cfg = (1, 2)  # immutable: remembered for good
    values = [2.5, 2.5, 0.0, -0.0, 0.0, -0.0, float("nan"), 1, 1.0, True, 1]
    out = [f(x, cfg, v).tolist() for v in values]
    assert [str(o) for o in out[:6]] == ["[5.0]", "[5.0]", "[0.0]", "[-0.0]", "[0.0]", "[-0.0]"]
    assert [type(s) for _, s in seen] == [float, float, float, float, int, float, bool]
    assert f.trace_count == 7  # 2.5, 0.0, -0.0, nan, 1, 1.0, True
    assert f.cache_info().hits == 4
    assert f(x, (1, 2)).tolist() == [2.0]  # an equal tuple, another object, and the default: 1.0's program
    assert f(x, cfg, 1.0).tolist() == [2.0]
    assert f.trace_count == 7 and f.cache_info().hits == 6


def test_the_least_recently_used_program_is_evicted(hit_path: str) -> None:
    traced: list[int] = []

    @js.jit(cache_size=2)
    def f(x: jax.Array, n: Static[float]) -> jax.Array:
        traced.append(int(n))
        return x * n

    x = jnp.ones(1)
    for n in (1.5, 2.5, 1.5, 3.5):  # 1.5 used after 2.5: 2.5 is the one evicted by 3.5
        f(x, n)
    assert traced == [1, 2, 3]
    f(x, 1.5)
    assert traced == [1, 2, 3]
    f(x, 2.5)
    assert traced == [1, 2, 3, 2]
    assert f.cache_info() == js.CacheInfo(hits=2, misses=4, maxsize=2, currsize=2, evictions=2)


def test_failed_calls_are_no_hits_and_name_the_parameter(hit_path: str) -> None:
    f, _ = _scaled()
    x = jnp.ones(1)
    cfg = {"a": 2.0}
    f(x, cfg)
    with pytest.raises(js.NonArrayArgumentError, match=r"^f\(\): parameter 'x' is not Static, so its value is "
                                                       r"traced as an array, but x is a str"):
        f("text", cfg)
    failing = {"fail": True}
    for _ in range(2):
        with pytest.raises(ValueError, match=r"^bad config"):
            f(x, failing)
    assert f.cache_info().hits == 0
    assert f(x, cfg).tolist() == [2.0] and f.cache_info().hits == 1


@dataclasses.dataclass(frozen=True)
class Options:
    depth: int


def test_other_hashable_objects_and_keywords_share_the_programs(hit_path: str) -> None:
    f, seen = _scaled()
    x = jnp.ones(1)
    cfg = {"a": 2.0}
    f(x, cfg)
    f(x, cfg=cfg)
    f(x, cfg, scale=1.0)
    f(x, cfg, 1.0)
    assert len(seen) == 1 and f.cache_info().hits == 3
    f(x, (Options(1),))
    f(x, (Options(1),))
    f(x, (Options(2),))
    assert len(seen) == 3 and f.cache_info().hits == 4


def test_concurrent_hits_are_counted_exactly(hit_path: str) -> None:
    f, seen = _scaled()
    x = jnp.ones(1)
    configs = [{"a": 1.0}, {"a": 2.0}]
    for cfg in configs:
        f(x, cfg)

    def calls() -> None:
        for i in range(200):
            f(x, configs[i % 2], 2.0 if i % 4 < 2 else 1.0)

    run_together(calls)
    assert len(seen) == 4
    assert f.cache_info().hits == 800 - 2


def test_an_install_with_a_c_compiler_has_the_hits_in_c() -> None:
    """The extension is optional: an install without a compiler falls back silently. Where one is found (as on
    CI), a build that failed would go unnoticed but for this test."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None or os.environ.get("JAXSTATIC_PURE_PYTHON"):
        pytest.skip(f"no C compiler ({compiler}) here, or JAXSTATIC_PURE_PYTHON is set")
    assert _extension.compiled is not None
    assert {"LaneCall", "KeyCall", "Base", "Counter", "attach"} <= set(dir(_extension.compiled))


def test_every_way_of_calling_reaches_the_same_hit(hit_path: str) -> None:
    """With the extension a function's own call slot goes straight to its hit (no argument tuple or keyword dict is
    built); a call by the argument-tuple protocol (``f(*args, **kwargs)``), through ``__call__``, a partial or
    ``map`` reaches the same hit, before and after the function leaves the exact-key lane."""
    traced: list[Any] = []

    @js.jit
    def f(x: jax.Array, n: Static[Any], *, mode: Static[str] = "add") -> jax.Array:
        traced.append((n, mode))
        return x + len(n) if isinstance(n, dict) else (x + n if mode == "add" else x * n)

    x = jnp.ones(2)

    def every_way(n: Any) -> list[list[float]]:
        ways = [lambda: f(x, n), lambda: f(x, n=n), lambda: f(x, n, mode="add"), lambda: f(*(x, n), **{"mode": "add"}),
                lambda: f.__call__(x, n), lambda: functools.partial(f, x)(n), lambda: next(map(f, [x], [n]))]
        return [way().tolist() for way in ways]

    assert every_way(2) == [[3.0, 3.0]] * 7
    assert traced == [(2, "add")] and f.cache_info().hits == 6
    assert (getattr(f, "_call_slot", None) is type(f).__call__) == (hit_path == "C hit")
    assert f(x, 2, mode="mul").tolist() == [2.0, 2.0]
    cfg = {"a": 1, "b": 2}  # a container: the function leaves the lane (where it was on it) for the general path
    assert every_way(cfg) == [[3.0, 3.0]] * 7
    assert every_way(2) == [[3.0, 3.0]] * 7
    assert traced == [(2, "add"), (2, "mul"), (cfg, "add")]
    assert f.cache_info().hits == 6 + 6 + 7
    assert (getattr(f, "_call_slot", None) is type(f).__call__) == (hit_path == "C hit")


def _frames_of_ours(call: Any) -> list[str]:
    """The Python frames of jaxstatic's generated code that ``call()`` runs."""
    seen: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith("<jaxstatic>"):
            seen.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen


def test_statics_by_keyword_are_hits_of_the_same_programs_with_no_python_frame_in_c(hit_path: str) -> None:
    traced: list[Any] = []

    @js.jit
    def f(x: jax.Array, y: jax.Array, s: Static[float], *, fns: Static[tuple[Any, ...]] = (), n: Static[int] = 1
          ) -> jax.Array:
        traced.append((s, fns, n))
        for fn in fns:
            x = fn(x)
        return x * s * n + y

    x, y, fns = jnp.ones(1), jnp.zeros(1), (jnp.sin, jnp.cos)
    calls = [lambda: f(x, y, 2.5), lambda: f(x, y, s=2.5), lambda: f(x, y=y, s=2.5), lambda: f(x, y, 2.5, n=1),
             lambda: f(x, y, s=2.5, n=1, fns=()), lambda: f(x, y, s=2.5, fns=(), n=1), lambda: f(x, y, n=1, s=2.5)]
    for _ in range(2):
        assert [c().tolist() for c in calls] == [[2.5]] * 7
    assert traced == [(2.5, (), 1)] and f.cache_info().hits == 13
    assert f(x, y, s=2.5, fns=fns, n=3).tolist() == f(x, y, 2.5, fns=fns, n=3).tolist()
    assert len(traced) == 2
    for c in calls[1:]:  # each keyword shape, once met: a hit in C runs no Python frame of jaxstatic's
        assert (_frames_of_ours(c) == []) == (hit_path == "C hit")
    with pytest.raises(js.NonArrayArgumentError, match=r"^f\(\): parameter 'y' is not Static, so its value is "
                                                       r"traced as an array, but y is a str"):
        f(x, y="text", s=2.5)
    assert f.cache_info().hits == 13 + 1 + 6


def test_keyword_only_statics_without_defaults_are_hits_in_c(hit_path: str) -> None:
    """No positional call can be specialized (every static is keyword-only and required): the keyword shapes still
    get their hits in C, and every other call its meaning."""
    traced: list[Any] = []

    @js.jit
    def f(x: jax.Array, *, n: Static[int], mode: Static[str], fns: Static[tuple[Any, ...]]) -> jax.Array:
        traced.append((n, mode))
        for fn in fns:
            x = fn(x)
        return x * n if mode == "train" else x

    x, fns = jnp.zeros(1), (jnp.cos,)
    for _ in range(2):
        assert f(x, n=3, mode="train", fns=fns).tolist() == [3.0]
    assert (_frames_of_ours(lambda: f(x, n=3, mode="train", fns=fns)) == []) == (hit_path == "C hit")
    for _ in range(2):
        assert f(x, mode="eval", n=3, fns=fns).tolist() == [1.0]
    assert f.cache_info().hits == 3 and len(traced) == 2
    assert (_frames_of_ours(lambda: f(x, mode="eval", n=3, fns=fns)) == []) == (hit_path == "C hit")
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'fns'"):
        f(x, n=3, mode="train")
    assert type(f).__call__(f, x, n=3, mode="train", fns=fns).tolist() == [3.0]
    assert f.cache_info().hits == 5 and len(traced) == 2
