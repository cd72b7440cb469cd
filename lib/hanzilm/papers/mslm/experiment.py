"""Training and evaluating one segmental LM on one SNLM corpus, through the shared trainer and model store.

    exp = slm_experiment("pku", "mslm", profile="cpu", seed=0)
    run = train_slm(exp, profile="cpu")            # trained once, loaded afterwards
    run.models["unsupervised"], run.models["lightly supervised"]
    evaluate_corpus(run.models["unsupervised"], run.data, run.data.test)  # bits, segmentations, metrics

One training run keeps two selections: best dev bpc (`best.safetensors`, the unsupervised setting) and best
dev boundary MCC (`best-dev_mcc.safetensors`, light supervision), as the paper's two model selections.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

import numpy as np
import pandas as pd
import torch

from ...data.resolve import checksums
from ...data.snlm import load_snlm, snlm_form
from ...data.vocab import CharVocab
from ..mmtnn.pretrain import word2vec_vectors
from .model import SLMConfig, SegmentalLM
from ...profiles import Profile, get_profile
from ...results import TARGETS
from .lattice import split
from ...store import load_history, run_dir_for, train_or_load
from ...train import TrainConfig
from .data import CharBatches, build_vocab, eval_batches
from .metrics import segmentation_metrics

MAX_SEG_LEN = {"pku": 5, "ptb": 10}                 # k (paper text)
WARMUP_FRACTION = {"pku": 1024 / 8192, "ptb": 0.0}  # the authors' warmup steps over 8192 steps
DATASETS = {"pku": ["snlm_pku", "pku_training_pd199801"], "ptb": ["snlm_ptb"]}
SELECTIONS = {"unsupervised": None, "lightly supervised": "dev_mcc"}   # -> trainer selection (None: metric)


def _paper_train() -> TrainConfig:
    return TrainConfig(steps=8192, lr=1e-3, optimizer="adam", warmup_steps=1024, schedule="linear", min_lr=0.0,
                       grad_clip=1.0, eval_every=256, checkpoint_every=512, log_every=32,
                       metric="dev_bpc", metric_mode="min")


@dataclass(frozen=True)
class SLMExperiment:
    """One SLM training run. Defaults: the paper / the authors' configs; profiles override under "mslm"."""
    profile_key: ClassVar[str] = "mslm"

    corpus: str = "pku"
    model: SLMConfig = field(default_factory=SLMConfig)
    batch_chars: int = 8192               # characters per training batch (the authors' "tokens")
    train_sentences: int | None = None    # use only the first n training sentences (profiles)
    dev_sentences: int | None = None      # dev sentences scored for model selection during training
    eval_batch_chars: int = 16384
    w2v_epochs: int = 32                  # word2vec on the training text initialises the character embeddings
    w2v_window: int = 5
    train: TrainConfig = field(default_factory=_paper_train)


def paper_lr(corpus: str, encoder: str, selection: str = "unsupervised") -> float:
    """The learning rate the authors selected for this cell (targets/mslm_table2.csv)."""
    t = pd.read_csv(TARGETS / "mslm_table2.csv")
    t = t[(t.dataset == corpus.upper()) & (t.model == encoder.upper()) & t.selection.str.startswith(
        "unsupervised" if selection == "unsupervised" else "light")]
    return float(t.lr.iloc[0])


def slm_experiment(corpus: str, encoder: str, *, profile: str | Profile, seed: int = 0,
                   lr: float | None = None) -> SLMExperiment:
    """The experiment for (corpus, encoder) at a profile: k and warmup per corpus, the RSLM without encoder
    dropout (as the authors), the authors' unsupervised learning rate unless `lr` is given."""
    base = SLMExperiment(corpus=corpus, model=SLMConfig(encoder=encoder, max_seg_len=MAX_SEG_LEN[corpus],
                                                        encoder_dropout=0.0 if encoder == "rslm" else 0.15))
    cfg = get_profile(profile).configure(base, variant=corpus)
    train = dataclasses.replace(cfg.train, seed=seed, lr=paper_lr(corpus, encoder) if lr is None else lr,
                                warmup_steps=round(cfg.train.steps * WARMUP_FRACTION[corpus]))
    return dataclasses.replace(cfg, train=train)


# ---- data ------------------------------------------------------------------------------------------------

@dataclass
class SLMData:
    corpus: str
    train: list[list[str]]
    dev: list[list[str]]
    test: list[list[str]]
    vocab: CharVocab
    checksums: dict[str, str]

    def encode(self, sentences: Sequence[Sequence[str]]) -> list[list[int]]:
        return [self.vocab.encode("".join(s)) for s in sentences]


@functools.lru_cache(maxsize=4)
def load_data(corpus: str, train_sentences: int | None = None) -> SLMData:
    splits = load_snlm(corpus)
    train = splits["train"][:train_sentences] if train_sentences else splits["train"]
    vocab = build_vocab(["".join(s) for s in train])
    return SLMData(corpus, train, splits["dev"], splits["test"], vocab,
                   {**checksums(DATASETS[corpus]), **snlm_form(corpus)})


# ---- word2vec initialisation -----------------------------------------------------------------------------

