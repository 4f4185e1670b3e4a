"""What explaining a retrace costs: against a long history of earlier traces, and for very large static values.

Each figure is the median of ``--rounds`` runs, in milliseconds. The explanation of a retrace is worked out inside
the trace, so its cost adds to every retrace; it must not grow with the number of earlier traces, and a large static
value must not be rendered whole.

Run: python benchmarks/explain.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import jax.numpy as jnp

from jaxstatic._explain import Signature, StaticSig, blame, describe, diff, dynamic_sig
from jaxstatic._freeze import freeze


def median_ms(fn: Callable[[], Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def signature(i: int) -> Signature:
    cfg = {"lr": 0.1 * i, "layers": [64, 64, i], "act": "relu"}
    return {"x": dynamic_sig(jnp.ones(3)), "cfg": StaticSig(freeze(cfg)), "n": StaticSig(freeze(i))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    history = [signature(i) for i in range(1000)]
    new = signature(-1)
    print("explaining one retrace (ms), by earlier traces compared with:")
    for size in (1, 64, 1000):
        print(f"  {size:5d} earlier traces  {median_ms(partial(blame, history[:size], new), args.rounds):8.3f}")
    for start, what in ((1, "floats"), (0, "floats, one of them 0.0 (keyed by its bits)")):
        big = {f"w{i}": float(i) for i in range(start, start + 1_000_000)}
        changed = dict(big, w5=-5.0)
        reordered = dict(reversed(big.items()))
        old_key, new_key, order_key = freeze(big), freeze(changed), freeze(reordered)
        print(f"a 1e6-entry static dict of {what} (ms):")
        print(f"  freeze                   {median_ms(partial(freeze, big), args.rounds):9.1f}")
        print(f"  describe                 {median_ms(partial(describe, old_key), args.rounds):9.3f}")
        for name, key in (("diff, one entry changed", new_key), ("diff, order reversed", order_key)):
            print(f"  {name:24} {median_ms(partial(diff, 'cfg', old_key, key), args.rounds):9.1f}"
                  f"   {diff('cfg', old_key, key)}")


if __name__ == "__main__":
    main()
