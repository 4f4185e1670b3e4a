"""The exact-key lane: calls whose static values all compare exactly go to jax.jit's own static-argument cache.

What a user relies on is that it changes nothing but the cost: the same programs shared and kept apart, the same
trace counts, hits and errors, whichever path a call takes, and when a function meets a value the lane cannot key.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Hashable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxstatic as js
from jaxstatic import Static, _compat, _lane

from ._release import held_until_cleared
from ._threads import run_together

pytestmark = pytest.mark.usefixtures("hit_path")  # each test with the hits in C and without them


def _on_lane(f: Any) -> bool:
    """Whether ``f`` calls go to the lane (not switched to the general path)."""
    call = type(f).__call__
    call = getattr(getattr(call, "fallback", call), "__func__", call)  # the C hit hands other calls to the generated
    return "exact-key lane of" in call.__code__.co_filename


def _counted() -> tuple[js.JitFunction[Any, Any], list[Any]]:
    seen: list[Any] = []

    @js.jit
    def f(x: jax.Array, n: Static[Any], *, mode: Static[str] = "train") -> jax.Array:
        seen.append((n, mode))
        return x * 2 if mode == "train" else x

    return f, seen


def test_one_one_point_oh_and_true_are_three_programs() -> None:
    f, seen = _counted()
    for n in (1, 1.0, True, 1, 1.0, True):
        f(jnp.ones(1), n)
    assert [type(n) for n, _ in seen] == [int, float, bool]
    assert f.trace_count == 3


def test_positional_keyword_and_default_calls_share_one_program_and_count_hits() -> None:
    f, _ = _counted()
    x = jnp.ones(1)
    f(x, 3)
    f(x, n=3)
    f(x=x, n=3, mode="train")
    f(x, 3, mode="train")
    assert f.trace_count == 1
    assert f.cache_info() == js.CacheInfo(hits=3, misses=1, maxsize=8192, currsize=1, evictions=0)
    f(x, 3, mode="eval")
    assert f.trace_count == 2
    assert str(f.retraces[-1]) == ("f was traced again (trace #2) because mode: 'train' -> 'eval'")


def test_a_function_meeting_a_float_keeps_every_earlier_program() -> None:
    f, _ = _counted()
    x = jnp.ones(1)
    f(x, 2)
    f(x, 0.0)
    f(x, -0.0)  # equal to 0.0 in Python and in jax.jit's cache, another program here
    assert f.trace_count == 3
    f(x, 2)  # traced before the float: still the lane's program
    f(x, {"a": 1})
    f(x, 2)
    assert f.trace_count == 4
    assert f.cache_info().hits == 2


class Color(enum.Enum):
    RED = 1
    ALSO_RED = 1.0  # an alias: Color.ALSO_RED is Color.RED


def test_enum_members_and_functions_are_keyed_by_identity() -> None:
    f, _ = _counted()
    x = jnp.ones(1)
    f(x, Color.RED)
    f(x, Color.ALSO_RED)
    f(x, jnp.sin)
    f(x, jnp.cos)
    f(x, jnp.sin)
    assert f.trace_count == 3


def _module_level(x: jax.Array) -> jax.Array:
    return x * 3


def test_module_level_functions_stay_in_the_lane_and_are_keyed_by_identity() -> None:
    """A function its module holds under its name lives as long as the module: the lane takes it (JAX keys it), so
    the function is not switched to the general path; a local function or a float still switches it."""
    seen: list[Any] = []

    @js.jit
    def f(x: jax.Array, n: Static[Any], act: Static[Any] = jnp.tanh) -> jax.Array:
        seen.append((n, act))
        return act(x) * n  # type: ignore[no-any-return]

    x = jnp.zeros(1)
    for _ in range(3):
        assert f(x, 2).tolist() == [0.0]
        assert f(x, 2, _module_level).tolist() == [0.0]
        assert f(x, 2, jnp.cos).tolist() == [2.0]
        assert f(x, n=2, act=jnp.cos).tolist() == [2.0]
    assert f.trace_count == 3 and f.cache_info().hits == 9
    assert _on_lane(f) == _compat.LANE  # no switch (JAX 0.5+)
    lam = lambda v: v + 1  # noqa: E731 (a lambda: never kept)
    assert f(x, 2, lam).tolist() == [2.0]
    assert not _on_lane(f)  # switched
    assert f(x, 2, _module_level).tolist() == [0.0]  # the lane's program, reached from the general path
    assert f(x, 0.0, jnp.cos).tolist() == [0.0]
    assert str(f(x, -0.0, jnp.cos).tolist()) == "[-0.0]"
    assert f.trace_count == 6
    assert [a for _, a in seen] == [jnp.tanh, _module_level, jnp.cos, lam, jnp.cos, jnp.cos]
    f.clear_cache()
    assert f(x, 2, _module_level).tolist() == [0.0]
    assert f.trace_count == 7


def test_functions_given_as_static_values_are_released_by_clear_cache_and_by_dropping() -> None:
    import gc
    import weakref

    @js.jit
    def f(x: jax.Array, act: Static[Any]) -> jax.Array:
        return act(x)  # type: ignore[no-any-return]

    def local_function() -> Any:
        def act(x: jax.Array) -> jax.Array:
            return x + 1
        return act

    held_until_cleared(f, local_function, lambda g, act: g(jnp.ones(1), act))

    def act2(x: jax.Array) -> jax.Array:
        return x + 2

    ref2 = weakref.ref(act2)
    f(jnp.ones(1), act2)
    del act2, f
    gc.collect()
    assert ref2() is None


def test_wrong_calls_get_the_functions_own_errors() -> None:
    f, _ = _counted()
    x = jnp.ones(1)
    f(x, 1)
    with pytest.raises(TypeError, match=r"^f\(\) missing 1 required positional argument: 'n'$"):
        f(x)
    with pytest.raises(TypeError, match=r"^f\(\) takes 2 positional arguments but 3 were given$"):
        f(x, 1, 2)
    with pytest.raises(TypeError, match=r"^f\(\) got an unexpected keyword argument 'bogus'$"):
        f(x, 1, bogus=2)
    with pytest.raises(TypeError, match=r"^f\(\) got multiple values for argument 'x'$"):
        f(x, 1, x=x)
    with pytest.raises(js.NonArrayArgumentError, match="parameter 'x' is not Static"):
        f("text", 1)
    assert f.cache_info().hits == 0


def test_defaults_and_positional_only_parameters_in_the_lane() -> None:
    """A left-out Static default is that default (one program either way); a left-out dynamic default is the
    default itself, as the function would use it; a missing or extra argument gets the function's own error."""
    @js.jit
    def f(x: jax.Array, /, n: Static[int] = 2, y: Any = 10.0, *, mode: Static[str] = "add") -> jax.Array:
        return x * n + y if mode == "add" else x * n - y

    x = jnp.ones(1)
    assert f(x).tolist() == [12.0]
    assert f(x, 2).tolist() == [12.0]
    assert f(x, 2, jnp.ones(1)).tolist() == [3.0]
    assert f(x, n=3, y=jnp.ones(1), mode="sub").tolist() == [2.0]
    assert f(x, 3, jnp.ones(1), mode="sub").tolist() == [2.0]
    assert f.trace_count == 3  # n=2 with y left out (the general path's), n=2 with y, and n=3 with "sub"
    with pytest.raises(TypeError, match=r"^f\(\) missing 1 required positional argument: 'x'$"):
        f(n=2)
    with pytest.raises(TypeError, match=r"^f\(\) got some positional-only arguments passed as keyword arguments: 'x'$"):
        f(x=x)
    with pytest.raises(TypeError, match=r"^f\(\) takes from 1 to 3 positional arguments but 4 positional "
                                        r"arguments \(and 1 keyword-only argument\) were given$"):
        f(x, 2, x, x, mode="add")
    with pytest.raises(TypeError, match=r"^f\(\) takes from 1 to 3 positional arguments but 4 were given$"):
        f(x, 2, x, x)
    assert f(x, -1, 0.5).tolist() == [-0.5]


