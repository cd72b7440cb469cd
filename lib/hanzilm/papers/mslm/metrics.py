"""Segmentation quality of a segmental LM: word F1 (the shared SIGHAN scorer) and the character-wise boundary
classification the paper's error analysis (Table 3) and light supervision (dev boundary MCC) use.

A boundary decision is made after every character but the last of a sentence (the sentence end is always a
boundary and is not counted)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ...eval.sighan import DEFAULT_MODE, LINE_FIELDS, line_counts, score

# what each sentence adds to the totals every segmentation metric is computed from (a bootstrap over sentences
# resamples these rows): the scorer's line counts, then the boundary decisions' margins
SEGMENTATION_FIELDS = (*LINE_FIELDS, "boundary_tp", "boundary_fp", "boundary_fn", "boundary_tn")


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


def sentence_boundaries(gold: Sequence[str], pred: Sequence[str]) -> tuple[int, int, int, int]:
    """One sentence's boundary decisions: (true positives, false positives, false negatives, true negatives)."""
    n = sum(map(len, gold))
    if sum(map(len, pred)) != n:
        raise ValueError(f"a predicted sentence has {sum(map(len, pred))} characters, its gold {n}")
    gb, pb = boundaries(gold), boundaries(pred)
    return len(gb & pb), len(pb - gb), len(gb - pb), max(n - 1, 0) - len(gb | pb)


def boundary_counts(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> BoundaryCounts:
    c = BoundaryCounts()
    for g, p in zip(gold, pred, strict=True):
        tp, fp, fn, tn = sentence_boundaries(g, p)
        c.tp, c.fp, c.fn, c.tn = c.tp + tp, c.fp + fp, c.fn + fn, c.tn + tn
    return c


@dataclass
class Scored:
    metrics: dict[str, float]   # `segmentation_metrics`
    items: np.ndarray           # (sentences, SEGMENTATION_FIELDS): what each sentence adds to the metrics' totals


def score_segmentations(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]],
                        mode: str = DEFAULT_MODE) -> Scored:
    """Word precision / recall / F1 (SIGHAN scorer in `mode`, in %) and boundary precision / recall / F1 / MCC
    (in %), with each sentence's counts."""
    result = score([], gold, pred, mode=mode)
    words = result.total
    per_sentence = np.array([sentence_boundaries(g, p) for g, p in zip(gold, pred, strict=True)],
                            dtype=float).reshape(len(gold), 4)
    b = BoundaryCounts(*(int(x) for x in per_sentence.sum(axis=0)))
    metrics = {"word_precision": 100 * words.precision, "word_recall": 100 * words.recall,
               "word_f1": 100 * words.f1, "boundary_precision": 100 * b.precision,
               "boundary_recall": 100 * b.recall, "boundary_f1": 100 * b.f1, "boundary_mcc": 100 * b.mcc}
    return Scored(metrics, np.hstack([line_counts(result), per_sentence]))


def segmentation_metrics(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]],
                         mode: str = DEFAULT_MODE) -> dict[str, float]:
    """`score_segmentations`' metrics."""
    return score_segmentations(gold, pred, mode).metrics
