"""The Backpack chapter contract: the chapter config composed from a profile, the store keys of the trained pair,
training and loading through the chapter's store, and the tables the notebooks write."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from hanzilm import versions
from hanzilm.data.vocab import CharVocab
from hanzilm.errors import HanzilmError
from hanzilm.papers.backpack import bias, experiment, tables
from hanzilm.papers.backpack.backpack import Backpack
from hanzilm.papers.backpack.cloze import ClozeCase, ClozeConfig
from hanzilm.papers.backpack.common import SensesConfig
from hanzilm.papers.backpack.data import SPECIALS, EncodedCorpus, encode_documents
from hanzilm.papers.backpack.experiment import BackpackChapter, LMConfig
from hanzilm.papers.backpack.gpt import GPT, GPTConfig
from hanzilm.store import Store, config_key
from hanzilm.train import TrainConfig


def test_profiles_compose_the_chapter_once():
    smoke = experiment.configure("smoke")
    assert (smoke.lm.n_layer, smoke.lm.n_embd, smoke.lm.train.steps, smoke.lm.train.lr) == (2, 32, 40, 3e-3)
    assert smoke.cloze == ClozeConfig(max_cases=6)
    assert smoke.senses == SensesConfig(frequent_chars=40, words_per_type=6, corpus_contexts=2, professions=6,
                                        generate_chars=8, idioms=3)
    assert smoke.store == Store.of("smoke")
    cpu = experiment.configure("cpu")
    assert (cpu.lm.n_layer, cpu.lm.n_embd, cpu.lm.train.steps) == (4, 128, 1500)
    assert cpu.cloze == ClozeConfig() and cpu.senses == SensesConfig() and cpu.store == Store.of("cpu")
    paper = experiment.configure("paper")
    assert paper == BackpackChapter() and paper.lm.train == experiment.PAPER_TRAIN   # defaults: the paper's
    assert BackpackChapter().store is None
    with pytest.raises(HanzilmError, match="no model store"):
        experiment.run_dir(BackpackChapter(), _corpus(), "gpt")


def test_the_pairs_runs_keep_the_trends_snapshots():
    """Each model's stored run is its member of the pair with the trends page's snapshot steps in its
    TrainConfig, so a run's snapshots are part of its key (no run is stored without the snapshots it needs)."""
    ch = experiment.configure("cpu")
    pair = ch.lm.pair()
    assert list(pair) == ["gpt", "backpack"] and [c.model for c in pair.values()] == ["gpt", "backpack"]
    runs = {m: ch.run(m) for m in pair}
    assert all(r.train.snapshots[-1] == r.train.steps and len(r.train.snapshots) == ch.snapshots for r in runs.values())
    data = {"corpus.txt": "0" * 64}
    assert config_key(runs["gpt"], data, "backpack/v1") != config_key(pair["gpt"], data, "backpack/v1")


def test_each_model_of_the_pair_trains_in_its_own_precision():
    """`bf16_models` moves into the named model's own `train` (so into its store key alone); the other keeps the
    pair's precision and both keep the same seed, steps and batches."""
    lm = LMConfig(bf16_models=("gpt",))
    pair = lm.pair()
    assert pair["gpt"].train.precision == "bf16" and pair["backpack"].train.precision == "fp32"
    assert pair["gpt"].train.seed == pair["backpack"].train.seed and pair["backpack"] == LMConfig().pair()["backpack"]
    assert all(c.bf16_models == () for c in pair.values())
    assert config_key(pair["gpt"], {}, "v") != config_key(LMConfig().pair()["gpt"], {}, "v")
    with pytest.raises(ValueError, match="'gtp'"):
        LMConfig(bf16_models=("gtp",))


def test_the_vocabulary_cut_off_comes_from_the_chapter(monkeypatch):
    seen = []
    monkeypatch.setattr(experiment, "encoded_corpus", lambda split, min_freq: seen.append((split, min_freq)))
    ch = BackpackChapter(lm=LMConfig(min_char_freq=3))
    experiment.load_corpus(ch)
    assert seen == [(ch.split, 3)]


def _corpus() -> EncodedCorpus:
    texts = ["天气很好，我们去沙滩。", "沙滩上有很多人。"] * 12
    vocab = CharVocab.build(texts, specials=SPECIALS)
    ids = encode_documents(texts, vocab)
    return EncodedCorpus(vocab=vocab, splits={"train": ids, "dev": ids[:64], "test": ids[64:128]}, key="k" * 64,
                         data={"corpus.txt": "0" * 64}, directory=Path("."))


