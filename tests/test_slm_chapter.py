"""The segmental-LM chapter: its config at each profile, the grid, cached evaluation and tables."""

from __future__ import annotations

import dataclasses
import inspect
import math
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import _native_bf16
from hanzilm import paths, store
from hanzilm.errors import HanzilmError
from hanzilm.machine import cpu_flags_bf16
from hanzilm.data.manifest import load_manifest
from hanzilm.papers.mslm import experiment, tables
from hanzilm.papers.mslm.experiment import (MSLMChapter, SLMExperiment, cells, configure, evaluate_corpus,
                                            evaluate_run, load_data, run_dir, slm_experiment, train_slm,
                                            unique_runs)
from hanzilm.store import Store, is_complete


def test_profiles_compose_the_chapter_once():
    smoke, cpu = configure("smoke"), configure("cpu")
    assert smoke.store.root == paths.results_dir("smoke") / "checkpoints"
    assert smoke.pku.model.dim == smoke.ptb.model.dim == 32 and smoke.ptb.train.steps == 30
    assert smoke.seeds["pku/mslm"] == (0, 1) and smoke.eval_sentences == 60
    assert (cpu.pku.model.dim, cpu.ptb.model.dim) == (256, 128) and cpu.pku.batch_chars == 2048
    assert (cpu.pku.model.max_seg_len, cpu.ptb.model.max_seg_len) == (5, 10) and cpu.f1_split == "test"
    assert configure("paper") == MSLMChapter()                   # the defaults are the paper's
    assert dataclasses.replace(cpu, store=None) == cpu            # the store is where, not what
    sent = pickle.loads(pickle.dumps(cpu))                        # what train_all's spawned workers receive
    assert sent == cpu and sent.store == cpu.store
    with pytest.raises(ValueError, match="ptb template"):
        MSLMChapter(ptb=SLMExperiment(corpus="pku"))


def test_a_run_is_its_corpus_template_with_encoder_seed_and_rate():
    cpu = configure("cpu")
    rslm = slm_experiment(cpu, "pku", "rslm", seed=2, lr=1e-3)   # a grid cell: its rate is given
    assert rslm.model == dataclasses.replace(cpu.pku.model, encoder="rslm", encoder_dropout=0.0)
    assert (rslm.train.seed, rslm.train.lr, rslm.train.warmup_steps) == (2, 1e-3, 50)   # 400 steps x 1/8
    assert dataclasses.replace(rslm, model=cpu.pku.model, train=cpu.pku.train) == cpu.pku
    ptb = slm_experiment(cpu, "ptb", "mslm", lr=3e-3)
    assert ptb.model.encoder_dropout == 0.15 and ptb.train.warmup_steps == 0 and ptb.train.lr == 3e-3
    with pytest.raises(ValueError, match="chosen on the dev set"):
        slm_experiment(cpu, "ptb", "mslm")


def test_run_keys_follow_the_chapter_version(real_mirror, monkeypatch):
    """A run's key holds the chapter's version: a new version, another run."""
    from hanzilm import versions

    cpu = configure("cpu")
    exp = slm_experiment(cpu, "ptb", "mslm", lr=3e-3)
    before = run_dir(cpu.store, exp)
    monkeypatch.setitem(versions.SMOKE_FINGERPRINTS, "mslm", {**versions.SMOKE_FINGERPRINTS["mslm"], 99: "new"})
    assert versions.key("mslm") == "mslm/v99" and run_dir(cpu.store, exp) != before


def test_paper_grid_runs_each_selection_at_the_authors_rate():
    ch = configure("paper")
    grid = cells(ch)
    assert len(grid) == 2 * 3 * 5 * 2
    pku_rslm = {c.selection: c.exp for c in grid if (c.corpus, c.encoder, c.seed) == ("pku", "rslm", 2)}
    assert pku_rslm["unsupervised"].train.lr == 9e-4 and pku_rslm["lightly supervised"].train.lr == 6e-4
    # PTB MSLM's two selections share no rate either; only identical experiments are trained once
    assert len(unique_runs(ch)) == len({c.exp for c in grid})
    assert {c.exp.model.max_seg_len for c in grid if c.corpus == "ptb"} == {10}


