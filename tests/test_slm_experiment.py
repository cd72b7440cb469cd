"""The segmental-LM chapter's glue: batches by characters, boundary metrics, the experiment factory."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import pytest

from hanzilm.data.readers import read_segmented
from hanzilm.data.resolve import resolve
from hanzilm.data.snlm import TAG_SYMBOLS, cws_normalise, display, load_snlm, to_symbols
from hanzilm.papers.mslm.data import CharBatches, eval_batches, pack
from hanzilm.papers.mslm.experiment import configure, paper_lr, slm_experiment
from hanzilm.papers.mslm.metrics import boundaries, boundary_counts, score_segmentations


def test_boundaries_and_counts():
    assert boundaries(["ab", "c", "def"]) == {2, 3}
    c = boundary_counts([["ab", "c", "def"]], [["a", "bc", "def"]])
    assert (c.tp, c.fp, c.fn, c.tn) == (1, 1, 1, 2)
    assert c.precision == c.recall == 0.5
    assert c.mcc == pytest.approx((1 * 2 - 1 * 1) / math.sqrt(2 * 2 * 3 * 3))
    perfect = score_segmentations([["ab", "c"], ["xyz"]], [["ab", "c"], ["xyz"]]).metrics
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
    ch = configure("paper")
    paper = slm_experiment(ch, "ptb", "rslm")
    assert paper.model.max_seg_len == 10 and paper.model.encoder_dropout == 0.0
    assert paper.train.warmup_steps == 0 and paper.train.steps == 8192 and paper.train.lr == 3e-3
    pku = slm_experiment(ch, "pku", "mslm", seed=3)
    assert pku.model.max_seg_len == 5 and pku.train.warmup_steps == 1024 and pku.train.seed == 3
    assert pku.train.optimizer == "adam" and pku.train.grad_clip == 1.0 and pku.train.schedule == "linear"


def test_cws_normalisation_rules():
    assert cws_normalise("１９９８年") == "<num>年"
    assert cws_normalise("２５．３万") == "<num>万" and cws_normalise("３．６３％") == "<num>"
    assert cws_normalise("１·８万") == "<num><punc><num>万"         # · between digits stays punctuation
    assert cws_normalise("———") == "<punc>" and cws_normalise("（宜）州") == "<punc>宜<punc>州"
    assert cws_normalise("ＣＤ—ＲＯＭ") == "<eng><punc><eng>" and cws_normalise("二○○○年") == "二○○○年"
    assert display(to_symbols("<num>月<punc>")) == "<num>月<punc>" and len(to_symbols("<num>月<punc>")) == 3


def test_cws_normalisation_reproduces_the_snlm_cws_files(real_mirror):
    """Our rules turn va.txt/te.txt into va_cws.txt/te_cws.txt token for token: the stand-in training text is
    normalised exactly as the evaluation text."""
    n = 0
    for split in ("va", "te"):
        raw = read_segmented(resolve("snlm_pku", f"pku/{split}.txt"))
        cws = read_segmented(resolve("snlm_pku", f"pku/{split}_cws.txt"))
        assert [[cws_normalise(w) for w in s] for s in raw] == cws
        n += sum(map(len, raw))
    assert n == 184_111


def test_pku_splits_are_symbol_strings(real_mirror):
    splits = load_snlm("pku")
    assert [len(splits[s]) for s in ("dev", "test")] == [1841, 1790]
    train_symbols = {c for s in splits["train"] for w in s for c in w}
    assert set(TAG_SYMBOLS.values()) <= train_symbols
    assert not train_symbols & set("，。、“”《》：；（）0123456789０１２３４５６７８９ＡＢＣ")
    # sentences are held out in their raw form; after normalisation a few boilerplate lines coincide
    # ("<punc>附图片<num>张<punc>" for other numbers), no more
    held = {"".join(s) for s in splits["dev"] + splits["test"]}
    assert sum("".join(s) in held for s in splits["train"]) < 100


def test_packing_within_pools_has_no_seam_batches():
    # sentence lengths like PKU's (mostly 10-80 characters, a long tail): packed across pools, the batch at
    # each seam mixes one pool's longest sentences with the next one's shortest (on PKU itself: at most 78x
    # padding, 1.87 on average; within pools 2.7 and 1.05)
    rng = np.random.default_rng(0)
    rows = [[5] * n for n in np.minimum(1 + rng.gamma(2.0, 20.0, size=20000).astype(int), 900)]

    def padding(batches):
        return np.array([max(len(rows[i]) for i in b) * len(b) / sum(len(rows[i]) for i in b) for b in batches])
    across = padding(CharBatches(rows, 2048, seed=0)._epoch(0))
    w = CharBatches(rows, 2048, seed=0, within_pools=True)._epoch(0)
    within = padding(w)
    assert sorted(i for b in w for i in b) == list(range(len(rows)))  # every sentence once
    assert across.max() > 10 and within.max() < 3
    assert within.mean() < 1.1 < across.mean()
    assert all(sum(len(rows[i]) for i in b) <= 2048 or len(b) == 1 for b in w)


def test_pool_packing_keys_a_run_only_when_set():
    from hanzilm.papers.mslm.experiment import SLMExperiment
    from hanzilm.store import config_key

    base = SLMExperiment()
    assert config_key(dataclasses.replace(base, pack_within_pools=False)) == config_key(base)
    assert config_key(dataclasses.replace(base, pack_within_pools=True)) != config_key(base)


def test_runs_at_scale_take_their_form_and_word2vec_epochs():
    from hanzilm.papers.mslm.experiment import AtScale, scale_runs
    from hanzilm.papers.mslm.model import FORMS

    ch = configure("paper")
    at = AtScale(cells=("pku/rslm", "pku/mslm"), steps=512, eval_every=64)
    plain = scale_runs(dataclasses.replace(ch, at_scale=at))
    assert all(r.model.input_projection is False and r.w2v_epochs == 32 for r in plain)
    released = scale_runs(dataclasses.replace(ch, at_scale=dataclasses.replace(at, form="released", w2v_epochs=5)))
    assert [(r.model.encoder, r.train.seed) for r in released] == [(r.model.encoder, r.train.seed) for r in plain]
    assert all(all(getattr(r.model, f) == v for f, v in FORMS["released"].items()) and r.w2v_epochs == 5
               for r in released)
    assert released[0].model.encoder_dropout == 0.0 and released[-1].model.encoder_dropout == 0.15
    with pytest.raises(ValueError, match="at_scale.form"):
        dataclasses.replace(ch, at_scale=dataclasses.replace(at, form="theirs"))
