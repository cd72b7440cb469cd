"""Sense analyses of the Backpack chapter part 2 on tiny random models: Eq. 8-10, amplification, debiasing,
similarity, projections, idiom contributions and the lexicon readers."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from hanzilm.data import lexicon
from hanzilm.data.readers import CedictEntry
from hanzilm.data.vocab import CharVocab
from hanzilm.errors import DataError
from hanzilm.papers.backpack.data import SPECIALS
from hanzilm.papers.backpack.backpack import Backpack, BackpackConfig
from hanzilm.papers.backpack.gpt import GPT, GPTConfig
from hanzilm.papers.backpack import amplify, bias, composition, idioms, projection, similarity
from hanzilm.papers.backpack import prompts as paper
from hanzilm.papers.backpack.common import encode

TEXT = "他她士兵警察演员教师沙滩理想天进自上有很多人撒粒海晒画蛇添足大学手机，。"
VOCAB = CharVocab.build([TEXT], specials=SPECIALS)
V = len(VOCAB)


def _backpack(seed=0, k=4):
    torch.manual_seed(seed)
    return Backpack(BackpackConfig(vocab_size=V, block_size=32, n_layer=1, n_head=2, n_embd=16, n_senses=k)).eval()


def _gpt(seed=0):
    torch.manual_seed(seed)
    return GPT(GPTConfig(vocab_size=V, block_size=32, n_layer=1, n_head=2, n_embd=16)).eval()


# --- Eq. 8-10 ------------------------------------------------------------------------------------------------
def test_lambdas_match_eq9_by_hand():
    torch.manual_seed(1)
    alpha = torch.rand(2, 6, 6).tril()
    lam = composition.lambdas_from_alpha(alpha, [2, 3], end=6)
    for l in range(2):
        rows = range(3, 6)
        want = [np.mean([alpha[l, i, j].item() / (alpha[l, i, 2] + alpha[l, i, 3]).item() for i in rows])
                for j in (2, 3)]
        assert lam[l].tolist() == pytest.approx(want, rel=1e-6)
    assert torch.allclose(lam.sum(-1), torch.ones(2))
    # a shorter context uses fewer rows
    assert not torch.allclose(composition.lambdas_from_alpha(alpha, [2, 3], end=4), lam)


def test_word_lambdas_batched_equals_one_by_one():
    m = _backpack()
    ctxs = composition.prompt_contexts("沙滩", paper.NOUN_PROMPTS)
    batched = composition.word_lambdas(m, VOCAB, "沙滩", ctxs)
    assert batched.shape == (len(ctxs), 4, 2)
    for q, c in enumerate(ctxs):
        assert torch.allclose(composition.word_lambdas(m, VOCAB, "沙滩", [c])[0], batched[q], atol=1e-6)


def test_variation_buckets_and_eq10():
    lams = torch.tensor([[[0.5, 0.5], [0.9, 0.1]], [[0.5, 0.5], [0.6, 0.4]]])   # (q=2, k=2, p=2)
    v = composition.variation(lams)
    assert v.tolist() == pytest.approx([0.0, 0.15])
    assert composition.bucket_counts(v) == {"within_10pct": 1, "within_20pct": 1, "beyond_20pct": 0, "undefined": 0}
    assert composition.bucket(0.2000001) == "beyond_20pct"
    m = _backpack(k=2)
    w = composition.word_vector(m, VOCAB, "沙滩", lams)
    C = m.senses(torch.tensor(VOCAB.encode("沙滩")))
    assert torch.allclose(w[1], 0.75 * C[0, 1] + 0.25 * C[1, 1], atol=1e-6)


def test_corpus_contexts_and_draw_words():
    corpus = composition.CorpusText(["我们去沙滩玩。", "沙滩上有很多人，沙滩很大", "没有"])
    assert corpus.count("沙滩") == 3
    ctx = corpus.contexts("沙滩", 2, before=3, after=2, rng=np.random.default_rng(0))
    assert len(ctx) == 2 and all(c.text[c.start:c.start + 2] == "沙滩" and "\n" not in c.text for c in ctx)
    words = composition.draw_words(list("abcdefgh"), 3, lambda w: w != "c", seed=0)
    assert len(words) == 3 and "c" not in words
    assert words == composition.draw_words(list("abcdefgh"), 3, lambda w: w != "c", seed=0)


# --- amplification ---------------------------------------------------------------------------------------------
def test_amplify_keeps_each_senses_total_and_scales_the_share():
    m = _backpack()
    ids = torch.tensor([encode(VOCAB, "沙滩上有很多")])
    alpha = m.alpha(ids)
    amp = amplify.amplify_alpha(alpha, [1, 2], [4.0, 1.0])
    assert torch.allclose(amp.sum(-1), torch.ones_like(amp.sum(-1)))       # rows still sum to 1
    assert torch.allclose(amp[..., 3:], alpha[..., 3:])                  # other positions untouched
    i = 4
    before = alpha[0, :, i, 1] / alpha[0, :, i, 2]
    after = amp[0, :, i, 1] / amp[0, :, i, 2]
    assert torch.allclose(after, 4 * before, rtol=1e-5)
    assert torch.allclose(amp[..., :2, :], alpha[..., :2, :])            # rows before the 2nd character
    same = amplify.next_logits(m, ids, [1, 2], [1.0, 1.0])
    assert torch.allclose(same, m(ids)[0, -1], atol=1e-5)


def test_target_ratios_and_greedy():
    m = _backpack()
    t = amplify.target_ratios(m, VOCAB, "沙滩", ["WORD上有很多"], ["撒", "海"], [(1, 1), (4, 1)])
    assert t[t.multipliers == "1,1"].ratio.tolist() == pytest.approx([1.0, 1.0])
    assert (t[t.multipliers == "4,1"].ratio != 1).all()
    text = amplify.greedy(m, VOCAB, "沙滩", (4, 1), 5)
    assert text.startswith("沙滩") and len(text) == 7 and "<" not in text


# --- bias ------------------------------------------------------------------------------------------------------
def test_ratio_from_logits():
    logits = torch.tensor([0.0, math.log(3.0), 0.0])
    assert bias.ratio_from_logits(logits, 1, 0).item() == pytest.approx(3.0)
    assert bias.ratio_from_logits(logits, 0, 1).item() == pytest.approx(3.0)


def test_backpack_sense_removal_changes_only_edited_prompts():
    m = _backpack()
    prompts = paper.BIAS_PROMPTS
    base = bias.backpack_bias(m, VOCAB, "士兵", prompts)
    assert (base >= 1).all() and len(base) == len(prompts)
    removed = bias.backpack_bias(m, VOCAB, "士兵", prompts, edit="兵", sense=1, scale=0.0)
    assert not np.allclose(removed, base)
    untouched = bias.backpack_bias(m, VOCAB, "士兵", prompts, edit="天", sense=1, scale=0.0)
    assert np.allclose(untouched, base)
    # removing by hand: sense 1 of 兵 zeroed in the senses gives the same logits
    ids = torch.tensor([encode(VOCAB, paper.fill(prompts[0], "士兵"))])
    scale = torch.ones(ids.shape[1], 4)
    scale[4, 1] = 0  # <doc> 那 个 士 兵
    logits = m(ids, sense_scale=scale)[0, -1]
    assert bias.ratio_from_logits(logits, VOCAB.stoi["他"], VOCAB.stoi["她"]).item() == pytest.approx(removed[0])


def test_gender_sense_scores_pick_the_sense_where_he_and_she_differ():
    m = _backpack()
    s = bias.gender_sense_scores(m, VOCAB)
    assert s.shape == (4,) and (s >= 0).all()
    with torch.no_grad():  # make he and she identical: every score 0
        m.wte.weight[VOCAB.stoi["她"]] = m.wte.weight[VOCAB.stoi["他"]]
    assert torch.allclose(bias.gender_sense_scores(m, VOCAB), torch.zeros(4))
    assert bias.gender_projection(m, VOCAB, "士兵").shape == (2, 4)


def test_nullspace_projection_and_gpt_bias():
    d = torch.tensor([1.0, 2.0, 2.0])
    x = torch.tensor([[3.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
    y = bias.nullspace_project(x, d)
    assert torch.allclose(y @ d, torch.zeros(2), atol=1e-6)
    assert torch.allclose(bias.nullspace_project(y, d), y)
    g = _gpt()
    base = bias.gpt_bias(g, VOCAB, "士兵", paper.BIAS_PROMPTS)
    ids = torch.tensor([encode(VOCAB, paper.fill(paper.BIAS_PROMPTS[0], "士兵"))])
    assert base[0] == pytest.approx(bias.ratio_from_logits(g(ids)[0, -1], VOCAB.stoi["他"], VOCAB.stoi["她"]).item())
    proj = bias.gpt_bias(g, VOCAB, "士兵", paper.BIAS_PROMPTS, edit="兵", project=True)
    assert not np.allclose(proj, base)
    # projecting a character with no component along he - she changes nothing
    with torch.no_grad():
        E = g.wte.weight
        E[VOCAB.stoi["兵"]] = bias.nullspace_project(E[VOCAB.stoi["兵"]], E[VOCAB.stoi["他"]] - E[VOCAB.stoi["她"]])
    assert np.allclose(bias.gpt_bias(g, VOCAB, "士兵", paper.BIAS_PROMPTS, edit="兵", project=True),
                       bias.gpt_bias(g, VOCAB, "士兵", paper.BIAS_PROMPTS), rtol=1e-5)


# --- similarity --------------------------------------------------------------------------------------------------
def test_correlations_per_sense_and_coverage():
    m = _backpack()
    pairs = [("大学", "手机", 1.0), ("沙滩", "海", 8.0), ("天", "自", 3.0), ("画蛇", "添足", 5.0),
             ("理想", "士兵", 2.0), ("沙滩", "火星", 4.0)]                  # 火星: out of the vocabulary
    per_sense = similarity.backpack_word_senses(m, VOCAB)
    t = similarity.correlations(pairs, per_sense, VOCAB)
    assert len(t) == 4 and (t.pairs == 5).all() and t.coverage.iloc[0] == pytest.approx(5 / 6)
    assert t.spearman.between(-1, 1).all() and t.pearson.between(-1, 1).all()
    concat = similarity.correlations(pairs, similarity.all_senses(per_sense, "concat"), VOCAB)
    emb = similarity.correlations(pairs, similarity.embedding_word_vector(m, VOCAB), VOCAB)
    assert len(concat) == 1 and len(emb) == 1
    # identical representations of both words in a pair -> cosine 1; scores follow it exactly
    same = similarity.correlations([("天", "天", 3.0), ("天", "自", 1.0), ("天", "进", 2.0)], per_sense, VOCAB)
    assert same.spearman.notna().all()


# --- projections ----------------------------------------------------------------------------------------------------
def test_top_characters_and_composition_rate():
    m = _backpack()
    d = lexicon.Dictionary({"沙滩": [CedictEntry("沙灘", "沙滩", "sha1 tan1", ("beach", "sandy shore"))],
                            "滩": [CedictEntry("灘", "滩", "tan1", ("beach",))]})
    t = projection.top_characters(m, VOCAB, "沙", top=V - 2, dictionary=d)
    assert len(t) == 4 * (V - 2) and not t["top"].str.contains("<").any()
    row = t[(t.sense == 0) & (t["top"] == "(沙)滩")]
    assert len(row) == 1 and row.gloss.iloc[0] == "beach; sandy shore"
    proj = projection.sense_projection(m, torch.tensor([VOCAB.stoi["沙"]]))[0]
    s0 = t[t.sense == 0]
    assert s0.score.is_monotonic_decreasing and s0.score.iloc[0] == pytest.approx(
        proj[0, [i for i in range(V) if VOCAB.itos[i] not in VOCAB.specials]].max().item())
    rate = projection.composition_rate(m, VOCAB, ["沙", "天"], d, top=V - 2)
    assert rate.shape == (4, 2) and np.allclose(rate[:, 0], 1 / (V - 2)) and np.allclose(rate[:, 1], 0)
    cols = projection.sense_columns(t[t["rank"] < 3], senses=[0, 2])
    assert list(cols.columns) == [0, 2] and len(cols) == 3


def test_the_command_lines_numpy_senses_are_the_models(tmp_path):
    """`hanzilm senses` reads a stored Backpack in NumPy (no torch import): the same top characters and scores
    as the torch model's projection, for a plain and a scaled-alpha Backpack; a vocabulary of another model or
    non-finite weights are refused."""
    import dataclasses

    from safetensors.torch import save_model

    from hanzilm.papers.backpack.sense_reader import VOCAB as VOCAB_FILE, SenseReader

    for scaled in (False, True):
        torch.manual_seed(1)
        m = Backpack(dataclasses.replace(_backpack().config, scaled_alpha=scaled, bias=not scaled)).eval()
        run = tmp_path / f"run{scaled}"
        run.mkdir()
        save_model(m, str(run / "best.safetensors"))
        VOCAB.save(run / VOCAB_FILE)
        top = SenseReader.load(run).top("沙", 5)
        t = projection.top_characters(m, VOCAB, "沙", top=5)
        assert [[c for c, _ in sense] for sense in top] == [list(g["top"]) for _, g in t.groupby("sense")]
        assert np.allclose([s for sense in top for _, s in sense], t.score, atol=1e-4)
    CharVocab.build([TEXT[:-3]], specials=SPECIALS).save(run / VOCAB_FILE)
    with pytest.raises(DataError, match="not one model's"):
        SenseReader.load(run)
    VOCAB.save(run / VOCAB_FILE)
    with torch.no_grad():
        m.wte.weight[0, 0] = float("nan")
    save_model(m, str(run / "best.safetensors"))
    with pytest.raises(DataError, match="NaN"):
        SenseReader.load(run)
    (run / VOCAB_FILE).unlink()
    with pytest.raises(DataError, match="train it again"):
        SenseReader.load(run)


def test_cedict_reads_only_the_words_asked_for():
    whole = lexicon.cedict()
    few = lexicon.cedict(frozenset({"沙滩", "天", "不是一个词"}))
    assert set(few.entries) == {"沙滩", "天"} and few.entries["天"] == whole.entries["天"]


# --- Appendix B --------------------------------------------------------------------------------------------------
def test_idiom_contributions_sum_to_the_logit():
    m = _backpack()
    summary, table = idioms.idiom_senses(m, VOCAB, "画蛇添足")
    ids = torch.tensor([encode(VOCAB, "画蛇添")])
    logits = m(ids)[0, -1]
    assert summary["p_target"] == pytest.approx(logits.softmax(-1)[VOCAB.stoi["足"]].item(), rel=1e-5)
    assert table.contribution.sum() == pytest.approx(logits[VOCAB.stoi["足"]].item(), abs=1e-5)  # Eq. 4
    assert len(table) == 4 and {"proj_1", "proj_rank_3", "rank_alone"} <= set(table.columns)


def test_the_appendix_table_gives_the_median_rank_over_every_idiom():
    """Appendix B's scale gate reads it: whether the model completes idioms at all."""
    results = idioms.analyse(_backpack(), VOCAB, ["画蛇添足", "沙滩理想", "很多人海"])
    long = idioms.appendix_table(results).set_index(["idiom", "metric"]).ours
    ranks = sorted(long[(w, "rank")] for w in results)
    assert long[(idioms.ALL_IDIOMS, "median_rank")] == ranks[1]


