"""Donation: the cost of a donating call, and the memory donation saves.

Dispatch: a training step ``state = step(state, batch)`` over a state of ``LEAVES`` small arrays, each call donating
the state (so each call consumes the previous call's result, as a real loop does). Contenders: ``jax.jit`` with
``donate_argnums=0``, ``jaxstatic.jit`` with the state annotated ``Donate[...]`` (which notes each donated leaf, so
that a later use names the donating call), and ``jax.jit``/``jaxstatic.jit`` without donation for reference.
Interleaved rounds; the table shows median microseconds per call and the ratio to ``jax.jit`` with donation.

Memory (``--memory``): the peak resident memory of a process that runs ``STEPS`` steps of a loop over a state of
``--mb`` megabytes, with and without donation, each in a fresh process (``ru_maxrss``), on the CPU.

Device memory (``--device-memory [FRACTION]``): the peak memory of the default device (``memory_stats()``, which an
accelerator keeps and the CPU does not) over the same loop, its state ``FRACTION`` of the device's memory, each
contender in a fresh process. Over half the memory, the state fits only with donation.

Run: python benchmarks/donation.py [--rounds 15] [--calls 2000] [--blocks 10] [--clock thread] [--size 4096] [--memory] [--mb 512]
     python benchmarks/donation.py --device-memory [0.57]
"""

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import _clock
import jax
import jax.numpy as jnp

import jaxstatic as js
from jaxstatic import Donate

CLOCK = time.perf_counter
"""Wall time, or with ``--clock thread`` the calling thread's CPU time (leaves out other processes' load and the
work XLA's own threads do; a call's Python-side cost, recording included, is all on the calling thread)."""
LEAVES = 8
SIZE = 4096
STEPS = 5


def _step(state: Any, lr: Any) -> Any:
    return jax.tree.map(lambda p: p - lr * p, state)


def step_donated(state: Donate[dict[str, jax.Array]], lr: jax.Array) -> Any:
    return _step(state, lr)


def step_plain(state: dict[str, jax.Array], lr: jax.Array) -> Any:
    return _step(state, lr)


def _state() -> dict[str, jax.Array]:
    return {f"w{i}": jnp.full(SIZE, 1.0) for i in range(LEAVES)}


def _run(step: Callable[..., Any], state: Any, calls: int) -> tuple[Any, float]:
    lr = jnp.float32(1e-6)
    start = CLOCK()
    for _ in range(calls):
        state = step(state, lr)
    jax.block_until_ready(state)
    return state, (CLOCK() - start) / calls * 1e6


