"""Calls made from several threads at once."""

from __future__ import annotations

import threading
from collections.abc import Callable


def run_together(body: Callable[[], object], threads: int = 4, timeout: float = 60) -> None:
    """Run ``body`` in ``threads`` threads that start it at the same moment (a barrier), and wait for them all."""
    barrier = threading.Barrier(threads, timeout=20)

    def start() -> None:
        barrier.wait()
        body()

    running = [threading.Thread(target=start) for _ in range(threads)]
    for t in running:
        t.start()
    for t in running:
        t.join(timeout)
