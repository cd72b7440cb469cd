"""What the CPU can do (hanzilm.machine) and the pinned floating-point paths of the smoke runs and nbval."""

import subprocess
import sys

from hanzilm import machine


def test_cpu_flags_come_from_cpuinfo(monkeypatch):
    monkeypatch.setattr(machine, "_cpuinfo", lambda: "model name\t: AMD EPYC\nflags\t\t: fpu avx2 avx512_bf16\n")
    assert machine.cpu_model() == "AMD EPYC" and machine.cpu_has_bf16()
    monkeypatch.setattr(machine, "_cpuinfo", lambda: "flags\t\t: fpu avx2 avx512f\n")
    assert machine.cpu_model() == "unknown" and not machine.cpu_has_bf16()


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
