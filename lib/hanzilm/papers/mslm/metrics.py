"""Segmentation quality of a segmental LM: word F1 (the shared SIGHAN scorer) and the character-wise boundary
classification the paper's error analysis (Table 3) and light supervision (dev boundary MCC) use.

A boundary decision is made after every character but the last of a sentence (the sentence end is always a
boundary and is not counted)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ...eval.sighan import DEFAULT_MODE, score


def boundaries(words: Sequence[str]) -> set[int]:
    """Character offsets after which a word ends, the sentence end excluded."""
    out, pos = set(), 0
    for w in words[:-1]:
        pos += len(w)
        out.add(pos)
    return out


@dataclass
class BoundaryCounts:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else math.nan

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else math.nan

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0

    @property
    def mcc(self) -> float:
        """Matthews correlation coefficient of the boundary decisions (0 when a margin is empty)."""
        tp, fp, fn, tn = self.tp, self.fp, self.fn, self.tn
        den = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        return (tp * tn - fp * fn) / den if den else 0.0


def boundary_counts(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> BoundaryCounts:
    c = BoundaryCounts()
    for g, p in zip(gold, pred, strict=True):
        n = sum(map(len, g))
        if sum(map(len, p)) != n:
            raise ValueError(f"a predicted sentence has {sum(map(len, p))} characters, its gold {n}")
        gb, pb = boundaries(g), boundaries(p)
        c.tp += len(gb & pb)
        c.fp += len(pb - gb)
        c.fn += len(gb - pb)
        c.tn += max(n - 1, 0) - len(gb | pb)
    return c


def segmentation_metrics(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]],
                         mode: str = DEFAULT_MODE) -> dict[str, float]:
    """Word precision / recall / F1 (SIGHAN scorer in `mode`, in %) and boundary precision / recall / F1 / MCC
    (in %)."""
    words = score([], gold, pred, mode=mode).total
    b = boundary_counts(gold, pred)
    return {"word_precision": 100 * words.precision, "word_recall": 100 * words.recall, "word_f1": 100 * words.f1,
            "boundary_precision": 100 * b.precision, "boundary_recall": 100 * b.recall,
            "boundary_f1": 100 * b.f1, "boundary_mcc": 100 * b.mcc}