def test_one_rate_per_model_reads_both_selections_off_one_run():
    ch = MSLMChapter(seeds={"*": (0,), "pku/mslm": (0, 1, 2)}, lr={"pku/mslm": 2e-3})
    grid = cells(ch)
    mslm = [c for c in grid if (c.corpus, c.encoder) == ("pku", "mslm")]
    assert len(mslm) == 6 and {c.exp.train.seed for c in mslm} == {0, 1, 2}
    assert len({c.exp for c in mslm}) == 3 and all(c.exp.train.lr == 2e-3 for c in mslm)
    with pytest.raises(ValueError, match="f1_split"):
        MSLMChapter(f1_split="everything")


def test_a_selection_may_have_seeds_of_its_own():
    ch = MSLMChapter(seeds={"*": (0,), "pku/mslm": (0, 1), "pku/mslm/lightly supervised": (0,)},
                     lr={"pku/mslm": 2e-3})
    mslm = [(c.seed, c.selection) for c in cells(ch) if (c.corpus, c.encoder) == ("pku", "mslm")]
    assert mslm == [(0, "unsupervised"), (0, "lightly supervised"), (1, "unsupervised")]
    assert ch.seeds_for("pku", "mslm") == (0, 1) and ch.seeds_for("pku", "mslm", "lightly supervised") == (0,)
    assert ch.seeds_for("pku", "rslm", "unsupervised") == (0,)
    cpu = configure("cpu")
    for corpus in ("pku", "ptb"):    # three seeds behind every unsupervised median, one lightly supervised
        for encoder in ("rslm", "mslm", "dmslm"):
            assert cpu.seeds_for(corpus, encoder, "unsupervised") == (0, 1, 2)
            assert cpu.seeds_for(corpus, encoder, "lightly supervised") == (0,)


def _runs() -> pd.DataFrame:
    rows = []
    for sel in ("unsupervised", "lightly supervised"):
        for model, f1s, bpcs in [("RSLM", [50, 60, 55], [5.0, 5.2, 5.1]), ("MSLM", [70, 64, 66], [5.3, 5.1, 5.2]),
                                 ("DMSLM", [40], [6.0])]:
            for seed, (f1, bpc) in enumerate(zip(f1s, bpcs)):
                rows.append({"dataset": "PKU", "selection": sel, "model": model, "seed": seed, "lr": 1e-3,
                             "train_chars": 819200, "word_f1": f1, "bpc": bpc, "bpc_sentence_mean": bpc + 0.1, "boundary_precision": 90.0,
                             "boundary_recall": f1, "boundary_f1": f1, "word_precision": f1, "word_recall": f1})
        for model, bpc in [("RSLM", 2.0), ("MSLM", 2.3), ("DMSLM", 2.2)]:
            rows.append({"dataset": "PTB", "selection": sel, "model": model, "seed": 0, "lr": 1e-3,
                         "train_chars": 2048000, "word_f1": 70,
                         "bpc": bpc, "bpc_sentence_mean": bpc, "boundary_precision": 80.0, "boundary_recall": 70,
                         "boundary_f1": 70, "word_precision": 70, "word_recall": 70})
    return pd.DataFrame(rows)


def test_table2_aggregates_over_seeds_and_sits_beside_the_paper():
    long = tables.table2(_runs())
    cell = long[(long.dataset == "PKU") & (long.selection == "unsupervised") & (long.model == "MSLM")]
    got = dict(zip(cell.metric, cell.ours))
    assert got["f1_median"] == 66 and got["f1_mean"] == pytest.approx(200 / 3)
    assert got["f1_sd"] == pytest.approx(pd.Series([70, 64, 66]).std())
    assert got["n_seeds"] == 3 and got["bpc_median"] == pytest.approx(5.2) and got["train_chars"] == 819200
    single = long[(long.model == "DMSLM") & (long.metric == "f1_sd")]
    assert single.ours.isna().all()                                   # no sd from one seed
    paper = tables.paper_table2()
    merged = long.merge(paper, on=["dataset", "selection", "model", "metric"], how="left")
    assert merged[(merged.dataset == "PKU") & (merged.selection == "lightly supervised") & (merged.model == "MSLM")
                  & (merged.metric == "f1_median")].paper.item() == 72.6
    merged["diff"] = merged.ours - merged.paper
    wide = tables.side_by_side(merged)
    row = wide[(wide.dataset == "PKU") & (wide.selection == "unsupervised") & (wide.model == "MSLM")].iloc[0]
    assert row["paper F1 median"] == 64.1 and row["F1 mean ± sd"].startswith("66.7 ± ")
    assert row["seeds"] == 3


