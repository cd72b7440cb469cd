"""The measured spreads every comparative claim is judged against (`hanzilm.spread`)."""

import math

import numpy as np
import pytest

from hanzilm import spread


def test_the_bootstrap_sd_of_a_mean_is_the_binomial_standard_error():
    correct = np.array([[1.0]] * 60 + [[0.0]] * 140)  # 200 items, accuracy 0.3
    sd = spread.bootstrap_sd(lambda t: t[:, 0] / 200, [correct], resamples=4000)
    assert sd == pytest.approx(math.sqrt(0.3 * 0.7 / 200), rel=0.08)


def test_a_paired_difference_of_the_same_items_does_not_move():
    x = np.random.default_rng(1).integers(0, 5, size=(50, 2)).astype(float)
    assert spread.bootstrap_sd(lambda a, b: a[:, 0] - b[:, 0], [x, x]) == 0.0
    # unpaired (a different draw for each side) it would: pairing is what the claims need
    assert spread.bootstrap_sd(lambda a: a[:, 0], [x]) > 0


def test_the_bootstrap_is_fixed_by_its_seed():
    x = np.arange(30, dtype=float).reshape(-1, 1)
    assert spread.bootstrap_sd(lambda t: t[:, 0], [x]) == spread.bootstrap_sd(lambda t: t[:, 0], [x])
    assert spread.bootstrap_sd(lambda t: t[:, 0], [x], seed=1) != spread.bootstrap_sd(lambda t: t[:, 0], [x])


def test_paired_arrays_must_hold_the_same_items():
    with pytest.raises(ValueError, match="differ in items"):
        spread.bootstrap_sd(lambda a, b: a[:, 0], [np.ones((3, 1)), np.ones((4, 1))])


def test_the_sd_of_the_defined_values_and_their_combination():
    assert spread.sd([1.0, 2.0, 3.0]) == pytest.approx(1.0)
    assert spread.sd([1.0, math.nan, 2.0, 3.0]) == pytest.approx(1.0)   # a resample on which a ratio is undefined
    assert math.isnan(spread.sd([1.0, math.nan]))
    assert spread.combined(3.0, 4.0) == pytest.approx(5.0)
    assert spread.combined(math.nan, 4.0) == pytest.approx(4.0)
    assert math.isnan(spread.combined(math.nan))
    assert spread.source(3, 1944, "test sentences") == (
        "sd over 3 seeds ⊕ bootstrap over 1,944 test sentences (1,000 resamples)")
    assert spread.source(1, 147, "cloze items") == "bootstrap over 147 cloze items (1,000 resamples)"


def test_groups_drawn_apart_are_drawn_again_apart():
    big, single, other = spread.draws_within([3, 1, 4], resamples=50)
    assert (big.sum(axis=1) == 3).all() and (other.sum(axis=1) == 4).all()   # each group keeps its size
    assert (big == spread.draws(3, 50)).all()
    assert (other == spread.draws(4, 50, seed=spread.SEED + 2)).all()       # its own stream, not the first's
    assert single.shape == (50, 1) and np.isnan(single).all()                # one item has no spread
