"""The chapter's tables, long (keys..., metric, ours) and ready for `write_results`, and their display pivots.

    ch = experiment.configure("cpu")
    table3(ch)            # PKU closed test: CRF and the three neural taggers
    table5(ch)            # PKU and MSR, Zheng et al.'s network vs MMTNN, with and without pre-training
    table6(ch)            # + bigram embeddings, beside the paper's comparison rows (not re-run)
    table4(ch)            # nearest characters in MMTNN's lookup table
    scorer_jieba()        # our scorer on jieba's output, beside the official script's F
    scorer_side_by_side(ch)  # the official script run here, beside our scorer in both modes

Every model is trained (or loaded) through `experiment.evaluate`, so the tables share their models.
"""

from __future__ import annotations

import math
import tempfile
import unicodedata
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
import torch

from ... import spread, versions
from ...data.resolve import resolve
from ...eval import sighan
from ...eval.sighan import (Counts, format_report, offset_counts, report_totals, run_official_script,
                              score)
from ...results import paper_values
from ...store import required
from . import experiment as ex
from .experiment import (DATASETS, MODELS, PKU_ONLY, SPREAD_MODELS, TABLE5, MMTNNChapter, SegmentationConfig,
                         spread_configs)
from .pretrain import char_vectors, nearest
from .segmenter import Segmenter

METRICS = ("precision", "recall", "f1", "oov_recall")
LABELS = {"crf": "CRF (unigram features)", "nn": "NN (Zheng-style; transition scores)",
          "nn_tag": "NN + tag embedding", "mmtnn": "MMTNN"}


def metric_rows(counts: Counts, metrics: Sequence[str] = METRICS, **keys) -> list[dict]:
    """Long-form rows (keys..., metric, ours) of bakeoff metrics in percent, the paper's unit."""
    values = counts.metrics(percent=True)
    return [{**keys, "metric": m, "ours": round(values[m], 4)} for m in metrics]


def metrics_pivot(table: pd.DataFrame, index: str | list[str]) -> pd.DataFrame:
    """One row per `index`, one column per bakeoff metric (percent), in the table's order."""
    wide = table.pivot_table(index=index, columns="metric", values="ours", sort=False)
    return wide[[m for m in METRICS if m in wide.columns]]


# ---- Table 3 ----

def table3(ch: MMTNNChapter) -> pd.DataFrame:
    rows: list[dict] = []
    for model in MODELS:
        counts = ex.evaluate(ch, ch.model(dataset="pku", model=model))
        rows += metric_rows(counts, dataset=DATASETS["pku"]["label"], model=LABELS[model])
    return pd.DataFrame(rows)


def dev_curves(ch: MMTNNChapter, dataset: str = "pku") -> pd.DataFrame:
    """(model, epoch, dev_f1) of each neural model's selection run."""
    return pd.DataFrame([{"model": LABELS[m], **h} for m in MODELS if m != "crf"
                         for h in ex.dev_history(ch, ch.model(dataset=dataset, model=m))])


def lr_grid(ch: MMTNNChapter) -> pd.DataFrame:
    """The learning-rate grid, long (family, lr, chosen, metric, ours): each run's best dev F1, its epoch, the
    epochs it trained (early stopping) and its training seconds."""
    grid = ex.lr_grid(ch)
    return grid.melt(id_vars=["family", "lr", "chosen"], var_name="metric", value_name="ours")


def grid_view(grid: pd.DataFrame) -> pd.DataFrame:
    """One row per family and rate, the chosen rate marked."""
    wide = grid.pivot_table(index=["family", "lr"], columns="metric", values="ours", sort=False)
    wide["chosen"] = grid.groupby(["family", "lr"], sort=False)["chosen"].first().map({True: "✓", False: ""})
    return wide[["best_dev_f1", "best_epoch", "epochs", "chosen"]]  # (train_seconds: in the CSV, not shown)


