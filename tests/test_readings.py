"""The numbers the chapters' readings glue into their prose (`*_numbers`, `paper_at_our_lr`, ...)."""

import dataclasses

import pandas as pd
import pytest
import torch

from hanzilm.papers.backpack import tables as backpack_tables
from hanzilm.papers.backpack.backpack import Backpack, BackpackConfig
from hanzilm.papers.backpack.gpt import GPTConfig
from hanzilm.papers.mmtnn import experiment as mmtnn_ex
from hanzilm.papers.mmtnn import tables as mmtnn_tables
from hanzilm.papers.mslm import experiment as mslm_experiment
from hanzilm.papers.mslm import tables as mslm_tables
from hanzilm.profiles import get_profile


def test_sense_budget_count_is_the_model_with_a_single_d_to_kd_map():
    cfg = BackpackConfig.matching(GPTConfig(vocab_size=50, block_size=16, n_layer=3, n_head=2, n_embd=32), 4)
    model = Backpack(cfg)
    d, k = cfg.n_embd, cfg.n_senses
    model.sense_network.ff_2 = torch.nn.Linear(d, k * d, bias=cfg.bias)  # the budget of Appendix A.2
    positions = sum(p.numel() for name, p in model.named_parameters() if "wpe" in name)
    assert positions > 0
    counted = sum(p.numel() for p in model.parameters()) - positions
    assert backpack_tables.budget_params_m(cfg) * 1e6 == pytest.approx(counted)


def test_parameter_numbers_compare_with_the_paper():
    params = backpack_tables.parameter_rows(backpack_tables.paper_configs()).merge(
        pd.DataFrame({"model": ["GPT2-micro", "Backpack-micro", "GPT2-small", "Backpack-small"],
                      "metric": "params_m", "paper": [18, 27, 104, 134]}), how="left")
    numbers = backpack_tables.parameter_numbers(params)
    ours = params[params.metric == "params_m"].set_index("model").ours
    assert numbers["backpack_micro_m"] == ours["Backpack-micro"] and numbers["paper_backpack_small_m"] == 134
    assert numbers["gpt2_small_vs_paper_pct"] == pytest.approx(100 * (ours["GPT2-small"] / 104 - 1))
    assert numbers["backpack_micro_budget_m"] < 27 < numbers["backpack_micro_m"]  # the page's argument


def _table2(**ours_lr) -> pd.DataFrame:
    rows = []
    for dataset in ("PKU", "PTB"):
        for selection in ("unsupervised", "lightly supervised"):
            for model, f1, bpc, paper_f1, paper_bpc in (("RSLM", 30.0, 8.1, 58.7, 5.6),
                                                        ("MSLM", 69.0, 8.0, 64.1, 5.5),
                                                        ("DMSLM", 62.0, 8.05, 63.4, 5.7)):
                rows += [{"dataset": dataset, "selection": selection, "model": model, "metric": "f1_median",
                          "ours": f1, "paper": paper_f1 + (selection != "unsupervised")},
                         {"dataset": dataset, "selection": selection, "model": model, "metric": "bpc_median",
                          "ours": bpc, "paper": paper_bpc},
                         {"dataset": dataset, "selection": selection, "model": model, "metric": "f1_mean",
                          "ours": f1 - 0.5, "paper": float("nan")},
                         {"dataset": dataset, "selection": selection, "model": model, "metric": "f1_sd",
                          "ours": 2.0, "paper": float("nan")},
                         {"dataset": dataset, "selection": selection, "model": model, "metric": "n_seeds",
                          "ours": 3, "paper": float("nan")},
                         {"dataset": dataset, "selection": selection, "model": model, "metric": "lr",
                          "ours": ours_lr.get(model, 1e-3), "paper": float("nan")},
                         {"dataset": dataset, "selection": selection, "model": model, "metric": "train_chars",
                          "ours": 819200, "paper": float("nan")}]
    return pd.DataFrame(rows)


def test_table2_numbers():
    agreement = pd.DataFrame({"dataset": ["PKU", "PTB"], "runs": [7, 3], "same_checkpoint": [7, 1],
                              "same_and_last": [7, 1], "other_rate": [0, 1]})
    n = mslm_tables.table2_numbers(_table2(), agreement)
    assert n["pku_rslm_shortfall"] == pytest.approx(28.7)
    assert n["pku_rslm_train_chars_m"] == pytest.approx(0.8192) and n["ptb_other_rate"] == 1
    assert n["pku_mslm_rslm_gap_unsup"] == pytest.approx(39.0)
    assert n["paper_pku_mslm_rslm_gap_light"] == pytest.approx(5.4)
    assert n["ptb_rslm_bpc_lead_unsup"] == pytest.approx(-0.1)  # the RSLM is not the lowest here
    assert n["paper_ptb_rslm_bpc_lead_unsup"] == pytest.approx(-0.1)
    assert n["ptb_f1_gap_max"] == pytest.approx(29.7)
    assert n["ptb_bpc_excess_max_pct"] == pytest.approx(100 * (8.0 / 5.5 - 1))  # the MSLM's
    assert (n["pku_same_and_last"], n["ptb_other_checkpoint"], n["ptb_runs"]) == (7, 2, 3)


