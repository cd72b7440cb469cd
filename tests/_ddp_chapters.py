"""Chapter models for the torchrun test (tests/test_ddp_gloo.py), defined once for both sides: the GPT-2 and
Backpack LMs of the Backpack chapter and a masked segmental LM, small, without dropout (each rank draws its own
dropout masks, so only dropout-free runs can match bit for bit), on synthetic data that is a pure function of
the step.

usage under torchrun: _ddp_chapters.py RUN_ROOT CASE...   (each case trains into RUN_ROOT/CASE)
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import torch

from hanzilm.papers.backpack import experiment as bx
from hanzilm.papers.backpack.data import BlockBatches
from hanzilm.papers.backpack.perplexity import perplexity
from hanzilm.papers.mslm.data import collate
from hanzilm.papers.mslm.model import SegmentalLM, SLMConfig
from hanzilm.train import TrainConfig, train

VOCAB = 61
TRAIN = dataclasses.replace(bx.PAPER_TRAIN, steps=6, warmup_steps=2, eval_every=3, checkpoint_every=3, log_every=1)
_TOKENS = np.random.default_rng(0).integers(0, VOCAB, 20_000)
_DEV = np.random.default_rng(1).integers(0, VOCAB, 2_000)


def lm(model: str):
    cfg = bx.LMConfig(model=model, n_layer=2, n_head=2, n_embd=32, n_senses=4, block_size=16, batch_size=4,
                      train=TRAIN)

    def evaluate(net):
        return {"dev_loss": perplexity(net, _DEV, cfg.block_size, 8)["nll"]}

    return lambda: bx.build(cfg, VOCAB), TRAIN, BlockBatches(_TOKENS, cfg.batch_size, cfg.block_size, seed=0), evaluate


def slm_batch(step: int) -> dict[str, torch.Tensor]:
    """Four sentences whose halves hold different numbers of characters (as length-sorted batches do)."""
    rng = np.random.default_rng([7, step])
    lengths = sorted(rng.integers(3, 20, 4))
    return collate([rng.integers(5, 30, n).tolist() for n in lengths])


def slm():
    cfg = SLMConfig(encoder="mslm", dim=16, num_heads=2, feedforward_dim=24, max_seg_len=3, encoder_dropout=0.0,
                    model_dropout=0.0)
    # SGD, not the paper's Adam: the attention key biases have no gradient in exact arithmetic (a constant added
    # to every score of a query), and Adam would scale their rounding noise, which differs between one and two
    # processes, up to full-size steps
    tcfg = TrainConfig(steps=6, lr=0.1, optimizer="sgd", warmup_steps=2, schedule="linear",
                       grad_clip=1.0, eval_every=3, checkpoint_every=3, log_every=1, metric="dev_loss")
    dev = slm_batch(10**6)

    def evaluate(net):
        return {"dev_loss": float(net.loss(dev))}

    return lambda: SegmentalLM(cfg, 30), tcfg, slm_batch, evaluate


CASES = {"gpt": lambda: lm("gpt"), "backpack": lambda: lm("backpack"), "slm": slm}


def run(case: str, run_dir: Path):
    build, tcfg, batches, evaluate = CASES[case]()
    torch.manual_seed(0)
    return train(build(), tcfg, batches, evaluate, run_dir, device="cpu")


if __name__ == "__main__":
    root = Path(sys.argv[1])
    for name in sys.argv[2:]:
        run(name, root / name)
