"""The segmental-LM chapter's tables: Table 2 (word F1 and bpc over seeds, beside the paper's), the boundary
error analysis (Table 3), example segmentations (Table 4) and the learning curves. They read the runs
`experiment` trains; only `evaluate_all`/`train_all` there train.

    runs = experiment.evaluate_all(ch)
    write_results(table2(runs), chapter="mslm", name="table2", run=run, datasets=DATASETS, by="dataset",
                  paper=paper_table2())

Long tables carry the `dataset` column ("PKU", "PTB") that `DATASETS` maps to the manifest's datasets.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch

from ... import spread
from ...eval import sighan
from ...results import paper_values
from ...store import load_history
from . import experiment
from .experiment import (CORPORA, SENTENCE_FIELDS, MSLMChapter, SLMExperiment, cells, paper_lr,
                         train_slm)
from .metrics import BoundaryCounts
from .model import ENCODERS

DATASETS = {corpus.upper(): names for corpus, names in experiment.DATASETS.items()}   # by="dataset"
BOUNDARY_METRICS = ("boundary_precision", "boundary_recall", "boundary_f1", "word_precision", "word_recall",
                    "word_f1")
# the sentence behind the paper's Table 4 discussion (be+fore, quest+ion, question+able, asbestos): PTB tr line 10
PAPER_EXAMPLE = "before anyone heard of asbestos having any questionable properties"
PAPER_SELECTION = {"unsupervised (best dev bpc)": "unsupervised",
                   "light supervision (best dev boundary MCC)": "lightly supervised"}


# ---- Table 2 ------------------------------------------------------------------------------------------------

def config_summary(ch: MSLMChapter) -> pd.DataFrame:
    """The sizes a reader wants to see beside the table: one row per (corpus, model)."""
    rows = []
    for corpus in CORPORA:
        for encoder in ENCODERS:
            exp = experiment.slm_experiment(ch, corpus, encoder)
            rows.append({"corpus": corpus, "model": encoder, "seeds": len(ch.seeds_for(corpus, encoder)),
                         **_sizes(exp)})
    return pd.DataFrame(rows)


def _sizes(exp: SLMExperiment) -> dict[str, Any]:
    t = exp.train
    return {"dim": exp.model.dim, "feedforward": exp.model.feedforward_dim, "steps": t.steps,
            "batch_chars": exp.batch_chars, "warmup": t.warmup_steps, "chars_seen": t.steps * exp.batch_chars,
            "w2v_epochs": exp.w2v_epochs, "dev_sentences": exp.dev_sentences}


def table2(runs: pd.DataFrame) -> pd.DataFrame:
    """Median, mean and sd over seeds of word F1 and test bpc per (dataset, selection, model), long form; with
    the cell's rate and training characters per run (what a claim's scale requirement reads)."""
    g = runs.groupby(["dataset", "selection", "model"], sort=False)
    stats = g.agg(f1_median=("word_f1", "median"), f1_mean=("word_f1", "mean"), f1_sd=("word_f1", spread.sd),
                  bpc_median=("bpc", "median"), bpc_mean=("bpc", "mean"), bpc_sd=("bpc", spread.sd),
                  bpc_sentence_mean=("bpc_sentence_mean", "mean"), n_seeds=("seed", "nunique"),
                  lr=("lr", "first"), train_chars=("train_chars", "max"))
    return stats.reset_index().melt(id_vars=["dataset", "selection", "model"], var_name="metric",
                                    value_name="ours")


# the measures of Tables 2 and 3 whose spread the claims registry reads (`cell_spread`)
SPREAD_MEASURES = ("word_f1", "bpc", "boundary_precision", "boundary_recall")
SCORED_SENTENCES = {"test": "test sentences", "heldout": "dev and test sentences", "corpus": "corpus sentences"}


def cell_spread(ch: MSLMChapter, runs: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, selection, model) and measure of Tables 2 and 3: the sd over the cell's seeds (`runs`, from
    `experiment.evaluate_all`), the bootstrap sd over its scored sentences (each seed's run resampled; the root
    mean of their variances) and the two combined. The seed part is an estimate from the cell's few seeds (two
    degrees of freedom at three); a cell with one seed borrows the seed sd of the same model's cell at the other
    selection (its source says so), so that its spread does not leave out the seed's variation."""
    ch = experiment.select_learning_rates(ch)
    by_cell: dict[tuple[str, str, str], list[SLMExperiment]] = {}
    for c in cells(ch):
        by_cell.setdefault((c.corpus.upper(), c.selection, c.encoder.upper()), []).append(c.exp)
    return _spreads(ch, by_cell, runs)


