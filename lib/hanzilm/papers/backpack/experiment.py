"""Backpack vs GPT-2 pretraining (Sun & Hewitt 2023, Sec. 4): the chapter config, training and loading through
the model store, and the Table 1 evaluations. Notebooks call these; the module is also a command for training
in the background or under torchrun:

    .venv/bin/python -m hanzilm.papers.backpack.experiment --profile cpu --model backpack          # train_run
    torchrun --nproc_per_node 2 -m hanzilm.papers.backpack.experiment --profile smoke --model gpt --run-dir /tmp/x
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import pandas as pd
import torch

from ...data.corpus import LMSplitConfig, load_lm_corpus, split_documents
from ...data.vocab import CharVocab
from ...profiles import Profile, get_profile
from ... import versions
from ...store import Store, load_history, load_summary, required
from ...train import TrainConfig, snapshot_steps, train
from .backpack import Backpack, BackpackConfig
from .cloze import ClozeCase, ClozeConfig, build_cloze, evaluate_cloze
from .common import SensesConfig
from .data import BlockBatches, EncodedCorpus, encoded_corpus
from .gpt import GPT, GPTConfig
from .perplexity import perplexity
from .sense_reader import VOCAB

MODELS = ("gpt", "backpack")
PAPER_NAMES = {"gpt": "GPT2-micro", "backpack": "Backpack-micro"}

# The paper's pretraining (Sec. 4.3; the authors' code for the optimiser details): 184,320-token batches
# (180 blocks of 1,024), 500k steps, 2k warmup, peak 6e-4 with linear decay, AdamW (0.9, 0.95), weight
# decay 0.1, clip 1.0, dev evaluation every 1,000 steps keeping the best.
PAPER_TRAIN = TrainConfig(steps=500_000, lr=6e-4, optimizer="adamw", betas=(0.9, 0.95), weight_decay=0.1,
                          warmup_steps=2000, schedule="linear", min_lr=0.0, grad_clip=1.0, eval_every=1000,
                          checkpoint_every=1000, log_every=100, seed=0, max_nonfinite=100)


@dataclass(frozen=True)
class LMConfig:
    """One model of the Backpack/GPT-2 pair, the key of its run in the model store. Defaults: the paper's
    micro pair."""

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
    scaled_alpha: bool = False       # the Backpack's alpha logits / sqrt(d/k)
    # models trained under bf16 autocast whatever `train.precision` says (the cpu profile's GPT-2 where the CPU
    # multiplies bf16 natively: see hanzilm.profiles); `pair` moves the choice into each model's own `train`
    bf16_models: tuple[str, ...] = ()

    def __post_init__(self):
        for m in (self.model, *self.bf16_models):
            if m not in MODELS:
                raise ValueError(f"model must be one of {MODELS}, not {m!r}")

    def pair(self) -> dict[str, LMConfig]:
        """Both models with everything else equal (same seed, same data order), each in its own precision."""
        def member(m: str) -> LMConfig:
            train = dataclasses.replace(self.train, precision="bf16") if m in self.bf16_models else self.train
            return dataclasses.replace(self, model=m, train=train, bf16_models=())
        return {m: member(m) for m in MODELS}


@dataclass(frozen=True)
class BackpackChapter:
    """Everything the chapter's notebooks depend on, composed once: `ch = configure(profile)`.

    lm: the pair's sizes and training (`lm.model` is replaced by each of MODELS: `lm.pair()`); split: the LM
    corpus split; cloze: the WPLC-style cloze of Table 1; senses: the sizes of the Section 5 analyses;
    snapshots: the weights each run keeps for the trends page; workers: processes that share out its snapshots;
    store: where trained models are kept (set by the profile)."""

    profile_key: ClassVar[str] = "backpack"

    lm: LMConfig = field(default_factory=LMConfig)
    split: LMSplitConfig = field(default_factory=LMSplitConfig)
    cloze: ClozeConfig = field(default_factory=ClozeConfig)
    senses: SensesConfig = field(default_factory=SensesConfig)
    snapshots: int = 6
    workers: int = 1
    store: Store | None = field(default=None, compare=False)

    def run(self, model: str) -> LMConfig:
        """The stored run of `model`: its member of the pair, keeping the trends page's snapshots."""
        cfg = self.lm.pair()[model]
        steps = snapshot_steps(cfg.train.steps, self.snapshots)
        return dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, snapshots=steps))

    def reseeded(self, offset: int) -> BackpackChapter:
        """The pair trained at seed + offset (initialisation and data order; see `hanzilm.profiles`)."""
        train = dataclasses.replace(self.lm.train, seed=self.lm.train.seed + offset)
        return dataclasses.replace(self, lm=dataclasses.replace(self.lm, train=train))