def grid_reading(grid: pd.DataFrame, max_epochs: int, patience: int) -> str:
    """Markdown on what the grid (`lr_grid`'s long table) leaves open: the families whose chosen rate is the
    grid's largest or smallest, and those whose chosen run hit the epoch cap with its best dev F1 within the last
    `patience` epochs (early stopping had not yet stopped it)."""
    wide = grid.pivot_table(index=["family", "lr", "chosen"], columns="metric", values="ours").reset_index()
    edges, capped = [], []
    for r in wide[wide.chosen].itertuples():
        rates = wide[wide.family == r.family].lr
        side = "largest" if r.lr == rates.max() else "smallest" if r.lr == rates.min() else ""
        if side:
            edges.append(f"{r.family} {r.lr:g} (the {side})")
        if r.epochs >= max_epochs and r.best_epoch > max_epochs - patience:
            capped.append(f"{r.family} (best epoch {r.best_epoch:.0f} of {max_epochs})")
    parts = []
    if edges:
        parts.append("Chosen at the edge of the grid, so a rate beyond it may be better still: " + "; ".join(edges) + ".")
    if capped:
        parts.append("Still improving at the epoch cap, so longer training might add a little: " + "; ".join(capped)
                     + ".")
    return " ".join(parts) or "Every family chose a rate inside its grid and stopped early, before the epoch cap."


def crf_dev_f1(ch: MMTNNChapter, dataset: str = "pku") -> float:
    return ex.training_summary(ch, ch.model(dataset=dataset, model="crf"))["best_metrics"]["dev_f1"]


def by_epoch(curves: pd.DataFrame) -> pd.DataFrame:
    return curves.pivot(index="epoch", columns="model", values="dev_f1")


# ---- Table 4 ----

# the paper's own characters did not survive the text conversion: one of each of its classes
QUERIES = {"number": "五", "family name": "王", "punctuation": "，"}


def table4(ch: MMTNNChapter, k: int = 5) -> pd.DataFrame:
    """The k nearest characters (Euclidean) to each query in Table 3's MMTNN lookup table, and in the word2vec
    vectors that initialise the pre-trained models (the paper shows the former only)."""
    segmenter = ex.get_segmenter(ch, ch.model(dataset="pku", model="mmtnn"))
    vectors = char_vectors(ch.word2vec, required(ch.store))
    w2v_itos = list(vectors)
    sources = {"MMTNN lookup table": (segmenter.model.char.weight.detach(), segmenter.encoder.vocab.itos),
               "word2vec (pre-training)": (torch.from_numpy(np.stack([vectors[c] for c in w2v_itos])), w2v_itos)}
    return pd.DataFrame([
        {"embedding": source, "class": kind, "query": query, "rank": rank, "neighbour": char,
         "metric": "euclidean_distance", "ours": round(dist, 4)}
        for source, (table, itos) in sources.items()
        for kind, query in QUERIES.items() if query in itos  # a smoke-sized vocabulary may lack one
        for rank, (char, dist) in enumerate(nearest(table, itos, query, k=k), start=1)])


def neighbours(table4: pd.DataFrame) -> pd.DataFrame:
    """One column per query (and embedding), as the paper lays Table 4 out."""
    return table4.pivot(index="rank", columns=["embedding", "query"], values="neighbour")


NUMERALS = set("〇零一二两三四五六七八九十百千万亿") | set("０１２３４５６７８９0123456789")


def in_class(kind: str, char: str, dictionary) -> bool:
    """Whether a neighbour belongs to its query's class: a numeral, a family name (a CC-CEDICT entry of the
    character glossed "surname ..."), punctuation (Unicode category P)."""
    if kind == "number":
        return char in NUMERALS
    if kind == "punctuation":
        return unicodedata.category(char).startswith("P")
    return any(g.startswith("surname") for e in dictionary.entries.get(char, []) for g in e.glosses)


def class_shares(table4: pd.DataFrame) -> dict[str, object]:
    """Per embedding and query: how many of the neighbours are of the query's class (`in_class`), for the
    page's sentence (`{embedding}_{class}`: e.g. "lookup_number", "word2vec_family_name")."""
    from ...data.lexicon import cedict

    dictionary = cedict(frozenset(table4.neighbour))
    short = {"MMTNN lookup table": "lookup", "word2vec (pre-training)": "word2vec"}
    out: dict[str, object] = {}
    for (source, kind), g in table4.groupby(["embedding", "class"], sort=False):
        hits = [c for c in g.neighbour if in_class(kind, c, dictionary)]
        key = f"{short[source]}_{kind.replace(' ', '_')}"
        out[key] = len(hits)
        out[f"{key}_of"] = len(g)
        out[f"{key}_chars"] = "".join(g.neighbour)
    return out


