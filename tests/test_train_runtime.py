"""The trainer's precision, accumulation and device options: bf16 autocast on the CPU tracks fp32, gradient
accumulation (even over unequal micro-batches) equals one big batch, the device defaults, and the keys."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch

import _native_bf16
import _tiny
from hanzilm.errors import HanzilmError
from hanzilm.machine import cpu_flags_bf16
from hanzilm.papers.backpack.backpack import Backpack, BackpackConfig
from hanzilm.papers.backpack.gpt import GPT, GPTConfig
from hanzilm.store import config_key
from hanzilm.train import Runtime, TrainConfig, train


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    monkeypatch.setenv("HANZILM_PROGRESS", "0")


def _losses(run_dir) -> list[float]:
    return [r["loss"] for r in json.loads((run_dir / "history.json").read_text()) if "loss" in r]


def _lm_run(tmp_path, name, model="gpt", **cfg):
    torch.manual_seed(0)
    gpt = GPTConfig(vocab_size=64, block_size=32, n_layer=2, n_head=2, n_embd=32)
    lm = GPT(gpt) if model == "gpt" else Backpack(BackpackConfig.matching(gpt, n_senses=4))
    g = torch.Generator().manual_seed(1)
    data = torch.randint(0, 64, (40, 8, 33), generator=g)
    data[:, :, 1::2] = data[:, :, 0::2][:, :, :16] % 7  # something learnable
    tc = TrainConfig(steps=40, lr=3e-3, optimizer="adamw", warmup_steps=4, schedule="linear", min_lr=3e-4,
                     eval_every=0, checkpoint_every=0, log_every=5, **cfg)
    train(lm, tc, lambda step: data[step], None, tmp_path / name)
    return _losses(tmp_path / name)


@pytest.mark.parametrize("model", ["gpt", "backpack"])
def test_bf16_autocast_on_the_cpu_tracks_fp32(tmp_path, model):
    fp32, bf16 = _lm_run(tmp_path, "fp32", model), _lm_run(tmp_path, "bf16", model, precision="bf16")
    assert fp32 != bf16  # the forward really ran in bfloat16
    assert fp32[-1] < 0.9 * fp32[0] and bf16[-1] < 0.9 * bf16[0]  # both learn
    # the stated tolerance: every logged mean loss within 2 % of fp32's
    assert max(abs(a - b) / a for a, b in zip(fp32, bf16)) < 0.02


@pytest.mark.parametrize("accum", [2, 3])  # 3: micro-batches of 6, 5 and 5 examples, weighted by their units
def test_gradient_accumulation_equals_one_batch(tmp_path, accum):
    base = _tiny.cfg(steps=20)
    runs = {}
    for a in (1, accum):
        torch.manual_seed(0)
        model = _tiny.build()
        train(model, dataclasses.replace(base, grad_accum=a), _tiny.batches(), None, tmp_path / str(a))
        runs[a] = (model.state_dict(), _losses(tmp_path / str(a)))
    (w1, l1), (wa, la) = runs[1], runs[accum]
    assert l1 == pytest.approx(la, rel=1e-5)
    assert all(torch.allclose(w1[k], wa[k], atol=1e-5) for k in w1)


def test_compiled_loss_gives_the_same_run(tmp_path):
    # the "eager" backend traces the loss through dynamo without generating code: the same kernels, so the
    # same bits; "inductor" is the one to use on a GPU
    out = {}
    for name, rt in (("plain", Runtime()), ("compiled", Runtime(compile="eager"))):
        torch.manual_seed(0)
        model = _tiny.build()
        train(model, _tiny.cfg(steps=10), _tiny.batches(), None, tmp_path / name, runtime=rt)
        out[name] = model.state_dict()
    assert all(torch.equal(out["plain"][k], out["compiled"][k]) for k in out["plain"])


def test_device_defaults():
    cpu = Runtime().resolved(torch.device("cpu"))
    assert (cpu.tf32, cpu.fused_adam, cpu.pin_memory) == (False, False, False)
    cuda = Runtime().resolved(torch.device("cuda", 0))
    assert (cuda.tf32, cuda.fused_adam, cuda.pin_memory) == (True, True, True)
    assert Runtime(tf32=False).resolved(torch.device("cuda", 0)).tf32 is False
    assert Runtime(tf32=True).resolved(torch.device("cpu")).tf32 is False  # nothing to switch on


def test_new_options_key_a_run_only_when_set():
    base = _tiny.TinyExperiment()
    same = dataclasses.replace(base, train=dataclasses.replace(base.train, precision="fp32", grad_accum=1))
    assert config_key(same) == config_key(base)
    for change in ({"precision": "bf16"}, {"grad_accum": 2}):
        other = dataclasses.replace(base, train=dataclasses.replace(base.train, **change))
        assert config_key(other) != config_key(base), change
    with pytest.raises(HanzilmError, match="precision must be one of"):
        TrainConfig(precision="fp16")
    with pytest.raises(HanzilmError, match="grad_accum must be >= 1"):
        TrainConfig(grad_accum=0)


def _slm_run(tmp_path, name, encoder, **cfg):
    from hanzilm.papers.mslm.data import collate
    from hanzilm.papers.mslm.model import SPECIALS, SLMConfig, SegmentalLM

    torch.manual_seed(0)
    model = SegmentalLM(SLMConfig(encoder=encoder, dim=32, num_heads=2, feedforward_dim=48, max_seg_len=4,
                                  encoder_dropout=0.0), 20 + len(SPECIALS))
    g = torch.Generator().manual_seed(1)
    words = [torch.randint(len(SPECIALS), 20 + len(SPECIALS), (int(n),), generator=g).tolist()
             for n in torch.randint(1, 4, (12,), generator=g)]  # a 12-word lexicon: segments to learn
    rows = [[c for _ in range(6) for c in words[int(torch.randint(0, 12, (1,), generator=g))]] for _ in range(240)]
    tc = TrainConfig(steps=30, lr=1e-2, optimizer="adam", warmup_steps=3, schedule="linear", grad_clip=1.0,
                     eval_every=0, checkpoint_every=0, log_every=5, **cfg)
    train(model, tc, lambda step: collate(rows[8 * step:8 * step + 8]), None, tmp_path / name)
    return _losses(tmp_path / name)


def _fp32_and_bf16(root, encoder) -> list[list[float]]:
    return [_slm_run(Path(root), "fp32", encoder), _slm_run(Path(root), "bf16", encoder, precision="bf16")]


def _native_bf16_pair(tmp_path, encoder) -> tuple[list[float], list[float]]:
    """(fp32 losses, bf16 losses), trained where oneDNN may use the CPU's bf16 instructions."""
    fp32, bf16 = _native_bf16.call("test_train_runtime", "_fp32_and_bf16", str(tmp_path), encoder)
    return fp32, bf16


@pytest.mark.skipif(not cpu_flags_bf16(), reason="this CPU has no native bfloat16 (AVX512_BF16/AMX), and oneDNN "
                    "has no bf16 LSTM without it; the cpu profile trains the segmental LMs in fp32 here")
@pytest.mark.parametrize("encoder", ["mslm", "rslm"])
def test_bf16_autocast_tracks_fp32_for_the_segmental_lms(tmp_path, encoder):
    """The segmental LMs in bfloat16 autocast (the lattice's log-sum-exp stays fp32): every logged mean loss
    within 3 % of fp32's while both learn."""
    fp32, bf16 = _native_bf16_pair(tmp_path, encoder)
    assert fp32 != bf16
    assert fp32[-1] < 0.8 * fp32[0] and bf16[-1] < 0.8 * bf16[0]
    assert max(abs(a - b) / a for a, b in zip(fp32, bf16)) < 0.03