def test_boundary_table_is_the_median_over_seeds():
    b = tables.boundary_table(_runs())
    r = b[(b.dataset == "PKU") & (b.selection == "unsupervised") & (b.model == "RSLM") & (b.metric == "boundary_recall")]
    assert r.ours.item() == 55
    wide = tables.boundary_pivot(b)
    assert list(wide.columns[3:]) == list(tables.BOUNDARY_METRICS) and len(wide) == 12


def test_rows_are_labelled_by_their_corpus_datasets():
    """Every dataset value the tables write has its manifest datasets: PKU's rebuilt training text is a
    stand-in, PTB is the SNLM release."""
    assert set(tables.table2(_runs()).dataset) == set(tables.DATASETS)
    manifest = load_manifest()
    assert manifest.label(tables.DATASETS["PKU"]).startswith("stand-in: ")
    assert manifest.label(tables.DATASETS["PTB"]) == "official"


def test_the_papers_example_sentence_comes_first():
    sents = tables.example_sentences("ptb", n_test=2, max_chars=60)
    assert tables.PAPER_EXAMPLE in " ".join(sents[0])
    assert len(sents) == 3 and all(sum(map(len, s)) <= 60 for s in sents[1:])


def _smoke(tmp_path, **fields) -> MSLMChapter:
    """The smoke chapter in a store of its own; without the profile's learning-rate grid unless given one."""
    fields.setdefault("lr_grid", {})
    return dataclasses.replace(configure("smoke"), store=Store(tmp_path / "checkpoints"), **fields)


def test_evaluate_run_reads_test_bpc_off_the_heldout_pass_and_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("HANZILM_PROGRESS", "0")
    ch = _smoke(tmp_path, seeds={"*": (0,)}, lr={"pku/rslm": 3e-3}, f1_split="heldout", eval_sentences=25)
    exp = slm_experiment(ch, "pku", "rslm")
    out = evaluate_run(ch, exp)
    assert set(out) == {"unsupervised", "lightly supervised"}
    data = load_data("pku", exp.train_sentences)
    model = train_slm(ch.store, exp).models["unsupervised"]
    alone = evaluate_corpus(model, data, data.test[:25])
    both = evaluate_corpus(model, data, data.dev[:25] + data.test[:25])
    assert out["unsupervised"]["bpc"] == pytest.approx(alone.bpc, rel=1e-5)
    assert out["unsupervised"]["bpc_sentence_mean"] == pytest.approx(alone.metrics["bpc_sentence_mean"], rel=1e-5)
    assert out["unsupervised"]["word_f1"] == pytest.approx(both.metrics["word_f1"])
    assert not math.isnan(out["lightly supervised"]["selected_step"])
    assert (run_dir(ch.store, exp) / "eval-heldout-25-official.json").is_file()  # named by the scoring mode
    items, n_test = experiment.sentence_items(ch, exp, "unsupervised")   # what the bootstrap resamples
    assert items.shape == (50, len(experiment.SENTENCE_FIELDS)) and n_test == 25
    for measure in tables.SPREAD_MEASURES:
        rows = items[-n_test:] if measure == "bpc" else items
        assert tables.sentence_measure(rows.sum(axis=0), measure) == pytest.approx(out["unsupervised"][measure])

    def no_training(*a, **k):
        raise AssertionError("evaluate_run retrained a stored run")
    monkeypatch.setattr(experiment, "train_slm", no_training)
    store.LOADED.clear()
    assert evaluate_run(ch, exp) == out
    assert [r["action"] for r in store.LOADED.values()] == ["read"]  # the table still names the run behind it