# ---- Tables 5 and 6 ----

def table5(ch: MMTNNChapter) -> pd.DataFrame:
    rows: list[dict] = []
    for dataset in DATASETS:
        for (model, pretrained), label in TABLE5.items():
            counts = ex.evaluate(ch, ch.model(dataset=dataset, model=model, pretrained=pretrained))
            rows += metric_rows(counts, dataset=DATASETS[dataset]["label"], model=label)
    return pd.DataFrame(rows)


# the paper's comparison rows: earlier systems, quoted with the paper's numbers only
QUOTED = ("Tseng et al. 2005", "Zhang & Clark 2007", "Zhang et al. 2013")


def table6(ch: MMTNNChapter) -> pd.DataFrame:
    """MMTNN + pre-training with and without bigrams (the latter is Table 5's model), and the quoted systems
    (`ours` empty: not re-run)."""
    rows: list[dict] = []
    for dataset in DATASETS:
        label = DATASETS[dataset]["label"]
        for bigram, model in ((True, "MMTNN + pre-training + bigram"), (False, "MMTNN + pre-training")):
            counts = ex.evaluate(ch, ch.model(dataset=dataset, model="mmtnn", pretrained=True, bigram=bigram))
            rows += metric_rows(counts, ("f1", "oov_recall"), dataset=label, model=model)
        rows += [{"dataset": label, "model": system, "metric": "f1", "ours": float("nan")} for system in QUOTED]
    return pd.DataFrame(rows)


def dataset_data() -> dict[str, list[str]]:
    """`write_results(datasets=..., by="dataset")`: each dataset label's training and test data."""
    return {d["label"]: ["sighan2005", d["train"]] for d in DATASETS.values()}


def row_datasets(table: pd.DataFrame) -> dict[tuple[str, str], list[str]]:
    """`write_results(datasets=..., by=("dataset", "model"))`: each row's training and test data; the quoted
    systems' rows were computed from none of ours."""
    return {(d, m): [] if m in QUOTED else ["sighan2005", DATASETS[d.lower()]["train"]]
            for d, m in zip(table["dataset"], table["model"])}


# ---- the scorer check ----

OFFICIAL_JIEBA_F = {"PKU": 81.8, "MSR": 81.3}  # ../shared/anchors.md: jieba 0.42.1, the official script
SCRIPT = "official script (perl, GNU diff)"
ALIGNMENTS = {"official": "ours, official mode (the book's)", "exact": "ours, exact mode (LCS)"}
OFFSETS = "ours, character offsets"


def jieba_output(lines: Sequence[str]) -> list[list[str]]:
    import jieba

    jieba.setLogLevel(60)
    return [[w for w in jieba.cut(line) if w.strip()] for line in lines]


def scorer_jieba() -> pd.DataFrame:
    """jieba 0.42.1 (default mode) on the whole official test inputs: F by our scorer in both modes and by
    character offsets, beside the official script's F as `../shared/anchors.md` records it, and how many test
    lines differ from their gold."""
    rows: list[dict] = []
    for dataset, d in DATASETS.items():
        lines, gold = ex.test_set(dataset)  # the whole test set, as the official script's numbers are
        output = jieba_output(lines)
        words = ex.training_words(dataset)
        system = {"dataset": d["label"], "system": "jieba 0.42.1 (default)"}
        results = {mode: score(words, gold, output, allow_mismatch=True, mode=mode) for mode in ALIGNMENTS}
        counts = {**{ALIGNMENTS[m]: r.total for m, r in results.items()},
                  OFFSETS: offset_counts(words, gold, output)}
        rows += [{**system, "alignment": alignment, "official_script_f1": OFFICIAL_JIEBA_F[d["label"]],
                  "metric": "f1", "ours": round(100 * c.f1, 4)} for alignment, c in counts.items()]
        rows.append({**system, "alignment": "-", "official_script_f1": float("nan"),
                     "metric": "lines_differing_from_gold", "ours": len(results["official"].mismatched)})
    return pd.DataFrame(rows)


