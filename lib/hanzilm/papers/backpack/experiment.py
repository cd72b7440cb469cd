"""Backpack vs GPT-2 pretraining (Sun & Hewitt 2023, Sec. 4): configs, training through the model store,
and the Table 1 evaluations. Notebooks call these; the module is also a command for training in the
background or under torchrun:

    .venv/bin/python -m hanzilm.papers.backpack.experiment --profile cpu --model backpack          # train_or_load
    torchrun --nproc_per_node 2 -m hanzilm.papers.backpack.experiment --profile smoke --model gpt --run-dir /tmp/x
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import torch

from ...data.corpus import LMSplitConfig
from .backpack import Backpack, BackpackConfig, backpack_param_count
from .gpt import GPT, GPTConfig, gpt_param_count
from ...profiles import Profile, get_profile
from ...store import load_history, load_summary, run_dir_for, train_or_load
from ...train import TrainConfig, train
from .data import BlockBatches, EncodedCorpus, encoded_corpus
from .perplexity import perplexity

MODELS = ("gpt", "backpack")
CODE_VERSION = "lm/1"
PAPER_NAMES = {"gpt": "GPT2-micro", "backpack": "Backpack-micro"}

# The paper's pretraining (Sec. 4.3; the authors' code for the optimiser details): 184,320-token batches
# (180 blocks of 1,024), 500k steps, 2k warmup, peak 6e-4 with linear decay, AdamW (0.9, 0.95), weight
# decay 0.1, clip 1.0, dev evaluation every 1,000 steps keeping the best.
PAPER_TRAIN = TrainConfig(steps=500_000, lr=6e-4, optimizer="adamw", betas=(0.9, 0.95), weight_decay=0.1,
                          warmup_steps=2000, schedule="linear", min_lr=0.0, grad_clip=1.0, eval_every=1000,
                          checkpoint_every=1000, log_every=100, seed=0, max_nonfinite=100)


@dataclass(frozen=True)
class LMConfig:
    """One model of the Backpack/GPT-2 pair. Defaults: the paper's micro pair."""

    profile_key: ClassVar[str] = "backpack_lm"

    model: str = "backpack"          # "gpt" | "backpack"
    n_layer: int = 6                 # GPT-2 blocks; the Backpack's contextualiser has n_layer - 1
    n_head: int = 6
    n_embd: int = 384
    n_senses: int = 16
    block_size: int = 1024
    batch_size: int = 180            # blocks per step
    dropout: float = 0.0
    bias: bool = True
    min_char_freq: int = 10          # vocabulary: training-split characters seen at least this often
    dev_tokens: int = 0              # dev tokens evaluated during training (0: the whole dev split)
    test_tokens: int = 0             # test tokens for perplexity (0: the whole test split)
    eval_batch_size: int = 16
    train: TrainConfig = field(default_factory=lambda: PAPER_TRAIN)

    def __post_init__(self):
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, not {self.model!r}")

    def pair(self) -> dict[str, LMConfig]:
        """Both models with everything else equal (same seed, same data order)."""
        return {m: dataclasses.replace(self, model=m) for m in MODELS}


def configure(profile: str | Profile) -> tuple[LMConfig, LMSplitConfig]:
    prof = get_profile(profile)
    return prof.configure(LMConfig()), prof.configure(LMSplitConfig())


def gpt_config(cfg: LMConfig, vocab_size: int) -> GPTConfig:
    return GPTConfig(vocab_size=vocab_size, block_size=cfg.block_size, n_layer=cfg.n_layer, n_head=cfg.n_head,
                     n_embd=cfg.n_embd, dropout=cfg.dropout, bias=cfg.bias)


def model_config(cfg: LMConfig, vocab_size: int) -> GPTConfig | BackpackConfig:
    g = gpt_config(cfg, vocab_size)
    return g if cfg.model == "gpt" else BackpackConfig.matching(g, cfg.n_senses)


def build(cfg: LMConfig, vocab_size: int) -> torch.nn.Module:
    mc = model_config(cfg, vocab_size)
    return GPT(mc) if isinstance(mc, GPTConfig) else Backpack(mc)


