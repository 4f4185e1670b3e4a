"""Cache-hit dispatch cost of jaxstatic.jit against jax.jit, equinox.filter_jit and (where the statics are hashable,
which it requires) jax_dataclasses.jit, measured in one process.

Each case runs every contender in turn (interleaved), ``ROUNDS`` times, each time ``CALLS`` calls in ``BLOCKS`` turns
(the contenders alternate every ``CALLS // BLOCKS`` calls, so a round's contenders share the machine's load); the table shows
the median microseconds per call and the ratio to jax.jit; ``--ranges`` adds each ratio's range over the rounds
(each round's ratio to that round's jax.jit), the spread a loaded machine gives. Results are never waited for inside the timed loop (all
three dispatch asynchronously, except where noted), so this is the Python-side cost of a call.

Run: python benchmarks/dispatch.py [--rounds 15] [--calls 2000] [--blocks 10] [--baseline PATH] [--json PATH]
[--clock thread]

``--json PATH`` also writes what the table shows (medians, ratios, each ratio's per-round spread), with the date, the
machine (CPU model, cores, load average before and after) and the package versions, for
``benchmarks/plot_dispatch.py`` to draw.

``--baseline PATH`` also measures the ``jaxstatic`` package found at ``PATH`` (another checkout, e.g. made with
``git worktree add /tmp/base <commit>``) in the same process, interleaved with the others, so before and after are
compared under the same conditions. (No ``from __future__ import annotations`` here: each case's annotations are
evaluated when it is defined, with the package under test's own ``Static``.)
"""

import argparse
import datetime
import importlib.metadata
import importlib.util
import itertools
import json
import os
import platform
import statistics
import sys
import time
import types
from collections.abc import Callable
from typing import Any, NamedTuple

import _clock
import equinox as eqx
import jax
import jax.numpy as jnp
import jax_dataclasses as jdc

import jaxstatic as js
from jaxstatic import Static

CLOCK = time.perf_counter
"""What a call is timed by: wall time, or with ``--clock thread`` the calling thread's own CPU time
(``time.thread_time``), which leaves out the time other processes hold the cores (a loaded machine) and the work
JAX's own threads do; each call's Python-side cost is all on the calling thread."""


def per_call_us(fn: Callable[[], Any], calls: int) -> float:
    start = CLOCK()
    for _ in range(calls):
        fn()
    return (CLOCK() - start) / calls * 1e6