def parity_systems(ch: MMTNNChapter) -> dict[str, list[list[str]]]:
    """Outputs of very different quality on the chapter's PKU test lines (`ch.test_lines`): Table 3's MMTNN,
    jieba, and one character per word (which the two alignments score most differently)."""
    lines, gold = ex.test_set("pku", ch.test_lines)
    _, mmtnn = ex.test_scores(ch, ex.get_segmenter(ch, ch.model(dataset="pku", model="mmtnn")), "pku")
    return {"MMTNN (Table 3)": mmtnn, "jieba 0.42.1": jieba_output(lines),
            "one character per word": [list("".join(g)) for g in gold]}


def scorer_side_by_side(ch: MMTNNChapter) -> pd.DataFrame:
    """Every total the official script prints (its `===` lines), run here with perl and GNU diff on the official
    PKU gold lines and training word list, beside ours in both modes, for each of `parity_systems`. Ours are
    computed the way the chapter's tables are (`experiment.test_set`, `experiment.training_words`, `score`).
    Long: dataset, system, alignment, metric (the script's name), ours (the value as printed)."""
    d = DATASETS["pku"]
    words_file, gold_file = resolve("sighan2005", d["words"]), resolve("sighan2005", d["gold"])
    _, gold = ex.test_set("pku", ch.test_lines)
    words = ex.training_words("pku")
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="hanzilm-parity-") as tmp:
        gold_part = Path(tmp) / d["gold"]  # the gold file's own lines (CRLF and all), as many as are scored
        gold_part.write_bytes(b"\n".join(gold_file.read_bytes().split(b"\n")[:len(gold)]) + b"\n")
        for system, output in parity_systems(ch).items():
            out = Path(tmp) / "output.txt"
            out.write_text("".join(" ".join(ws) + "\n" for ws in output), encoding="utf-8")
            printed = {SCRIPT: report_totals(run_official_script(words_file, gold_part, out))}
            for mode, alignment in ALIGNMENTS.items():
                printed[alignment] = report_totals(format_report(score(words, gold, output, mode=mode)))
            rows += [{"dataset": d["label"], "system": system, "alignment": alignment, "metric": metric,
                      "ours": math.nan if value == "--" else float(value)}
                     for alignment, totals in printed.items() for metric, value in totals.items()]
    return pd.DataFrame(rows)


def parity_view(side: pd.DataFrame) -> pd.DataFrame:
    """One row per (system, printed total), one column per scorer, and whether the official mode prints the
    script's value."""
    wide = side.pivot_table(index=["system", "metric"], columns="alignment", values="ours", sort=False,
                            dropna=False)[[SCRIPT, *ALIGNMENTS.values()]]
    return wide.assign(same_as_script=wide[SCRIPT].eq(wide[ALIGNMENTS["official"]]))


def parity_numbers(side: pd.DataFrame, jieba: pd.DataFrame) -> dict[str, object]:
    """The numbers the scorer page's reading cites."""
    view = parity_view(side)
    same = view.groupby(level="system", sort=False).same_as_script.all()
    f = side[side.metric == "F MEASURE"].set_index(["system", "alignment"]).ours
    j = jieba[jieba.metric == "f1"].set_index(["dataset", "alignment"]).ours
    return {"parity_systems": len(same), "parity_identical": int(same.sum()),
            "parity_totals": int(view.groupby(level="system").size().iloc[0]),
            "onechar_f_script": f["one character per word", SCRIPT],
            "onechar_f_exact": f["one character per word", ALIGNMENTS["exact"]],
            "mmtnn_f_script": f["MMTNN (Table 3)", SCRIPT],
            "mmtnn_f_exact": f["MMTNN (Table 3)", ALIGNMENTS["exact"]],
            **{f"jieba_{ds.lower()}_{key}": j[ds, alignment] for ds in OFFICIAL_JIEBA_F
               for key, alignment in (("official", ALIGNMENTS["official"]), ("exact", ALIGNMENTS["exact"]),
                                      ("offsets", OFFSETS))}}


