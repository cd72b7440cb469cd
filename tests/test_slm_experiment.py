"""The segmental-LM chapter's glue: batches by characters, boundary metrics, the experiment factory."""

from __future__ import annotations

import math

import pytest

from hanzilm.profiles import get_profile
from hanzilm.slm.data import CharBatches, eval_batches, pack
from hanzilm.slm.experiment import SLMExperiment, paper_lr, slm_experiment
from hanzilm.slm.metrics import boundaries, boundary_counts, segmentation_metrics


def test_boundaries_and_counts():
    assert boundaries(["ab", "c", "def"]) == {2, 3}
    c = boundary_counts([["ab", "c", "def"]], [["a", "bc", "def"]])
    assert (c.tp, c.fp, c.fn, c.tn) == (1, 1, 1, 2)
    assert c.precision == c.recall == 0.5
    assert c.mcc == pytest.approx((1 * 2 - 1 * 1) / math.sqrt(2 * 2 * 3 * 3))
    perfect = segmentation_metrics([["ab", "c"], ["xyz"]], [["ab", "c"], ["xyz"]])
    assert perfect["word_f1"] == 100 and perfect["boundary_mcc"] == 100
    with pytest.raises(ValueError):
        boundary_counts([["ab"]], [["abc"]])


def test_char_batches_are_a_function_of_the_step():
    rows = [[5] * n for n in [3, 9, 1, 4, 7, 2, 8, 5, 6, 3] * 5]
    a, b = CharBatches(rows, 20, seed=1), CharBatches(rows, 20, seed=1)
    seen = [a.indices(s) for s in range(40)]
    assert [b.indices(s) for s in reversed(range(40))][::-1] == seen      # any order of calls
    first_epoch = [i for idx in seen[:a._starts[1]] for i in idx]
    assert sorted(first_epoch) == list(range(len(rows)))                  # each sentence once per epoch
    assert all(sum(len(rows[i]) for i in idx) <= 20 for idx in seen)
    assert CharBatches(rows, 20, seed=2).indices(0) != seen[0] or CharBatches(rows, 20, seed=2).indices(1) != seen[1]
    batch = a(0)
    assert batch["chars"].shape == (len(seen[0]), max(len(rows[i]) for i in seen[0]))


def test_pack_and_eval_batches_cover_everything():
    assert pack([5, 30, 5, 5], [0, 1, 2, 3], 10) == [[0], [1], [2, 3]]
    rows = [[5] * n for n in [4, 1, 7, 3]]
    got = sorted(i for idx, _ in eval_batches(rows, 8) for i in idx)
    assert got == [0, 1, 2, 3]


def test_experiment_factory():
    assert paper_lr("pku", "mslm") == 2e-3 and paper_lr("ptb", "rslm", "light") == 7e-3
    paper = slm_experiment("ptb", "rslm", profile="paper")
    assert paper.model.max_seg_len == 10 and paper.model.encoder_dropout == 0.0
    assert paper.train.warmup_steps == 0 and paper.train.steps == 8192 and paper.train.lr == 3e-3
    pku = slm_experiment("pku", "mslm", profile="paper", seed=3)
    assert pku.model.max_seg_len == 5 and pku.train.warmup_steps == 1024 and pku.train.seed == 3
    assert pku.train.optimizer == "adam" and pku.train.grad_clip == 1.0 and pku.train.schedule == "linear"
    for prof in ("smoke", "cpu"):
        get_profile(prof).configure(SLMExperiment())   # the overrides name real fields