def at_scale_spread(ch: MSLMChapter, runs: pd.DataFrame) -> pd.DataFrame:
    """`cell_spread` of the runs at scale (`runs`: `experiment.evaluate_at_scale`)."""
    by_cell: dict[tuple[str, str, str], list[SLMExperiment]] = {}
    for exp in experiment.scale_runs(ch):
        by_cell.setdefault((exp.corpus.upper(), "unsupervised", exp.model.encoder.upper()), []).append(exp)
    return _spreads(ch, by_cell, runs)


def _spreads(ch: MSLMChapter, by_cell: dict[tuple[str, str, str], list[SLMExperiment]],
             runs: pd.DataFrame) -> pd.DataFrame:
    rows: list[dict] = []
    for (dataset, selection, model), exps in by_cell.items():
        items = [experiment.sentence_items(ch, e, selection) for e in exps]
        cell = runs[(runs.dataset == dataset) & (runs.selection == selection) & (runs.model == model)]
        donor = _seed_donor(runs, dataset, selection, model) if len(cell) < 2 else cell
        for measure in SPREAD_MEASURES:
            boot = math.sqrt(np.nanmean([_bootstrap_sd(x, n_test, measure) ** 2 for x, n_test in items]))
            n_items = items[0][1] if measure == "bpc" else len(items[0][0])
            scored = "test sentences" if measure == "bpc" else SCORED_SENTENCES[ch.f1_split]
            lent = f"the {donor.selection.iloc[0]} cell" if donor is not cell and len(donor) else ""
            keys = {"dataset": dataset, "selection": selection, "model": model, "measure": measure,
                    "source": spread.source(len(donor), n_items, scored, seeds_of=lent)}
            stats = {**spread.measured(list(donor[measure]), boot), "n_seeds": len(cell)}   # the cell's own count
            rows += [{**keys, "metric": k, "ours": v} for k, v in stats.items()]
    return pd.DataFrame(rows)


def _seed_donor(runs: pd.DataFrame, dataset: str, selection: str, model: str) -> pd.DataFrame:
    """The runs of the same dataset and model at the other selection with the most seeds (for a one-seed cell)."""
    other = runs[(runs.dataset == dataset) & (runs.model == model) & (runs.selection != selection)]
    if other.empty:
        return other
    best = other.groupby("selection").size().idxmax()
    return other[other.selection == best]


def cell_spread_view(table: pd.DataFrame) -> pd.DataFrame:
    """`cell_spread` one row per cell and measure: seeds, the two sds, combined, and how it was measured."""
    keys = ["dataset", "selection", "model", "measure", "source"]
    wide = table.pivot_table(index=keys, columns="metric", values="ours", sort=False)
    wide["n_seeds"] = wide["n_seeds"].astype(int)
    return wide[["n_seeds", "seed_sd", "bootstrap_sd", "sd"]].round(3).reset_index(level="source").reset_index()


def _bootstrap_sd(items: np.ndarray, n_test: int, measure: str) -> float:
    """The bootstrap sd of one run's `measure` over its scored sentences (bpc: over the test sentences alone)."""
    rows = items[-n_test:] if measure == "bpc" else items
    return spread.bootstrap_sd(lambda totals: sentence_measure(totals, measure), [rows])


def sentence_measure(totals: np.ndarray, measure: str) -> np.ndarray:
    """`measure` (a `SPREAD_MEASURES`) of (..., SENTENCE_FIELDS) totals, as the tables compute it."""
    t = dict(zip(SENTENCE_FIELDS, np.moveaxis(np.asarray(totals, dtype=float), -1, 0)))
    if measure == "word_f1":
        return sighan.measure_of_totals(np.asarray(totals)[..., :len(sighan.LINE_FIELDS)])
    if measure == "bpc":
        return t["bits"] / t["chars"]
    b = BoundaryCounts(t["boundary_tp"], t["boundary_fp"], t["boundary_fn"], t["boundary_tn"])
    return 100 * {"boundary_precision": b.precision, "boundary_recall": b.recall}[measure]