# ---- the numbers the readings cite (glued into their prose: hanzilm.notebook.glue_values) ----

def cell(table: pd.DataFrame, dataset: str, model: str, metric: str = "f1", column: str = "ours") -> float:
    """One value of a long table (NaN where the row is missing)."""
    rows = table[(table.dataset == dataset) & (table.model == model) & (table.metric == metric)]
    return float(rows[column].iloc[0]) if len(rows) else float("nan")


def _paper_f1(table: int, dataset: str, model: str) -> float:
    p = paper_values("mmtnn_tables.csv", keys={"dataset": "dataset", "model": "model"}, metrics={"f1": "f1"},
                     where={"table": table})
    return cell(p.assign(ours=p["paper"]), dataset, model)


DECODINGS = {"plain Viterbi": ex.PAPER_DECODING,
             "with the rules": {"traditional": False}}   # the rules alone (the PKU test is simplified)


def decoding_effect(ch: MMTNNChapter) -> pd.DataFrame:
    """Table 3's neural models on the PKU test set decoded both ways: plain Viterbi (`ex.PAPER_DECODING`, every
    number of the chapter) and with `hanzilm segment`'s rules (URLs, ASCII runs and grapheme clusters whole, long
    lines cut at punctuation). The same stored models; only the search differs."""
    rows: list[dict] = []
    for model in MODELS[1:]:
        seg = ex.get_segmenter(ch, ch.model(dataset="pku", model=model))
        for label, options in DECODINGS.items():
            counts, _ = ex.test_scores(ch, Segmenter(seg.model, seg.encoder, **options), "pku")
            rows += metric_rows(counts, ("f1", "oov_recall"), model=LABELS[model], decoding=label)
    return pd.DataFrame(rows)


def decoding_numbers(effect: pd.DataFrame) -> dict[str, float]:
    """The rules' F1 difference per model (rules minus plain), glued into the page."""
    f1 = effect[effect.metric == "f1"].pivot(index="model", columns="decoding", values="ours")
    plain, rules = DECODINGS
    moved = f1[rules] - f1[plain]
    return {f"rules_{key}_f1": float(moved[LABELS[key]]) for key in MODELS[1:]}


def table3_numbers(table3: pd.DataFrame, curves: pd.DataFrame, ch: MMTNNChapter) -> dict[str, object]:
    """Table 3's numbers for its prose: MMTNN beside the paper, the two steps (tag embedding: NN -> NN + tag
    embedding; tensor layer: -> MMTNN) in F and OOV recall, ours and the paper's, and each network's rate, epochs
    and best epoch (`curves`: `dev_curves`). The verdicts are the claims registry's."""
    pku = DATASETS["pku"]["label"]
    v = lambda model, metric="f1", column="ours": cell(table3, pku, LABELS[model], metric, column)  # noqa: E731
    out: dict[str, object] = {f"{m}_f1": v(m) for m in MODELS}
    for metric in ("precision", "recall", "f1"):
        out[f"mmtnn_{metric}"], out[f"paper_mmtnn_{metric}"] = v("mmtnn", metric), v("mmtnn", metric, "paper")
    for step, (before, after) in {"tag_step": ("nn", "nn_tag"), "tensor_step": ("nn_tag", "mmtnn")}.items():
        for metric in ("f1", "oov_recall"):
            out[f"{step}_{metric}"] = v(after, metric) - v(before, metric)
        out[f"paper_{step}_f1"] = v(after, "f1", "paper") - v(before, "f1", "paper")
    for m in ("nn", "nn_tag"):
        out[f"paper_{m}_f1"] = v(m, "f1", "paper")
    for m in ("nn", "nn_tag", "mmtnn"):
        c = curves[curves.model == LABELS[m]]
        out[f"{m}_epochs"] = int(c.epoch.max())
        out[f"{m}_best_epoch"] = int(c.loc[c.dev_f1.idxmax(), "epoch"])
        out[f"{m}_lr"] = ch.model(dataset="pku", model=m).lr
    out["patience"] = ch.segmenter.patience
    return out