def configure(profile: str | Profile) -> BackpackChapter:
    return get_profile(profile).configure(BackpackChapter())



def gpt_config(cfg: LMConfig, vocab_size: int) -> GPTConfig:
    return GPTConfig(vocab_size=vocab_size, block_size=cfg.block_size, n_layer=cfg.n_layer, n_head=cfg.n_head,
                     n_embd=cfg.n_embd, dropout=cfg.dropout, bias=cfg.bias)


def model_config(cfg: LMConfig, vocab_size: int) -> GPTConfig | BackpackConfig:
    g = gpt_config(cfg, vocab_size)
    return g if cfg.model == "gpt" else BackpackConfig.matching(g, cfg.n_senses, cfg.scaled_alpha)


def build(cfg: LMConfig, vocab_size: int) -> torch.nn.Module:
    mc = model_config(cfg, vocab_size)
    return GPT(mc) if isinstance(mc, GPTConfig) else Backpack(mc)


def param_count(mc: GPTConfig | BackpackConfig, positions: bool = True) -> int:
    """The parameters of the model `mc` builds (the tied embedding once), counted on the meta device; without
    the learned position embeddings when `positions` is False."""
    with torch.device("meta"):
        model = GPT(mc) if isinstance(mc, GPTConfig) else Backpack(mc)
    total = sum(p.numel() for p in model.parameters())
    return total if positions else total - mc.block_size * mc.n_embd


def load_corpus(ch: BackpackChapter) -> EncodedCorpus:
    """The encoded LM corpus of the chapter: its split, and a vocabulary cut at `lm.min_char_freq`."""
    return encoded_corpus(ch.split, ch.lm.min_char_freq)


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


def alpha_variant(ch: BackpackChapter, scaled: bool) -> BackpackChapter:
    """The chapter with the Backpack's alpha logits scaled by 1/sqrt(d/k) (or not): everything else, its GPT-2
    included, equal (the ablation of book/backpack/alpha_scaling)."""
    return dataclasses.replace(ch, lm=dataclasses.replace(ch.lm, scaled_alpha=scaled))


def runs(ch: BackpackChapter) -> list[LMConfig]:
    """The chapter's run list, each run once (`train_chapter` trains it, the plan prices it): the GPT-2/Backpack
    pair of Table 1 and every analysis, keeping the trend page's snapshots, and the alpha-scaling ablation's
    other Backpack."""
    other = alpha_variant(ch, not ch.lm.scaled_alpha)
    return list(dict.fromkeys([ch.run("gpt"), ch.run("backpack"), other.run("backpack")]))


def train_chapter(profile: str | Profile) -> BackpackChapter:
    """The chapter's training step (`train_all` at `profile`), then the chapter. Every notebook of the chapter
    calls it first, in a cell of its own; nothing else trains."""
    ch = configure(profile)
    train_all(ch)
    return ch


def train_all(ch: BackpackChapter) -> None:
    """Train every run of `runs` the store lacks, each resuming a partial run."""
    corpus = load_corpus(ch)
    for cfg in runs(ch):
        train_run(ch, corpus, cfg)


def train_run(ch: BackpackChapter, corpus: EncodedCorpus, cfg: LMConfig) -> bool:
    """Train `cfg` unless the store holds it complete (True if it trained now); its vocabulary beside its
    weights, so that `hanzilm senses` needs neither torch's training stack nor the corpus."""
    store = required(ch.store)
    trained_now = store.train(cfg, version=versions.key("backpack"), build=lambda: build(cfg, len(corpus.vocab)),
                              batches=batches(cfg, corpus), evaluate=dev_evaluator(cfg, corpus),
                              data=store_data(corpus))
    vocab = store.run_dir(cfg, data=store_data(corpus), version=versions.key("backpack")) / VOCAB
    if not vocab.is_file():
        corpus.vocab.save(vocab)
    return trained_now


def trained(ch: BackpackChapter, corpus: EncodedCorpus, model: str) -> torch.nn.Module:
    """`model`'s run ("gpt" | "backpack") with its best-dev weights, in eval mode, from the store; never trains
    (`train_chapter` does)."""
    cfg = ch.run(model)
    return required(ch.store).load(cfg, version=versions.key("backpack"), build=lambda: build(cfg, len(corpus.vocab)),
                                   data=store_data(corpus))