# --- lexicons ------------------------------------------------------------------------------------------------------
def test_dictionary_gloss_and_proper_nouns():
    d = lexicon.Dictionary({
        "天": [CedictEntry("天", "天", "tian1", ("day", "sky", "heaven"))],
        "张": [CedictEntry("張", "张", "Zhang1", ("surname Zhang",)), CedictEntry("張", "张", "zhang1", ("to open",))],
        "北京": [CedictEntry("北京", "北京", "Bei3 jing1", ("Beijing",))]})
    assert d.gloss("天") == "day; sky" and d.gloss("张") == "to open" and d.gloss("无") == ""
    assert d.is_proper_noun("北京") and not d.is_proper_noun("张")
    assert lexicon.compound_candidates(d) == [] and lexicon.compound_candidates(d, length=1) == ["天", "张"]


def test_lexicons_read_shared_data():
    assert "画蛇添足" in lexicon.idioms()[:5000] or "画蛇添足" in lexicon.idioms()
    assert all(len(w) == 4 for w in lexicon.idioms())
    assert "马赛克" in lexicon.loanwords() and all(lexicon.is_han(w) for w in lexicon.loanwords())
    assert "教师" in lexicon.professions()
    assert len(lexicon.wordsim("ws240")) == 240 and len(lexicon.wordsim("ws297")) == 297
    with pytest.raises(DataError, match="unknown word-similarity set"):
        lexicon.wordsim("ws353")