def dispatch(rounds: int, calls: int, blocks: int) -> None:
    contenders = {
        "jax.jit donate_argnums=0": jax.jit(step_plain, donate_argnums=0),
        "jaxstatic.jit Donate[...]": js.jit(step_donated),
        "jax.jit (no donation)": jax.jit(step_plain),
        "jaxstatic.jit (no donation)": js.jit(step_plain),
    }
    states = {name: fn(_state(), jnp.float32(0)) for name, fn in contenders.items()}  # compiled before timing
    base = "jax.jit donate_argnums=0"
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    ratios: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        times = dict.fromkeys(contenders, 0.0)
        for _ in range(blocks):  # the contenders alternate within a round, so they share the machine's load
            for name, fn in contenders.items():
                states[name], us = _run(fn, states[name], calls // blocks)
                times[name] += us / blocks
        for name in contenders:
            samples[name].append(times[name])
            ratios[name].append(times[name] / times[base])
    print(f"state: {LEAVES} arrays of {SIZE} float32; {rounds} rounds of {calls} calls; median us per call, and the "
          f"median over rounds of each round's ratio to {base}")
    print(f"{'contender':32} {'us/call':>9} {'ratio':>7}")
    for name in contenders:
        print(f"{name:32} {statistics.median(samples[name]):9.2f} {statistics.median(ratios[name]):7.3f}")


_MEMORY_CHILD = """
import resource, sys, jax, jax.numpy as jnp, jaxstatic as js
from jaxstatic import Donate
mb, donate = int(sys.argv[1]), sys.argv[2] == "1"
n = mb * 2**20 // 4 // 4
def step(state, lr):
    return jax.tree.map(lambda p: p - lr * p, state)
def step_donated(state: Donate[dict], lr):
    return step(state, lr)
fn = js.jit(step_donated if donate else step)
state = {f"w{i}": jnp.ones(n) for i in range(4)}
for _ in range(int(sys.argv[3])):
    state = fn(state, 1e-3)
jax.block_until_ready(state)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def memory(mb: int) -> None:
    def peak(donate: bool) -> int:
        out = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, str(mb), "1" if donate else "0", str(STEPS)],
                             capture_output=True, text=True, check=True)
        return int(out.stdout.split()[-1])

    baseline = int(subprocess.run([sys.executable, "-c", "import resource, jax, jax.numpy as jnp, jaxstatic; "
                                   "jax.block_until_ready(jnp.ones(1)); "
                                   "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)"],
                                  capture_output=True, text=True, check=True).stdout.split()[-1])
    without, with_ = peak(False), peak(True)
    print(f"state: {mb} MB in 4 arrays, {STEPS} steps of state = step(state, lr), on {jax.devices()[0].platform}")
    print(f"peak resident memory, process with jax imported only: {baseline} MB")
    print(f"without donation: {without} MB (+{without - baseline} MB)")
    print(f"with Donate[...]: {with_} MB (+{with_ - baseline} MB)")


_DEVICE_CHILD = """
import sys, jax, jax.numpy as jnp, jaxstatic as js
from jaxstatic import Donate
fraction, contender, steps = float(sys.argv[1]), sys.argv[2], int(sys.argv[3])
device = jax.devices()[0]
stats = device.memory_stats()
if not stats or "bytes_limit" not in stats:
    print(f"none: {device.platform} keeps no device memory statistics (memory_stats())")
    sys.exit()
limit = stats["bytes_limit"]
print(f"device: {device.device_kind} ({device.platform}), {limit / 2**30:.2f} GiB; state {fraction * limit / 2**30:.2f} GiB")
n = int(limit * fraction) // 4 // 4
def step(state, lr):
    return jax.tree.map(lambda p: p - lr * p, state)
def step_donated(state: Donate[list], lr):
    return step(state, lr)
fn = {"jax.jit donate_argnums=0": jax.jit(step, donate_argnums=0), "jaxstatic.jit Donate[...]": js.jit(step_donated),
      "jax.jit (no donation)": jax.jit(step), "jaxstatic.jit (no donation)": js.jit(step)}[contender]
state = [jnp.ones(n, dtype=jnp.float32) for _ in range(4)]
try:
    for _ in range(steps):
        state = fn(state, 1e-3)
    jax.block_until_ready(state)
except Exception as err:
    print("result:", str(err).split(":")[0])
else:
    print(f"result: peak {device.memory_stats()['peak_bytes_in_use'] / 2**30:.2f} GiB")
"""


def device_memory(fraction: float) -> None:
    """Peak memory of the default device over a loop whose state is ``fraction`` of the device's memory, each
    contender in a fresh process: a device's peak is counted per process, and an accelerator is held by one process
    at a time (this one opens none). A state over half the memory fits only with donation: without it, a step holds
    the old state and the new one at once."""
    print(f"{STEPS} steps of state = step(state, lr), the state in 4 arrays; peak device memory per fresh process")
    for contender in ("jax.jit donate_argnums=0", "jaxstatic.jit Donate[...]", "jax.jit (no donation)",
                      "jaxstatic.jit (no donation)"):
        out = subprocess.run([sys.executable, "-c", _DEVICE_CHILD, str(fraction), contender, str(STEPS)],
                             capture_output=True, text=True, check=True).stdout.splitlines()
        said = dict(line.split(": ", 1) for line in out if ": " in line)
        if "none" in said:
            print(said["none"] + "; --memory measures a CPU process's resident memory")
            return
        if contender.startswith("jax.jit donate"):
            print(said["device"])
        print(f"{contender:30} {said['result']}")


def main() -> None:
    global CLOCK, SIZE
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--blocks", type=int, default=10)
    parser.add_argument("--clock", choices=["wall", "thread"], default="wall")
    parser.add_argument("--size", type=int, default=SIZE, help="float32 elements per array of the state")
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--mb", type=int, default=512)
    parser.add_argument("--device-memory", type=float, metavar="FRACTION", nargs="?", const=0.57,
                        help="peak device memory over a state this fraction of the device's memory (default 0.57: "
                             "it fits only with donation)")
    args = parser.parse_args()
    SIZE = args.size
    if args.device_memory is not None:
        device_memory(args.device_memory)
        return
    CLOCK, _ = _clock.pick(args.clock)
    if args.memory:
        memory(args.mb)
    else:
        dispatch(args.rounds, args.calls, args.blocks)


if __name__ == "__main__":
    main()