def test_a_positional_only_static_left_to_its_default_after_one_left_out(hit_path: str) -> None:
    # The lane fills in the Static default, which no call can give once an earlier positional-only one is left out:
    # the general path, which takes the call, gets it left out too.
    @js.jit
    def f(y: Any = 0.5, n: Static[int] = 1, /, *, x: jax.Array) -> jax.Array:
        return x + y + n

    for _ in range(3):
        assert f(x=jnp.ones(2)).tolist() == [2.5, 2.5]
    assert f.trace_count == 1


def test_concurrent_first_calls_of_one_key_trace_once() -> None:
    f, _ = _counted()
    x = jnp.ones(1)
    f(x, 0)  # the lane is in place before the threads start
    run_together(lambda: f(x, 7))
    assert f.trace_count == 2


def test_clear_cache_empties_the_lane_too() -> None:
    f, _ = _counted()
    x = jnp.ones(1)
    f(x, 1)
    f.clear_cache()
    assert f.cache_info().currsize == 0
    f(x, 1)
    assert f.trace_count == 2


def test_options_the_lane_cannot_carry_keep_the_general_path() -> None:
    @js.jit(donate_argnums=0)
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    assert f(jnp.ones(1), 2).tolist() == [2.0]
    assert not _on_lane(f)
    g, _ = _counted()
    g(jnp.ones(1), 2)
    assert _on_lane(g) == _compat.LANE  # JAX 0.5+ only


