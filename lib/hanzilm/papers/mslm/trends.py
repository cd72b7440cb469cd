"""The segmental LMs along training, beside the authors' own training logs.

Our runs evaluate on the dev split every few hundred steps (`tables.learning_curves`); Downey et al. publish the
same dev statistics of every run they trained (`targets/mslm_training_logs.csv`, from their repository), every
128 steps of 8,192 characters. Against characters seen, the two are one axis: ours covers the first 1-3 % of
theirs. Comparable are dev bits per character and dev boundary MCC (their `dev_loss` and `mcc`); their F1 is
boundary F1, ours word F1, so our word F1 is compared with the paper's final Table 2 value instead.

The reference each trend is read against: for bpc and MCC the authors' runs at the end of their training (median
over their seeds, 67 M characters) at the logged learning rate nearest ours (ours sit above theirs: at 1-3 % of
their training the dev set prefers higher rates), for word F1 the paper's Table 2 median.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...results import TARGETS
from ...trends import tokens_label, trend

AUTHORS_LOGS = TARGETS / "mslm_training_logs.csv"
PAPER_CHARS = 8192 * 8192   # 8,192 steps of 8,192 characters
NOTES = ("per curve: its last value, its reference, and the change per tenfold training characters over the "
         "evaluations of the last fourfold of characters (seed median)")
METRICS = {"dev_bpc": "dev bits per character", "dev_mcc": "dev boundary MCC (%)", "dev_f1": "dev word F1 (%)"}


def authors_curves() -> pd.DataFrame:
    """The authors' logs, long: dataset, model, lr, seed, step, chars, metric (dev_bpc | dev_mcc, in % |
    dev_boundary_f1, in %), value."""
    logs = pd.read_csv(AUTHORS_LOGS)
    logs["dev_mcc"] = logs["dev_mcc"] * 100
    return logs.melt(id_vars=["dataset", "model", "lr", "seed", "step", "chars"],
                     value_vars=["dev_bpc", "dev_mcc", "dev_boundary_f1"], var_name="metric", value_name="value")


def authors_nearest(authors: pd.DataFrame, dataset: str, model: str, metric: str, lr: float) -> pd.DataFrame:
    """The authors' runs of a curve at the logged learning rate nearest `lr` (by ratio); empty if none logged."""
    theirs = authors[(authors.dataset == dataset) & (authors.model == model) & (authors.metric == metric)]
    if theirs.empty:
        return theirs
    rates = theirs.lr.unique()
    nearest = rates[np.argmin(np.abs(np.log(rates / lr)))]
    return theirs[theirs.lr == nearest]


