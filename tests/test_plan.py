"""The dry run of a profile (`hanzilm paper run --plan`): the `gpu` profile trains the papers' architectures at
about one GPU-hour per chapter, the FLOPs per token count every matmul of the models, and the arithmetic of
hours and rates."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
import torch

from hanzilm import runner
from hanzilm.cli import chapter_plans
from hanzilm.plan import (BF16_PEAKS, EVAL_SPEEDUP, PLAN_DEVICE, ChapterPlan, Extra, ModelPlan, Rate, bf16_peak,
                          format_plan)
from hanzilm.data.resolve import MIRROR_ENV, shared_data_dir
from hanzilm.profiles import CHAPTERS, get_profile

PEAK = bf16_peak(PLAN_DEVICE)


@pytest.fixture(scope="module")
def mirror() -> None:
    """Plans read vocabulary sizes and corpus lengths from the data: skip where the mirror is absent."""
    root = Path(os.environ[MIRROR_ENV]) if os.environ.get(MIRROR_ENV) else shared_data_dir()
    if root is None or not (root / "seg" / "sighan2005").is_dir():
        pytest.skip(f"the data mirror is not present (looked at {root}; set ${MIRROR_ENV})")


@pytest.fixture(scope="module")
def plans(mirror) -> dict[str, dict[str, ChapterPlan]]:
    return {p: {c: chapter_plans()[c](get_profile(p)) for c in CHAPTERS} for p in ("gpu", "paper")}


# ---- the arithmetic -----------------------------------------------------------------------------------------

def test_hours_from_mfu_and_from_a_stated_rate():
    m = ModelPlan("m", runs=2, params=10, steps=100, tokens=3_600_000, flops_per_token=1e9, eval_tokens=0,
                  rate=Rate("assumed", mfu=0.25))
    assert m.tokens_per_s(1e15) == pytest.approx(1e15 * 0.25 / 1e9)
    assert m.hours(1e15) == pytest.approx(2 * 3_600_000 / 250_000 / 3600)
    stated = dataclasses.replace(m, runs=1, eval_tokens=3 * 360_000, rate=Rate("measured", tokens_per_s=1000.0))
    assert stated.hours(1e15) == pytest.approx((3_600_000 + 360_000 * 3 / EVAL_SPEEDUP) / 1000 / 3600)
    cp = ChapterPlan("c", "t", [m, dataclasses.replace(stated, rate=Rate("cpu", tokens_per_s=1000.0, on="cpu"))],
                     extras=[Extra("w2v", 0.5, on="cpu")])
    assert cp.hours(1e15, "gpu") == pytest.approx(m.hours(1e15))
    assert cp.hours(1e15, "cpu") == pytest.approx(1.0 + 0.1 + 0.5)   # training, evaluation, word2vec
    with pytest.raises(ValueError):
        Rate("both", mfu=0.2, tokens_per_s=1.0)


def test_device_peaks_match_cuda_names():
    assert bf16_peak("NVIDIA H100 80GB HBM3") == 989e12
    assert bf16_peak("NVIDIA H100 PCIe") == 756e12
    assert bf16_peak("NVIDIA H200") == 989e12
    assert bf16_peak("NVIDIA A100-SXM4-80GB") == 312e12
    assert bf16_peak("NVIDIA L40S") == 362e12 and bf16_peak("NVIDIA L4") == 121e12
    assert bf16_peak("Tesla V100-SXM2-16GB") is None
    assert len({k for k, _ in BF16_PEAKS}) == len(BF16_PEAKS)


# ---- FLOPs per token: 6 x every matmul weight a token passes through ----------------------------------------------

def _linear_weights(module: torch.nn.Module) -> int:
    return sum(m.weight.numel() for m in module.modules() if isinstance(m, torch.nn.Linear))


def _lstm_weights(module: torch.nn.Module) -> int:
    return sum(p.numel() for m in module.modules() if isinstance(m, torch.nn.LSTM)
               for name, p in m.named_parameters() if name.startswith("weight"))


def test_lm_flops_count_every_matmul_weight():
    from hanzilm.papers.backpack.backpack import Backpack, BackpackConfig
    from hanzilm.papers.backpack.gpt import GPT, GPTConfig
    from hanzilm.papers.backpack.plan import train_flops_per_token

    g = GPTConfig(vocab_size=97, block_size=64, n_layer=3, n_head=2, n_embd=32)
    gpt = GPT(g)
    # without attention (length 0) the count is 6 x (block matmuls + the tied output layer)
    assert train_flops_per_token(g, 0, 1) == 6 * (_linear_weights(gpt) + gpt.wte.weight.numel())
    assert train_flops_per_token(g, 64, 1) - train_flops_per_token(g, 0, 1) == 12 * 3 * 64 * 32
    b = BackpackConfig.matching(g, n_senses=4)
    bp = Backpack(b)
    # a batch of V distinct tokens in V tokens: the sense network counted once per token
    assert train_flops_per_token(b, 0, b.vocab_size) == 6 * (_linear_weights(bp) + bp.wte.weight.numel())
    assert train_flops_per_token(b, 0, 10 * b.vocab_size) < train_flops_per_token(b, 0, b.vocab_size)


@pytest.mark.parametrize("encoder", ["rslm", "mslm", "dmslm"])
def test_slm_flops_count_every_matmul_weight(encoder):
    from hanzilm.papers.mslm.model import SegmentalLM, SLMConfig
    from hanzilm.papers.mslm.plan import train_flops_per_char

    cfg = SLMConfig(encoder=encoder, dim=16, num_heads=2, feedforward_dim=24, max_seg_len=3)
    m = SegmentalLM(cfg, 50)
    K = cfg.max_seg_len
    # the decoder's LSTM and output layer run K + 1 times per start position, everything else once
    per_char = (_linear_weights(m) + _lstm_weights(m) + K * (_lstm_weights(m.decoder) + m.output.weight.numel()))
    if encoder != "rslm":   # attention over the (length + 2) encoder positions
        per_char += 2 * (0 + 2) * 16
    assert train_flops_per_char(cfg, 50, 0.0) == 6 * per_char


# ---- the profiles ----------------------------------------------------------------------------------------------

def test_gpu_profile_trains_the_papers_architectures(mirror):
    from hanzilm.papers.backpack import experiment as bx
    from hanzilm.papers.mmtnn import plan as tp
    from hanzilm.papers.mslm import experiment as sx

    gpu, paper = get_profile("gpu"), get_profile("paper")
    g, p = bx.configure(gpu), bx.configure(paper)
    for name in bx.MODELS:
        a, b = g.lm.pair()[name], p.lm.pair()[name]
        assert bx.model_config(a, 100) == bx.model_config(b, 100)
        assert (a.batch_size, a.block_size) == (b.batch_size, b.block_size) == (180, 1024)
        # the optimiser and schedule are the paper's; gpu runs the forward in bf16 (paper: fp32, TF32 on CUDA)
        assert dataclasses.replace(a.train, steps=1, precision="fp32") == dataclasses.replace(b.train, steps=1)
        assert (a.train.precision, b.train.precision) == ("bf16", "fp32")
        assert a.train.steps < b.train.steps == 500_000
    shape = lambda e: (e.corpus, e.model, e.batch_chars, e.train.steps)  # noqa: E731
    assert {shape(e) for e in sx.unique_runs(sx.configure(gpu))} == {shape(e) for e in sx.unique_runs(sx.configure(paper))}
    # every Table 2 cell at the authors' own rate
    for e in sx.unique_runs(sx.configure(gpu)):
        assert e.train.lr in {sx.paper_lr(e.corpus, e.model.encoder, s) for s in sx.SELECTIONS}
    assert tp.ex.runs(tp.ex.configure(gpu)) == tp.ex.runs(tp.ex.configure(paper))


def test_gpu_profile_is_about_one_gpu_hour_per_chapter(plans):
    for chapter, cp in plans["gpu"].items():
        gpu = cp.hours(PEAK, "gpu")
        if chapter == "mmtnn":   # trains on the CPU
            assert gpu == 0 and cp.hours(PEAK, "cpu") > 0
        else:
            # the hour is the chapter's training and evaluation; re-evaluating the findings on the training
            # snapshots (book/backpack/trends) and the alpha-scaling ablation's second Backpack with its
            # analyses (book/backpack/alpha_scaling) come on top, and the plan prints them
            trends = sum(e.hours for e in cp.extras if "snapshots" in e.what or "ablation" in e.what)
            ablation = sum(m.hours(PEAK) / m.runs for m in cp.models if m.name == "backpack")
            assert 0.75 <= gpu - trends - ablation <= 1.25, (chapter, gpu, trends, ablation)
            assert cp.hours(PEAK, "gpu") < plans["paper"][chapter].hours(PEAK, "gpu")


def test_plans_list_every_run_of_the_chapters(plans):
    from hanzilm.papers.backpack import experiment as bx
    from hanzilm.papers.mmtnn import plan as tp
    from hanzilm.papers.mslm import experiment as sx

    for prof, by_chapter in plans.items():
        assert [m.name for m in by_chapter["backpack"].models] == ["gpt", "backpack"]
        assert sum(m.runs for m in by_chapter["backpack"].models) == len(bx.runs(bx.configure(prof))) == 3
        slm = sx.unique_runs(sx.configure(prof))
        assert sum(m.runs for m in by_chapter["mslm"].models) == len(slm)
        neural = [c for c in tp.ex.runs(tp.ex.configure(prof)) if c.model != "crf"]
        assert sum(m.runs for m in by_chapter["mmtnn"].models) == len(neural)
    assert sum(m.runs for m in plans["paper"]["mslm"].models) == 60   # 2 corpora x 3 models x 2 rates x 5 seeds
    assert sum(m.runs for m in plans["gpu"]["mslm"].models) == 16


def test_format_states_the_assumptions(plans):
    text = format_plan("gpu", {c: (lambda prof, c=c: plans[prof.name][c]) for c in CHAPTERS})
    for needle in ("989 TFLOP/s", "6N + 12LTd", "MFU 20%", "launch-bound", "measured characters/s",
                   "backpack:", "mslm:", "mmtnn:", "total:"):
        assert needle in text, needle
    gpu_hours = sum(cp.hours(PEAK, "gpu") for cp in plans["gpu"].values())
    assert f"total: {gpu_hours:.2f} h on one {PLAN_DEVICE}" in text


def test_runner_plan_picks_the_chapters_of_only(capsys, monkeypatch):
    """--plan runs no notebook: it prints the plan of the chapters --only picks (exit 2 if it picks none)."""
    import hanzilm.plan as plan_mod

    assert runner.plan_chapters(None) == list(CHAPTERS)
    assert runner.plan_chapters("backpack/table1") == ["backpack"]
    assert runner.plan_chapters("table6") == ["backpack", "mmtnn"]
    shown = []
    monkeypatch.setattr(plan_mod, "print_plan", lambda profile, plans, chapters: shown.append((profile, chapters)))
    args = runner.argparse.Namespace(plan=True, profile="paper", only="mslm/*", seed=None,
                                     chapter_plans=chapter_plans)
    assert runner._run_command(args) == 0 and shown == [("paper", ["mslm"])]
    args.only = "data/corpus_statistics"
    assert runner._run_command(args) == 2
    assert "picks no chapter" in capsys.readouterr().err


def test_the_smoke_plan_scales_its_allowances_with_the_profile():
    """The Backpack's evaluation allowances follow the cloze cases a profile scores: the smoke plan (6 cases)
    is seconds, not the paper-sized 1.35 GPU-hours it once printed."""
    H100_PEAK = bf16_peak(PLAN_DEVICE)
    backpack = chapter_plans()["backpack"]
    assert backpack(get_profile("smoke")).hours(H100_PEAK, on="gpu") < 0.01
    assert backpack(get_profile("gpu")).hours(H100_PEAK, on="gpu") > 0.5
