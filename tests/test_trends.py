"""Findings against training: the direction of a gap, its sentence, and the chapters' trend tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from hanzilm import claims, results
from hanzilm.papers.backpack import trends as backpack_trends
from hanzilm.papers.mslm import trends as mslm_trends
from hanzilm.trends import sentence, tokens_label, trend

TOKENS = [1e5, 1e6, 1e7]


def test_a_gap_closing_on_a_log_line_says_where_it_would_close():
    tr = trend(TOKENS, [0.1, 0.2, 0.3], paper=0.5)
    assert tr.direction == "closing" and tr.per_decade == pytest.approx(0.1)
    assert tr.reach_tokens == pytest.approx(1e9)  # two more decades at +0.1 each
    text = sentence("x", tr, 0.5, paper_tokens=1e11)
    assert "closing" in text and "1 B tokens" in text and "within the paper's budget" in text
    beyond = sentence("x", tr, 0.5, paper_tokens=1e8)
    assert "beyond the paper's own budget" in beyond


def test_flat_within_noise_and_opening():
    assert trend(TOKENS, [0.30, 0.31, 0.32], paper=0.9, noise=0.05).direction == "flat"
    assert trend(TOKENS, [0.30, 0.31, 0.32], paper=0.9).direction == "flat"  # 0.02 < a tenth of the 0.58 gap
    assert trend(TOKENS, [0.5, 0.3, 0.1], paper=0.9).direction == "opening"
    # only the last three points count: an early dip does not make a rising curve open
    assert trend([1e3, *TOKENS], [0.9, 0.1, 0.2, 0.3], paper=0.5).direction == "closing"
    # above the paper and falling towards it closes too
    assert trend(TOKENS, [0.9, 0.8, 0.7], paper=0.5).direction == "closing"


def test_without_a_paper_value_only_movement_is_reported():
    assert trend(TOKENS, [1, 2, 3], paper=math.nan).direction == "rising"
    assert trend(TOKENS, [3, 2, 1], paper=math.nan).direction == "falling"
    assert trend([1e5], [1.0], paper=2.0).direction == "flat"
    assert tokens_label(6.1e6) == "6.1 M" and tokens_label(500_000 * 180 * 1024) == "92.2 B"


def test_the_backpack_findings_on_the_committed_tables_are_the_registry_values():
    # findings_at reads the chapter's tables the way the claims registry does: on the cpu run's own tables
    # its quantities are the ones results/cpu/summary/claims.csv reports
    tables = results.read_results("cpu", "backpack")
    found = backpack_trends.findings_at(tables, "cpu").set_index("claim")
    registry = claims.evaluate("cpu").set_index("id")
    for c in found.index.drop(backpack_trends.AGREEMENT):
        assert found.loc[c, "ours"] == pytest.approx(registry.loc[f"backpack.{c}", "ours"], nan_ok=True), c
    table6 = tables["backpack/table6_amplification"]
    cells = table6[table6.multipliers != "1,1"]
    assert found.loc[backpack_trends.AGREEMENT, "ours"] == pytest.approx(
        ((cells.ours > 1) == (cells.paper > 1)).mean())


def test_every_backpack_finding_names_registry_claims():
    ids = {c.id for c in claims.load_claims()}
    for f in backpack_trends.FINDINGS:
        for c in f.claims:
            assert c == backpack_trends.AGREEMENT or f"backpack.{c}" in ids, c
    assert len(backpack_trends.FINDINGS) >= 6
    assert backpack_trends.paper_tokens() == 500_000 * 180 * 1024


def test_the_last_snapshot_of_the_cpu_run_gives_the_chapter_values():
    # the trend page's last point is the run's final (= best) weights: the same numbers as the chapter's tables
    along = pd.read_csv(results.RESULTS / "cpu" / "backpack" / "trends.csv")
    last = along[along.step == along.step.max()].set_index("claim")
    registry = claims.evaluate("cpu").set_index("id")
    # CSV: 10 digits. The snapshot is evaluated in a one-thread worker, the chapter in two threads: fp32 sums in
    # another order move a difference of near-equal biases (t5.警察.removal_lowers_bias, -5.6e-4) by 1e-10
    for c in last.index.drop(backpack_trends.AGREEMENT):
        assert last.loc[c, "ours"] == pytest.approx(registry.loc[f"backpack.{c}", "ours"], rel=1e-7, abs=1e-9,
                                                    nan_ok=True), c
    assert sorted(along.step.unique()) == [47, 94, 188, 375, 750, 1500]


def test_the_authors_logs_are_read_with_mcc_in_percent():
    a = mslm_trends.authors_curves()
    assert set(a.metric) == {"dev_bpc", "dev_mcc", "dev_boundary_f1"} and set(a.dataset) == {"PKU", "PTB"}
    pku = a[(a.dataset == "PKU") & (a.model == "MSLM") & np.isclose(a.lr, 1e-3) & (a.metric == "dev_mcc")]
    assert pku.seed.nunique() == 5 and pku.value.max() > 50  # percent, as ours
    assert (a.chars == a.step * 8192).all()


def test_curve_references_and_sentences():
    curves = pd.DataFrame({"dataset": "PTB", "model": "RSLM", "seed": 0, "lr": 3e-3,
                           "step": [100, 1000, 4000], "chars": [5.12e4, 5.12e5, 2.048e6],
                           "metric": "dev_mcc", "ours": [40.0, 60.0, 70.0]})
    refs = mslm_trends.references(curves, mslm_trends.authors_curves())
    r = refs.iloc[0]
    assert r.reference > 80 and "authors' runs at lr 0.003" in r.reference_source
    assert r.authors_chars == 2 * 1048576  # the first logged point at or past our 2.05 M characters
    d = mslm_trends.directions(curves, refs).iloc[0]
    assert d.direction == "closing" and "the authors' run stood at" in d.sentence
    long = mslm_trends.results_table(mslm_trends.directions(curves, refs))
    assert set(long.metric) == {"last", "reference", "per_decade"}


def test_points_along_training_stay_off_the_glance_page():
    # intermediate snapshots are not results compared with the paper: no paper/diff columns, no glance rows
    along = pd.read_csv(results.RESULTS / "cpu" / "backpack" / "trends.csv")
    assert "paper" not in along and "paper_value" in along
    assert not results.glance("cpu").table.isin(["backpack/trends", "mslm/curve_trends"]).any()


def test_our_runs_beside_the_authors_at_the_characters_both_logged():
    """The matched-compute table: ours (every seed) and the authors' (at the paper's rate for the cell) at each
    characters-seen point both evaluated, with where ours stands against their seeds."""
    rows = [{"dataset": "PKU", "model": "MSLM", "seed": s, "lr": 8e-3, "step": step, "chars": step * 2048,
             "metric": "dev_boundary_f1", "ours": v} for s, off in ((0, 0.0), (1, 2.0), (2, -2.0))
            for step, v in ((512, 70.0 + off), (1024, 60.0 + off), (1536, 50.0 + off), (2048, 40.0 + off))]
    matched = mslm_trends.matched_compute(pd.DataFrame(rows), mslm_trends.authors_curves())
    at = matched[matched.chars == 4194304].set_index("metric").ours
    assert sorted(set(matched.chars)) == [1048576, 2097152, 3145728, 4194304]
    assert (at.ours_median, at.ours_min, at.ours_max, at.ours_seeds) == (40.0, 38.0, 42.0, 3)
    assert at.authors_lr == 2e-3 and at.authors_seeds == 5 and at.authors_min > 80   # their MSLM: 85.9-87.7
    (sentence,) = mslm_trends.matched_sentences(matched)
    assert "below their lowest seed" in sentence and "ours 40 (median of 3 seeds, 38-42)" in sentence
