"""Sense projections E^T C(x)_l (Section 5.1.1, Tables 2 and 7) and how often a sense's top characters form a
dictionary word with x (the paper's "word composition" vs "relatedness" reading of senses 10 and 12).

Because o_i is a non-negative combination of sense vectors (Eq. 3-5), E^T C(x)_l is exactly what sense l of x
adds to the next-character logits wherever x occurs: its top entries are what that sense predicts."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import torch

from ...data.lexicon import Dictionary, is_han
from ...data.vocab import CharVocab
from .common import banned_ids


@torch.no_grad()
def sense_projection(model: torch.nn.Module, ids: torch.Tensor) -> torch.Tensor:
    """E^T C(x)_l for every id: (n, k, V)."""
    return model.senses(ids) @ model.wte.weight.T


@torch.no_grad()
def top_ids(model: torch.nn.Module, vocab: CharVocab, chars: Sequence[str], top: int) -> torch.Tensor:
    """(n, k, top) ids of the highest-scoring vocabulary entries of every sense (special tokens left out)."""
    proj = sense_projection(model, torch.tensor([vocab.stoi[c] for c in chars]))
    proj[..., banned_ids(vocab)] = float("-inf")
    return proj.topk(top, dim=-1).indices


def top_characters(model: torch.nn.Module, vocab: CharVocab, char: str, top: int = 10,
                   dictionary: Dictionary | None = None) -> pd.DataFrame:
    """One row per (sense, rank): the character, its score, whether char + it is a dictionary word and an
    English gloss (of the word if it is one, shown "(天)涯" as the paper does, else of the character)."""
    x = torch.tensor([vocab.stoi[char]])
    scores = sense_projection(model, x)[0]
    scores[:, banned_ids(vocab)] = float("-inf")
    best = scores.topk(top, dim=-1)
    rows = []
    for sense in range(scores.shape[0]):
        for rank, (i, s) in enumerate(zip(best.indices[sense].tolist(), best.values[sense].tolist())):
            c = vocab.itos[i]
            word = char + c
            composes = dictionary is not None and word in dictionary
            gloss = "" if dictionary is None else dictionary.gloss(word if composes else c)
            rows.append({"char": char, "sense": sense, "rank": rank, "top": f"({char}){c}" if composes else c,
                         "score": s, "composes": composes, "gloss": gloss})
    return pd.DataFrame(rows)


def sense_columns(table: pd.DataFrame, senses: Sequence[int] | None = None, gloss: bool = True) -> pd.DataFrame:
    """The paper's layout: one column per sense, its top characters (with glosses) down the rows."""
    t = table if senses is None else table[table.sense.isin(senses)]
    label = [f"{c} ({g})" if gloss and g else c for c, g in zip(t["top"], t["gloss"])]
    return t.assign(label=label).pivot(index="rank", columns="sense", values="label")


def composition_rate(model: torch.nn.Module, vocab: CharVocab, chars: Sequence[str], dictionary: Dictionary,
                     top: int = 10) -> np.ndarray:
    """(k, n): for sense l and character x, the fraction of the `top` characters c of E^T C(x)_l such that
    xc is a dictionary word. High: a word-composition sense; low: relatedness (or noise)."""
    ids = top_ids(model, vocab, chars, top)                        # (n, k, top)
    composes = np.array([[[x + vocab.itos[i] in dictionary for i in row] for row in per_char]
                         for x, per_char in zip(chars, ids.tolist())], dtype=float)
    return composes.mean(-1).T


def frequent_characters(vocab: CharVocab, n: int) -> list[str]:
    """The n most frequent Chinese characters of the vocabulary (training-split counts)."""
    return [c for c in vocab.counts if is_han(c) and c in vocab.stoi][:n]