def param_count(mc: GPTConfig | BackpackConfig, positions: bool = True) -> int:
    return gpt_param_count(mc, positions=positions) if isinstance(mc, GPTConfig) else \
        backpack_param_count(mc, positions=positions)


def corpus_for(profile: str | Profile) -> EncodedCorpus:
    cfg, split = configure(profile)
    return encoded_corpus(split, cfg.min_char_freq)


def store_data(corpus: EncodedCorpus) -> dict[str, str]:
    return {**corpus.data, "encoded_corpus": corpus.key}


def dev_evaluator(cfg: LMConfig, corpus: EncodedCorpus):
    dev = corpus.splits["dev"]
    limit = cfg.dev_tokens or None

    def evaluate(model: torch.nn.Module) -> dict[str, float]:
        r = perplexity(model, dev, cfg.block_size, cfg.eval_batch_size, limit)
        return {"dev_loss": r["nll"], "dev_ppl": r["ppl"]}

    return evaluate


def batches(cfg: LMConfig, corpus: EncodedCorpus) -> BlockBatches:
    return BlockBatches(corpus.splits["train"], cfg.batch_size, cfg.block_size, seed=cfg.train.seed)


def train_model(cfg: LMConfig, corpus: EncodedCorpus, profile: str | Profile) -> torch.nn.Module:
    """The trained model of `cfg` with its best-dev weights (trained now if the store has no complete run)."""
    return train_or_load(cfg, build=lambda: build(cfg, len(corpus.vocab)), batches=batches(cfg, corpus),
                         evaluate=dev_evaluator(cfg, corpus), profile=profile, data=store_data(corpus),
                         code_version=CODE_VERSION)


def run_dir(cfg: LMConfig, corpus: EncodedCorpus, profile: str | Profile):
    return run_dir_for(cfg, profile=profile, data=store_data(corpus), code_version=CODE_VERSION)


def history(cfg: LMConfig, corpus: EncodedCorpus, profile: str | Profile) -> list[dict]:
    return load_history(run_dir(cfg, corpus, profile))


def summary(cfg: LMConfig, corpus: EncodedCorpus, profile: str | Profile) -> dict:
    return load_summary(run_dir(cfg, corpus, profile))


def test_perplexity(model: torch.nn.Module, cfg: LMConfig, corpus: EncodedCorpus) -> dict[str, float]:
    return perplexity(model, corpus.splits["test"], cfg.block_size, cfg.eval_batch_size, cfg.test_tokens or None)


def unk_rate(tokens: np.ndarray, corpus: EncodedCorpus) -> float:
    return float(np.mean(np.asarray(tokens) == corpus.unk_id))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--model", choices=MODELS, required=True)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: the profile's)")
    ap.add_argument("--run-dir", default=None, help="train here with hanzilm.train.train (not the store)")
    ap.add_argument("--steps", type=int, default=None, help="with --run-dir: override the step count")
    a = ap.parse_args(argv)
    prof = get_profile(a.profile)
    threads = a.threads or prof.torch_threads
    if threads:
        torch.set_num_threads(threads)
    corpus = corpus_for(prof)
    cfg = configure(prof)[0].pair()[a.model]
    if a.run_dir is None:
        train_model(cfg, corpus, prof)
        s = summary(cfg, corpus, prof)
        print(f"{a.model}: best step {s['best_step']}, {s['best_metrics']}, wall {s['wall_time']:.0f} s")
        return
    tcfg = cfg.train if a.steps is None else dataclasses.replace(cfg.train, steps=a.steps)
    torch.manual_seed(tcfg.seed)
    model = build(cfg, len(corpus.vocab))
    result = train(model, tcfg, batches(cfg, corpus), dev_evaluator(cfg, corpus), a.run_dir)
    rank = int(os.environ.get("RANK", "0"))
    last = [h for h in result.history if "loss" in h][-1]
    print(f"rank {rank}: {a.model} {result.steps} steps, last loss {last['loss']:.4f}, "
          f"best step {result.best_step} {result.best_metrics}")


if __name__ == "__main__":
    main()
