"""Measured spreads, one way for every chapter: training again from other seeds, and the bootstrap over test items.

A comparative claim (`hanzilm.claims`) is judged against the spread of its quantity, a standard deviation read
from a results table that a chapter writes with these functions on every run:

    sd([gain_at_seed0, gain_at_seed1, gain_at_seed2])              # the same configs trained again
    bootstrap_sd(lambda a, b: f1(a) - f1(b), [counts_a, counts_b])   # the test items drawn again, paired
    combined(seed, boot)                                           # both: they add in quadrature

The seeds share one test set, so their spread leaves out the test set's own sampling noise, which the bootstrap
measures; the two are independent and add as variances.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

RESAMPLES = 1000
SEED = 0  # the bootstrap's own draws: fixed, so a spread is the same number on every run of the same results


def draws(n_items: int, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """(resamples, n_items): how often each item is drawn in each bootstrap resample (n_items draws each)."""
    if n_items < 2:
        raise ValueError(f"a bootstrap needs at least 2 items, got {n_items}")
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_items, np.full(n_items, 1.0 / n_items), size=resamples)


def draws_within(sizes: Sequence[int], resamples: int = RESAMPLES) -> list[np.ndarray]:
    """`draws` for items drawn again within their groups (groups that were sampled apart): the i-th group's own
    stream, `draws(n, seed=SEED + i)`, and all NaN for a group of fewer than 2 items, whose values then are too."""
    return [draws(n, resamples, SEED + i) if n >= 2 else np.full((resamples, n), np.nan)
            for i, n in enumerate(sizes)]


def bootstrap_sd(statistic: Callable[..., np.ndarray], per_item: Sequence[np.ndarray], *,
                 resamples: int = RESAMPLES, seed: int = SEED) -> float:
    """The bootstrap standard deviation of `statistic` over the items (rows) shared by every array of `per_item`
    (paired: one draw of items for all of them). Each array is (n_items, k) per-item sums (counts, losses); the
    statistic receives each array's totals over a resample, (resamples, k) each, and returns (resamples,)."""
    n = len(per_item[0])
    if any(len(x) != n for x in per_item):
        raise ValueError(f"paired arrays differ in items: {[len(x) for x in per_item]}")
    w = draws(n, resamples, seed)
    values = statistic(*(w @ np.asarray(x, dtype=float) for x in per_item))
    return float(np.std(values, ddof=1))


def sd(values: Sequence[float]) -> float:
    """The sample standard deviation of the values that are defined (NaN with fewer than two): over seeds, or over
    bootstrap resamples (a ratio is undefined on a draw whose denominator is 0)."""
    v = [float(x) for x in values if not math.isnan(float(x))]
    return float(np.std(v, ddof=1)) if len(v) >= 2 else math.nan


def combined(*sds: float) -> float:
    """Independent spreads added in quadrature (the measured ones; NaN when none is)."""
    measured = [s for s in sds if not math.isnan(s)]
    return math.sqrt(sum(s * s for s in measured)) if measured else math.nan


def measured(seed_values: Sequence[float], bootstrap: float) -> dict[str, float]:
    """A spread table's numbers: the sd over the seeds' values, how many, the bootstrap sd, the two combined."""
    s = sd(seed_values)
    return {"seed_sd": s, "n_seeds": len(seed_values), "bootstrap_sd": bootstrap, "sd": combined(s, bootstrap)}


def source(n_seeds: int, n_items: int, items: str, resamples: int = RESAMPLES, *, seeds_of: str = "") -> str:
    """How a spread was measured, as the claims table shows it (`seeds_of`: whose seeds, where not the value's
    own, e.g. "the unsupervised cell")."""
    parts = [f"sd over {n_seeds} seeds" + (f" of {seeds_of}" if seeds_of else "")] if n_seeds >= 2 else []
    if n_items:
        parts.append(f"bootstrap over {n_items:,} {items} ({resamples:,} resamples)")
    return " ⊕ ".join(parts)
