"""The segmental-LM chapter's grid, cached evaluation and tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from hanzilm import paths
from hanzilm.profiles import get_profile
from hanzilm.papers.mslm import chapter, report
from hanzilm.papers.mslm.chapter import SLMChapter, cells, evaluate_run, orderings, side_by_side, table2, unique_runs
from hanzilm.papers.mslm.experiment import evaluate_corpus, load_data, slm_experiment, train_slm


def test_paper_grid_runs_each_selection_at_the_authors_rate():
    ch = get_profile("paper").configure(SLMChapter())
    grid = cells(ch, "paper")
    assert len(grid) == 2 * 3 * 5 * 2
    pku_rslm = {c.selection: c.exp for c in grid if (c.corpus, c.encoder, c.seed) == ("pku", "rslm", 2)}
    assert pku_rslm["unsupervised"].train.lr == 9e-4 and pku_rslm["lightly supervised"].train.lr == 6e-4
    # PTB MSLM's two selections share no rate either; only identical experiments are trained once
    assert len(unique_runs(ch, "paper")) == len({c.exp for c in grid})
    assert {c.exp.model.max_seg_len for c in grid if c.corpus == "ptb"} == {10}


def test_one_rate_per_model_reads_both_selections_off_one_run():
    ch = SLMChapter(seeds={"*": (0,), "pku/mslm": (0, 1, 2)}, lr={"pku/mslm": 2e-3})
    grid = cells(ch, "smoke")
    mslm = [c for c in grid if (c.corpus, c.encoder) == ("pku", "mslm")]
    assert len(mslm) == 6 and {c.exp.train.seed for c in mslm} == {0, 1, 2}
    assert len({c.exp for c in mslm}) == 3 and all(c.exp.train.lr == 2e-3 for c in mslm)
    with pytest.raises(ValueError, match="f1_split"):
        SLMChapter(f1_split="everything")


def _runs() -> pd.DataFrame:
    rows = []
    for sel in ("unsupervised", "lightly supervised"):
        for model, f1s, bpcs in [("RSLM", [50, 60, 55], [5.0, 5.2, 5.1]), ("MSLM", [70, 64, 66], [5.3, 5.1, 5.2]),
                                 ("DMSLM", [40], [6.0])]:
            for seed, (f1, bpc) in enumerate(zip(f1s, bpcs)):
                rows.append({"dataset": "PKU", "selection": sel, "model": model, "seed": seed, "lr": 1e-3,
                             "word_f1": f1, "bpc": bpc, "bpc_sentence_mean": bpc + 0.1, "boundary_precision": 90.0,
                             "boundary_recall": f1, "boundary_f1": f1, "word_precision": f1, "word_recall": f1})
        for model, bpc in [("RSLM", 2.0), ("MSLM", 2.3), ("DMSLM", 2.2)]:
            rows.append({"dataset": "PTB", "selection": sel, "model": model, "seed": 0, "lr": 1e-3, "word_f1": 70,
                         "bpc": bpc, "bpc_sentence_mean": bpc, "boundary_precision": 80.0, "boundary_recall": 70,
                         "boundary_f1": 70, "word_precision": 70, "word_recall": 70})
    return pd.DataFrame(rows)


def test_table2_aggregates_over_seeds_and_sits_beside_the_paper():
    long = table2(_runs())
    cell = long[(long.dataset == "PKU") & (long.selection == "unsupervised") & (long.model == "MSLM")]
    got = dict(zip(cell.metric, cell.ours))
    assert got["f1_median"] == 66 and got["f1_mean"] == pytest.approx(200 / 3)
    assert got["f1_sd"] == pytest.approx(pd.Series([70, 64, 66]).std())
    assert got["n_seeds"] == 3 and got["bpc_median"] == pytest.approx(5.2)
    single = long[(long.model == "DMSLM") & (long.metric == "f1_sd")]
    assert single.ours.isna().all()                                   # no sd from one seed
    paper = chapter.paper_table2()
    merged = long.merge(paper, on=["dataset", "selection", "model", "metric"], how="left")
    assert merged[(merged.dataset == "PKU") & (merged.selection == "lightly supervised") & (merged.model == "MSLM")
                  & (merged.metric == "f1_median")].paper.item() == 72.6
    merged["diff"] = merged.ours - merged.paper
    wide = side_by_side(merged)
    row = wide[(wide.dataset == "PKU") & (wide.selection == "unsupervised") & (wide.model == "MSLM")].iloc[0]
    assert row["paper F1 median"] == 64.1 and row["F1 mean ± sd"].startswith("66.7 ± ")
    assert row["seeds"] == 3


def test_orderings_report_what_holds():
    claims = orderings(_runs()).set_index("claim")
    assert claims.holds.tolist() == [True, True, True]
    flipped = _runs()
    flipped.loc[(flipped.dataset == "PTB") & (flipped.model == "MSLM"), "bpc"] = 1.0
    assert orderings(flipped).holds.tolist() == [True, True, False]


def test_boundary_table_is_the_median_over_seeds():
    b = report.boundary_table(_runs())
    r = b[(b.dataset == "PKU") & (b.selection == "unsupervised") & (b.model == "RSLM") & (b.metric == "boundary_recall")]
    assert r.ours.item() == 55


def test_data_labels_name_the_stand_in():
    assert chapter.data_label("PKU").startswith("stand-in: ") and "People's Daily" in chapter.data_label("PKU")
    assert chapter.data_label("PTB") == "official"


def test_the_papers_example_sentence_comes_first():
    sents = report.example_sentences("ptb", n_test=2, max_chars=60)
    assert report.PAPER_EXAMPLE in " ".join(sents[0])
    assert len(sents) == 3 and all(sum(map(len, s)) <= 60 for s in sents[1:])


def test_evaluate_run_reads_test_bpc_off_the_heldout_pass_and_caches(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RESULTS", tmp_path / "results")
    monkeypatch.setenv("HANZILM_PROGRESS", "0")
    ch = SLMChapter(seeds={"*": (0,)}, lr={"pku/rslm": 3e-3}, f1_split="heldout", eval_sentences=25)
    exp = slm_experiment("pku", "rslm", profile="smoke", lr=3e-3)
    out = evaluate_run(exp, ch, "smoke")
    assert set(out) == {"unsupervised", "lightly supervised"}
    data = load_data("pku", exp.train_sentences)
    model = train_slm(exp, profile="smoke").models["unsupervised"]
    alone = evaluate_corpus(model, data, data.test[:25])
    both = evaluate_corpus(model, data, data.dev[:25] + data.test[:25])
    assert out["unsupervised"]["bpc"] == pytest.approx(alone.bpc, rel=1e-5)
    assert out["unsupervised"]["bpc_sentence_mean"] == pytest.approx(alone.metrics["bpc_sentence_mean"], rel=1e-5)
    assert out["unsupervised"]["word_f1"] == pytest.approx(both.metrics["word_f1"])
    assert not math.isnan(out["lightly supervised"]["selected_step"])

    def no_training(*a, **k):
        raise AssertionError("evaluate_run retrained a stored run")
    monkeypatch.setattr(chapter, "train_slm", no_training)
    assert evaluate_run(exp, ch, "smoke") == out


def test_word_lengths_and_context_ablation(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RESULTS", tmp_path / "results")
    monkeypatch.setenv("HANZILM_PROGRESS", "0")
    ch = SLMChapter(seeds={"*": (0,)}, lr={"pku/mslm": 3e-3, "pku/rslm": 3e-3, "pku/dmslm": 3e-3})
    sents = load_data("pku").dev[:12]
    lengths = report.word_lengths(ch, "smoke", "pku", sents)
    assert list(lengths.columns) == ["gold", "RSLM", "MSLM", "DMSLM"]
    assert lengths["gold"].sum() == sum(map(len, sents))
    chars = sum(len("".join(s)) for s in sents)
    assert all(lengths[c].sum() * 5 >= chars for c in ("RSLM", "MSLM", "DMSLM"))   # words of <= 5 characters
    ablation = report.context_ablation(ch, "smoke", "pku", sents)
    assert (ablation.bpc != ablation.bpc_without_context).all()
    again = report.context_ablation(ch, "smoke", "pku", sents)      # the encoder is back after an ablation
    assert again.bpc.tolist() == ablation.bpc.tolist()
