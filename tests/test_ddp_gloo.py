"""DDP through torchrun on the chapters' own models: 2 gloo processes, each taking half of every global batch,
train the GPT-2 and Backpack LMs and the segmental LM to the losses and weights of one process on the same
global batches. The segmental LM's batches are sentences: the two halves hold different numbers of characters
(and an odd batch, different numbers of sentences), and the trainer weights each rank by its characters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

import _ddp_chapters

TESTS = Path(__file__).parent
CASES = ("gpt", "backpack", "slm")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(one-process histories, the 2-process run root) for every case: one torchrun for all of them."""
    root = tmp_path_factory.mktemp("ddp")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)   # as each torchrun process (OMP_NUM_THREADS=1)
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("HANZILM_PROGRESS", "0")
            one = {c: _ddp_chapters.run(c, root / "one" / c).history for c in CASES}
    finally:
        torch.set_num_threads(threads)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HANZILM_PROGRESS": "0",
           "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    for k in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(k, None)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           str(TESTS / "_ddp_chapters.py"), str(root / "two"), *CASES]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return one, root


def _weights(run_dir: Path) -> dict[str, torch.Tensor]:
    return load_file(run_dir / json.loads((run_dir / "last.json").read_text())["weights"])


@pytest.mark.parametrize("case", [
    "gpt", "backpack",
    "slm",
])
def test_two_gloo_processes_equal_one(runs, case):
    one, root = runs
    h1, h2 = one[case], json.loads((root / "two" / case / "history.json").read_text())
    assert [r["step"] for r in h1] == [r["step"] for r in h2]
    for r1, r2 in zip(h1, h2):
        for k in ("loss", "lr", "grad_norm", "dev_loss"):
            assert (k in r1) == (k in r2), (k, r1, r2)
            if k in r1:
                assert r2[k] == pytest.approx(r1[k], rel=1e-5, abs=1e-7), (case, k, r1, r2)
    a, b = _weights(root / "one" / case), _weights(root / "two" / case)
    assert a.keys() == b.keys()
    assert all(torch.allclose(a[k], b[k], rtol=0, atol=1e-6) for k in a)