def test_a_cells_spread_is_its_seed_sd_and_its_bootstrap_sd_combined(monkeypatch):
    """`cell_spread`: the sd of the cell's values over its seeds, the root mean bootstrap variance of its runs
    over their sentences, and the two in quadrature; a one-seed cell has the bootstrap alone."""
    from hanzilm import spread

    rng = np.random.default_rng(0)
    cell_runs = {seed: slm_experiment(configure("smoke"), "ptb", "rslm", seed=seed) for seed in (0, 1)}
    fake = [experiment.Cell("ptb", "rslm", s, "unsupervised", e) for s, e in cell_runs.items()]
    fake.append(experiment.Cell("ptb", "mslm", 0, "unsupervised", slm_experiment(configure("smoke"), "ptb", "mslm")))
    fake.append(experiment.Cell("ptb", "rslm", 0, "lightly supervised", cell_runs[0]))
    items = {e: np.column_stack([rng.integers(5, 9, (40, 1)), rng.integers(0, 3, (40, 1)), rng.integers(5, 9, (40, 1)),
                                 rng.integers(0, 3, (40, 1)), np.zeros((40, 2)), rng.integers(3, 7, (40, 3)),
                                 rng.integers(20, 30, (40, 1)), rng.uniform(50, 90, (40, 1)), np.full((40, 1), 30)])
             for e in [c.exp for c in fake]}
    monkeypatch.setattr(experiment, "select_learning_rates", lambda ch: ch)
    monkeypatch.setattr(tables, "cells", lambda ch: fake)
    monkeypatch.setattr(experiment, "sentence_items", lambda ch, exp, sel: (items[exp], 30))
    runs = pd.DataFrame({"dataset": "PTB", "selection": ["unsupervised"] * 3 + ["lightly supervised"],
                         "model": ["RSLM", "RSLM", "MSLM", "RSLM"], "word_f1": [60.0, 64.0, 70.0, 66.0],
                         "bpc": [2.1, 2.3, 2.0, 2.2], "boundary_precision": [80.0, 84.0, 90.0, 85.0],
                         "boundary_recall": [70.0, 71.0, 75.0, 72.0]})
    table = tables.cell_spread(configure("smoke"), runs)
    light = table[table.selection == "lightly supervised"].set_index(["measure", "metric"])
    table = table[table.selection == "unsupervised"]
    out = table.set_index(["model", "measure", "metric"])["ours"]
    boot = [spread.bootstrap_sd(lambda t: tables.sentence_measure(t, "word_f1"), [items[cell_runs[s]]]) for s in (0, 1)]
    assert out[("RSLM", "word_f1", "seed_sd")] == pytest.approx(np.std([60, 64], ddof=1))
    assert out[("RSLM", "word_f1", "bootstrap_sd")] == pytest.approx(np.sqrt(np.mean(np.square(boot))))
    assert out[("RSLM", "word_f1", "sd")] == pytest.approx(np.hypot(np.std([60, 64], ddof=1), np.sqrt(np.mean(np.square(boot)))))
    assert out[("MSLM", "bpc", "n_seeds")] == 1 and math.isnan(out[("MSLM", "bpc", "seed_sd")])
    assert out[("MSLM", "bpc", "sd")] == out[("MSLM", "bpc", "bootstrap_sd")] > 0
    mslm_items = items[fake[2].exp]           # bpc is resampled over the test sentences alone (the last 30)
    bpc = lambda t: tables.sentence_measure(t, "bpc")  # noqa: E731
    assert out[("MSLM", "bpc", "bootstrap_sd")] == pytest.approx(spread.bootstrap_sd(bpc, [mslm_items[-30:]]))
    assert out[("MSLM", "bpc", "bootstrap_sd")] != pytest.approx(spread.bootstrap_sd(bpc, [mslm_items]))
    # a one-seed cell takes the seed sd of the same model's cell at the other selection, and says so
    assert light.loc[("word_f1", "n_seeds"), "ours"] == 1
    assert light.loc[("word_f1", "seed_sd"), "ours"] == pytest.approx(np.std([60, 64], ddof=1))
    assert "of the unsupervised cell" in light.loc[("word_f1", "seed_sd"), "source"]


def test_a_run_is_scored_on_test_only_for_the_selections_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("HANZILM_PROGRESS", "0")
    ch = _smoke(tmp_path, seeds={"*": (0,)}, lr={"pku/rslm": 3e-3}, f1_split="test", eval_sentences=20)
    exp = slm_experiment(ch, "pku", "rslm")
    train_slm(ch.store, exp)                     # its dev evaluations during training are not test passes
    scored = []
    real = experiment.evaluate_corpus
    monkeypatch.setattr(experiment, "evaluate_corpus", lambda *a, **k: scored.append(1) or real(*a, **k))
    light = evaluate_run(ch, exp, ("lightly supervised",))
    assert set(light) == {"lightly supervised"} and len(scored) == 1
    both = evaluate_run(ch, exp)                  # the other selection added to the cache, the first kept
    assert both["lightly supervised"] == light["lightly supervised"] and set(both) == set(experiment.SELECTIONS)
    assert len(scored) == 1 + (both["unsupervised"]["selected_step"] != light["lightly supervised"]["selected_step"])
    n = len(scored)
    assert evaluate_run(ch, exp) == both and len(scored) == n