def paper_table2() -> pd.DataFrame:
    """The paper's Table 2 cells (reconstructed from the authors' outputs) in our key names."""
    # lr and n_seeds are set beside ours in the display, not as reproduced numbers
    metrics = {m: m for m in ("f1_median", "f1_mean", "f1_sd", "bpc_median", "bpc_mean", "bpc_sd")}
    p = paper_values("mslm_table2.csv", keys={"dataset": "dataset", "selection": "selection", "model": "model"},
                     metrics=metrics)
    p["selection"] = p["selection"].map(PAPER_SELECTION)
    return p.dropna(subset=["selection"]).reset_index(drop=True)


def side_by_side(table: pd.DataFrame) -> pd.DataFrame:
    """Table 2 as the paper prints it, ours beside the paper's: one row per (dataset, selection, model)."""
    keys = ["dataset", "selection", "model"]
    ours = table.pivot_table(index=keys, columns="metric", values="ours", sort=False)
    paper = table.pivot_table(index=keys, columns="metric", values="paper", sort=False)

    def pm(df: pd.DataFrame, what: str) -> pd.Series:
        if f"{what}_mean" not in df:
            return pd.Series("", index=df.index)
        sd = df.get(f"{what}_sd", pd.Series(float("nan"), index=df.index))
        digits = 1 if what == "f1" else 2
        return [f"{m:.{digits}f} ± {s:.{digits}f}" if pd.notna(s) else f"{m:.{digits}f}" if pd.notna(m) else ""
                for m, s in zip(df[f"{what}_mean"], sd)]

    out = pd.DataFrame({"F1 median": ours["f1_median"], "paper F1 median": paper.get("f1_median"),
                        "F1 mean ± sd": pm(ours, "f1"), "paper F1 mean ± sd": pm(paper.reindex(ours.index), "f1"),
                        "bpc median": ours["bpc_median"], "paper bpc median": paper.get("bpc_median"),
                        "bpc (sentence mean)": ours["bpc_sentence_mean"], "seeds": ours["n_seeds"].astype(int),
                        "lr": ours["lr"]}, index=ours.index)
    return out.reset_index()


# ---- Table 3 and the PKU recall analysis ---------------------------------------------------------------------

def boundary_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Table 3: boundary (character-wise) precision, recall and F1 beside word precision / recall / F1, the
    median over seeds per (dataset, selection, model), long form."""
    med = runs.groupby(["dataset", "selection", "model"], sort=False)[list(BOUNDARY_METRICS)].median()
    return med.reset_index().melt(id_vars=["dataset", "selection", "model"], var_name="metric", value_name="ours")


def boundary_pivot(table: pd.DataFrame) -> pd.DataFrame:
    """Table 3 as printed: one row per (dataset, selection, model), one column per metric."""
    return (table.pivot_table(index=["dataset", "selection", "model"], columns="metric", values="ours", sort=False)
            [list(BOUNDARY_METRICS)].reset_index())


def _first_seed_runs(ch: MSLMChapter, corpus: str, selection: str) -> dict[str, SLMExperiment]:
    """encoder -> the experiment of the first seed's run that provides `selection`."""
    out: dict[str, SLMExperiment] = {}
    for c in cells(ch):
        if c.corpus == corpus and c.selection == selection:
            out.setdefault(c.encoder, c.exp)
    return out


def _segmentations(ch: MSLMChapter, corpus: str, sentences: Sequence[Sequence[str]],
                   selection: str) -> dict[str, list[list[str]]]:
    """encoder -> the first-seed model's Viterbi segmentation of `sentences`."""
    out = {}
    for encoder, exp in _first_seed_runs(ch, corpus, selection).items():
        # only the segmentations are used: the exact scorer, which needs no diff process per line
        out[encoder] = train_slm(ch.store, exp).evaluate(selection, sentences, scoring="exact").segmentations
    return out


def word_lengths(ch: MSLMChapter, corpus: str, sentences: Sequence[Sequence[str]],
                 selection: str = "lightly supervised", longest: int = 5) -> pd.DataFrame:
    """How many words of each length (1 .. `longest`, longer ones counted as `longest`) the gold and each model's
    first-seed segmentation of `sentences` hold: under-segmentation shows as missing one-character words."""
    segs = {"gold": sentences, **{e.upper(): s for e, s in _segmentations(ch, corpus, sentences, selection).items()}}
    table = pd.DataFrame({k: pd.Series([min(len(w), longest) for s in v for w in s]).value_counts()
                          .reindex(range(1, longest + 1), fill_value=0) for k, v in segs.items()})
    table.index.name = "word length"
    return table


