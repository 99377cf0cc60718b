"""How fast this machine is right now, so that speed tables from different days can be compared.

The 2-core machine the benches run on is shared, and its speed per core moves over a day by more
than the load average shows: on 1 Dec 2026 the same code and model recipe measured 55 ms of CPU
per never-seen request in the morning and 95 ms at 14:20 UTC (load average under 1 both times).
Each bench prints this line beside its table, so that a slower figure measured beside a slower
reference is not mistaken for a change in the code.
"""

from __future__ import annotations

import os
import time

import numpy as np


def python_loop_ms(repeats: int = 3) -> float:
    """Best of `repeats` timings of a fixed pure-Python loop (the interpreter-bound part of a
    request: feature assembly, JSON, routing)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        total = 0
        for i in range(1_000_000):
            total += i * i
        best = min(best, time.perf_counter() - start)
    return best * 1000


def matmul_ms(repeats: int = 3) -> float:
    """Best of `repeats` timings of 50 float32 384x384 matrix products (the numeric part: encoder
    layers and cosine tables are products of this size)."""
    matrix = np.random.default_rng(0).random((384, 384), dtype=np.float32)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(50):
            matrix @ matrix
        best = min(best, time.perf_counter() - start)
    return best * 1000


def reference_line() -> str:
    """One line for a bench's output: load average and the two reference timings (lower is faster)."""
    return (f"machine: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
            f"CPU reference: Python loop {python_loop_ms():.0f} ms, numpy matmul {matmul_ms():.0f} ms "
            f"(1 Dec 2026 14:25 UTC: 57 ms, 31 ms)")
