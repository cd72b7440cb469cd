"""What the CPU can do (hanzilm.machine) and the pinned floating-point paths of the smoke runs and nbval."""

import subprocess
import sys

from hanzilm import machine


def test_cpu_flags_come_from_cpuinfo(monkeypatch):
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    monkeypatch.setattr(machine, "_cpuinfo", lambda: "model name\t: AMD EPYC\nflags\t\t: fpu avx2 avx512_bf16\n")
    assert machine.cpu_model() == "AMD EPYC" and machine.cpu_has_bf16()
    monkeypatch.setattr(machine, "_cpuinfo", lambda: "flags\t\t: fpu avx2 avx512f\n")
    assert machine.cpu_model() == "unknown" and not machine.cpu_has_bf16() and not machine.cpu_flags_bf16()


def test_onednn_capped_below_bf16_has_no_native_bf16(monkeypatch):
    """Capped at AVX2 (the tests' pinned paths) oneDNN cannot build a bf16 LSTM on an AVX512_BF16 CPU, so the
    process must not be told it multiplies bfloat16 natively; caps at or above AVX512_CORE_BF16 leave it."""
    monkeypatch.setattr(machine, "_cpuinfo", lambda: "flags\t\t: fpu avx2 avx512_bf16\n")
    for cap, native in (("AVX2", False), ("avx512_core", False), ("AVX512_CORE_BF16", True),
                        ("AVX512_CORE_AMX", True), ("", True)):
        monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", cap)
        assert machine.cpu_has_bf16() == native and machine.cpu_flags_bf16(), cap


def test_the_wrapper_runs_a_command_with_the_pinned_paths(monkeypatch):
    monkeypatch.setattr("platform.machine", lambda: "x86_64")
    pinned = machine.portable_float_env()
    assert pinned["ATEN_CPU_CAPABILITY"] == "avx2" and pinned["MKL_CBWR"] == "COMPATIBLE"
    monkeypatch.setattr("platform.machine", lambda: "aarch64")
    assert machine.portable_float_env() == {}
    monkeypatch.undo()
    code = "import os, torch; print(os.environ.get('MKL_CBWR'), torch.backends.cpu.get_cpu_capability())"
    out = subprocess.run([sys.executable, "-m", "hanzilm.machine", sys.executable, "-c", code],
                         capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    if machine.portable_float_env():
        assert out.stdout.split() == ["COMPATIBLE", "AVX2"]    # torch took the pinned kernels
