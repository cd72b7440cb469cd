"""The chapter's training plan at a profile (`hanzilm paper run --profile gpu --plan`): the GPT-2/Backpack pair's
sizes, tokens and training FLOPs per token, and the throughput assumed for them (see `hanzilm.plan`)."""

from __future__ import annotations

from ...plan import ChapterPlan, Extra, ModelPlan, Rate
from ...profiles import Profile
from .backpack import BackpackConfig
from .cloze import ClozeConfig
from .gpt import GPTConfig
from . import experiment as ex

# Assumed model FLOP utilisation on an H100 with bf16 autocast and torch.compile. Width 384 is half GPT-2
# small's, so the memory-bound share (layer norms, GELU, the softmax over 5k characters) is about twice as
# large; the Backpack adds its sense mix, 16 heads of query width 24 over values of width 384, which no fused
# attention kernel covers well, and a sense network over the batch's distinct characters.
GPT_RATE = Rate(mfu=0.20, basis="MFU assumed (bf16 autocast + torch.compile; d=384 is narrow)")
BACKPACK_RATE = Rate(mfu=0.15, basis="MFU assumed, below the GPT's: the sense mix (query width 24, value "
                                     "width 384) has no fused kernel")
# the rest of the chapter's evaluation at the paper's sizes: the cloze beam search (4,827 cases x 2 models, small
# forwards that are launch-bound) and the Section 5 analyses (thousands of single-prompt forwards); a profile's
# allowance scales with its cloze cases (`analyses_hours`)
ANALYSES_HOURS = 0.15


def train_flops_per_token(mc: GPTConfig | BackpackConfig, seq_len: int, batch_tokens: int) -> float:
    """Training FLOPs (forward + backward) per token of a batch of `batch_tokens` tokens in sequences of
    `seq_len`: 6 x the multiply-adds of its matmuls, attention at full length (see hanzilm.plan)."""
    d, L, V = mc.n_embd, mc.n_layer, mc.vocab_size
    macs = 12 * L * d * d + 2 * L * seq_len * d + V * d        # blocks, attention, the tied output layer
    if isinstance(mc, BackpackConfig):
        k = mc.n_senses
        # Q and K of every sense; alpha = q k^T over k senses of width d/k, then alpha @ senses of width d each
        macs += 2 * d * d + seq_len * d * (1 + k)
        # the sense network (FF_1: d-4d-d, FF_2: d-4d-kd) runs once per distinct token of the batch
        distinct = min(V, batch_tokens)
        macs += distinct * (8 * d * d + 4 * d * d * (1 + k)) / batch_tokens
    return 6.0 * macs


def analyses_hours(ch: ex.BackpackChapter) -> float:
    """The allowance for one pass of the chapter's evaluations, in proportion to the cloze cases it scores."""
    return ANALYSES_HOURS * min(1.0, ch.cloze.max_cases / ClozeConfig().max_cases)


def _evaluations(steps: int, every: int) -> int:
    return steps // every + (steps % every != 0) if every else 1


def plan(profile: Profile) -> ChapterPlan:
    ch = ex.configure(profile)
    corpus = ex.load_corpus(ch)
    vocab, train = len(corpus.vocab), corpus.splits["train"].size
    runs, models = ex.runs(ch), []
    for name, cfg in ch.lm.pair().items():
        mc = ex.model_config(cfg, vocab)
        batch_tokens = cfg.batch_size * cfg.block_size
        tokens = cfg.train.steps * batch_tokens
        dev = cfg.dev_tokens or corpus.splits["dev"].size
        test = cfg.test_tokens or corpus.splits["test"].size
        shape = (f"{mc.n_layer}/{mc.n_head}/{mc.n_embd}" + (f", {mc.n_senses} senses" if name == "backpack" else "")
                 + f", block {cfg.block_size}, batch {cfg.batch_size} x {cfg.block_size} = {batch_tokens:,} tokens")
        models.append(ModelPlan(
            name=name, params=ex.param_count(mc), steps=cfg.train.steps, tokens=tokens,
            flops_per_token=train_flops_per_token(mc, cfg.block_size, batch_tokens),
            eval_tokens=_evaluations(cfg.train.steps, cfg.train.eval_every) * dev + test,
            runs=sum(r.model == name for r in runs), rate=GPT_RATE if name == "gpt" else BACKPACK_RATE,
            note=f"{shape}; {tokens / train:.1f} epochs of the {train / 1e6:.1f} M-token training split"
                 + ("; trained with and without 1/sqrt(d/k) on alpha (book/backpack/alpha_scaling)"
                    if name == "backpack" else "")))
    return ChapterPlan(
        chapter="backpack", title="Sun & Hewitt 2023, GPT-2 micro vs Backpack micro", models=models,
        extras=[Extra("cloze beam search and the Section 5 analyses (allowance)", analyses_hours(ch)),
                # book/backpack/trends: test perplexity, cloze and the analyses again on each weight snapshot
                Extra(f"the findings on {ch.snapshots} training snapshots (book/backpack/trends; allowance)",
                      ch.snapshots * analyses_hours(ch)),
                Extra("the analyses of the ablation's two Backpacks (book/backpack/alpha_scaling; allowance)",
                      2 * analyses_hours(ch))],
        notes=["evaluation: the dev split every eval_every steps (best kept), then test perplexity"])