def word_lengths_long(lengths: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """`word_lengths` in long form: dataset, word length, segmentation, metric ("words"), ours."""
    long = lengths.reset_index().melt(id_vars="word length", var_name="segmentation", value_name="ours")
    return long.assign(dataset=dataset, metric="words")[["dataset", "word length", "segmentation", "metric", "ours"]]


@torch.no_grad()
def context_ablation(ch: MSLMChapter, corpus: str, sentences: Sequence[Sequence[str]],
                     selection: str = "unsupervised") -> pd.DataFrame:
    """How much each first-seed model leans on its context encoder: bpc and word F1 on `sentences` as trained
    and with the encoder's output replaced by zeros (the segment decoder alone, as a unigram segment model)."""
    rows = []
    for encoder, exp in _first_seed_runs(ch, corpus, selection).items():
        run = train_slm(ch.store, exp)
        model = run.models[selection]
        full = run.evaluate(selection, sentences).metrics
        encode = model.encode
        model.encode = lambda chars, lengths: torch.zeros_like(encode(chars, lengths))
        try:
            alone = run.evaluate(selection, sentences).metrics
        finally:
            del model.encode   # back to the class's method
        rows.append({"model": encoder.upper(), "bpc": full["bpc"], "bpc_without_context": alone["bpc"],
                     "word_f1": full["word_f1"], "word_f1_without_context": alone["word_f1"]})
    return pd.DataFrame(rows)


def context_ablation_long(ablation: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """`context_ablation` in long form: dataset, model, metric, ours."""
    long = ablation.melt(id_vars="model", var_name="metric", value_name="ours")
    return long.assign(dataset=dataset)[["dataset", "model", "metric", "ours"]]


# ---- Table 4 -------------------------------------------------------------------------------------------------

def example_sentences(corpus: str, n_test: int = 3, max_chars: int = 80) -> list[list[str]]:
    """Gold sentences for Table 4: the PTB training sentence the paper's discussion quotes (PTB only), then the
    first `n_test` test sentences of at most `max_chars` characters."""
    data = experiment.load_data(corpus)
    quoted = [s for s in data.train if PAPER_EXAMPLE in " ".join(s)][:1] if corpus == "ptb" else []
    short = [s for s in data.test if sum(map(len, s)) <= max_chars][:n_test]
    return quoted + short


def segment_examples(ch: MSLMChapter, corpus: str, sentences: Sequence[Sequence[str]],
                     selection: str = "unsupervised") -> pd.DataFrame:
    """Table 4: each sentence as gold and as each model's Viterbi segmentation (words joined by spaces)."""
    segs = {"gold": sentences, **{e.upper(): s for e, s in _segmentations(ch, corpus, sentences, selection).items()}}
    df = pd.DataFrame([{"sentence": i, "segmentation": name, "words": " ".join(s)}
                       for name, seg in segs.items() for i, s in enumerate(seg)])
    order = {"gold": 0, **{e.upper(): i + 1 for i, e in enumerate(ENCODERS)}}
    return df.sort_values(["sentence", "segmentation"], key=lambda c: c.map(order) if c.name == "segmentation"
                          else c, kind="stable").reset_index(drop=True)


def segment_examples_long(examples: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """`segment_examples` in long form: dataset, sentence, segmentation, metric ("words"), ours (the words)."""
    long = examples.assign(dataset=dataset, metric="words", ours=examples["words"])
    return long[["dataset", "sentence", "segmentation", "metric", "ours"]]


# ---- the learning curves -------------------------------------------------------------------------------------

def learning_curves(ch: MSLMChapter) -> pd.DataFrame:
    """Dev bpc, word F1 and boundary MCC at every evaluation step of each (corpus, encoder, seed) run, long
    form: dataset, model, seed, lr, step, chars (training characters seen), metric, ours. One run per (corpus,
    encoder, seed): the unsupervised selection's (chosen by dev bpc, as the authors' logged runs and the paper's
    unsupervised Table 2 are); where light supervision chose another rate, that run is in the rate grid's table."""
    runs = dict.fromkeys(c.exp for c in cells(ch) if c.selection == "unsupervised")
    return _curves(ch, runs, ("dev_bpc", "dev_f1", "dev_mcc"))


def at_scale_curves(ch: MSLMChapter) -> pd.DataFrame:
    """`learning_curves` of the runs at scale, with dev boundary F1 (the authors log it) beside word F1, MCC and
    bpc."""
    return _curves(ch, experiment.scale_runs(ch), ("dev_bpc", "dev_f1", "dev_mcc", "dev_boundary_f1"))


def at_scale_dropout(ch: MSLMChapter) -> pd.DataFrame:
    """`experiment.dev_as_logged` of every run at scale: dataset, model, seed, step, mode, metric, ours."""
    return pd.DataFrame([{"dataset": exp.corpus.upper(), "model": exp.model.encoder.upper(), **row}
                         for exp in experiment.scale_runs(ch) for row in experiment.dev_as_logged(ch, exp)])


def _curves(ch: MSLMChapter, runs: Sequence[SLMExperiment], metrics: Sequence[str]) -> pd.DataFrame:
    rows = []
    for exp in runs:
        for h in load_history(experiment.run_dir(ch.store, exp)):
            rows += [{"dataset": exp.corpus.upper(), "model": exp.model.encoder.upper(), "seed": exp.train.seed,
                      "lr": exp.train.lr, "step": h["step"], "chars": h["step"] * exp.batch_chars,
                      "metric": metric, "ours": h[metric]} for metric in metrics if metric in h]
    return pd.DataFrame(rows)


def last_evaluation(curves: pd.DataFrame) -> pd.DataFrame:
    """Each run's dev metrics at its last evaluation: one row per (dataset, model, seed)."""
    last = curves.sort_values("step").groupby(["dataset", "model", "seed", "metric"]).last().reset_index()
    return last.pivot_table(index=["dataset", "model", "seed"], columns="metric", values="ours", sort=False)


# ---- the numbers of Table 2's reading (glued into its prose: hanzilm.notebook.glue_values) ---------------------

def lr_grid_long(ch: MSLMChapter) -> pd.DataFrame:
    """The learning-rate grid (`experiment.lr_grid`), long: dataset, cell, lr, chosen_by, metric, ours."""
    grid = experiment.lr_grid(ch)
    chosen = [" + ".join(sel for sel in experiment.SELECTIONS if r[sel]) or "-" for _, r in grid.iterrows()]
    grid = grid.assign(chosen_by=chosen, dataset=grid.cell.str.split("/").str[0].str.upper())
    grid = grid.drop(columns=list(experiment.SELECTIONS))
    return grid.melt(id_vars=["dataset", "cell", "lr", "chosen_by"], var_name="metric", value_name="ours")


def lr_grid_view(grid: pd.DataFrame) -> pd.DataFrame:
    """One row per cell and rate, the selections that chose it."""
    wide = grid.pivot_table(index=["cell", "lr", "chosen_by"], columns="metric", values="ours", sort=False)
    return wide[["dev_bpc", "bpc_step", "dev_mcc", "mcc_step"]].reset_index("chosen_by")


def config_numbers(ch: MSLMChapter) -> dict[str, object]:
    """The profile's numbers the page's prose cites: training steps per corpus and the learning-rate grids."""
    grids = "; ".join(f"{cell} {', '.join(f'{r:g}' for r in rates)}" for cell, rates in ch.lr_grid.items())
    return {"pku_steps": ch.pku.train.steps, "ptb_steps": ch.ptb.train.steps,
            "grid_rates": grids or "one rate per cell at this profile"}


def grid_edges(grid: pd.DataFrame) -> str:
    """Markdown: the cells whose chosen rate is the grid's largest or smallest (`grid` is `lr_grid_long`'s), so
    the optimum may lie outside it; empty when every choice is inside."""
    chosen = grid[(grid.metric == "dev_bpc") & (grid.chosen_by != "-")]
    edges = []
    for cell, rows in chosen.groupby("cell", sort=False):
        rates = grid[grid.cell == cell].lr
        for r in rows.itertuples():
            side = "largest" if r.lr == rates.max() else "smallest" if r.lr == rates.min() else ""
            if side:
                edges.append(f"{cell} ({r.chosen_by}: {r.lr:g}, the {side})")
    if not edges:
        return ""
    return ("Chosen at the edge of the grid, so a rate beyond it may be better still: " + "; ".join(edges) + ".")


def selection_agreement(ch: MSLMChapter, runs: pd.DataFrame) -> pd.DataFrame:
    """Per dataset: how many (cell, seed) pairs have both selections (best dev bpc, best dev MCC; a seed the
    profile trains for one selection only is no pair), in how many both kept the same checkpoint of the same run
    (rate), in how many of those it is the run's last step, and in how many the lightly supervised selection took
    another rate. Where they agree, the lightly supervised row is the unsupervised one again."""
    steps = {(c.corpus.upper(), c.encoder.upper(), c.seed): c.exp.train.steps for c in cells(ch)}
    key = ["dataset", "model", "seed"]
    picked = runs.pivot_table(index=key, columns="selection", values=["selected_step", "lr"]).dropna()
    step, lr = picked["selected_step"], picked["lr"]
    last = [steps[k] for k in picked.index]
    same_rate = lr["unsupervised"] == lr["lightly supervised"]
    same = same_rate & (step["unsupervised"] == step["lightly supervised"])
    both_last = same & (step["unsupervised"] == last)
    by = same.groupby("dataset")
    return pd.DataFrame({"runs": by.size(), "same_checkpoint": by.sum(),
                         "same_and_last": both_last.groupby("dataset").sum(),
                         "other_rate": (~same_rate).groupby("dataset").sum()}).reset_index()


def selection_reading(agreement: pd.DataFrame, table: pd.DataFrame) -> str:
    """Markdown: per corpus, whether the lightly supervised rows are a second selection, and what choosing on
    the labelled dev sentences changed in median word F1 per model, beside the paper's change."""
    lines = []
    for row in agreement.itertuples():
        other = int(row.runs - row.same_checkpoint)
        head = (f"**{row.dataset}**: in {row.same_checkpoint} of {row.runs} runs both selections kept the same "
                f"checkpoint at the same rate ({row.same_and_last} of them the run's last step), so those lightly "
                "supervised rows repeat the unsupervised ones")
        if other == 0:
            lines.append(head + "; light supervision is not tested on this corpus at this profile.")
            continue
        gains = []
        for model in ENCODERS:
            m = model.upper()
            ours = (_cell(table, "ours", row.dataset, "lightly supervised", m, "f1_median")
                    - _cell(table, "ours", row.dataset, "unsupervised", m, "f1_median"))
            paper = (_cell(table, "paper", row.dataset, "lightly supervised", m, "f1_median")
                     - _cell(table, "paper", row.dataset, "unsupervised", m, "f1_median"))
            gains.append(f"{m} {ours:+.1f}" + (f" (paper {paper:+.1f})" if not math.isnan(paper) else ""))
        lines.append(head + f"; in the other {other} the dev MCC chose another checkpoint ({other - row.other_rate} "
                     f"of the same run, {row.other_rate} at another rate). Median word F1, lightly supervised minus "
                     "unsupervised: " + ", ".join(gains) + ".")
    return "\n\n".join(lines)


def _cell(table: pd.DataFrame, column: str, dataset: str, selection: str, model: str, metric: str) -> float:
    """One value of Table 2's long table (NaN where the row is missing)."""
    rows = table[(table.dataset == dataset) & (table.selection == selection) & (table.model == model)
                 & (table.metric == metric)]
    return float(rows[column].iloc[0]) if len(rows) else float("nan")


def _rslm_bpc_lead(table: pd.DataFrame, column: str, dataset: str, selection: str) -> float:
    """The best transformer's bpc minus the RSLM's (positive: the RSLM has the lowest bpc)."""
    bpc = {m: _cell(table, column, dataset, selection, m, "bpc_median") for m in ("RSLM", "MSLM", "DMSLM")}
    return min(bpc["MSLM"], bpc["DMSLM"]) - bpc["RSLM"]


def table2_numbers(table: pd.DataFrame, agreement: pd.DataFrame) -> dict[str, float]:
    """The numbers Table 2's reading cites, by name: `table` is the written Table 2 (ours and the paper's),
    `agreement` is `selection_agreement`."""
    f1 = table[table.metric == "f1_median"]
    ptb_f1, ptb_bpc = f1[f1.dataset == "PTB"], table[(table.metric == "bpc_median") & (table.dataset == "PTB")]
    pku_bpc = table[(table.metric == "bpc_median") & (table.dataset == "PKU")]
    cell = lambda column, dataset, model, metric="f1_median", selection="unsupervised": _cell(  # noqa: E731
        table, column, dataset, selection, model, metric)
    out = {
        "ptb_f1_gap_max": float((ptb_f1.ours - ptb_f1.paper).abs().max()),
        "ptb_bpc_excess_min_pct": float(100 * (ptb_bpc.ours / ptb_bpc.paper - 1).min()),
        "ptb_bpc_excess_max_pct": float(100 * (ptb_bpc.ours / ptb_bpc.paper - 1).max()),
        "pku_bpc_min": float(pku_bpc.ours.min()), "pku_bpc_max": float(pku_bpc.ours.max()),
        "paper_pku_bpc_min": float(pku_bpc.paper.min()), "paper_pku_bpc_max": float(pku_bpc.paper.max()),
    }
    for column, prefix in (("ours", ""), ("paper", "paper_")):
        for selection, tag in (("unsupervised", "unsup"), ("lightly supervised", "light")):
            out[f"{prefix}ptb_rslm_bpc_lead_{tag}"] = _rslm_bpc_lead(table, column, "PTB", selection)
            out[f"{prefix}pku_mslm_rslm_gap_{tag}"] = (cell(column, "PKU", "MSLM", selection=selection)
                                                       - cell(column, "PKU", "RSLM", selection=selection))
        for model in ("RSLM", "MSLM", "DMSLM"):
            out[f"{prefix}pku_{model.lower()}_f1"] = cell(column, "PKU", model)
            out[f"{prefix}pku_{model.lower()}_f1_light"] = cell(column, "PKU", model, selection="lightly supervised")
            out[f"{prefix}pku_{model.lower()}_bpc"] = cell(column, "PKU", model, "bpc_median")
    out["pku_rslm_shortfall"] = out["paper_pku_rslm_f1"] - out["pku_rslm_f1"]
    out["pku_rslm_train_chars_m"] = cell("ours", "PKU", "RSLM", "train_chars") / 1e6
    for row in agreement.itertuples():
        name = row.dataset.lower()
        out.update({f"{name}_runs": int(row.runs), f"{name}_same_checkpoint": int(row.same_checkpoint),
                    f"{name}_other_checkpoint": int(row.runs - row.same_checkpoint),
                    f"{name}_same_and_last": int(row.same_and_last), f"{name}_other_rate": int(row.other_rate)})
    return out


def paper_text_cells() -> pd.DataFrame:
    """The Table 2 cells the paper gives only in its text (selection "unsupervised", with their learning rate),
    in Table 2's long form: dataset, selection, model, lr, metric, paper, paper_source."""
    metrics = {m: m for m in ("f1_median", "f1_mean", "f1_sd", "n_seeds")}
    p = paper_values("mslm_table2.csv", keys={"dataset": "dataset", "selection": "selection", "model": "model",
                                              "lr": "lr"}, metrics=metrics)
    return p[~p["selection"].isin(PAPER_SELECTION)].reset_index(drop=True)


def paper_at_our_lr(table: pd.DataFrame, text_cells: pd.DataFrame) -> str:
    """Markdown: each cell the paper's text gives at the learning rate we train that cell with, beside ours
    (median and mean ± sd of word F1) and the paper's Table 2 row at its own rate."""
    lines = []
    for (dataset, selection, model, lr), paper in text_cells.groupby(["dataset", "selection", "model", "lr"]):
        ours_lr = _cell(table, "ours", dataset, selection, model, "lr")
        if not math.isclose(ours_lr, lr):
            continue
        p = paper.set_index("metric")["paper"]
        o = {m: _cell(table, "ours", dataset, selection, model, m) for m in ("f1_median", "f1_mean", "f1_sd",
                                                                               "n_seeds")}
        lines.append(
            f"- {dataset} {selection} {model} at lr {_rate(lr)}, our rate: the paper's text gives median word F1 "
            f"{p['f1_median']:.1f} ({_mean_sd(p)}); ours {o['f1_median']:.1f} ({_mean_sd(o)}). The "
            f"paper's Table 2 cell is its run at lr {_rate(paper_lr(dataset, model, selection))}: median "
            f"{_cell(table, 'paper', dataset, selection, model, 'f1_median'):.1f}.")
    return "\n".join(lines) or "- The paper's text gives no Table 2 cell at our learning rates."


def _rate(lr: float) -> str:
    """A learning rate as the paper writes it: 1e-3, 2e-3, 6e-4."""
    mantissa, exponent = f"{lr:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _mean_sd(v: Any) -> str:
    sd = f" ± {v['f1_sd']:.1f}" if pd.notna(v["f1_sd"]) else ""
    return f"mean {v['f1_mean']:.1f}{sd}, {v['n_seeds']:.0f} seed{'s' if v['n_seeds'] != 1 else ''}"
