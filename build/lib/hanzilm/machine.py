"""What the CPU can do, read once from /proc/cpuinfo: the profiles choose bfloat16 by it, provenance records it."""

from __future__ import annotations

import functools
import os
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
    """This process multiplies bfloat16 natively: the CPU has AVX512_BF16 or AMX and oneDNN may use them. Elsewhere
    bf16 autocast on the CPU is emulated (on an AVX2-only EPYC a (4096 x 2048) @ (2048 x 128) bf16 matmul took 1.4 s
    against 33 ms in fp32), and oneDNN has no bf16 LSTM at all: with `ONEDNN_MAX_CPU_ISA=AVX2` (the tests' and smoke
    runs' `PORTABLE_FLOAT_ENV`) an AVX512_BF16 EPYC fails to create one."""
    return cpu_flags_bf16() and not _onednn_capped_below_bf16()


def cpu_flags_bf16() -> bool:
    """The CPU itself has AVX512_BF16 or AMX, whatever this process's libraries are allowed to use."""
    flags = set(_cpuinfo().split())
    return "avx512_bf16" in flags or "amx_bf16" in flags


# the variables that cap oneDNN's instruction set (DNNL_ is its older name)
ONEDNN_ISA_VARS = ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")


def _onednn_capped_below_bf16() -> bool:
    # oneDNN's ISA names below AVX512_CORE_BF16 (every later one has bf16: *_BF16, *_FP16, *AMX*, AVX10_*)
    cap = next((os.environ[v] for v in ONEDNN_ISA_VARS if os.environ.get(v)), "").upper()
    return cap in {"SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE", "AVX512_CORE_VNNI"}


# The smoke profile's floating point pinned to code paths that every x86-64 CPU with AVX2 runs alike, so that
# its notebooks (nbval's reference) come out digit for digit the same on an AVX2 and an AVX-512 machine (they
# did not: an MMTNN smoke F1 moved from 21.61 to 21.95 between two EPYCs). ATen's vectorised kernels at AVX2;
# MKL's conditional numerical reproducibility at COMPATIBLE, the one branch MKL keeps alike on AMD and Intel;
# oneDNN at AVX2; OpenBLAS's Haswell kernels; NumPy without its AVX-512 loops. Slower (a 512^2 matmul 1.5x), so
# for the smoke runs and the tests only.
PORTABLE_FLOAT_ENV = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "COMPATIBLE",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "OPENBLAS_CORETYPE": "Haswell",
    "NPY_DISABLE_CPU_FEATURES": "AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL "
                                "AVX512_ICL AVX512_SPR AVX512FP16",
}


def portable_float_env() -> dict[str, str]:
    """PORTABLE_FLOAT_ENV on x86-64 (elsewhere nothing is pinned). It takes effect in processes started with it:
    the libraries read it when they load."""
    import platform

    return dict(PORTABLE_FLOAT_ENV) if platform.machine().lower() in ("x86_64", "amd64") else {}


def main(argv: list[str]) -> None:
    """`python -m hanzilm.machine COMMAND...`: run COMMAND with `portable_float_env()` (the Makefile's nbval)."""
    if not argv:
        raise SystemExit("usage: python -m hanzilm.machine COMMAND [ARG...]")
    os.execvpe(argv[0], argv, {**os.environ, **portable_float_env()})


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
