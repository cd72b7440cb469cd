"""Lexical similarity from character representations (Section 5.1.3, Table 4): a word is the mean of its
characters' sense vectors (per sense, or all senses) for the Backpack and the mean of its characters' input
embeddings for GPT-2; the cosine similarity of each pair is correlated with the human scores.

The paper's text says Spearman, its Table 4 caption Pearson: we report both. A pair is covered when every
character of both words is in the model's vocabulary; uncovered pairs are left out and counted."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch
from scipy import stats

from ...data.vocab import CharVocab
from .common import in_vocab

Vectors = Callable[[str], torch.Tensor]   # word -> (..., dim): one vector per representation in the batch dims


@torch.no_grad()
def backpack_word_senses(model: torch.nn.Module, vocab: CharVocab) -> Vectors:
    """word -> (k, d): the mean over its characters of C(x)_l, for every sense l."""
    return lambda word: model.senses(torch.tensor(vocab.encode(word))).mean(0)


@torch.no_grad()
def embedding_word_vector(model: torch.nn.Module, vocab: CharVocab) -> Vectors:
    """word -> (d,): the mean of its characters' input embeddings E x."""
    return lambda word: model.wte(torch.tensor(vocab.encode(word))).mean(0)


def correlations(pairs: Sequence[tuple[str, str, float]], vectors: Vectors, vocab: CharVocab) -> pd.DataFrame:
    """Spearman and Pearson correlation of cos(v(w1), v(w2)) with the human scores, over the covered pairs;
    one row per representation (the leading dims of `vectors`' output, flattened)."""
    kept = [(a, b, s) for a, b, s in pairs if in_vocab(vocab, a) and in_vocab(vocab, b)]
    if len(kept) < 3:
        raise ValueError(f"only {len(kept)} of {len(pairs)} pairs are covered by the vocabulary")
    with torch.no_grad():
        va = torch.stack([vectors(a) for a, _, _ in kept])
        vb = torch.stack([vectors(b) for _, b, _ in kept])
    cos = torch.nn.functional.cosine_similarity(va, vb, dim=-1)         # (n, ...)
    cos = cos.reshape(len(kept), -1).double().numpy()
    human = np.array([s for _, _, s in kept])
    rows = []
    for r in range(cos.shape[1]):
        rows.append({"index": r, "spearman": stats.spearmanr(cos[:, r], human).statistic,
                     "pearson": stats.pearsonr(cos[:, r], human).statistic,
                     "pairs": len(kept), "coverage": len(kept) / len(pairs)})
    return pd.DataFrame(rows)


def all_senses(per_sense: Vectors, how: str) -> Vectors:
    """All senses as one vector: their mean ("mean") or their concatenation ("concat")."""
    if how == "mean":
        return lambda w: per_sense(w).mean(-2)
    if how == "concat":
        return lambda w: per_sense(w).flatten(-2)
    raise ValueError(how)