def table5_numbers(table5: pd.DataFrame) -> dict[str, float]:
    """Table 5's numbers for its prose, per dataset (`pku_...`, `msr_...`), ours and the paper's (`paper_...`): F
    of each row, MMTNN's lead over Zheng et al. without and with pre-training, and the gain from pre-training per
    model."""
    out: dict[str, float] = {}
    for key, d in DATASETS.items():
        for column, prefix in (("ours", f"{key}_"), ("paper", f"paper_{key}_")):
            f = {(m, pre): cell(table5, d["label"], label, "f1", column) for (m, pre), label in TABLE5.items()}
            out.update({f"{prefix}{m}{'_pre' if pre else ''}_f1": value for (m, pre), value in f.items()})
            out[f"{prefix}mmtnn_lead"] = f[("mmtnn", False)] - f[("nn", False)]
            out[f"{prefix}mmtnn_lead_pre"] = f[("mmtnn", True)] - f[("nn", True)]
            for m in ("nn", "mmtnn"):
                out[f"{prefix}{m}_pretraining_gain"] = f[(m, True)] - f[(m, False)]
        out[f"{key}_mmtnn_pre_gap"] = out[f"paper_{key}_mmtnn_pre_f1"] - out[f"{key}_mmtnn_pre_f1"]
    return out


def pretraining_numbers(ch: MMTNNChapter) -> dict[str, object]:
    """How the pre-trained vectors were made: characters, epochs and the last epoch's neighbour overlap."""
    from ...word2vec import vectors_summary
    from .pretrain import corpus_checksums

    made = vectors_summary(required(ch.store), ch.word2vec, corpus_checksums(), versions.key("mmtnn"))
    overlaps = made.get("neighbour_overlap") or [math.nan]
    return {"w2v_chars_m": made["tokens"] / 1e6, "w2v_epochs": made.get("epochs_trained", ch.word2vec.epochs),
            "w2v_last_overlap": overlaps[-1], "w2v_dim": ch.word2vec.dim}


def table6_numbers(ch: MMTNNChapter, table6: pd.DataFrame) -> dict[str, float]:
    """Table 6's reading, per dataset: F with bigrams, ours and the paper's, the gain over the model without
    bigrams (the paper's from its Table 5 row), and the epochs at which the PKU bigram model's dev F1 peaked
    and ended."""
    out: dict[str, float] = {}
    for key, d in DATASETS.items():
        with_bigram = cell(table6, d["label"], "MMTNN + pre-training + bigram")
        out[f"{key}_bigram_f1"] = with_bigram
        out[f"paper_{key}_bigram_f1"] = cell(table6, d["label"], "MMTNN + pre-training + bigram", "f1", "paper")
        out[f"{key}_bigram_gain"] = with_bigram - cell(table6, d["label"], "MMTNN + pre-training")
        out[f"paper_{key}_bigram_gain"] = (out[f"paper_{key}_bigram_f1"]
                                           - _paper_f1(5, d["label"], TABLE5[("mmtnn", True)]))
    dev = pd.DataFrame(ex.dev_history(ch, ch.model(dataset="pku", model="mmtnn", pretrained=True, bigram=True)))
    out["pku_bigram_best_epoch"] = int(dev.loc[dev.dev_f1.idxmax(), "epoch"])
    out["pku_bigram_last_epoch"] = int(dev.epoch.max())
    return out


# ---- the run-to-run spread of the paper's gains ----

# each gain the paper states: (the better models, the baseline); with several, the gain of the weakest of them
GAINS = {"tag embedding (Table 3)": (("NN + tag embedding",), "NN"),
         "tensor layer (Table 3)": (("MMTNN",), "NN + tag embedding"),
         "neural models over the CRF (Table 3)": (("NN", "NN + tag embedding", "MMTNN"), "CRF"),
         "MMTNN over Zheng et al. (Table 5)": (("MMTNN",), "NN"),
         "MMTNN over Zheng et al., pre-trained (Table 5)": (("MMTNN + pre-training",), "NN + pre-training"),
         "pre-training, MMTNN (Table 5)": (("MMTNN + pre-training",), "MMTNN"),
         "pre-training, NN (Table 5)": (("NN + pre-training",), "NN"),
         "bigrams (Table 6)": (("MMTNN + pre-training + bigram",), "MMTNN + pre-training")}