def _median_curve(frame: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    return frame.groupby(x, as_index=False)[y].median().sort_values(x)


def references(curves: pd.DataFrame, authors: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, model, metric) of ours: the reference value (see the module docstring), where it comes
    from, and the authors' value at the first logged point at or past our last characters."""
    paper = pd.read_csv(TARGETS / "mslm_table2.csv")
    paper = paper[paper.selection.str.startswith("unsupervised (")]
    rows = []
    for (dataset, model, metric), ours in curves.groupby(["dataset", "model", "metric"], sort=False):
        lr = float(ours.lr.iloc[0])
        mine = _median_curve(ours, "chars", "ours")
        end = float(mine.chars.iloc[-1])
        row = {"dataset": dataset, "model": model, "metric": metric, "lr": lr, "our_chars": end,
               "ours_last": float(mine.ours.iloc[-1])}
        theirs = authors_nearest(authors, dataset, model, metric, lr)
        if metric == "dev_f1":
            p = paper[(paper.dataset == dataset) & (paper.model == model)]
            row.update(reference=float(p.f1_median.iloc[0]) if len(p) else math.nan,
                       reference_source=f"paper Table 2, unsupervised median (its lr {p.lr.iloc[0]:g}), word F1"
                       if len(p) else "")
        elif len(theirs):
            curve = _median_curve(theirs, "chars", "value")
            seeds = theirs.seed.nunique()
            row.update(reference=float(curve.value.iloc[-1]),
                       reference_source=f"the authors' runs at lr {theirs.lr.iloc[0]:g} (ours {lr:g}; {seeds} "
                                        f"seed{'s' * (seeds > 1)}), "
                                        f"after {tokens_label(curve.chars.iloc[-1])} characters")
            later = curve[curve.chars >= end]
            if len(later):
                row.update(authors_chars=float(later.chars.iloc[0]), authors_then=float(later.value.iloc[0]))
        rows.append(row)
    return pd.DataFrame(rows)


def directions(curves: pd.DataFrame, refs: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, model, metric): our trend towards the reference over the last evaluations (seed median),
    and one sentence that also says where the authors' own run stood at the same point."""
    out = []
    for r in refs.itertuples():
        mine = _median_curve(curves[(curves.dataset == r.dataset) & (curves.model == r.model)
                                    & (curves.metric == r.metric)], "chars", "ours")
        tr = trend(mine.chars, mine.ours, r.reference)
        name = f"{r.dataset} {r.model}, {METRICS[r.metric]}"
        text = f"{name}: {tr.last:.3g} after {tokens_label(r.our_chars)} characters" + (
            f" (reference {r.reference:.3g}: {r.reference_source})" if math.isfinite(r.reference) else
            " (no authors' run at this learning rate)")
        if isinstance(getattr(r, "authors_then", None), float) and math.isfinite(r.authors_then):
            text += (f"; the authors' run stood at {r.authors_then:.3g} after {tokens_label(r.authors_chars)} "
                     "characters")
        if math.isfinite(tr.per_decade):
            rate = f"{tr.per_decade:+.3g} per tenfold characters"
            text += {"closing": f"; closing ({rate}), at that rate reaching the reference near "
                                f"{tokens_label(tr.reach_tokens)} characters",
                     "opening": f"; moving away from the reference ({rate}; ours is "
                                f"{'above' if tr.last > r.reference else 'below'} it)",
                     "flat": f"; flat ({rate})", "rising": f"; still rising ({rate})",
                     "falling": f"; still falling ({rate})"}[tr.direction]
        out.append({"dataset": r.dataset, "model": r.model, "metric": r.metric, "direction": tr.direction,
                    "per_decade": tr.per_decade, "last": tr.last, "reference": r.reference,
                    "sentence": text + "."})
    return pd.DataFrame(out)


def results_table(directions_: pd.DataFrame) -> pd.DataFrame:
    """`directions` in the long form of the results: dataset, model, curve, metric (last | reference |
    per_decade), ours."""
    long = directions_.rename(columns={"metric": "curve"}).melt(
        id_vars=["dataset", "model", "curve", "direction"], value_vars=["last", "reference", "per_decade"],
        var_name="metric", value_name="ours")
    return long.sort_values(["dataset", "model", "curve"], kind="stable").reset_index(drop=True)


def figure(curves: pd.DataFrame, authors: pd.DataFrame, refs: pd.DataFrame):
    """Rows: datasets; columns: METRICS. Our runs (every seed, solid) and the authors' runs at the logged learning
    rate nearest ours (every seed, dashed, thin) against characters seen (log); stars: the references at 67 M
    characters."""
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(curves.dataset))
    fig, axes = plt.subplots(len(datasets), len(METRICS), figsize=(12, 3.3 * len(datasets)), squeeze=False)
    for i, dataset in enumerate(datasets):
        for j, metric in enumerate(METRICS):
            ax = axes[i, j]
            for k, model in enumerate(["RSLM", "MSLM", "DMSLM"]):
                ours = curves[(curves.dataset == dataset) & (curves.model == model) & (curves.metric == metric)]
                if ours.empty:
                    continue
                lr = float(ours.lr.iloc[0])
                for n, (_, g) in enumerate(ours.groupby("seed")):
                    ax.plot(g.chars, g.ours, color=f"C{k}", lw=1.4, label=model if n == 0 else None)
                theirs = authors_nearest(authors, dataset, model, metric, lr)
                theirs = theirs[theirs.chars > 0]
                for _, g in theirs.groupby("seed"):
                    ax.plot(g.chars, g.value, color=f"C{k}", lw=0.7, ls="--", alpha=0.6)
                ref = refs[(refs.dataset == dataset) & (refs.model == model) & (refs.metric == metric)]
                if len(ref) and math.isfinite(ref.reference.iloc[0]):
                    ax.plot([PAPER_CHARS], [ref.reference.iloc[0]], "*", color=f"C{k}", ms=9)
            ax.set_xscale("log")
            ax.set_title(f"{dataset}: {METRICS[metric]}", fontsize=9)
            if i == len(datasets) - 1:
                ax.set_xlabel("training characters (log)")
    axes[0, 0].legend(frameon=False, fontsize=8, title="solid: ours; dashed: the authors'", title_fontsize=7)
    fig.tight_layout()
    return fig


# ---- our runs at scale beside the authors' at the same characters ---------------------------------------------

MATCHED_METRICS = {"dev_bpc": "dev bits per character", "dev_boundary_f1": "dev boundary F1 (%)",
                   "dev_mcc": "dev boundary MCC (%)"}


def authors_at_rate(authors: pd.DataFrame, dataset: str, model: str) -> pd.DataFrame:
    """The authors' runs of a cell at the rate the paper's Table 2 chose for its unsupervised row."""
    paper = pd.read_csv(TARGETS / "mslm_table2.csv")
    row = paper[(paper.dataset == dataset) & (paper.model == model) & paper.selection.str.startswith("unsupervised")]
    lr = float(row.lr.iloc[0])
    return authors[(authors.dataset == dataset) & (authors.model == model) & np.isclose(authors.lr, lr)]