def test_lowering_ahead_of_time_then_calling_traces_once() -> None:
    f, _ = _counted()
    x = jnp.ones(2)
    compiled = f.lower(x, 3).compile()
    assert compiled(x, 3).tolist() == [2.0, 2.0]
    assert f(x, 3).tolist() == [2.0, 2.0]
    assert f.trace_count == 1
    with pytest.raises(js.StaticMismatchError, match="compiled ahead of time for other static arguments"):
        compiled(x, 4)


def _positional() -> tuple[js.JitFunction[Any, Any], list[Any]]:
    """A signature the lane's hit in C takes whole: no keyword-only parameters."""
    seen: list[Any] = []

    @js.jit
    def g(x: jax.Array, /, n: Static[Any], mode: Static[str] = "train") -> jax.Array:
        seen.append((n, mode))
        if n == 13:
            raise ValueError("unlucky")
        if mode != "train":
            return x
        return n(x) if callable(n) else x * n  # type: ignore[no-any-return]

    return g, seen


def test_every_call_shape_of_a_positional_signature_is_one_program_and_counted(hit_path: str) -> None:
    g, seen = _positional()
    x = jnp.ones(1)
    results = [g(x, 3), g(x, 3, "train"), g(x, n=3), g(x, 3, mode="train"), g(x, mode="train", n=3),
               g(x, n=3, mode="train")]
    assert [r.tolist() for r in results] == [[3.0]] * 6
    assert seen == [(3, "train")]
    assert g.cache_info() == js.CacheInfo(hits=5, misses=1, maxsize=8192, currsize=1, evictions=0)
    assert (type(type(g).__call__).__name__ == "LaneCall") == (hit_path == "C hit" and _compat.LANE)
    assert g(x, 3, "eval").tolist() == [1.0]
    assert g(x, np.int32(3)).tolist() == [3.0]  # a numpy integer: its own type, its own program
    assert [type(n) for n, _ in seen] == [int, int, np.int32]
    assert str(g.retraces[0]) == "g was traced again (trace #2) because mode: 'train' -> 'eval'"


def test_failed_calls_are_no_hits_and_get_the_same_errors(hit_path: str) -> None:
    g, _ = _positional()
    x = jnp.ones(1)
    g(x, 2)
    with pytest.raises(js.NonArrayArgumentError, match=r"^g\(\): parameter 'x' is not Static"):
        g("text", 2)
    with pytest.raises(ValueError, match=r"^unlucky"):
        g(x, 13)
    with pytest.raises(ValueError, match=r"^unlucky"):
        g(x, n=13, mode="train")
    with pytest.raises(TypeError, match=r"^g\(\) got some positional-only arguments passed as keyword arguments: "
                                        r"'x'$"):
        g(x=x, n=2)
    with pytest.raises(TypeError, match=r"^g\(\) got an unexpected keyword argument 'bogus'$"):
        g(x, 2, bogus=1)
    with pytest.raises(TypeError, match=r"^g\(\) takes from 2 to 3 positional arguments but 4 were given$"):
        g(x, 2, "train", 4)
    assert g.cache_info().hits == 0
    assert g(x, 2).tolist() == [2.0]
    assert g.cache_info().hits == 1
    assert _on_lane(g) == _compat.LANE


