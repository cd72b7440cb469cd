"""The segmental-LM chapter's other views of the Table 2 runs: the boundary error analysis (Table 3), example
segmentations (Table 4) and learning curves (the figure). They read the runs `chapter` trained; nothing here
trains."""

from __future__ import annotations

from typing import Sequence

import pandas as pd
import torch

from .model import ENCODERS
from ...profiles import Profile
from ...store import load_history, run_dir_for
from .chapter import SLMChapter, cells
from .experiment import evaluate_corpus, load_data, train_slm

BOUNDARY_METRICS = ("boundary_precision", "boundary_recall", "boundary_f1", "word_precision", "word_recall",
                    "word_f1")
# the sentence behind the paper's Table 4 discussion (be+fore, quest+ion, question+able, asbestos): PTB tr line 10
PAPER_EXAMPLE = "before anyone heard of asbestos having any questionable properties"


def boundary_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Table 3: boundary (character-wise) precision, recall and F1 beside word precision / recall / F1, the
    median over seeds per (dataset, selection, model), long form."""
    med = runs.groupby(["dataset", "selection", "model"], sort=False)[list(BOUNDARY_METRICS)].median()
    return med.reset_index().melt(id_vars=["dataset", "selection", "model"], var_name="metric", value_name="ours")


def example_sentences(corpus: str, n_test: int = 3, max_chars: int = 80) -> list[list[str]]:
    """Gold sentences for Table 4: the PTB training sentence the paper's discussion quotes (PTB only), then the
    first `n_test` test sentences of at most `max_chars` characters."""
    data = load_data(corpus)
    quoted = [s for s in data.train if PAPER_EXAMPLE in " ".join(s)][:1] if corpus == "ptb" else []
    short = [s for s in data.test if sum(map(len, s)) <= max_chars][:n_test]
    return quoted + short


def first_seed_runs(ch: SLMChapter, profile: str | Profile, corpus: str, selection: str) -> dict[str, object]:
    """encoder -> the experiment of the first seed's run that provides `selection`."""
    out = {}
    for c in cells(ch, profile):
        if c.corpus == corpus and c.selection == selection:
            out.setdefault(c.encoder, c.exp)
    return out


def segment_examples(ch: SLMChapter, profile: str | Profile, corpus: str, sentences: Sequence[Sequence[str]],
                     selection: str = "unsupervised") -> pd.DataFrame:
    """Table 4: each sentence as gold and as each model's Viterbi segmentation (words joined by spaces)."""
    rows = [{"sentence": i, "segmentation": "gold", "words": " ".join(s)} for i, s in enumerate(sentences)]
    for encoder, exp in first_seed_runs(ch, profile, corpus, selection).items():
        run = train_slm(exp, profile=profile)
        ev = evaluate_corpus(run.models[selection], run.data, sentences, exp.eval_batch_chars)
        rows += [{"sentence": i, "segmentation": encoder.upper(), "words": " ".join(s)}
                 for i, s in enumerate(ev.segmentations)]
    order = {"gold": 0, **{e.upper(): i + 1 for i, e in enumerate(ENCODERS)}}
    df = pd.DataFrame(rows)
    return df.sort_values(["sentence", "segmentation"], key=lambda c: c.map(order) if c.name == "segmentation"
                          else c, kind="stable").reset_index(drop=True)


def word_lengths(ch: SLMChapter, profile: str | Profile, corpus: str, sentences: Sequence[Sequence[str]],
                 selection: str = "lightly supervised", longest: int = 5) -> pd.DataFrame:
    """How many words of each length (1 .. `longest`, longer ones counted as `longest`) the gold and each model's
    first-seed segmentation of `sentences` hold: under-segmentation shows as missing one-character words."""
    rows = {"gold": [min(len(w), longest) for s in sentences for w in s]}
    for encoder, exp in first_seed_runs(ch, profile, corpus, selection).items():
        run = train_slm(exp, profile=profile)
        ev = evaluate_corpus(run.models[selection], run.data, sentences, exp.eval_batch_chars)
        rows[encoder.upper()] = [min(len(w), longest) for s in ev.segmentations for w in s]
    table = pd.DataFrame({k: pd.Series(v).value_counts().reindex(range(1, longest + 1), fill_value=0)
                          for k, v in rows.items()})
    table.index.name = "word length"
    return table


@torch.no_grad()
def context_ablation(ch: SLMChapter, profile: str | Profile, corpus: str, sentences: Sequence[Sequence[str]],
                     selection: str = "unsupervised") -> pd.DataFrame:
    """How much each first-seed model leans on its context encoder: bpc and word F1 on `sentences` as trained
    and with the encoder's output replaced by zeros (the segment decoder alone, as a unigram segment model)."""
    rows = []
    for encoder, exp in first_seed_runs(ch, profile, corpus, selection).items():
        run = train_slm(exp, profile=profile)
        model = run.models[selection]
        full = evaluate_corpus(model, run.data, sentences, exp.eval_batch_chars).metrics
        encode = model.encode
        model.encode = lambda chars, lengths: torch.zeros_like(encode(chars, lengths))
        try:
            alone = evaluate_corpus(model, run.data, sentences, exp.eval_batch_chars).metrics
        finally:
            del model.encode   # back to the class's method
        rows.append({"model": encoder.upper(), "bpc": full["bpc"], "bpc_without_context": alone["bpc"],
                     "word_f1": full["word_f1"], "word_f1_without_context": alone["word_f1"]})
    return pd.DataFrame(rows)


def learning_curves(ch: SLMChapter, profile: str | Profile) -> pd.DataFrame:
    """Dev bpc, word F1 and boundary MCC at every evaluation step of each (corpus, encoder, seed) run, long
    form: corpus, model, seed, step, metric, value."""
    rows = []
    seen = set()
    for c in cells(ch, profile):
        if c.exp in seen:
            continue
        seen.add(c.exp)
        data = load_data(c.exp.corpus, c.exp.train_sentences)
        for h in load_history(run_dir_for(c.exp, profile=profile, data=data.checksums)):
            for metric in ("dev_bpc", "dev_f1", "dev_mcc"):
                if metric in h:
                    rows.append({"dataset": c.corpus.upper(), "model": c.encoder.upper(), "seed": c.seed,
                                 "lr": c.exp.train.lr, "step": h["step"], "metric": metric, "ours": h[metric]})
    return pd.DataFrame(rows)


__all__ = ["BOUNDARY_METRICS", "PAPER_EXAMPLE", "boundary_table", "context_ablation", "example_sentences",
           "first_seed_runs", "learning_curves", "segment_examples", "word_lengths"]
