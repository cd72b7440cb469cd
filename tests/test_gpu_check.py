"""benchmarks/gpu_check.py: without a GPU it says so and exits 0; with the device switched to the CPU every code
path of a GPU run is taken (the trainer, bf16 autocast, torch.compile with the eager backend, each chapter's
evaluation, MFU against a stated peak), on the smoke profile's sizes; and the halving of a batch that does not
fit reports the accumulation the trainer would need."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

BENCH = Path(__file__).parents[1] / "benchmarks" / "gpu_check.py"


def _load():
    spec = importlib.util.spec_from_file_location("gpu_check", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_check"] = module   # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


gpu_check = _load()


@pytest.mark.skipif(torch.cuda.is_available(), reason="there is a GPU here")
def test_without_a_gpu_it_says_so_and_exits_0():
    proc = subprocess.run([sys.executable, str(BENCH)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("gpu_check: no CUDA device here") and len(proc.stdout.splitlines()) == 1


@pytest.mark.usefixtures("real_mirror")
def test_every_chapter_on_the_cpu(capsys, monkeypatch):
    monkeypatch.setenv("HANZILM_PROGRESS", "0")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        code = gpu_check.main(["--device", "cpu", "--profile", "smoke", "--steps", "2", "--warmup", "1",
                               "--compile", "--compile-backend", "eager", "--peak-tflops", "1",
                               "--eval-blocks", "2", "--eval-cases", "2", "--eval-sentences", "20"])
    finally:
        torch.set_num_threads(threads)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "FAILED" not in out
    assert "bf16 autocast, torch.compile" in out.splitlines()[0]
    from hanzilm.machine import cpu_has_bf16   # without it the segmental LMs' LSTMs train in fp32, and say so
    assert ("trained in fp32: this CPU has no native bfloat16" in out) == (not cpu_has_bf16())
    models = ["backpack/gpt", "backpack/backpack", *(f"mslm/{c}/{e}" for c in ("pku", "ptb")
                                                        for e in ("rslm", "mslm", "dmslm")),
              *(f"mmtnn/pku/{a} (CPU)" for a in ("nn", "nn_tag", "mmtnn", "mmtnn+bigram"))]
    for name in models:
        line = next(line for line in out.splitlines() if line.strip().startswith(name + ":"))
        assert re.search(r"[\d,]+ tokens/s", line), line
        if not name.startswith("mmtnn"):   # FLOPs per token are defined for the GPU models
            assert re.search(r"MFU \d+\.\d%", line), line
    assert out.count("eval: dev perplexity") == 2 and out.count("eval: cloze") == 2
    assert out.count("eval: dev bpc") == 6 and out.count("eval: segment the test set") == 4


def test_a_batch_that_does_not_fit_is_split_into_micro_batches(capsys):
    tried = []

    def run(accum):
        tried.append(accum)
        if 180 / accum > 45:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")
        return 1000.0, 12.5, None

    micro, (tps, peak, _) = gpu_check.fitting(run, 180, torch.device("cuda"))
    assert tried == [1, 2, 4] and micro == 45
    with pytest.raises(torch.cuda.OutOfMemoryError):   # on the CPU an OOM is not a CUDA allocator's to retry
        gpu_check.fitting(run, 180, torch.device("cpu"))
    gpu_check.report([gpu_check.Result("m", micro=micro, full=180, tokens_per_s=tps, flops_per_token=1e9,
                                       peak_gb=peak)], 1e14)
    assert "batch 180 in 4 micro-batches of 45, 1,000 tokens/s, MFU 1.0%, peak 12.5 GB" in capsys.readouterr().out