def _scored_in_bf16(root: str) -> dict:
    """A smoke PKU MSLM trained under bf16 autocast, scored by evaluate_run: the precision of each evaluate_corpus
    call, the record's name and test bpc, and the test pass again in bf16 (SLMRun.evaluate) and in fp32."""
    ch = _smoke(Path(root), seeds={"*": (0,)}, lr={"pku/mslm": 3e-3}, f1_split="test", eval_sentences=20)
    ch = dataclasses.replace(ch, pku=dataclasses.replace(ch.pku, train=dataclasses.replace(ch.pku.train,
                                                                                           precision="bf16")))
    exp = slm_experiment(ch, "pku", "mslm")
    real, precisions = experiment.evaluate_corpus, []

    def evaluate_corpus(*args, **kwargs):
        bound = inspect.signature(real).bind(*args, **kwargs)
        bound.apply_defaults()
        precisions.append(bound.arguments["precision"])
        return real(*args, **kwargs)
    experiment.evaluate_corpus = evaluate_corpus
    out = evaluate_run(ch, exp, ("unsupervised",))["unsupervised"]
    experiment.evaluate_corpus = real
    run = train_slm(ch.store, exp)
    test = run.data.test[:20]
    return {"precisions": precisions, "records": sorted(p.name for p in run_dir(ch.store, exp).glob("eval-*")),
            "bpc": out["bpc"], "bf16": run.evaluate("unsupervised", test).bpc,
            "fp32": real(run.models["unsupervised"], run.data, test, exp.eval_batch_chars).bpc}


@pytest.mark.skipif(not cpu_flags_bf16(), reason="this CPU has no native bfloat16 (AVX512_BF16/AMX), and oneDNN "
                    "has no bf16 LSTM without it; the cpu profile trains and scores the segmental LMs in fp32 here")
def test_a_run_is_scored_in_the_precision_it_trained_in(tmp_path):
    """A run trained under bf16 autocast is scored under it too (close to an fp32 pass, not equal to it), its
    record kept apart from an fp32 one; the dev passes during training stay fp32. In a process whose oneDNN may
    use bf16 (the tests cap it at AVX2, where it has no bf16 LSTM)."""
    got = _native_bf16.call("test_slm_chapter", "_scored_in_bf16", str(tmp_path))
    assert set(got["precisions"][:-1]) == {"fp32"} and got["precisions"][-1] == "bf16"   # dev passes, the test
    assert got["records"] == ["eval-test-20-official-bf16.json"]
    assert got["bpc"] == pytest.approx(got["bf16"], rel=1e-9)
    assert got["bf16"] != got["fp32"] and got["bf16"] == pytest.approx(got["fp32"], rel=1e-2)


def test_the_chapter_scores_each_run_for_the_selections_table2_reads(monkeypatch):
    ch = dataclasses.replace(configure("cpu"), chosen_lr={
        f"{cell}/{sel}": rates[i] for cell, rates in configure("cpu").lr_grid.items()
        for i, sel in enumerate(experiment.SELECTIONS)})
    needed = experiment._needed_selections(ch)
    assert len(needed) == 6 * 2 + 6 * 2                   # the grid, and two further seeds of each cell
    further = [e for e in needed if e.train.seed > 0]
    assert len(further) == 12 and all(needed[e] == ("unsupervised",) for e in further)
    assert sorted(map(len, needed.values())) == [1] * 24


def test_a_chapter_without_a_store_says_so():
    ch = MSLMChapter()
    with pytest.raises(HanzilmError, match="configure"):
        evaluate_run(ch, slm_experiment(ch, "ptb", "rslm"))


