"""What the CPU can do, read once from /proc/cpuinfo: the profiles choose bfloat16 by it, provenance records it."""

from __future__ import annotations

import functools
from pathlib import Path


@functools.cache
def _cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:            # not Linux: no flags known, so no native bfloat16 assumed
        return ""


def cpu_model() -> str:
    for line in _cpuinfo().splitlines():
        if line.startswith("model name"):
            return line.partition(":")[2].strip()
    return "unknown"


def cpu_has_bf16() -> bool:
    """The CPU multiplies bfloat16 natively (AVX512_BF16 or AMX). Elsewhere bf16 autocast on the CPU is
    emulated: on an AVX2-only EPYC a (4096 x 2048) @ (2048 x 128) bf16 matmul took 1.4 s against 33 ms in fp32."""
    flags = set(_cpuinfo().split())
    return "avx512_bf16" in flags or "amx_bf16" in flags