MEASURES = ("f1", "oov_recall")


def seed_spread(ch: MMTNNChapter) -> pd.DataFrame:
    """F1 and OOV recall of the models behind the paper's gains, at the chapter's seed (the tables' own models)
    and at each of `ch.spread_seeds` (the same configs trained again from another seed)."""
    rows: list[dict] = []
    for (dataset, label, seed), cfg in spread_configs(ch).items():
        rows += metric_rows(ex.evaluate(ch, cfg), MEASURES, dataset=dataset, model=label, seed=seed)
    return pd.DataFrame(rows)


def gains_by_seed(per_seed: pd.DataFrame) -> pd.DataFrame:
    """Each gain the paper states, per dataset, measure and seed (columns: the seeds), from `seed_spread`."""
    wide = per_seed.pivot_table(index=["dataset", "metric", "seed"], columns="model", values="ours")
    gains = {gain: wide[list(better)].min(axis=1) - wide[base] for gain, (better, base) in GAINS.items()
             if base in wide and all(b in wide for b in better)}
    long = pd.DataFrame(gains).rename_axis(columns="gain").stack().rename("gain_value").reset_index()
    long = long.dropna(subset=["gain_value"])
    return long.pivot_table(index=["dataset", "gain", "metric"], columns="seed", values="gain_value", sort=False)


def model_spread(ch: MMTNNChapter, spread_table: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, model behind a gain and measure: the model's sd over the seeds, its bootstrap sd over the test
    sentences at the tables' seed, and the two combined: the spread of a value the paper states for one model
    (the claims registry's Table 5 and 6 values)."""
    cfgs = spread_configs(ch)
    rows: list[dict] = []
    for (dataset, model, measure), part in spread_table.groupby(["dataset", "model", "metric"], sort=False):
        counts = ex.line_counts(ch, cfgs[(dataset, model, ch.segmenter.seed)])
        boot = spread.bootstrap_sd(lambda t, m=measure: sighan.measure_of_totals(t, m), [counts])
        keys = {"dataset": dataset, "model": model, "measure": measure,
                "source": spread.source(len(part), len(counts), "test sentences")}
        stats = {"value": float(part.loc[part.seed == ch.segmenter.seed, "ours"].iloc[0]),
                 **spread.measured(list(part["ours"]), boot)}
        rows += [{**keys, "metric": k, "ours": v} for k, v in stats.items()]
    return pd.DataFrame(rows)


def _bootstrap_gain(ch: MMTNNChapter, dataset: str, better: Sequence[str], base: str, measure: str) -> float:
    """The bootstrap sd of a gain over the test sentences, at the tables' seed: the same sentences drawn for
    both sides."""
    cfgs = spread_configs(ch)
    seed = ch.segmenter.seed
    counts = [ex.line_counts(ch, cfgs[(dataset, m, seed)]) for m in (*better, base)]

    def gain(*totals: np.ndarray) -> np.ndarray:
        values = [sighan.measure_of_totals(t, measure) for t in totals]
        return np.min(values[:-1], axis=0) - values[-1]

    return spread.bootstrap_sd(gain, counts)


def gain_spread(ch: MMTNNChapter, spread_table: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, gain and measure: the gain of the tables' models, its sd over the seeds, its bootstrap sd
    over the test sentences, and the two combined (`hanzilm.spread`): the spread the claims registry reads."""
    by_seed = gains_by_seed(spread_table)
    rows: list[dict] = []
    for (dataset, gain, measure), values in by_seed.iterrows():
        better, base = GAINS[gain]
        seeds = values.dropna()
        boot = _bootstrap_gain(ch, dataset, better, base, measure)
        n_lines = len(ex.line_counts(ch, spread_configs(ch)[(dataset, base, ch.segmenter.seed)]))
        keys = {"dataset": dataset, "gain": gain, "measure": measure,
                "source": spread.source(len(seeds), n_lines, "test sentences")}
        stats = {"gain": values[ch.segmenter.seed], **spread.measured(list(seeds), boot)}
        rows += [{**keys, "metric": k, "ours": v} for k, v in stats.items()]
    return pd.DataFrame(rows)