def test_the_selection_reading_says_where_light_supervision_is_a_second_selection():
    agreement = pd.DataFrame({"dataset": ["PKU", "PTB"], "runs": [7, 3], "same_checkpoint": [7, 1],
                              "same_and_last": [7, 1], "other_rate": [0, 1]})
    table = _table2()
    light = (table.dataset == "PTB") & (table.selection == "lightly supervised") & (table.metric == "f1_median")
    table.loc[light & (table.model == "MSLM"), "ours"] += 2.5
    pku, ptb = mslm_tables.selection_reading(agreement, table).split("\n\n")
    assert pku.startswith("**PKU**: in 7 of 7 runs") and pku.endswith("not tested on this corpus at this profile.")
    assert "in the other 2 the dev MCC chose another checkpoint (1 of the same run, 1 at another rate)" in ptb
    assert "RSLM +0.0 (paper +1.0), MSLM +2.5 (paper +1.0), DMSLM +0.0 (paper +1.0)." in ptb


def test_the_selections_compare_rate_and_checkpoint():
    """Two selections at the same step of runs at different rates are different checkpoints."""
    ch = dataclasses.replace(mslm_experiment.configure("smoke"), seeds={"*": (0,)}, lr_grid={})
    rows = []
    for c in ("pku", "ptb"):
        for m in ("RSLM", "MSLM", "DMSLM"):
            for sel, lr in (("unsupervised", 1e-3), ("lightly supervised", 2e-3 if (c, m) == ("pku", "MSLM")
                                                                           else 1e-3)):
                rows.append({"dataset": c.upper(), "model": m, "seed": 0, "selection": sel, "lr": lr,
                             "selected_step": 30})
    agreement = mslm_tables.selection_agreement(ch, pd.DataFrame(rows)).set_index("dataset")
    assert agreement.loc["PKU"].tolist() == [3, 2, 2, 1] and agreement.loc["PTB"].tolist() == [3, 3, 3, 0]


def test_grid_edges_names_the_choices_at_the_grid_edge():
    rows = [{"cell": c, "lr": lr, "chosen_by": by, "metric": "dev_bpc", "ours": 8.0}
            for c, lr, by in (("pku/mslm", 1e-3, "-"), ("pku/mslm", 2e-3, "unsupervised + lightly supervised"),
                              ("ptb/rslm", 1e-3, "unsupervised"), ("ptb/rslm", 2e-3, "-"),
                              ("ptb/rslm", 4e-3, "lightly supervised"),
                              ("ptb/mslm", 1e-3, "-"), ("ptb/mslm", 2e-3, "unsupervised + lightly supervised"),
                              ("ptb/mslm", 4e-3, "-"))]
    text = mslm_tables.grid_edges(pd.DataFrame(rows))
    assert text == ("Chosen at the edge of the grid, so a rate beyond it may be better still: pku/mslm "
                    "(unsupervised + lightly supervised: 0.002, the largest); ptb/rslm (unsupervised: 0.001, the "
                    "smallest); ptb/rslm (lightly supervised: 0.004, the largest).")
    inside = pd.DataFrame([r for r in rows if r["cell"] == "ptb/mslm"])
    assert mslm_tables.grid_edges(inside) == ""


def test_the_paper_at_our_learning_rate():
    text_cells = mslm_tables.paper_text_cells()
    assert set(text_cells.metric) == {"f1_median", "f1_mean", "f1_sd", "n_seeds"}  # the paper text's row only
    line = mslm_tables.paper_at_our_lr(_table2(), text_cells)
    assert line.startswith("- PKU unsupervised MSLM at lr 1e-3, our rate: the paper's text gives median word F1 "
                           "70.4 (mean 69.4 ± 2.0, 5 seeds); ours 69.0 (mean 68.5 ± 2.0, 3 seeds)")
    assert line.endswith("its run at lr 2e-3: median 64.1.")
    assert "no Table 2 cell" in mslm_tables.paper_at_our_lr(_table2(MSLM=3e-3), text_cells)
    assert [mslm_tables._rate(r) for r in (1e-3, 6e-4, 3e-3)] == ["1e-3", "6e-4", "3e-3"]


def test_selection_agreement_counts_the_same_and_the_last_checkpoint():
    ch = dataclasses.replace(mslm_experiment.configure(get_profile("smoke")), lr_grid={})
    rows = []
    for c in mslm_experiment.cells(ch):
        steps = c.exp.train.steps
        step = {"unsupervised": steps, "lightly supervised": steps if c.corpus == "pku" else steps - 10}[c.selection]
        rows.append({"dataset": c.corpus.upper(), "model": c.encoder.upper(), "seed": c.seed,
                     "selection": c.selection, "selected_step": step, "lr": c.exp.train.lr})
    agreement = mslm_tables.selection_agreement(ch, pd.DataFrame(rows)).set_index("dataset")
    pku = agreement.loc["PKU"]
    assert pku["same_checkpoint"] == pku["same_and_last"] == pku["runs"]
    assert agreement.loc["PTB", "same_checkpoint"] == 0 and agreement.loc["PTB", "runs"] == 3


