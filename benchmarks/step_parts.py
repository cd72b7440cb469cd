"""Where a training step's time goes, part by part, from torch.profiler's table of operators (their own time):
the benchmarks' `--profile` options share it (`segmental_lm.py`, `lm_throughput.py`), and the same-process matmul
baseline both report against (`matmul_gflops`).

A step's parts are named by the operators that make them up (name prefixes); the matmul parts are printed with
their achieved GFLOP/s beside the same process's 2048^2 matmul baseline, and the report ends with the bound the
parts set: if every part but the named compute-bound ones took no time at all, how much shorter the step could get.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

import torch
from torch.profiler import ProfilerActivity, profile

Parts = Sequence[tuple[str, tuple[str, ...]]]
REST = "the rest"


def matmul_gflops(n: int = 2048, reps: int = 10) -> float:
    """The same-process baseline: fp32 n x n torch.mm, GFLOP/s over `reps` products after one warm-up."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    t0 = time.perf_counter()
    for _ in range(reps):
        torch.mm(a, b)
    return 2 * n ** 3 * reps / (time.perf_counter() - t0) / 1e9


def profile_parts(steps: Iterable[Callable[[], None]], parts: Parts) -> tuple[dict[str, float], dict[str, float]]:
    """Run `steps` under the profiler; seconds and FLOPs (where the profiler counts them) per part of `parts`,
    the operators no part names under REST."""
    with profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
        for step in steps:
            step()
    seconds: dict[str, float] = defaultdict(float)
    flops: dict[str, float] = defaultdict(float)
    for e in prof.key_averages():
        part = next((name for name, prefixes in parts if e.key.startswith(prefixes)), REST)
        seconds[part] += e.self_cpu_time_total / 1e6
        flops[part] += e.flops or 0
    return seconds, flops


def print_parts(seconds: dict[str, float], flops: dict[str, float], parts: Parts, gflops: float,
                bound_by: Sequence[str] = ()) -> None:
    """One line per part: its share of the step and, where it did floating-point work the profiler counts,
    its GFLOP/s against the baseline's `gflops`. `bound_by` (marked *): the parts that do the model's arithmetic;
    the last line says how much faster the step would be if everything else cost nothing."""
    total = sum(seconds.values())
    width = max(len(name) for name, _ in parts)
    for part in [name for name, _ in parts] + [REST]:
        rate = flops[part] / seconds[part] / 1e9 if seconds[part] else 0.0
        rate_text = f"  {rate:5.0f} GFLOP/s = {rate / gflops:.0%} of the baseline's" if rate > 1 else ""
        mark = "*" if part in bound_by else " "
        print(f" {mark}{part:{width}s} {seconds[part] / total:6.1%}{rate_text}")
    if bound_by:
        kept = sum(seconds[p] for p in bound_by)
        print(f"  everything but the * parts free: a step {kept / total:.0%} of this one, at most {total / kept:.2f}x "
              "faster with those parts as fast as here")
