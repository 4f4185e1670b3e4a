"""Two processes on loopback, each with 4 CPU devices, train over one global 8-device mesh with a Static config."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import pathlib
import socket
import subprocess
import sys
import time
from types import ModuleType
from typing import Any

import jax
import numpy as np
import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "distributed.py"
STEPS = 4
TIMEOUT_S = 120  # a hang guard; the run itself takes seconds


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("distributed_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_workers(n: int, log_dir: pathlib.Path) -> list[dict[str, Any]]:
    """Start ``n`` workers of the example; their JSON results, or a failure carrying every worker's output."""
    port = _free_port()
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": f"--xla_force_host_platform_device_count={8 // n}"}
    with contextlib.ExitStack() as files:
        logs = [files.enter_context(open(log_dir / f"process{i}.log", "w+")) for i in range(n)]
        procs = [subprocess.Popen([sys.executable, str(EXAMPLE), "--process-id", str(i), "--num-processes", str(n),
                                   "--port", str(port), "--steps", str(STEPS), "--timeout", "60", "--json"],
                                  env=env, stdout=log, stderr=subprocess.STDOUT) for i, log in enumerate(logs)]
        deadline = time.monotonic() + TIMEOUT_S
        try:
            for p in procs:
                p.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            pass
        finally:
            for p in procs:  # a worker left waiting on a dead peer would otherwise outlive the test
                if p.poll() is None:
                    p.kill()
                p.wait()
        outputs = []
        for log in logs:
            log.seek(0)
            outputs.append(log.read())
    report = "\n".join(f"--- process {i} (exit {p.returncode}):\n{out}" for i, (p, out) in
                       enumerate(zip(procs, outputs)))
    if any(p.returncode != 0 for p in procs):
        pytest.fail(f"the workers did not all finish within {TIMEOUT_S}s with exit status 0\n{report}")
    return [json.loads(out.strip().splitlines()[-1]) for out in outputs]


def test_two_processes_train_like_one_and_never_retrace(tmp_path: pathlib.Path) -> None:
    try:
        _free_port()
    except OSError as err:  # a sandbox that refuses sockets, even on the loopback (a TPU host's)
        pytest.skip(f"jax.distributed's processes talk over a loopback socket, which this machine refuses ({err})")
    results = _run_workers(2, tmp_path)

    assert len(jax.devices()) == 8
    example = _example()
    reference = example.train(STEPS, lr=0.1, activation="tanh")  # this process: one process, 8 devices
    assert (reference["num_processes"], reference["devices"], reference["trace_count"]) == (1, 8, 1)
    for i, result in enumerate(results):
        assert (result["process_id"], result["num_processes"]) == (i, 2)
        assert (result["devices"], result["local_devices"]) == (8, 4)
        assert result["trace_count"] == 1  # STEPS fresh, equal config dicts: one trace in each process
        np.testing.assert_allclose(result["losses"], reference["losses"], rtol=1e-5)
        for name, total in reference["params_sum"].items():
            np.testing.assert_allclose(result["params_sum"][name], total, rtol=1e-5, atol=1e-6)
    assert reference["losses"][-1] < reference["losses"][0]  # the step trains: the comparison is not vacuous


def test_the_sharded_step_matches_one_device() -> None:
    """The example's step on the 8-device mesh gives one device's numbers (data parallelism changes nothing)."""
    example = _example()
    params_np, x_np, y_np = example.make_data()
    cfg = {"lr": 0.1, "activation": example.ACTIVATIONS["tanh"]}
    one_device = jax.jit(lambda p, x, y: example.train_step(p, x, y, cfg))
    params: Any = params_np
    losses = []
    for _ in range(STEPS):
        params, loss = one_device(params, x_np, y_np)
        losses.append(float(loss))

    sharded = example.train(STEPS, lr=0.1, activation="tanh")
    np.testing.assert_allclose(sharded["losses"], losses, rtol=1e-5)
    for name, value in params.items():
        np.testing.assert_allclose(sharded["params_sum"][name], float(value.sum()), rtol=1e-5, atol=1e-6)
    # str() of JAX's own spec: PartitionSpec('data',) before JAX 0.9, P('data',) since. The example's mesh is every
    # device of the default backend: eight CPUs, or the accelerator's own
    assert (sharded["devices"], sharded["batch_sharding"]) == (jax.device_count(),
                                                               str(jax.sharding.PartitionSpec("data")))