def test_cli_senses_prints_every_sense(monkeypatch, capsys, tmp_path):
    """`--model` takes the names of `hanzilm models` (a bare profile name means that profile's Backpack);
    a GPT-2, a word outside the vocabulary and two characters are one-line errors."""
    from safetensors.torch import save_model

    from hanzilm import cli, models
    from hanzilm.papers.backpack.sense_reader import VOCAB as VOCAB_FILE

    save_model(_backpack(), str(tmp_path / "best.safetensors"))
    VOCAB.save(tmp_path / VOCAB_FILE)
    stored = [models.Model("backpack", "backpack", "smoke", tmp_path), models.Model("gpt2", "backpack", "smoke", tmp_path)]
    monkeypatch.setattr(models, "scan", lambda namers, *a, **k: stored)
    assert cli.main(["senses", "沙", "--top", "3", "--no-gloss", "--model", "smoke"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("沙") and "backpack@smoke" in out[0] and len(out) == 1 + 4
    assert out[1].startswith("sense  0: ")
    assert cli.main(["senses", "沙", "--model", "gpt2@smoke"]) == 2
    assert "not a Backpack" in capsys.readouterr().err
    assert cli.main(["senses", "沙沙", "--model", "smoke"]) == 2
    assert cli.main(["senses", "龘", "--no-gloss", "--model", "smoke"]) == 2   # not in the vocabulary


def test_lexicon_errors_name_the_file_and_line(tmp_path, monkeypatch):
    bad = tmp_path / "THUOCL_chengyu.txt"
    bad.write_text("坚定不移\t54113\n随时随地 52510\n", encoding="utf-8")
    monkeypatch.setattr(lexicon, "resolve", lambda dataset, path: bad)
    with pytest.raises(DataError, match=r"THUOCL_chengyu.txt, line 2: expected 'idiom<TAB>count'"):
        lexicon.idioms()
    bad.write_text("审计\n统计 人员\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"line 2: a profession name with whitespace"):
        lexicon.professions()


def test_lambda_undefined_where_a_sense_ignores_the_word():
    alpha = torch.rand(2, 5, 5).tril()
    alpha[1, 3:, 1:3] = 0          # sense 1 never weighs the word (positions 1, 2) after it...
    alpha[1, 2, 1:3] = 0           # ...nor at its last character
    lam = composition.lambdas_from_alpha(alpha, [1, 2])
    assert not lam[0].isnan().any() and lam[1].isnan().all()
    alpha[1, 4, 1:3] = torch.tensor([0.1, 0.3])   # one prediction with weight: only it counts
    assert composition.lambdas_from_alpha(alpha, [1, 2])[1].tolist() == pytest.approx([0.25, 0.75])
    nan = float("nan")
    lams = torch.tensor([[[0.5, 0.5], [nan, nan]], [[0.6, 0.4], [0.2, 0.8]], [[0.5, 0.5], [nan, nan]]])
    v = composition.variation(lams)
    assert v[0].item() == pytest.approx(0.0667, abs=1e-3) and v[1].isnan()     # sense 1: one context only
    assert composition.bucket_counts(v) == {"within_10pct": 1, "within_20pct": 0, "beyond_20pct": 0, "undefined": 1}
    m = _backpack(k=2)
    w = composition.word_vector(m, VOCAB, "沙滩", torch.full((2, 2, 2), nan))
    assert torch.allclose(w, m.senses(torch.tensor(VOCAB.encode("沙滩"))).mean(0), atol=1e-6)


def test_bucket_shares_count_defined_pairs_per_type():
    per_sense = pd.DataFrame({"type": ["idiom"] * 4 + ["loanword"] * 2, "word": ["甲乙", "甲乙", "丙丁", "丙丁", "沙发", "沙发"],
                              "sense": [0, 1, 0, 1, 0, 1], "contexts": [3, 3, 5, 5, 2, 2],
                              "variation": [0.05, 0.15, 0.5, float("nan"), 0.01, 0.02]})
    t = composition.bucket_shares(per_sense).set_index(["word_type", "metric"])["ours"]
    assert t["idiom", "within_10pct"] == pytest.approx(1 / 3) and t["idiom", "beyond_20pct"] == pytest.approx(1 / 3)
    assert t["idiom", "undefined_share"] == 0.25 and t["idiom", "n_words"] == 2 and t["idiom", "mean_contexts"] == 4
    assert t["loanword", "within_10pct"] == 1.0


def test_wider_professions_rank_person_words_by_count():
    vocab = CharVocab.build(["士兵警察教师管理律师医生"])
    counts = {"教师": 5, "律师": 5, "医生": 9, "士兵": 7, "管理": 50, "警察": 60}
    got = bias.wider_professions(["管理", "教师", "律师", "医生", "士兵", "老师", "警察"], vocab, counts.get, 3,
                                 exclude=["士兵"])
    assert got == ["医生", "教师", "律师"]  # 管理, 警察: no person-forming last character; 老师 not in vocabulary


def test_corpus_gender_counts_take_the_first_pronoun_after_the_word_on_its_line():
    from hanzilm.papers.backpack.bias import corpus_gender_counts
    from hanzilm.papers.backpack.composition import CorpusText

    text = CorpusText(["士兵说他来了，她也来了", "士兵她", "士兵\n他", "那个士兵" + "。" * 40 + "他", "医生她他"])
    c = corpus_gender_counts(text, ["士兵", "医生", "律师"]).set_index("word")
    # 1: 他 before 她; 2: 她; 3: the pronoun is on the next line; 4: beyond the window
    assert (c.loc["士兵", ["occurrences", "with_pronoun", "he", "she"]] == [4, 2, 1, 1]).all()
    assert c.loc["医生", "she"] == 1 and c.loc["医生", "corpus_ratio"] == 3.0   # (1 + .5) / (0 + .5)
    assert c.loc["律师", "occurrences"] == 0 and c.loc["律师", "corpus_ratio"] == 1.0
    assert c.iloc[0].he == 4 and c.iloc[0].she == 3   # the pronouns' own counts in the text