def matched_compute(curves: pd.DataFrame, authors: pd.DataFrame) -> pd.DataFrame:
    """Ours beside the authors' at every characters-seen point both logged (theirs every 1,048,576 characters),
    per (dataset, model, curve): the median, lowest and highest over each side's seeds, long form (metric:
    ours_median, ours_min, ours_max, ours_seeds, authors_median, ..., authors_lr)."""
    rows = []
    for (dataset, model, curve), ours in curves[curves.metric.isin(list(MATCHED_METRICS))].groupby(
            ["dataset", "model", "metric"], sort=False):
        theirs = authors_at_rate(authors, dataset, model)
        theirs = theirs[(theirs.metric == curve) & (theirs.chars > 0)]
        for chars in sorted(set(ours.chars) & set(theirs.chars)):
            stats = {}
            for side, frame, column in (("ours", ours, "ours"), ("authors", theirs, "value")):
                v = frame[frame.chars == chars][column]
                stats.update({f"{side}_median": v.median(), f"{side}_min": v.min(), f"{side}_max": v.max(),
                              f"{side}_seeds": len(v)})
            stats["authors_lr"] = float(theirs.lr.iloc[0])
            rows += [{"dataset": dataset, "model": model, "curve": curve, "chars": chars, "metric": k, "ours": v}
                     for k, v in stats.items()]
    return pd.DataFrame(rows, columns=["dataset", "model", "curve", "chars", "metric", "ours"])


def matched_sentences(matched: pd.DataFrame) -> list[str]:
    """Per (dataset, model, curve), at the last point both logged: where our seeds stand against the authors'."""
    out = []
    for (dataset, model, curve), g in matched.groupby(["dataset", "model", "curve"], sort=False):
        last = g[g.chars == g.chars.max()].set_index("metric").ours
        ours, lo, hi = last.ours_median, last.authors_min, last.authors_max
        where = ("within the range of their seeds" if lo <= ours <= hi else
                 f"{ours - hi:+.3g} above their highest seed" if ours > hi else f"{ours - lo:+.3g} below their lowest seed")
        out.append(f"{dataset} {model}, {MATCHED_METRICS[curve]} after {tokens_label(g.chars.max())} characters: "
                   f"ours {ours:.3g} (median of {int(last.ours_seeds)} seeds, {last.ours_min:.3g}-{last.ours_max:.3g}), "
                   f"the authors' {last.authors_median:.3g} (median of {int(last.authors_seeds)} seeds at lr "
                   f"{last.authors_lr:g}, {lo:.3g}-{hi:.3g}): {where}.")
    return out


def along_training(curves: pd.DataFrame, metric: str = "dev_f1") -> list[str]:
    """Per (dataset, model): `metric` (seed median) at its first evaluation, at its best and at its last, with the
    characters seen at each: where a run's segmentation went as its language model trained on."""
    out = []
    for (dataset, model), ours in curves[curves.metric == metric].groupby(["dataset", "model"], sort=False):
        mine = _median_curve(ours, "chars", "ours")
        first, last, best = mine.iloc[0], mine.iloc[-1], mine.loc[mine.ours.idxmax()]
        out.append(f"{dataset} {model}, {METRICS[metric]}: {first.ours:.3g} after {tokens_label(first.chars)} "
                   f"characters, at best {best.ours:.3g} (after {tokens_label(best.chars)}), {last.ours:.3g} after "
                   f"{tokens_label(last.chars)}.")
    return out


def matched_figure(curves: pd.DataFrame, authors: pd.DataFrame):
    """One panel per MATCHED_METRICS curve: our runs at scale (every seed, solid) and the authors' at their
    chosen rate (every seed, dashed) against characters seen, over the characters ours cover."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(MATCHED_METRICS), figsize=(11, 3.6), squeeze=False)
    end = curves.chars.max()
    for ax, (metric, title) in zip(axes[0], MATCHED_METRICS.items()):
        for k, ((dataset, model), ours) in enumerate(curves[curves.metric == metric].groupby(
                ["dataset", "model"], sort=False)):
            for n, (_, g) in enumerate(ours.groupby("seed")):
                ax.plot(g.chars / 1e6, g.ours, color=f"C{k}", lw=1.4, label=f"{model} (ours)" if n == 0 else None)
            theirs = authors_at_rate(authors, dataset, model)
            theirs = theirs[(theirs.metric == metric) & (theirs.chars > 0) & (theirs.chars <= end)]
            for n, (_, g) in enumerate(theirs.groupby("seed")):
                ax.plot(g.chars / 1e6, g.value, color=f"C{k}", lw=0.8, ls="--", marker="o", ms=3, alpha=0.7,
                        label=f"{model} (the authors', lr {theirs.lr.iloc[0]:g})" if n == 0 else None)
        ax.set(title=title, xlabel="training characters (M)")
    axes[0, 0].legend(frameon=False, fontsize=7)
    fig.tight_layout()
    return fig
