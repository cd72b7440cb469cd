"""Findings against training: is the gap to the paper closing, flat, or opening?

A *trend* is one quantity measured at several points of one training run (a finding of the claims registry on
each weight snapshot, a dev metric at each evaluation), against the tokens or characters seen so far. The
direction is read off the last stretch of training (the points within the last fourfold of tokens, at least
three): a least-squares line in log10(tokens) gives the change per tenfold training. A change per tenfold no
larger than the quantity's run-to-run spread (where known) or than a tenth of its gap to the paper is *flat*;
otherwise the gap is *closing* or *opening*. Where it closes, the same line says how many tokens it would take to
reach the paper's value at that rate: a straight line in log tokens is a rough reading of a learning curve that
usually bends, so the figure says whether training length could plausibly explain the gap, not when it closes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

DIRECTIONS = ("closing", "flat", "opening", "rising", "falling")  # the last two: no paper value


@dataclass(frozen=True)
class Trend:
    direction: str                 # one of DIRECTIONS
    per_decade: float              # change of the quantity per tenfold tokens, over the fitted points
    first: float                   # the quantity at the first fitted point and at the last
    last: float
    gap: float                     # paper - last
    reach_tokens: float            # closing: tokens at which the line reaches the paper's value; else nan
    fitted_from: float             # tokens of the first fitted point
    tokens: float                  # tokens of the last point


def trend(tokens: Sequence[float], values: Sequence[float], paper: float, *, noise: float = math.nan,
          span: float = 4.0, at_least: int = 3) -> Trend:
    """The direction of `values` (measured at `tokens`) relative to `paper`, from the points within the last
    `span`-fold of tokens (at least `at_least` of them)."""
    t, v = np.asarray(tokens, float), np.asarray(values, float)
    ok = np.isfinite(t) & np.isfinite(v) & (t > 0)
    t, v = t[ok], v[ok]
    if len(t) < 2:
        end, at = (float(v[-1]), float(t[-1])) if len(t) else (math.nan, math.nan)
        return Trend("flat", math.nan, end, end, paper - end, math.nan, at, at)
    order = np.argsort(t)
    t, v = t[order], v[order]
    keep = min(len(t) - at_least, int(np.searchsorted(t, t[-1] / span)))
    t, v = t[max(keep, 0):], v[max(keep, 0):]
    x = np.log10(t)
    slope = float(np.polyfit(x, v, 1)[0])
    gap = paper - v[-1]
    base = dict(per_decade=slope, first=float(v[0]), last=float(v[-1]), gap=float(gap), fitted_from=float(t[0]),
                tokens=float(t[-1]))
    if math.isnan(paper):  # no paper value: only whether it still moves
        moving = abs(slope) > (noise if math.isfinite(noise) else 0.0)
        return Trend(("rising" if slope > 0 else "falling") if moving else "flat", reach_tokens=math.nan, **base)
    threshold = max(noise if math.isfinite(noise) else 0.0, 0.1 * abs(gap))
    if abs(slope) <= threshold:
        direction = "flat"
    else:
        direction = "closing" if slope * gap > 0 else "opening"
    reach = t[-1] * 10 ** (gap / slope) if direction == "closing" else math.nan
    return Trend(direction, reach_tokens=float(reach), **base)


def tokens_label(n: float) -> str:
    """1.5e9 -> '1.5 B'; 6.1e6 -> '6.1 M'."""
    if not math.isfinite(n):
        return "n/a"
    for scale, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.3g}"


def sentence(name: str, tr: Trend, paper: float, *, unit: str = "tokens", paper_tokens: float = math.nan,
             fmt: str = ".3g") -> str:
    """One sentence for the reader: where the quantity ended, which way the gap is moving, and at what rate."""
    f = lambda x: format(x, fmt)  # noqa: E731
    where = (f"{name}: {f(tr.last)} after {tokens_label(tr.tokens)} {unit}"
             + (f" (paper {f(paper)}" + (f" after {tokens_label(paper_tokens)} {unit})" if
                                         math.isfinite(paper_tokens) else ")") if math.isfinite(paper) else ""))
    if not math.isfinite(tr.per_decade):
        return where + "; too few points for a direction."
    rate = f"{tr.per_decade:+{fmt}} per tenfold {unit} since {tokens_label(tr.fitted_from)}"
    if tr.direction in ("rising", "falling"):
        return where + f"; still {tr.direction} ({rate})."
    if tr.direction == "flat":
        return where + f"; the gap is flat ({rate}: no more than the noise or a tenth of the gap)."
    if tr.direction == "opening":
        return where + f"; the gap is opening ({rate})."
    reach = tokens_label(tr.reach_tokens)
    beyond = ""
    if math.isfinite(paper_tokens):
        beyond = (" — within the paper's budget" if tr.reach_tokens <= paper_tokens
                  else " — beyond the paper's own budget, so training length alone does not explain the gap")
    return where + f"; the gap is closing ({rate}): at that rate it would close near {reach} {unit}{beyond}."


def trend_table(long: pd.DataFrame, paper: dict[str, float], *, x: str = "tokens", key: str = "finding",
                noise: dict[str, float] | None = None, paper_tokens: float = math.nan, unit: str = "tokens",
                labels: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per `key` of `long` (columns key, x, ours): the trend and its sentence."""
    rows = []
    for k, g in long.groupby(key, sort=False):
        p = paper.get(k, math.nan)
        tr = trend(g[x], g["ours"], p, noise=(noise or {}).get(k, math.nan))
        rows.append({key: k, "direction": tr.direction, "per_decade": tr.per_decade, "first": tr.first,
                     "last": tr.last, "paper": p, "reach_tokens": tr.reach_tokens,
                     "sentence": sentence((labels or {}).get(k, k), tr, p, unit=unit, paper_tokens=paper_tokens)})
    return pd.DataFrame(rows)
