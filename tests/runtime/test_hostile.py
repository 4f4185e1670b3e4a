"""Cache hits under threads and hostile values: with the hits in C and without them, a call's meaning never changes,
and nothing raises, hangs, leaks or miscounts: ``clear_cache()``, ``cache_info()``, ``trace_count`` and ``retraces``
from any thread while others make hits; static values whose ``__hash__``, metaclass or finalizer runs code (even
calls of the same function); tuple subclasses that iterate in their own order; calls that fail while being keyed.

A case that could crash the interpreter or hang it runs in a process of its own per mode (``isolated``), with
``faulthandler`` set to print every thread's stack before a timeout: a fault then fails that one case."""

from __future__ import annotations

import contextlib
import gc
import subprocess
import sys
import textwrap
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static, _extension

from ._devices import cpu_env
from ._threads import run_together

# -- threads ---------------------------------------------------------------------------------------------------


def _while_hits(f: Any, call: Callable[[], object], inspect: Callable[[], object], seconds: float = 0.4) -> None:
    """Run ``call`` in two threads (hits) while a third runs ``inspect`` over and over; re-raise anything raised."""
    errors: list[BaseException] = []
    done = threading.Event()

    def hits() -> None:
        try:
            while not done.is_set():
                call()
        except BaseException as err:  # reported below
            errors.append(err)

    def inspecting() -> None:
        try:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                inspect()
        except BaseException as err:  # reported below
            errors.append(err)
        finally:
            done.set()

    threads = [threading.Thread(target=hits) for _ in range(2)] + [threading.Thread(target=inspecting)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors


def test_clear_cache_and_inspection_are_safe_while_other_threads_make_hits(hit_path: str) -> None:
    @js.jit
    def f(x: jax.Array, cfg: Static[dict[str, float]]) -> jax.Array:
        return x * cfg["a"]

    x = jnp.ones(1)
    configs = [{"a": 1.0}, {"a": 2.0}, {"a": 3.0}]  # several programs: every hit keeps the cache's order of use
    calls = iter(range(10**9))

    def call() -> None:
        i = next(calls)
        assert f(x, configs[i % 3]).tolist() == [float(i % 3 + 1)]

    def inspect() -> None:
        f.clear_cache()
        for _ in range(20):
            f.cache_info()
            assert f.trace_count >= 0 and len(f.retraces) >= 0
            time.sleep(0.002)

    _while_hits(f, call, inspect, seconds=1.0)
    f.clear_cache()
    before = f.trace_count
    assert [f(x, c).tolist() for c in configs] == [[1.0], [2.0], [3.0]]
    assert f.trace_count == before + 3  # cleared for good: nothing half cleared was left behind
    assert f.cache_info().currsize == 3


class Mode:
    """A static value whose ``__hash__`` and ``__eq__`` are Python code, like an ``Enum`` member's."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __hash__(self) -> int:
        return hash(self.n)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mode) and other.n == self.n


def test_cache_info_is_safe_while_other_threads_make_hits_with_python_hashed_statics(hit_path: str) -> None:
    @js.jit
    def f(x: jax.Array, mode: Static[Any]) -> jax.Array:
        return x * mode.n  # type: ignore[no-any-return]

    x = jnp.ones(1)
    modes = [Mode(i) for i in range(4)]
    for m in modes:
        f(x, m)
    calls = iter(range(10**9))

    def call() -> None:
        f(x, modes[next(calls) % 4])

    _while_hits(f, call, lambda: f.cache_info())
    assert f.trace_count == 4 and f.cache_info().currsize == 4


def test_hits_and_misses_are_counted_exactly_across_threads_while_another_reads_the_counts(hit_path: str) -> None:
    @js.jit
    def f(x: jax.Array, n: Static[Any]) -> jax.Array:
        return x * n.n  # type: ignore[no-any-return]

    x = jnp.ones(1)
    modes = [Mode(i) for i in range(4)]

    def calls() -> None:
        for i in range(100):
            f(x, modes[i % 4])
            f.cache_info()

    run_together(calls)
    info = f.cache_info()
    assert info.misses == f.trace_count == 4 and info.hits == 400 - 4


# -- hostile values ----------------------------------------------------------------------------------------------


class Pair(NamedTuple):
    first: Any
    second: Any


class Swapped(Pair):
    """A named tuple that iterates in another order than it stores its items."""

    __slots__ = ()

    def __iter__(self) -> Any:
        return iter((self.second, self.first))


def _one(x: jax.Array) -> jax.Array:
    return x + 1


def _two(x: jax.Array) -> jax.Array:
    return x * 2


def test_a_named_tuple_that_iterates_in_its_own_order_never_gets_another_configs_program(hit_path: str) -> None:
    seen: list[Any] = []

    @js.jit
    def f(x: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        seen.append(cfg)
        return cfg["p"].first(cfg["p"].second(x))  # type: ignore[no-any-return]

    x = jnp.ones(1)
    assert f(x, {"p": Swapped(_one, _two)}).tolist() == [3.0]  # one(two(1))
    assert f(x, {"p": Swapped(_one, _two)}).tolist() == [3.0]
    assert f(x, {"p": Swapped(_two, _one)}).tolist() == [4.0]  # two(one(1))
    assert f(x, {"p": Swapped(_one, _two)}).tolist() == [3.0]
    assert f(x, {"p": Pair(_two, _one)}).tolist() == [4.0]
    assert f(x, {"p": Pair(_two, _one)}).tolist() == [4.0]


class Flaky:
    """A static value whose ``__hash__`` raises while ``failing`` is set."""

    failing: type[BaseException] | None = None

    def __hash__(self) -> int:
        if Flaky.failing is not None:
            raise Flaky.failing("hash refused")
        return 7

    def __eq__(self, other: object) -> bool:
        return other is self


@pytest.mark.parametrize("error", [ValueError, KeyboardInterrupt])
def test_a_call_that_raises_while_being_keyed_is_no_hit(hit_path: str, error: type[BaseException]) -> None:
    @js.jit
    def f(x: jax.Array, v: Static[Any], n: Static[float] = 1.5) -> jax.Array:
        return x * n

    x = jnp.ones(1)
    flaky = Flaky()
    f(x, flaky)
    f(x, flaky, 2.5)  # two programs: a hit keeps their order of use, hashing the key again
    f(x, flaky)
    assert f.cache_info() == js.CacheInfo(hits=1, misses=2, maxsize=8192, currsize=2, evictions=0)
    Flaky.failing = error
    try:
        for n in (1.5, 2.5, 3.5):
            with pytest.raises(error, match="hash refused"):
                f(x, flaky, n)
    finally:
        Flaky.failing = None
    assert f.cache_info() == js.CacheInfo(hits=1, misses=2, maxsize=8192, currsize=2, evictions=0)
    f(x, flaky, 2.5)
    assert f.cache_info() == js.CacheInfo(hits=2, misses=2, maxsize=8192, currsize=2, evictions=0)


def test_the_memo_keeps_at_most_a_bounded_number_of_classes(hit_path: str) -> None:
    """A config holding an instance of a class made per call (a named tuple type built in a loop) is not kept
    alive for ever by what the function remembers of its calls, whether they succeeded or failed."""

    @js.jit(cache_size=2)
    def f(x: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        if cfg["fail"]:
            raise ValueError("refused")
        return x

    x = jnp.ones(1)
    refs: list[weakref.ref[type]] = []

    def call(i: int, fail: bool) -> None:
        made: Any = type(f"Made{i}", (Pair,), {"__slots__": ()})  # a named tuple type made per call
        refs.append(weakref.ref(made))
        with contextlib.suppress(ValueError):
            f(x, {"fail": fail, "t": made(i, i)})

    for i in range(400):  # failed calls (each traced, none compiled): their values are forgotten at once
        call(i, fail=True)
    for i in range(400, 450):
        call(i, fail=False)
    gc.collect()
    assert sum(r() is not None for r in refs) <= 256 + 50 + 2  # the memo's bound, and what the last calls left


def test_the_instance_call_and_a_parameter_named_self_work_as_with_a_function(hit_path: str) -> None:
    @js.jit
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    @js.jit
    def g(x: jax.Array, self: Static[int]) -> jax.Array:
        return x + self

    @js.jit
    def h(x: jax.Array, cfg: Static[dict[str, int]], self: Any = None) -> jax.Array:
        return x * cfg["a"]

    x = jnp.ones(1)
    for _ in range(2):
        assert type(f).__call__(f, x, 2).tolist() == [2.0]
        assert f(x, 2).tolist() == [2.0] and f.__call__(x, 2).tolist() == [2.0]
        assert g(x, self=5).tolist() == [6.0] and g(x, 5).tolist() == [6.0]
        cfg = {"a": 3}
        assert type(h).__call__(h, x, cfg).tolist() == [3.0]
        assert h(x, cfg).tolist() == [3.0] and h(x, cfg, self=x).tolist() == [3.0]
    assert f.trace_count == 1 and g.trace_count == 1 and h.trace_count == 2


# -- each in a process of its own: a fault fails one case ---------------------------------------------------------

_PRELUDE = """
import faulthandler, gc, sys
faulthandler.dump_traceback_later({timeout}, exit=True)
from typing import Any, NamedTuple
import jax, jax.numpy as jnp
import jaxstatic as js
from jaxstatic import Static, _extension
assert (_extension.compiled is None) == {pure}
x = jnp.ones(1)
"""


@pytest.fixture(params=["C hit", "generated hit"])
def isolated(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """Runs a script in a new interpreter, with the hits in C (where built) or without (``JAXSTATIC_PURE_PYTHON``),
    and returns what it printed; a crash, a hang (every thread's stack is printed) or an error fails the test."""
    pure = request.param == "generated hit"
    if not pure and _extension.extension is None:
        pytest.skip("jaxstatic._hits was not built here")

    def run(script: str, timeout: int = 60) -> str:
        env = cpu_env()
        env.pop("JAXSTATIC_PURE_PYTHON", None)
        if pure:
            env["JAXSTATIC_PURE_PYTHON"] = "1"
        source = _PRELUDE.format(timeout=timeout, pure=pure) + textwrap.dedent(script)
        done = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True, text=True,
                              timeout=timeout + 60)
        assert done.returncode == 0, f"exit status {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done.stdout

    return run


def test_a_metaclass_hash_that_clears_the_cache_while_a_config_is_keyed(isolated: Callable[[str], str]) -> None:
    out = isolated("""
        class Meta(type):
            def __hash__(cls):
                f.clear_cache()
                gc.collect()
                return type.__hash__(cls)

        class Odd(metaclass=Meta):
            pass

        @js.jit
        def f(x, cfg: Static[dict]):
            return x * len(cfg)

        odd = Odd()
        for _ in range(3):
            print(f(x, {"a": 1, "t": (1, 2)}).tolist(), f(x, {"a": 1, "t": odd}).tolist())
        print(f.trace_count)
    """)
    assert out.split("\n")[:3] == ["[2.0] [2.0]"] * 3


def test_a_static_whose_hash_calls_the_same_function_does_not_hang(isolated: Callable[[str], str]) -> None:
    out = isolated("""
        import itertools
        fresh = itertools.count(100)

        class Calls:
            def __init__(self, n):
                self.n = n
            def __hash__(self):
                if self.n < 100:
                    f(x, Calls(next(fresh)))  # a new key each time: traced while this one is looked up
                return self.n
            def __eq__(self, other):
                return isinstance(other, Calls) and other.n == self.n

        @js.jit
        def f(x, c: Static[Any]):
            return x * c.n

        print(f(x, Calls(1)).tolist(), f(x, Calls(1)).tolist(), f(x, Calls(2)).tolist(),
              f.trace_count == f.cache_info().misses == f.cache_info().currsize)
    """)
    assert out == "[1.0] [1.0] [2.0] True\n"


def test_a_finalizer_calling_the_function_while_it_clears_or_evicts_does_not_hang(
        isolated: Callable[[str], str]) -> None:
    out = isolated("""
        class Dies:
            def __init__(self, n):
                self.n = n
            def __hash__(self):
                return self.n
            def __eq__(self, other):
                return isinstance(other, Dies) and other.n == self.n
            def __del__(self):
                if self.n < 100:
                    f(x, Dies(self.n + 100))  # a new program, made while its old one is let go

        @js.jit(cache_size=2)
        def f(x, d: Static[Any]):
            return x + d.n

        for n in range(4):
            f(x, Dies(n))
        f.clear_cache()
        gc.collect()
        f(x, Dies(7))
        f.clear_cache()
        gc.collect()
        print(f(x, Dies(1000)).tolist(), f.cache_info().currsize <= 2)
    """)
    assert out == "[1001.0] True\n"
