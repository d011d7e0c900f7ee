"""Helpers shared by the benchmark scripts: the machine label printed with every table, and a timing loop."""

from __future__ import annotations

import os
import platform
import statistics
import time
from typing import Callable


def machine() -> str:
    """Platform, CPU count, torch threads and the load average now (absolute times are only read with this label)."""
    import torch

    return (f"{platform.platform()} · {platform.processor() or platform.machine()} · {os.cpu_count()} CPUs · "
            f"torch {torch.__version__} with {torch.get_num_threads()} thread(s) · load average "
            f"{os.getloadavg()[0]:.1f} at start")


def median_ms(fn: Callable[[], object], repeats: int, warmup: bool = False) -> tuple[float, float]:
    """(median, min) wall time of ``fn()`` in milliseconds over ``repeats`` calls, after one untimed call if asked."""
    if warmup:
        fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(1000 * (time.perf_counter() - t))
    return statistics.median(times), min(times)