def trained_pair(ch: BackpackChapter, corpus: EncodedCorpus) -> dict[str, torch.nn.Module]:
    """{"gpt", "backpack"}: both trained models (see `trained`)."""
    return {name: trained(ch, corpus, name) for name in MODELS}


def run_dir(ch: BackpackChapter, corpus: EncodedCorpus, model: str) -> Path:
    return required(ch.store).run_dir(ch.run(model), data=store_data(corpus), version=versions.key("backpack"))


def snapshots(ch: BackpackChapter, corpus: EncodedCorpus, model: str) -> dict[int, Path]:
    """{step: weights} of the snapshots `model`'s run kept (see `train_run`)."""
    return required(ch.store).snapshot_paths(ch.run(model), data=store_data(corpus),
                                             version=versions.key("backpack"))


def summary(ch: BackpackChapter, corpus: EncodedCorpus, model: str) -> dict:
    return load_summary(run_dir(ch, corpus, model))


def histories(ch: BackpackChapter, corpus: EncodedCorpus) -> dict[str, pd.DataFrame]:
    """Each model's training history, one row per logged or evaluated step."""
    return {name: pd.DataFrame(load_history(run_dir(ch, corpus, name))) for name in MODELS}


@dataclass(frozen=True)
class Pair:
    """The trained pair of part 1 with the corpus it was trained on."""

    corpus: EncodedCorpus
    vocab: CharVocab
    backpack: torch.nn.Module
    gpt: torch.nn.Module


def load_pair(ch: BackpackChapter) -> Pair:
    """The corpus and the trained pair of book/backpack/table1, from the model store (never trained here:
    `train_chapter` trains).

    Afterwards torch runs on one thread: the sense analyses are thousands of tiny forwards, for which one
    thread is fastest and two contend badly on a busy 2-core machine (100x slower, measured)."""
    corpus = load_corpus(ch)
    models = trained_pair(ch, corpus)
    torch.set_num_threads(1)
    return Pair(corpus=corpus, vocab=corpus.vocab, backpack=models["backpack"], gpt=models["gpt"])


def load_trained(ch: BackpackChapter, model: str = "backpack") -> tuple[torch.nn.Module, CharVocab]:
    """A trained model of the store in eval mode, with its vocabulary (see `trained`)."""
    corpus = load_corpus(ch)
    return trained(ch, corpus, model), corpus.vocab


@dataclass(frozen=True)
class Evaluation:
    """Table 1's measurements of a trained pair on the test split."""

    cases: list[ClozeCase]
    perplexity: dict[str, dict[str, float]]              # model -> {"nll", "ppl", "tokens"}
    cloze: dict[str, tuple[dict[str, float], list[dict]]]  # model -> (top-1/top-3 accuracy, per-case rows)


def cloze_cases(ch: BackpackChapter, corpus: EncodedCorpus) -> list[ClozeCase]:
    """The WPLC-style cloze set of the test split (see `cloze`)."""
    docs = split_documents(load_lm_corpus(), test_fraction=ch.split.test_fraction,
                           dev_fraction=ch.split.dev_fraction)["test"]
    return build_cloze([d.text for d in docs], ch.cloze, corpus.vocab)


def test_perplexity(model: torch.nn.Module, cfg: LMConfig, corpus: EncodedCorpus) -> dict[str, float]:
    return perplexity(model, corpus.splits["test"], cfg.block_size, cfg.eval_batch_size, cfg.test_tokens or None,
                      windows=True)


def evaluate(ch: BackpackChapter, corpus: EncodedCorpus, models: dict[str, torch.nn.Module],
             cases: list[ClozeCase] | None = None) -> Evaluation:
    """Test perplexity and the beam-search cloze of every model on the same cases (built from the test split
    unless given: callers evaluating many weights build them once)."""
    cases = cloze_cases(ch, corpus) if cases is None else cases
    ppl = {name: test_perplexity(m, ch.lm, corpus) for name, m in models.items()}
    cloze = {name: evaluate_cloze(m, cases, corpus.vocab, beam=ch.cloze.beam, block_size=ch.lm.block_size)
             for name, m in models.items()}
    return Evaluation(cases=cases, perplexity=ppl, cloze=cloze)


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
    ch = configure(prof)
    corpus = load_corpus(ch)
    if a.run_dir is None:
        action = "trained" if train_run(ch, corpus, ch.run(a.model)) else "loaded"
        s = summary(ch, corpus, a.model)
        print(f"{a.model} ({action}): best step {s['best_step']}, {s['best_metrics']}, wall {s['wall_time']:.0f} s")
        return
    cfg = ch.lm.pair()[a.model]
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