@dataclass(frozen=True)
class SLMWord2Vec:
    corpus: str
    train_sentences: int | None
    dim: int
    epochs: int
    window: int
    seed: int = 0


def char_vectors(w2v: SLMWord2Vec, data: SLMData, profile: str | Profile) -> dict[str, np.ndarray]:
    """word2vec (gensim CBOW) over the training sentences as character sequences."""
    return word2vec_vectors(w2v, lambda: [list("".join(s)) for s in data.train], profile=profile,
                            data=data.checksums, vector_size=w2v.dim, window=w2v.window, min_count=1,
                            epochs=w2v.epochs, seed=w2v.seed)


def build_model(exp: SLMExperiment, data: SLMData, profile: str | Profile) -> SegmentalLM:
    model = SegmentalLM(exp.model, len(data.vocab))
    if exp.w2v_epochs > 0:
        vecs = char_vectors(SLMWord2Vec(exp.corpus, exp.train_sentences, exp.model.dim, exp.w2v_epochs,
                                        exp.w2v_window), data, profile)
        rows = [(i, vecs[c]) for i, c in enumerate(data.vocab.itos) if c in vecs]
        with torch.no_grad():
            model.embedding.weight[[i for i, _ in rows]] = torch.from_numpy(np.stack([v for _, v in rows]))
    return model


# ---- evaluation ------------------------------------------------------------------------------------------

@dataclass
class CorpusEval:
    bits: float                      # -log2 p(x) summed over sentences
    chars: int
    sentence_bpc: list[float]        # per sentence, for the authors' per-sentence averaging
    segmentations: list[list[str]]   # Viterbi, as word lists
    metrics: dict[str, float]        # segmentation_metrics + bpc + bpc_sentence_mean

    @property
    def bpc(self) -> float:
        return self.bits / self.chars


@torch.no_grad()
def evaluate_corpus(model: SegmentalLM, data: SLMData, sentences: Sequence[Sequence[str]],
                    batch_chars: int = 16384) -> CorpusEval:
    """Bits per character (total bits / total characters) and the Viterbi segmentation scored against the
    gold words of `sentences`."""
    was_training = model.training
    model.eval()
    texts = ["".join(s) for s in sentences]
    rows = data.encode(sentences)
    logp = [0.0] * len(rows)
    segs: list[list[str]] = [[] for _ in rows]
    device = next(model.parameters()).device
    for idx, batch in eval_batches(rows, batch_chars):
        ll, lengths = model.analyse({k: v.to(device) for k, v in batch.items()})
        for j, i in enumerate(idx):
            logp[i] = float(ll[j])
            segs[i] = split(texts[i], lengths[j])
    model.train(was_training)
    bits = [-lp / math.log(2) for lp in logp]
    chars = sum(map(len, texts))
    metrics = segmentation_metrics(sentences, segs)
    metrics["bpc"] = sum(bits) / chars
    metrics["bpc_sentence_mean"] = float(np.mean([b / len(t) for b, t in zip(bits, texts)]))
    return CorpusEval(sum(bits), chars, [b / len(t) for b, t in zip(bits, texts)], segs, metrics)


def dev_evaluator(exp: SLMExperiment, data: SLMData):
    """evaluate(model) for the trainer: dev bpc (selection: unsupervised), dev boundary MCC (light supervision),
    dev word F1 and boundary F1 (for the learning curves)."""
    dev = data.dev[:exp.dev_sentences] if exp.dev_sentences else data.dev

    def evaluate(model: SegmentalLM) -> dict[str, float]:
        m = evaluate_corpus(model, data, dev, exp.eval_batch_chars).metrics
        return {"dev_bpc": m["bpc"], "dev_mcc": m["boundary_mcc"], "dev_f1": m["word_f1"],
                "dev_boundary_f1": m["boundary_f1"]}
    return evaluate


# ---- training --------------------------------------------------------------------------------------------

@dataclass
class SLMRun:
    exp: SLMExperiment
    data: SLMData
    models: dict[str, SegmentalLM]          # selection -> model (eval mode)
    history: list[dict[str, Any]]
    summary: dict[str, Any]


def train_slm(exp: SLMExperiment, *, profile: str | Profile) -> SLMRun:
    """Train (or load) one SLM and return both selections."""
    data = load_data(exp.corpus, exp.train_sentences)
    rows = data.encode(data.train)
    kw = dict(build=lambda: build_model(exp, data, profile), batches=CharBatches(rows, exp.batch_chars,
              seed=exp.train.seed), evaluate=dev_evaluator(exp, data), profile=profile, data=data.checksums,
              keep_best=[("dev_mcc", "max")])
    models = {name: train_or_load(exp, **kw, select=sel) for name, sel in SELECTIONS.items()}
    run_dir = run_dir_for(exp, profile=profile, data=data.checksums)
    summary = json.loads((run_dir / "done.json").read_text())
    return SLMRun(exp, data, models, load_history(run_dir), summary)


__all__ = ["CorpusEval", "SLMData", "SLMExperiment", "SLMRun", "SLMWord2Vec", "build_model", "char_vectors",
           "dev_evaluator", "evaluate_corpus", "load_data", "paper_lr", "slm_experiment", "train_slm"]
