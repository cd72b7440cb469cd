"""Keep freed memory in the process instead of handing it back to the kernel after every step.

Training allocates and frees the same large tensors (a segmental LM's (positions x segment length x vocabulary)
logits are hundreds of MB, a character LM's 16 x 256 x 5,260 logits 86 MB) every step. glibc serves blocks
above its mmap threshold with fresh mmap()s and unmaps them on free, so each step pays page faults to zero them
again: on this project's 2-core machine that was a third of a segmental-LM step spent in the kernel, and a
quarter of a GPT-2 or Backpack step (benchmarks/lm_throughput.py). Raising the thresholds makes freed blocks
reusable. They stay bounded (blocks of 256 MB and more are still mapped afresh, and more than 512 MB free at
the top of the heap is returned): over 40 dim-256 PKU steps of 2,048 characters the peak is 7.4 GB against
8.6 GB with unbounded thresholds, at the same speed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3   # glibc <malloc.h>


@functools.cache
def keep_freed_memory() -> bool:
    """Tune glibc malloc once per process; False where there is no glibc (macOS, musl): nothing to do."""
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError, TypeError):
        return False
    return all(mallopt(param, value) == 1 for param, value in
               ((M_MMAP_THRESHOLD, 256 << 20), (M_TRIM_THRESHOLD, 512 << 20), (M_TOP_PAD, 64 << 20)))