def test_kept_functions_and_a_switch_to_the_general_path(hit_path: str) -> None:
    g, seen = _positional()
    x = jnp.ones(1)
    for _ in range(3):
        assert g(x, _module_level).tolist() == [3.0]  # kept: its module holds it
    assert len(seen) == 1 and g.cache_info().hits == 2
    assert _on_lane(g) == _compat.LANE
    assert g(x, 0.5).tolist() == [0.5]  # a float: the general path from now on
    assert not _on_lane(g)
    assert g(x, _module_level).tolist() == [3.0] and g(x, 0.5).tolist() == [0.5]
    assert len(seen) == 2 and g.cache_info().hits == 4


def test_many_kept_functions_are_each_a_program_and_hits(hit_path: str) -> None:
    """Kept functions are found by identity however many there are (the hit in C looks a few up by walking them,
    more by their id)."""
    g, seen = _positional()
    x = jnp.full(1, 0.5)
    functions = [jnp.tanh, jnp.sin, jnp.cos, jnp.exp, jnp.log1p, jnp.abs, jnp.ceil, jnp.square, jnp.sqrt,
                 jnp.sign, jnp.floor]
    expected = [fn(x).tolist() for fn in functions]
    for _ in range(3):
        assert [g(x, fn).tolist() for fn in functions] == expected
    assert [n for n, _ in seen] == functions
    assert g.cache_info().hits == 2 * len(functions)
    assert _on_lane(g) == _compat.LANE


def test_concurrent_hits_are_counted_exactly(hit_path: str) -> None:
    g, _ = _positional()
    x = jnp.ones(1)
    g(x, 1)

    def calls() -> None:
        for i in range(200):
            g(x, 1 + i % 2)

    run_together(calls)
    assert g.trace_count == 2
    assert g.cache_info().hits == 799


def test_cache_info_on_the_lane_never_counts_more_programs_than_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lane's programs are held by JAX's cache, whose bound (8192 programs) is the lane's ``maxsize``: past it, the
    oldest keys traced are counted as evicted, never held above the bound (a smaller bound here, as JAX's)."""
    from jaxstatic import _options

    monkeypatch.setattr(_options, "JAX_JIT_CACHE_SIZE", 4)

    @js.jit(cache_size=4)
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    x = jnp.ones(1)
    for n in range(6):
        f(x, n)
    f(x, 5)
    assert _on_lane(f) == _compat.LANE
    assert f.cache_info() == js.CacheInfo(hits=1, misses=6, maxsize=4, currsize=4, evictions=2)


class _Config:
    pass


@pytest.mark.parametrize("declared, may", [
    (dict[str, Any], False), (list[int], False), (tuple[int, ...], False), (frozenset, False), (float, False),
    (_Config, False), (int, True), (str, True), (bool, True), (Any, True), (object, True), (dict | None, True),
    (int | dict, True), (Callable[[int], int], True), (type[_Config], True), (Hashable, True),
])
def test_the_lane_is_left_out_only_for_types_none_of_whose_values_it_takes(declared: Any, may: bool) -> None:
    assert _lane.may_be_exact(declared) is may


def test_a_function_whose_statics_can_never_be_exact_never_installs_the_lane() -> None:
    # The lane would be installed on the first call and switched off on the second (the first dict it meets):
    # decided from the annotations, the general path serves every call from the first.
    @js.jit
    def f(x: jax.Array, cfg: Static[dict[str, Any]], n: Static[int] = 1) -> jax.Array:
        return x * cfg["k"] * n

    for _ in range(3):
        assert f(jnp.ones(1), {"k": 2.0}).tolist() == [2.0]
    assert f._core._lane is None and not _on_lane(f)
    assert (f.trace_count, f.cache_info().hits) == (1, 2)

    @js.jit
    def g(x: jax.Array, n: Static[int], cfg: Static[Any] = None) -> jax.Array:
        return x * n

    assert g(jnp.ones(1), 2).tolist() == [2.0]
    assert (g._core._lane is not None) == _on_lane(g) == _compat.LANE  # an int (or anything) may be exact