def _tiny(store: Store) -> BackpackChapter:
    lm = LMConfig(n_layer=2, n_head=1, n_embd=8, n_senses=2, block_size=8, batch_size=2, dev_tokens=32,
                  test_tokens=32, train=TrainConfig(steps=2, eval_every=2, checkpoint_every=2, log_every=1))
    return BackpackChapter(lm=lm, store=store)


def test_only_the_training_step_trains_and_it_trains_the_run_list(tmp_path, monkeypatch):
    corpus = _corpus()
    ch = _tiny(Store(tmp_path))
    monkeypatch.setattr(experiment, "load_corpus", lambda c: corpus)
    for load in (lambda: experiment.load_trained(ch, "backpack"), lambda: experiment.load_pair(ch)):
        with pytest.raises(HanzilmError, match="training cell"):
            load()
    assert not any(p.name.startswith("LMConfig") for p in tmp_path.iterdir())
    experiment.train_all(ch)
    runs = experiment.runs(ch)
    assert [(r.model, r.scaled_alpha) for r in runs] == [("gpt", False), ("backpack", False), ("backpack", True)]
    assert {p.name for p in tmp_path.iterdir()} == {ch.store.run_dir(r, data=experiment.store_data(corpus),
                                                                      version=versions.key("backpack")).name
                                                     for r in runs}
    threads = torch.get_num_threads()
    try:
        pair = experiment.load_pair(ch)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)
    assert pair.vocab is corpus.vocab and isinstance(pair.backpack, Backpack) and isinstance(pair.gpt, GPT)
    assert not pair.backpack.training
    net, vocab = experiment.load_trained(ch, "backpack")
    assert vocab is corpus.vocab
    assert all(torch.equal(v, net.state_dict()[k]) for k, v in pair.backpack.state_dict().items())
    training = tables.training(ch, corpus).set_index(["arch", "metric"])["ours"]
    assert training["gpt", "steps"] == 2 and training["backpack", "train_tokens_m"] == 2 * 2 * 8 / 1e6


def test_parameters_count_the_profile_pair_like_the_paper_models():
    t = tables.parameters(BackpackChapter(), tables.PAPER_VOCAB, "paper").set_index(["model", "metric"])["ours"]
    assert t["GPT2 (paper)", "params_m"] == t["GPT2-micro", "params_m"]        # the defaults are micro
    assert t["Backpack (paper)", "params_m"] == t["Backpack-micro", "params_m"]
    assert t["Backpack-micro", "transformer_blocks"] == 5 and t["GPT2-small", "transformer_blocks"] == 12


def _evaluation(ranks: dict[str, list[int]], ppl: dict[str, float]) -> experiment.Evaluation:
    cases = [ClozeCase(doc=i, context="前文" * 20, word="沙滩", ending="。") for i in range(len(ranks["gpt"]))]
    cloze = {}
    for name, rs in ranks.items():
        rows = [{"doc": i, "word": "沙滩", "best": "沙滩" if r == 0 else "海边", "rank": r} for i, r in enumerate(rs)]
        cloze[name] = ({"top1": np.mean([r == 0 for r in rs]), "top3": np.mean([0 <= r < 3 for r in rs]),
                        "cases": len(rs)}, rows)
    return experiment.Evaluation(cases=cases, perplexity={n: {"ppl": p, "tokens": 100} for n, p in ppl.items()},
                                 cloze=cloze)


def test_table1_long_form_paired_test_and_reading():
    ev = _evaluation({"gpt": [-1, -1, 1, 0, 5], "backpack": [0, 0, 0, 0, 2]}, {"gpt": 20.0, "backpack": 20.5})
    t1 = tables.table1(BackpackChapter(), tables.PAPER_VOCAB, ev, "paper")
    assert list(t1.columns) == ["model", "arch", "paper_model", "metric", "ours"]
    assert t1.metric.tolist() == ["params_m", "test_ppl", "cloze_top1", "cloze_top3"] * 2
    v = t1.set_index(["arch", "metric"])["ours"]
    assert v["backpack", "cloze_top1"] == 0.8 and v["gpt", "cloze_top3"] == 0.4
    from hanzilm.results import with_paper

    text = tables.table1_reading(with_paper(t1, tables.paper_table1()))
    assert "Backpack 20.50, GPT-2 20.00, a ratio of 1.025 (the paper's micro pair: 16.25 and 16.66, 0.975)" in text
    assert "Cloze top-1: Backpack 80.00%, GPT-2 20.00%, a difference of +60.0 points" in text
    paired = tables.paired_cloze_table(ev).set_index("k")
    assert paired.loc[1, "only_backpack"] == 3 and paired.loc[1, "only_gpt"] == 0
    assert paired.loc[1, "p_value"] == pytest.approx(2 / 8)        # exact sign test: 2 * (1/2)^3
    assert paired.loc[3, "only_backpack"] == 3 and paired.loc[3, "only_gpt"] == 0
    examples = tables.cloze_examples(ev)
    assert examples["backpack rank"].tolist() == [0, 0, 0, 0, 2] and examples["gpt best"].iloc[3] == "沙滩"


