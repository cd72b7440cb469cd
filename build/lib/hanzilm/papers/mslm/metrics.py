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

    # precision and recall also take arrays of counts (a bootstrap's resampled totals)
    @property
    def precision(self) -> float:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float:
        return _ratio(self.tp, self.tp + self.fn)

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


def _ratio(num, den):
    """num / den, NaN where den is 0: a float for counts, an array for arrays of them."""
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(np.asarray(den) == 0, np.nan, np.true_divide(num, den))
    return float(out) if out.ndim == 0 else out


def sentence_boundaries(gold: Sequence[str], pred: Sequence[str]) -> tuple[int, int, int, int]:
    """One sentence's boundary decisions: (true positives, false positives, false negatives, true negatives)."""
    n = sum(map(len, gold))
    if sum(map(len, pred)) != n:
        raise ValueError(f"a predicted sentence has {sum(map(len, pred))} characters, its gold {n}")
    gb, pb = boundaries(gold), boundaries(pred)
    return len(gb & pb), len(pb - gb), len(gb - pb), max(n - 1, 0) - len(gb | pb)


def sentence_boundary_rows(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> np.ndarray:
    """(sentences, 4): each sentence's `sentence_boundaries`."""
    rows = [sentence_boundaries(g, p) for g, p in zip(gold, pred, strict=True)]
    return np.array(rows, dtype=float).reshape(len(rows), 4)


def boundary_counts(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> BoundaryCounts:
    return _total(sentence_boundary_rows(gold, pred))


def _total(rows: np.ndarray) -> BoundaryCounts:
    return BoundaryCounts(*(int(x) for x in rows.sum(axis=0)))


@dataclass
class Scored:
    metrics: dict[str, float]   # word and boundary precision / recall / F1, boundary MCC, in %
    items: np.ndarray           # (sentences, SEGMENTATION_FIELDS): what each sentence adds to the metrics' totals


def score_segmentations(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]],
                        mode: str = DEFAULT_MODE) -> Scored:
    """Word precision / recall / F1 (SIGHAN scorer in `mode`, in %) and boundary precision / recall / F1 / MCC
    (in %), with each sentence's counts."""
    result = score([], gold, pred, mode=mode)
    words = result.total
    per_sentence = sentence_boundary_rows(gold, pred)
    b = _total(per_sentence)
    metrics = {"word_precision": 100 * words.precision, "word_recall": 100 * words.recall,
               "word_f1": 100 * words.f1, "boundary_precision": 100 * b.precision,
               "boundary_recall": 100 * b.recall, "boundary_f1": 100 * b.f1, "boundary_mcc": 100 * b.mcc}
    return Scored(metrics, np.hstack([line_counts(result), per_sentence]))