def test_word_lengths_and_context_ablation(tmp_path, monkeypatch):
    monkeypatch.setenv("HANZILM_PROGRESS", "0")
    ch = _smoke(tmp_path, seeds={"*": (0,)}, lr={"pku/mslm": 3e-3, "pku/rslm": 3e-3, "pku/dmslm": 3e-3})
    sents = load_data("pku").dev[:12]
    lengths = tables.word_lengths(ch, "pku", sents)
    assert list(lengths.columns) == ["gold", "RSLM", "MSLM", "DMSLM"]
    assert lengths["gold"].sum() == sum(map(len, sents))
    chars = sum(len("".join(s)) for s in sents)
    assert all(lengths[c].sum() * 5 >= chars for c in ("RSLM", "MSLM", "DMSLM"))   # words of <= 5 characters
    long = tables.word_lengths_long(lengths, "PKU")
    assert len(long) == 5 * 4 and long.ours.sum() == lengths.to_numpy().sum() and set(long.metric) == {"words"}
    ablation = tables.context_ablation(ch, "pku", sents)
    assert (ablation.bpc != ablation.bpc_without_context).all()
    again = tables.context_ablation(ch, "pku", sents)      # the encoder is back after an ablation
    assert again.bpc.tolist() == ablation.bpc.tolist()
    assert set(tables.context_ablation_long(ablation, "PKU").metric) == {
        "bpc", "bpc_without_context", "word_f1", "word_f1_without_context"}


def test_each_selection_takes_the_rate_its_own_criterion_prefers(real_mirror, tmp_path, monkeypatch):
    """The light-supervision protocol: a cell's grid trains at its first seed; the unsupervised selection takes
    the rate of the lowest dev bpc, the lightly supervised one that of the highest dev MCC; Table 2's runs of
    the cell are grid runs at those rates (not trained again). A cell's further seed trains as soon as its own
    grid is stored, before another cell's grid (not alone at the end)."""
    monkeypatch.setenv("HANZILM_PROGRESS", "0")
    ch = dataclasses.replace(configure("smoke"), store=Store(tmp_path), seeds={"*": (0,), "ptb/mslm": (0, 1)},
                             lr_grid={"ptb/rslm": (3e-3, 3e-2), "ptb/mslm": (3e-3, 3e-2)}, workers=1)
    with pytest.raises(ValueError, match="chosen on the dev set"):
        cells(ch)
    assert len(unique_runs(ch)) == len(unique_runs(dataclasses.replace(ch, lr_grid={}))) + 3  # a plan's count
    done, train_one = [], experiment._train_one

    def record(job):
        _, exp, selections = job
        trains = not is_complete(run_dir(ch.store, exp))
        train_one(job)
        done.append((f"{exp.corpus}/{exp.model.encoder}", exp.train.seed, exp.train.lr, trains, selections))

    monkeypatch.setattr(experiment, "_train_one", record)
    grid = experiment.lr_grid(ch)
    trained = [(cell, seed, lr) for cell, seed, lr, trains, _ in done if trains]
    assert len(trained) == len(set(trained)) == 3 + 2 + 2 + 1 + 1          # PKU, two grids, a seed, PTB DMSLM
    assert [cell for cell, *_ in trained][:3] == ["pku/mslm", "pku/dmslm", "pku/rslm"]    # the longest first
    second_seed = trained.index(next(t for t in trained if t[1] == 1))
    assert trained[second_seed][0] == "ptb/mslm"
    assert second_seed < min(i for i, t in enumerate(trained) if t[0] == "ptb/rslm")
    assert all(not trains for *_, trains, _ in done[len(trained):])         # then the grid runs' scoring
    grid = grid[grid.cell == "ptb/rslm"]
    assert list(grid.lr) == [3e-3, 3e-2] and grid["unsupervised"].sum() == grid["lightly supervised"].sum() == 1
    assert grid.loc[grid.unsupervised, "dev_bpc"].item() == grid.dev_bpc.min()
    assert grid.loc[grid["lightly supervised"], "dev_mcc"].item() == grid.dev_mcc.max()
    chosen = experiment.select_learning_rates(ch)
    rates = {c.selection: c.exp.train.lr for c in cells(chosen) if (c.corpus, c.encoder) == ("ptb", "rslm")}
    assert rates == {"unsupervised": grid.lr[grid.unsupervised].item(),
                     "lightly supervised": grid.lr[grid["lightly supervised"]].item()}
    runs = {c.exp for c in cells(chosen) if (c.corpus, c.encoder) == ("ptb", "rslm")}
    assert runs <= set(experiment.grid_runs(chosen))
    n = len(done)
    assert len(experiment.evaluate_all(chosen)) == len(cells(chosen)) and len(done) == n   # all stored, scored