def test_table5_lines_up_with_the_paper_rows():
    words = [(w, c, bias.PAPER_CHARACTER) for c, w in bias.BIAS_WORDS] + [("护士", "护士", bias.ALL_CHARACTERS)]
    wide = pd.DataFrame([{"word": w, "edit": scope, "characters": c, "corpus_count": 10,
                          **{m: float(i + j) for j, m in enumerate(bias.METRICS)}}
                         for i, (w, c, scope) in enumerate(words)])
    wide.loc[4, "remove_sense"] = 0.5           # the one wider word: removing the sense lowers its ratio
    long = bias.table5(wide, sense=3)
    assert len(long) == 5 * len(words) and (long.sense == 3).all()
    merged = long.merge(bias.paper_table5(), on=["word", "edit", "metric"], how="left")
    assert merged.paper.notna().sum() == 4 * 5                      # every paper number has its row
    assert merged[merged.edit == bias.ALL_CHARACTERS].paper.isna().all()
    text = bias.table5_reading(wide, sense=3)
    assert "- 士兵: GPT-2 0.00, projected 1.00; Backpack 2.00, sense 3 halved 3.00, removed 4.00 (not lower" in text
    assert "Wider list (1 words, sense 3 removed from every character): the bias ratio drops for 1" in text



def test_table1_spread_is_paired_over_windows_and_cases():
    ev = _evaluation({"gpt": [0, 1, 5, 0] * 10, "backpack": [0, 1, 5, 0] * 10}, {"gpt": 20.0, "backpack": 20.0})
    windows = np.array([[100.0 + i, 50] for i in range(30)])
    ev.perplexity["gpt"]["windows"] = windows
    ev.perplexity["backpack"]["windows"] = windows + [[5.0, 0]]
    sd = tables.table1_spread(ev).set_index("quantity")
    assert list(sd.index) == ["t1.micro_ppl", "t1.cloze_top1", "t1.cloze_top3"]
    # the same answers case by case: the paired difference never moves, whatever cases are drawn
    assert sd.loc["t1.cloze_top1", "ours"] == 0 and sd.loc["t1.cloze_top3", "ours"] == 0
    assert 0 < sd.loc["t1.micro_ppl", "ours"] < 0.01
    assert sd.loc["t1.cloze_top1", "source"] == "bootstrap over 40 cloze cases (1,000 resamples)"
    other = _evaluation({"gpt": [0, -1] * 20, "backpack": [-1, 0] * 20}, {"gpt": 20.0, "backpack": 20.0})
    for m in ("gpt", "backpack"):
        other.perplexity[m]["windows"] = windows
    # each case changes sides: the difference of two accuracies of 1/2 moves by about 2 * sqrt(1/4 / 40)
    assert tables.table1_spread(other).set_index("quantity").loc["t1.cloze_top1", "ours"] == pytest.approx(
        2 * math.sqrt(0.25 / 40), rel=0.15)


def test_pearson_from_summed_pairs_is_pearson():
    from scipy import stats

    from hanzilm.papers.backpack import similarity

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=50), rng.normal(size=50)
    totals = similarity.pearson_sums(x, y).sum(0, keepdims=True)
    assert similarity.pearson_of_totals(totals)[0] == pytest.approx(stats.pearsonr(x, y).statistic)


def test_perplexity_windows_sum_to_its_total():
    from hanzilm.papers.backpack.perplexity import perplexity

    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=20, block_size=8, n_layer=1, n_head=1, n_embd=8))
    tokens = np.random.default_rng(0).integers(0, 20, size=50)
    r = perplexity(model, tokens, block_size=8, batch_size=4, windows=True)
    assert r["windows"].shape == (7, 2) and r["windows"][:, 1].sum() == r["tokens"] == 49
    assert r["windows"][:, 0].sum() / r["tokens"] == pytest.approx(r["nll"], rel=1e-6)
    assert "windows" not in perplexity(model, tokens, block_size=8, batch_size=4)