def test_selection_agreement_counts_only_seeds_with_both_selections():
    """At cpu the lightly supervised rows have one seed: the unsupervised rows' further seeds are no pair."""
    ch = dataclasses.replace(mslm_experiment.configure(get_profile("smoke")), lr_grid={})
    rows = [{"dataset": "PKU", "model": m, "seed": seed, "selection": sel, "selected_step": 10, "lr": 1e-3}
            for m in ("RSLM", "MSLM", "DMSLM") for seed in (0, 1, 2)
            for sel in (("unsupervised", "lightly supervised") if seed == 0 else ("unsupervised",))]
    agreement = mslm_tables.selection_agreement(ch, pd.DataFrame(rows)).set_index("dataset")
    assert agreement.loc["PKU"].tolist() == [3, 3, 0, 0]


def _mmtnn_long(values: dict, datasets=("PKU",), metrics=("f1",), paper: dict | None = None) -> pd.DataFrame:
    return pd.DataFrame([{"dataset": d, "model": m, "metric": metric, "ours": v + 10 * (metric == "oov_recall"),
                          "paper": (paper or {}).get(m, float("nan"))}
                         for d in datasets for m, v in values.items() for metric in metrics])


def test_table3_numbers():
    labels = mmtnn_tables.LABELS
    table = _mmtnn_long({labels["crf"]: 86.0, labels["nn"]: 90.0, labels["nn_tag"]: 90.6, labels["mmtnn"]: 93.5},
                        metrics=("precision", "recall", "f1", "oov_recall"),
                        paper={labels["nn"]: 92.3, labels["nn_tag"]: 92.9, labels["mmtnn"]: 93.5})
    curves = pd.DataFrame([{"model": labels[m], "epoch": e, "dev_f1": 80 + e * (m != "mmtnn") + 5 * (m == "mmtnn")}
                           for m in ("nn", "nn_tag", "mmtnn") for e in (1, 2, 3, 4)])
    ch = dataclasses.replace(mmtnn_ex.configure("smoke"), lrs={"nn": 0.2})
    n = mmtnn_tables.table3_numbers(table, curves[(curves.model != labels["nn"]) | (curves.epoch < 4)], ch)
    assert (n["nn_epochs"], n["mmtnn_epochs"]) == (3, 4)
    assert n["nn_best_epoch"] == 3 and n["nn_lr"] == 0.2 and n["mmtnn_lr"] == ch.segmenter.lr
    assert n["tag_step_f1"] == pytest.approx(0.6) and n["paper_tensor_step_f1"] == pytest.approx(0.6)
    assert n["tensor_step_oov_recall"] == pytest.approx(2.9) and n["paper_nn_f1"] == pytest.approx(92.3)
    assert not any(isinstance(v, str) for v in n.values())  # numbers only: the verdicts are the registry's


def test_table5_numbers():
    t = mmtnn_tables.TABLE5
    table = _mmtnn_long({t[("nn", False)]: 90.0, t[("mmtnn", False)]: 93.5, t[("nn", True)]: 90.2,
                         t[("mmtnn", True)]: 93.5}, datasets=("PKU", "MSR"),
                        paper={t[("nn", False)]: 92.4, t[("mmtnn", False)]: 93.5, t[("nn", True)]: 92.8,
                               t[("mmtnn", True)]: 94.0})
    n = mmtnn_tables.table5_numbers(table)
    assert n["pku_mmtnn_lead"] == pytest.approx(3.5) and n["paper_pku_mmtnn_lead"] == pytest.approx(1.1)
    assert n["msr_nn_pretraining_gain"] == pytest.approx(0.2)
    assert n["paper_pku_mmtnn_pretraining_gain"] == pytest.approx(0.5)
    assert n["pku_mmtnn_pre_gap"] == pytest.approx(0.5)


def test_table4_counts_the_neighbours_of_the_querys_class():
    rows = [{"embedding": e, "class": kind, "query": q, "rank": r, "neighbour": c, "metric": "euclidean_distance",
             "ours": 1.0}
            for e in ("MMTNN lookup table", "word2vec (pre-training)")
            for kind, q, chars in (("number", "五", "八３的了百"), ("family name", "王", "张李的天了"),
                                   ("punctuation", "，", "；。的、他"))
            for r, c in enumerate(chars, start=1)]
    n = mmtnn_tables.class_shares(pd.DataFrame(rows))
    assert (n["lookup_number"], n["lookup_family_name"], n["lookup_punctuation"]) == (3, 2, 3)
    assert n["word2vec_number_of"] == 5 and n["word2vec_family_name_chars"] == "张李的天了"