def samples_us(contenders: dict[str, Callable[[], Any]], rounds: int, calls: int,
               settle: bool = False, blocks: int = 1) -> dict[str, list[float]]:
    """Microseconds per call, one sample per round, the contenders interleaved within each round: in ``blocks``
    turns of ``calls // blocks`` calls each, so that a round's samples share the machine's load more evenly (on a
    shared machine the load changes within milliseconds, one contender's 2000 calls). ``settle`` waits for every
    contender's results after each round (for pmap, whose queued work would otherwise pile up)."""
    for fn in contenders.values():  # compile, then warm up
        jax.block_until_ready(fn())
        per_call_us(fn, calls // 10 or 1)
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    order = list(contenders.items())
    blocks = max(1, min(blocks, calls))
    for r in range(rounds):
        # Each round starts with the next contender: on a loaded machine the first of a round is measured apart
        # from the others often enough to bias a fixed order by 10% (seen: jax_dataclasses.jit, which *is*
        # jax.jit, at 0.85x).
        turn = order[r % len(order):] + order[: r % len(order)]
        total = dict.fromkeys(contenders, 0.0)
        for _ in range(blocks):
            for name, fn in turn:
                total[name] += per_call_us(fn, calls // blocks)
        for name in contenders:
            samples[name].append(total[name] / blocks)
        if settle:
            jax.block_until_ready([fn() for fn in contenders.values()])
    jax.block_until_ready([fn() for fn in contenders.values()])
    return samples


def measure(contenders: dict[str, Callable[[], Any]], rounds: int, calls: int, settle: bool = False) -> dict[str, float]:
    """The median microseconds per call of each contender."""
    return {name: statistics.median(s) for name, s in samples_us(contenders, rounds, calls, settle).items()}


x, y = jnp.ones(8), jnp.ones(8)


def jdc_jit(f: Callable[..., Any], *static: str) -> Callable[..., Any]:
    """``jax_dataclasses.jit`` of ``f`` with ``static`` marked by its own ``jdc.Static`` (a copy of ``f``)."""
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
    g.__kwdefaults__ = f.__kwdefaults__
    g.__annotations__ = {n: (jdc.Static[Any] if n in static else Any) for n in f.__code__.co_varnames}
    return jdc.jit(g)


def case_int() -> dict[str, Callable[[], Any]]:
    def f(x: jax.Array, y: jax.Array, n: Static[int]) -> jax.Array:
        return x * n + y

    j, s, e, d = jax.jit(f, static_argnames=("n",)), js.jit(f), eqx.filter_jit(f), jdc_jit(f, "n")
    return {"jax.jit": lambda: j(x, y, 3), "jaxstatic.jit": lambda: s(x, y, 3), "eqx.filter_jit": lambda: e(x, y, 3),
            "jdc.jit": lambda: d(x, y, 3), "floor": floor(j)}


def floor(program: Callable[..., Any]) -> Callable[[], Any]:
    """A call of an object whose Python-level ``__call__`` does nothing but call ``program``: what any wrapper
    object with a ``__call__`` of its own costs at least (Python calls it through ``tp_call``, not vectorcall)."""

    class Forward:
        def __call__(self, x: jax.Array, y: jax.Array, n: int) -> Any:
            return program(x, y, n)

    forward = Forward()
    return lambda: forward(x, y, 3)


def case_four_statics() -> dict[str, Callable[[], Any]]:
    def f(x: jax.Array, y: jax.Array, n: Static[int], mode: Static[str], flag: Static[bool],
          act: Static[Callable[[jax.Array], jax.Array]]) -> jax.Array:
        return act(x * n + y) if flag and mode == "train" else x

    j, s, e = jax.jit(f, static_argnums=(2, 3, 4, 5)), js.jit(f), eqx.filter_jit(f)
    d = jdc_jit(f, "n", "mode", "flag", "act")
    return {"jax.jit": lambda: j(x, y, 3, "train", True, jnp.tanh),
            "jaxstatic.jit": lambda: s(x, y, 3, "train", True, jnp.tanh),
            "eqx.filter_jit": lambda: e(x, y, 3, "train", True, jnp.tanh),
            "jdc.jit": lambda: d(x, y, 3, "train", True, jnp.tanh)}


def case_tuple_of_functions() -> dict[str, Callable[[], Any]]:
    fns = (jnp.sin, jnp.cos, jnp.tanh)

    def f(x: jax.Array, y: jax.Array, fns: Static[tuple[Any, ...]]) -> jax.Array:
        for fn in fns:
            x = fn(x)
        return x + y

    j, s, e, d = jax.jit(f, static_argnames=("fns",)), js.jit(f), eqx.filter_jit(f), jdc_jit(f, "fns")
    return {"jax.jit": lambda: j(x, y, fns), "jaxstatic.jit": lambda: s(x, y, fns), "eqx.filter_jit": lambda: e(x, y, fns),
            "jdc.jit": lambda: d(x, y, fns)}


def case_string_keyword() -> dict[str, Callable[[], Any]]:
    def f(x: jax.Array, y: jax.Array, *, mode: Static[str] = "train") -> jax.Array:
        return x + y if mode == "train" else x - y

    j, s, e, d = jax.jit(f, static_argnames=("mode",)), js.jit(f), eqx.filter_jit(f), jdc_jit(f, "mode")
    return {"jax.jit": lambda: j(x, y, mode="eval"), "jaxstatic.jit": lambda: s(x, y, mode="eval"),
            "eqx.filter_jit": lambda: e(x, y, mode="eval"), "jdc.jit": lambda: d(x, y, mode="eval")}


def case_string_positional() -> dict[str, Callable[[], Any]]:
    def f(x: jax.Array, y: jax.Array, mode: Static[str]) -> jax.Array:
        return x + y if mode == "train" else x - y

    j, s, e, d = jax.jit(f, static_argnums=(2,)), js.jit(f), eqx.filter_jit(f), jdc_jit(f, "mode")
    return {"jax.jit": lambda: j(x, y, "eval"), "jaxstatic.jit": lambda: s(x, y, "eval"),
            "eqx.filter_jit": lambda: e(x, y, "eval"), "jdc.jit": lambda: d(x, y, "eval")}


def case_float(keyword: bool) -> Callable[[], dict[str, Callable[[], Any]]]:
    """A float static (jaxstatic's general path: 0.0 and -0.0 are two programs), by position or by keyword."""
    def make() -> dict[str, Callable[[], Any]]:
        def f(x: jax.Array, y: jax.Array, s: Static[float]) -> jax.Array:
            return x * s + y

        j, s, e, d = jax.jit(f, static_argnames=("s",)), js.jit(f), eqx.filter_jit(f), jdc_jit(f, "s")
        if keyword:
            return {"jax.jit": lambda: j(x, y, s=2.5), "jaxstatic.jit": lambda: s(x, y, s=2.5),
                    "eqx.filter_jit": lambda: e(x, y, s=2.5), "jdc.jit": lambda: d(x, y, s=2.5)}
        return {"jax.jit": lambda: j(x, y, 2.5), "jaxstatic.jit": lambda: s(x, y, 2.5),
                "eqx.filter_jit": lambda: e(x, y, 2.5), "jdc.jit": lambda: d(x, y, 2.5)}
    return make


FNS = (jnp.sin, jnp.cos, jnp.tanh)


def case_three_keywords() -> dict[str, Callable[[], Any]]:
    """Three keyword-only statics: an int, a str and a tuple of module-level functions (the same tuple for all)."""
    def f(x: jax.Array, y: jax.Array, *, n: Static[int], mode: Static[str],
          fns: Static[tuple[Any, ...]]) -> jax.Array:
        for fn in fns:
            x = fn(x)
        return x * n + y if mode == "train" else x

    j, s, e = jax.jit(f, static_argnames=("n", "mode", "fns")), js.jit(f), eqx.filter_jit(f)
    d = jdc_jit(f, "n", "mode", "fns")
    return {"jax.jit": lambda: j(x, y, n=3, mode="train", fns=FNS),
            "jaxstatic.jit": lambda: s(x, y, n=3, mode="train", fns=FNS),
            "eqx.filter_jit": lambda: e(x, y, n=3, mode="train", fns=FNS),
            "jdc.jit": lambda: d(x, y, n=3, mode="train", fns=FNS)}


CONFIG = {f"k{i}": (float(i) if i % 3 else jnp.tanh) for i in range(10)}
CONFIG_TUPLE = tuple(sorted(CONFIG.items()))


def case_dict_config() -> dict[str, Callable[[], Any]]:
    """A 10-entry dict for jaxstatic; jax.jit gets the equivalent pre-built hashable tuple (it rejects dicts)."""
    def f(x: jax.Array, y: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        return x * dict(cfg)["k1"] + y

    j, s, e = jax.jit(f, static_argnames=("cfg",)), js.jit(f), eqx.filter_jit(f)
    return {"jax.jit": lambda: j(x, y, CONFIG_TUPLE), "jaxstatic.jit": lambda: s(x, y, CONFIG),
            "eqx.filter_jit": lambda: e(x, y, CONFIG)}


def case_dict_config_rebuilt() -> dict[str, Callable[[], Any]]:
    """As above, but a fresh dict every call: jaxstatic freezes it each time (no identity shortcut)."""
    def f(x: jax.Array, y: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        return x * dict(cfg)["k1"] + y

    j, s, e = jax.jit(f, static_argnames=("cfg",)), js.jit(f), eqx.filter_jit(f)
    return {"jax.jit": lambda: j(x, y, tuple(sorted(CONFIG.items()))), "jaxstatic.jit": lambda: s(x, y, dict(CONFIG)),
            "eqx.filter_jit": lambda: e(x, y, dict(CONFIG))}


SIZES = tuple(range(1000))


def case_long_tuple() -> dict[str, Callable[[], Any]]:
    def f(x: jax.Array, y: jax.Array, sizes: Static[tuple[int, ...]]) -> jax.Array:
        return x * len(sizes) + y

    j, s, e, d = jax.jit(f, static_argnames=("sizes",)), js.jit(f), eqx.filter_jit(f), jdc_jit(f, "sizes")
    return {"jax.jit": lambda: j(x, y, SIZES), "jaxstatic.jit": lambda: s(x, y, SIZES),
            "eqx.filter_jit": lambda: e(x, y, SIZES), "jdc.jit": lambda: d(x, y, SIZES)}


class Optimizer(NamedTuple):
    init: Callable[..., Any]
    update: Callable[..., Any]
    apply: Callable[..., Any]


def _init(p: Any) -> Any:
    return p


def _update(g: Any, lr: float) -> Any:
    return -lr * g


def _apply(p: Any, u: Any) -> Any:
    return p + u


def dp_sgd_config(lr: float = 0.1) -> dict[str, Any]:
    """A DP-SGD training config as written in a training loop: rebuilt on every call."""
    return {"clip": True, "lr": lr, "noise": 1.1, "l2_norm": 1.0, "batch": 256, "microbatches": 8, "steps": 1000,
            "opt": Optimizer(_init, _update, _apply)}


def case_dp_sgd(rebuilt: bool) -> Callable[[], dict[str, Callable[[], Any]]]:
    """jax.jit gets the same values as a pre-built hashable tuple (rebuilt per call too when ``rebuilt``)."""
    def make() -> dict[str, Callable[[], Any]]:
        def f(x: jax.Array, y: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
            c = dict(cfg)  # jax.jit gets it as a tuple of items
            return c["opt"].apply(y, c["opt"].update(x, c["lr"]))

        j, s, e = jax.jit(f, static_argnames=("cfg",)), js.jit(f), eqx.filter_jit(f)
        if rebuilt:
            return {"jax.jit": lambda: j(x, y, tuple(dp_sgd_config().items())),
                    "jaxstatic.jit": lambda: s(x, y, dp_sgd_config()), "eqx.filter_jit": lambda: e(x, y, dp_sgd_config())}
        cfg = dp_sgd_config()
        frozen = tuple(cfg.items())
        return {"jax.jit": lambda: j(x, y, frozen), "jaxstatic.jit": lambda: s(x, y, cfg),
                "eqx.filter_jit": lambda: e(x, y, cfg)}
    return make


def case_kwargs_entry() -> dict[str, Callable[[], Any]]:
    """``static_argnames`` naming a ``**kwargs`` entry, as ``jax.jit`` takes it: the entry static, by keyword."""
    def f(x: jax.Array, y: jax.Array, **kw: Any) -> jax.Array:
        return x * kw["n"] + y

    j, s = jax.jit(f, static_argnames="n"), js.jit(f, static_argnames="n")
    return {"jax.jit": lambda: j(x, y, n=3), "jaxstatic.jit": lambda: s(x, y, n=3)}


def case_args_extra() -> dict[str, Callable[[], Any]]:
    """``static_argnums`` past the named parameters, as ``jax.jit`` takes it: that ``*args`` extra static."""
    def f(x: jax.Array, y: jax.Array, *rest: Any) -> jax.Array:
        return x * rest[0] + y

    j, s = jax.jit(f, static_argnums=2), js.jit(f, static_argnums=2)
    return {"jax.jit": lambda: j(x, y, 3), "jaxstatic.jit": lambda: s(x, y, 3)}


def case_jit_of(transform: str) -> Callable[[], dict[str, Callable[[], Any]]]:
    """``js.jit(js.<transform>(f))`` against ``jax.jit(jax.<transform>(f), static_argnames=...)``."""
    def make() -> dict[str, Callable[[], Any]]:
        def f(x: jax.Array, y: jax.Array, n: Static[int]) -> jax.Array:
            return jnp.sum(x * n + y) if transform == "value_and_grad" else x * n + y

        inner = getattr(jax, transform)
        kw = {"in_axes": (0, 0, None)} if transform == "vmap" else {}
        j, s = jax.jit(inner(f, **kw), static_argnames=("n",)), js.jit(getattr(js, transform)(f))
        return {"jax.jit": lambda: j(x, y, 3), "jaxstatic.jit": lambda: s(x, y, 3),
                "eqx.filter_jit": lambda: s(x, y, 3)}  # no equinox twin here: the column repeats jaxstatic's
    return make


def case_rebuilt() -> dict[str, Callable[[], Any]]:
    """Each transform made again on every call, as in ``def apply(x): return jax.jit(f)(x)``: JAX shares the
    programs of one function and options across its jit objects, jaxstatic the transformed function itself."""
    def f(x: jax.Array, y: jax.Array, n: Static[int]) -> jax.Array:
        return x * n + y

    return {"jax.jit": lambda: jax.jit(f, static_argnames=("n",))(x, y, 3), "jaxstatic.jit": lambda js=js: js.jit(f)(x, y, 3),
            "eqx.filter_jit": lambda: eqx.filter_jit(f)(x, y, 3)}


def case_rebuilt_grad() -> dict[str, Callable[[], Any]]:
    """``js.jit(js.grad(f))`` made on every call, beside ``eqx.filter_jit(eqx.filter_grad(f))`` (which shares its
    program too) and, in the jax.jit column, ``jax.jit`` rebuilt over one ``jax.grad(f)`` made once (a
    ``jax.grad`` made per call is a new function, traced again each time)."""
    def f(x: jax.Array, y: jax.Array, n: Static[int]) -> jax.Array:
        return jnp.sum(x * n + y)

    g = jax.grad(f)
    return {"jax.jit": lambda: jax.jit(g, static_argnames=("n",))(x, y, 3),
            "jaxstatic.jit": lambda js=js: js.jit(js.grad(f))(x, y, 3),
            "eqx.filter_jit": lambda: eqx.filter_jit(eqx.filter_grad(f))(x, y, 3)}


def case_rebuilt_options() -> dict[str, Callable[[], Any]]:
    """``js.jit(f, ...)`` made on every call with two options, spelled alternately two ways that mean the same
    (``static_argnames="n"`` or ``("n",)``, keywords in either order): one function, found by its options' key."""
    def f(x: jax.Array, y: jax.Array, n: int) -> jax.Array:
        return x * n + y

    spellings = [{"static_argnames": "n", "keep_unused": True}, {"keep_unused": True, "static_argnames": ("n",)}]
    turn = itertools.cycle(spellings)
    return {"jax.jit": lambda: jax.jit(f, **next(turn))(x, y, 3), "jaxstatic.jit": lambda js=js: js.jit(f, **next(turn))(x, y, 3),
            "eqx.filter_jit": lambda: eqx.filter_jit(f)(x, y, 3)}


class _Step:
    """A callable instance that lives across calls (a model whose ``__call__`` is the step)."""

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def __call__(self, x: jax.Array, y: jax.Array, n: Static[int]) -> jax.Array:
        return x * n * self.scale + y


def case_rebuilt_instance() -> dict[str, Callable[[], Any]]:
    """``js.jit(step)`` made on every call over one callable instance, found in the instance's ``__dict__``;
    ``jax.jit`` finds its trace by the instance, weakly."""
    step = _Step(2.0)
    return {"jax.jit": lambda: jax.jit(step, static_argnames=("n",))(x, y, 3),
            "jaxstatic.jit": lambda js=js: js.jit(step)(x, y, 3), "eqx.filter_jit": lambda: eqx.filter_jit(step)(x, y, 3)}


def case_rebuilt_custom_vjp() -> dict[str, Callable[[], Any]]:
    """``jit`` made on every call over one ``custom_vjp`` object (``js`` over ``js.custom_vjp``, ``jax`` over
    ``jax.custom_vjp``)."""
    def f(x: jax.Array, y: jax.Array, n: Static[int]) -> jax.Array:
        return x * n + y

    def fwd(x: jax.Array, y: jax.Array, n: int) -> tuple[jax.Array, None]:
        return f(x, y, n), None

    def bwd(n: int, _: None, g: jax.Array) -> tuple[jax.Array, jax.Array]:
        return g * n, g

    ours = js.custom_vjp(f)
    ours.defvjp(fwd, bwd)
    theirs = jax.custom_vjp(f, nondiff_argnums=(2,))
    theirs.defvjp(fwd, bwd)
    return {"jax.jit": lambda: jax.jit(theirs, static_argnums=2)(x, y, 3),
            "jaxstatic.jit": lambda js=js: js.jit(ours)(x, y, 3), "eqx.filter_jit": lambda: eqx.filter_jit(theirs)(x, y, 3)}


def case_pmap() -> dict[str, Callable[[], Any]]:
    """``js.pmap(f)`` against ``jax.pmap(f, static_broadcasted_argnums=...)`` over this machine's devices (in the
    jax.jit column: the baseline of this row is jax.pmap). Each round waits for its results (``settle``)."""
    def f(x: jax.Array, y: jax.Array, n: Static[int]) -> jax.Array:
        return x * n + y

    xs = jnp.ones((jax.local_device_count(), 8))
    j, s = jax.pmap(f, static_broadcasted_argnums=(2,)), js.pmap(f)
    return {"jax.jit": lambda: j(xs, xs, 3), "jaxstatic.jit": lambda: s(xs, xs, 3)}


def decoration_us(rounds: int) -> dict[str, float]:
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    def copy() -> Callable[..., Any]:  # a new function each time: js.jit(f) made again is the one made before
        g = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
        g.__annotations__ = f.__annotations__
        return g

    makers: dict[str, Callable[[], Any]] = {
        "jax.jit": lambda: jax.jit(copy(), static_argnames=("n",)),
        "jaxstatic.jit": lambda js=js: js.jit(copy()),
        "eqx.filter_jit": lambda: eqx.filter_jit(copy()),
    }
    return measure(makers, rounds, 200)


def return_latency_ms() -> dict[str, float]:
    """How long a call takes to return for a large matmul: asynchronous dispatch returns before the result."""
    a = jnp.ones((3000, 3000))

    def f(a: jax.Array, n: Static[int]) -> jax.Array:
        return (a @ a) * n

    contenders = {"jax.jit": jax.jit(f, static_argnames=("n",)), "jaxstatic.jit": js.jit(f),
                  "eqx.filter_jit": eqx.filter_jit(f)}
    out = {}
    for name, fn in contenders.items():
        jax.block_until_ready(fn(a, 2))
        times = []
        for _ in range(5):
            start = time.perf_counter()
            r = fn(a, 2)
            times.append((time.perf_counter() - start) * 1e3)
            jax.block_until_ready(r)
        out[name] = statistics.median(times)
    return out


def load_baseline(path: str) -> types.ModuleType:
    """The ``jaxstatic`` package under ``path``, imported as ``jaxstatic_baseline``."""
    init = f"{path}/jaxstatic/__init__.py"
    spec = importlib.util.spec_from_file_location("jaxstatic_baseline", init,
                                                  submodule_search_locations=[f"{path}/jaxstatic"])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["jaxstatic_baseline"] = module
    spec.loader.exec_module(module)
    return module


def with_package(package: types.ModuleType, make: Callable[[], dict[str, Callable[[], Any]]]) -> Callable[[], Any]:
    """The jaxstatic contender of ``make()``, built with ``package`` in place of ``jaxstatic``. A contender that
    calls ``js`` on each call (a jit made again each call) binds it when made (``lambda js=js: ...``): the global
    is ``jaxstatic`` again by the time it runs."""
    global js, Static
    saved = js, Static
    js, Static = package, package.Static
    try:
        return make()["jaxstatic.jit"]
    finally:
        js, Static = saved


def ratio_text(samples: dict[str, list[float]], name: str, ranges: bool) -> str:
    """The median ratio of ``name`` to jax.jit, and with ``ranges`` the spread of the per-round ratios."""
    if name not in samples:
        return "-"
    text = f"{statistics.median(samples[name]) / statistics.median(samples['jax.jit']):.3f}"
    if ranges:  # the spread of the per-round ratios, and the ratio of the fastest rounds (the quiet machine's)
        per_round = [a / b for a, b in zip(samples[name], samples["jax.jit"])]
        text += f" ({min(per_round):.2f}-{max(per_round):.2f}, best {min(samples[name]) / min(samples['jax.jit']):.2f})"
    return text


def ratio_record(samples: dict[str, list[float]], name: str) -> dict[str, float] | None:
    """What ``ratio_text`` shows, as numbers: the median ratio to jax.jit, the per-round range, the best rounds'."""
    if name not in samples:
        return None
    per_round = [a / b for a, b in zip(samples[name], samples["jax.jit"])]
    ratios = {"median": statistics.median(samples[name]) / statistics.median(samples["jax.jit"]),
              "min": min(per_round), "max": max(per_round), "best": min(samples[name]) / min(samples["jax.jit"])}
    return {k: round(v, 4) for k, v in ratios.items()}


def cpu_model() -> str:
    """The CPU's marketing name where Linux tells it, else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def versions() -> dict[str, str]:
    names = ("jaxstatic", "jax", "jaxlib", "equinox", "jax_dataclasses")
    found = {}
    for name in names:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "not installed"
    return {"python": platform.python_version(), **found}


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else []


def write_json(path: str, args: argparse.Namespace, load_before: list[float], cases: list[dict[str, Any]],
               extras: dict[str, Any]) -> None:
    record = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "system": f"{platform.system()} {platform.machine()}",
                    "load_average_before": load_before, "load_average_after": load_average()},
        "versions": versions(),
        "rounds": args.rounds, "calls": args.calls, "blocks": args.blocks,
        "cases": cases, **extras,
    }
    with open(path, "w") as out:
        json.dump(record, out, indent=1)
        out.write("\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--blocks", type=int, default=10, help="turns per round: the contenders alternate this often")
    parser.add_argument("--baseline", help="a checkout whose jaxstatic to measure too, in the same process")
    parser.add_argument("--ranges", action="store_true", help="show each ratio's range over the rounds")
    parser.add_argument("--only", help="measure only the cases whose name contains this text")
    parser.add_argument("--json", metavar="PATH", help="also write the results, date, machine and versions there")
    parser.add_argument("--clock", choices=("wall", "thread"), default="wall",
                        help="time calls by wall time, or by the calling thread's CPU time (steadier on a loaded machine; "
                             "wall time where that clock ticks coarsely, as on TPU hosts)")
    args = parser.parse_args()
    global CLOCK
    CLOCK, clock_name = _clock.pick(args.clock)
    load_before = load_average()
    records: list[dict[str, Any]] = []
    baseline = load_baseline(args.baseline) if args.baseline else None
    cases = {
        "int static (positional)": case_int,
        "four statics (positional)": case_four_statics,
        "tuple of 3 functions": case_tuple_of_functions,
        "str static (positional)": case_string_positional,
        "str static (keyword)": case_string_keyword,
        "float static (positional)": case_float(keyword=False),
        "float static (keyword)": case_float(keyword=True),
        "three statics by keyword": case_three_keywords,
        "10-entry dict config": case_dict_config,
        "10-entry dict, new each call": case_dict_config_rebuilt,
        "DP-SGD config, same object": case_dp_sgd(rebuilt=False),
        "DP-SGD config, new each call": case_dp_sgd(rebuilt=True),
        "js.jit(js.vmap(f)), int": case_jit_of("vmap"),
        "js.jit(js.value_and_grad(f))": case_jit_of("value_and_grad"),
        "1000-element tuple": case_long_tuple,
        "**kwargs entry static by name": case_kwargs_entry,
        "*args extra static by position": case_args_extra,
        "jit made again each call": case_rebuilt,
        "jit(grad(f)) made each call": case_rebuilt_grad,
        "jit, 2 options spelled 2 ways": case_rebuilt_options,
        "jit over an instance, each call": case_rebuilt_instance,
        "jit over custom_vjp, each call": case_rebuilt_custom_vjp,
        "js.pmap(f) vs jax.pmap, int": case_pmap,
    }
    print(f"jax {jax.__version__}, equinox {eqx.__version__}; median us/call ({clock_name} clock) over {args.rounds} interleaved rounds "
          f"of {args.calls} calls in {args.blocks} turns; ratios to jax.jit")
    width = 29 if args.ranges else 7
    columns = ["js/jax", "eqx/jax", "jdc/jax"] + (["base/jax"] if baseline else [])
    print(f"{'case':30} {'jax.jit':>8} {'jaxstatic':>9} " + " ".join(f"{c:>{width}}" for c in columns))
    floors: list[tuple[str, str]] = []
    for name, make in cases.items():
        if args.only and args.only not in name:
            continue
        contenders = make()
        if name.startswith("js.jit(js."):
            del contenders["eqx.filter_jit"]
        if baseline is not None:
            contenders["baseline"] = with_package(baseline, make)
        samples = samples_us(contenders, args.rounds, args.calls, settle="pmap" in name, blocks=args.blocks)
        m = {k: statistics.median(v) for k, v in samples.items()}
        ratios = [ratio_text(samples, c, args.ranges) for c in ("jaxstatic.jit", "eqx.filter_jit", "jdc.jit")]
        if baseline is not None:
            ratios.append(ratio_text(samples, "baseline", args.ranges))
        print(f"{name:30} {m['jax.jit']:8.2f} {m['jaxstatic.jit']:9.2f} " + " ".join(f"{r:>{width}}" for r in ratios))
        if "floor" in samples:
            floors.append((name, ratio_text(samples, "floor", args.ranges)))
        records.append({"case": name, "median_us": {k: round(v, 3) for k, v in m.items()}, "ratio_to_jax_jit": {
            c: ratio_record(samples, c) for c in ("jaxstatic.jit", "eqx.filter_jit", "jdc.jit", "baseline", "floor")
            if c in samples}})
    for name, text in floors:
        print(f"floor, {name}: a class whose __call__ only calls the same jax.jit: {text.strip()}")
    if args.only:
        if args.json:
            write_json(args.json, args, load_before, records, {})
        return
    d = decoration_us(args.rounds)
    print(f"{'decoration (us each)':30} {d['jax.jit']:8.2f} {d['jaxstatic.jit']:9.2f} "
          f"{d['jaxstatic.jit'] / d['jax.jit']:7.3f} {d['eqx.filter_jit'] / d['jax.jit']:7.2f}")
    lat = return_latency_ms()
    print(f"{'3000x3000 matmul return (ms)':30} {lat['jax.jit']:8.2f} {lat['jaxstatic.jit']:9.2f} "
          f"{lat['eqx.filter_jit']:7.2f}")
    if args.json:
        write_json(args.json, args, load_before, records, {"decoration_us": {k: round(v, 3) for k, v in d.items()},
                                                           "matmul_return_ms": {k: round(v, 3) for k, v in lat.items()}})


if __name__ == "__main__":
    main()
