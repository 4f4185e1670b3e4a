"""Data-parallel training on a global mesh: one ``js.jit`` step with a ``Static`` config, on 1 or 2 processes.

The batch is sharded over the mesh's ``"data"`` axis, the parameters are replicated, and the learning rate and the
activation function travel in a plain ``dict`` marked ``Static``. Every iteration builds a fresh, equal config: the
step is traced once per process all the same.

Run (one process, 8 virtual CPU devices):      python examples/distributed.py
Run (2 processes x 4 CPU devices, loopback):   python examples/distributed.py --launch 2

A worker of a multi-process run is ``--process-id I --num-processes N --port P``; ``--launch N`` starts N of them
on a free port and prints their output. ``--json`` ends each process's output with one JSON line (losses,
trace_count, a checksum of the parameters) for scripts and tests.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

import jaxstatic as js
from jaxstatic import Static

GLOBAL_DEVICES = 8
BATCH, FEATURES, HIDDEN = 64, 8, 16
ACTIVATIONS: dict[str, Callable[[jax.Array], jax.Array]] = {"tanh": jnp.tanh, "relu": jax.nn.relu}

Params = dict[str, jax.Array]


def mlp(params: Params, x: jax.Array, activation: Callable[[jax.Array], jax.Array]) -> jax.Array:
    return activation(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def train_step(params: Params, x: jax.Array, y: jax.Array,
               cfg: Static[dict[str, Any]]) -> tuple[Params, jax.Array]:
    """Mean squared error and one SGD update. ``cfg`` comes last, after the sharded (dynamic) parameters, so
    ``in_shardings`` lists exactly the dynamic ones, as in ``jax.jit``."""

    def loss_fn(p: Params) -> jax.Array:
        return jnp.mean((mlp(p, x, cfg["activation"]) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    return jax.tree.map(lambda p, g: p - cfg["lr"] * g, params, grads), loss


def make_data() -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """The same initial parameters and global batch in every process (a fixed seed)."""
    rng = np.random.default_rng(0)
    params = {
        "w1": rng.normal(size=(FEATURES, HIDDEN)).astype(np.float32) / np.sqrt(FEATURES),
        "b1": np.zeros(HIDDEN, np.float32),
        "w2": rng.normal(size=(HIDDEN, 1)).astype(np.float32) / np.sqrt(HIDDEN),
        "b2": np.zeros(1, np.float32),
    }
    x = rng.normal(size=(BATCH, FEATURES)).astype(np.float32)
    y = np.sin(x.sum(axis=1, keepdims=True)).astype(np.float32)
    return params, x, y


def local_rows(sharding: NamedSharding, data: np.ndarray) -> np.ndarray:
    """The rows of the global ``data`` that this process's devices hold (a real loader would read only these)."""
    rows = [idx[0].indices(len(data)) for idx in sharding.addressable_devices_indices_map(data.shape).values()]
    return data[min(r[0] for r in rows):max(r[1] for r in rows)]


def global_array(sharding: NamedSharding, data: np.ndarray) -> jax.Array:
    return jax.make_array_from_process_local_data(sharding, local_rows(sharding, data), data.shape)


def host_value(x: jax.Array) -> np.ndarray:
    """A replicated array's value, read from this process's first shard (the array spans other processes)."""
    return np.asarray(x.addressable_shards[0].data)


def train(steps: int, lr: float, activation: str) -> dict[str, Any]:
    """Run ``steps`` iterations on a mesh of every device of every process; what this process saw."""
    mesh = Mesh(np.array(jax.devices()), ("data",))
    batch = NamedSharding(mesh, PartitionSpec("data"))
    replicated = NamedSharding(mesh, PartitionSpec())
    step = js.jit(train_step, in_shardings=(replicated, batch, batch), out_shardings=(replicated, replicated))

    params_np, x_np, y_np = make_data()
    params = {k: global_array(replicated, v) for k, v in params_np.items()}
    x, y = global_array(batch, x_np), global_array(batch, y_np)
    losses = []
    for _ in range(steps):
        cfg = {"lr": lr, "activation": ACTIVATIONS[activation]}  # a new dict each time, equal to the last
        params, loss = step(params, x, y, cfg)
        losses.append(float(host_value(loss)))
    return {
        "process_id": jax.process_index(),
        "num_processes": jax.process_count(),
        "devices": jax.device_count(),
        "local_devices": jax.local_device_count(),
        "losses": losses,
        "trace_count": step.trace_count,
        "params_sum": {k: float(host_value(v).sum()) for k, v in params.items()},
        "batch_sharding": str(x.sharding.spec),
    }


# -- processes -----------------------------------------------------------------------------------------------


def force_host_devices(count: int) -> None:
    """Run on ``count`` CPU devices unless XLA_FLAGS already says how many. XLA reads its flags when the backend
    starts, at the first use of a device, so setting them after ``import jax`` is still in time."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "--xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={count}".strip()
    jax.config.update("jax_platforms", "cpu")


def start_worker(args: argparse.Namespace) -> None:
    force_host_devices(GLOBAL_DEVICES // args.num_processes)
    if args.num_processes > 1:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        jax.distributed.initialize(coordinator_address=f"127.0.0.1:{args.port}", num_processes=args.num_processes,
                                   process_id=args.process_id, initialization_timeout=args.timeout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def launch(n: int, extra: list[str], timeout: float) -> int:
    """Start ``n`` workers of this script on one free port; print each one's output; kill all past ``timeout``.

    Output goes to files, not pipes: a worker that writes much while another is awaited cannot block on a full pipe.
    """
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    with contextlib.ExitStack() as files:
        logs = [files.enter_context(tempfile.TemporaryFile("w+")) for _ in range(n)]
        procs = [subprocess.Popen([sys.executable, __file__, "--process-id", str(i), "--num-processes", str(n),
                                   "--port", str(port), *extra], env=env, stdout=log, stderr=subprocess.STDOUT)
                 for i, log in enumerate(logs)]
        deadline = time.monotonic() + timeout
        try:
            for p in procs:
                p.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            print(f"timed out after {timeout:.0f}s; stopping every worker", file=sys.stderr)
        finally:
            for p in procs:
                p.kill()
        for i, log in enumerate(logs):
            log.seek(0)
            print("".join(f"[process {i}] {line}" for line in log), end="")
    return max((p.wait() for p in procs), key=abs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launch", type=int, metavar="N", help="start N worker processes on loopback")
    parser.add_argument("--process-id", type=int, default=0)
    parser.add_argument("--num-processes", type=int, default=1)
    parser.add_argument("--port", type=int, default=0, help="coordinator port on 127.0.0.1 (process 0 listens)")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--activation", choices=sorted(ACTIVATIONS), default="tanh")
    parser.add_argument("--timeout", type=int, default=60, help="seconds to wait for the other processes")
    parser.add_argument("--json", action="store_true", help="end with one JSON line of results")
    args = parser.parse_args()
    if args.launch:
        extra = ["--steps", str(args.steps), "--lr", str(args.lr), "--activation", args.activation,
                 "--timeout", str(args.timeout), *(["--json"] if args.json else [])]
        return launch(args.launch, extra, timeout=args.timeout + 30)

    start_worker(args)
    result = train(args.steps, args.lr, args.activation)
    print(f"process {result['process_id']} of {result['num_processes']}: {result['local_devices']} of "
          f"{result['devices']} devices, batch sharded as {result['batch_sharding']}")
    for i, loss in enumerate(result["losses"]):
        print(f"  step {i}: loss {loss:.6f}")
    print(f"  trace_count {result['trace_count']} (one trace for {args.steps} equal configs)")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
