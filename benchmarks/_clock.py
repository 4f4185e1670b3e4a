"""The clock a benchmark times calls with: wall time, or the calling thread's CPU time where it ticks finely enough.

``time.thread_time`` leaves out the time other processes hold the cores (steadier on a loaded machine), but some
hosts count it in coarse ticks: a TPU host's ticked in 10 us, so that a ~120 us call read as a multiple of 10 us and
every ratio as a multiple of 1/12. Asked for the thread clock, ``pick`` measures its tick first and falls back to
wall time, saying so, where one tick is over a microsecond.
"""

from __future__ import annotations

import time
from collections.abc import Callable

FINEST_US = 1.0
"""The coarsest tick the thread clock may have to time calls of tens of microseconds (a 1% resolution)."""


def tick_us(clock: Callable[[], float], samples: int = 50) -> float:
    """The smallest step ``clock`` is seen to take, in microseconds."""
    steps = []
    for _ in range(samples):
        start = clock()
        now = clock()
        while now == start:
            now = clock()
        steps.append(now - start)
    return min(steps) * 1e6


def pick(name: str) -> tuple[Callable[[], float], str]:
    """The clock called ``name`` (``wall`` or ``thread``), and the name it is printed under."""
    if name == "wall":
        return time.perf_counter, "wall"
    tick = tick_us(time.thread_time)
    if tick > FINEST_US:
        print(f"note: the thread clock ticks in {tick:.1f} us here, too coarse for calls of tens of microseconds; "
              "timing by wall time instead")
        return time.perf_counter, "wall (thread clock too coarse)"
    return time.thread_time, "thread"
