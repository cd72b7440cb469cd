"""WPLC-style cloze: construction on a tiny text, and beam search against brute force on a tiny vocabulary."""

import itertools

import pytest
import torch

from hanzilm.data.vocab import CharVocab
from hanzilm.papers.backpack.cloze import ClozeConfig, beam_candidates, build_cloze, evaluate_cloze, sentences, split_last_word
from hanzilm.papers.backpack.data import SPECIALS
from hanzilm.papers.backpack.gpt import GPT, GPTConfig


def test_sentences_round_trip_and_split_last_word():
    text = "今天我们去了北京。他说：“天气很好！”\n明天回家"
    parts = sentences(text)
    assert "".join(parts) == text
    assert parts[:2] == ["今天我们去了北京。", "他说：“天气很好！”"]
    assert split_last_word("今天我们去了北京。") == ("今天我们去了", "北京", "。")
    assert split_last_word("明天回家") is None  # no final punctuation: no ending to score


def test_build_cloze_on_a_tiny_text():
    filler = "这是一个很长的句子用来凑够字数。" * 3          # 15 Chinese characters per sentence
    docs = [filler + "我们明天一起去北京。", "太短了，只有几个字的北京。", filler + "他笑了。"]
    cases = build_cloze(docs, ClozeConfig(min_chars=50))
    assert len(cases) == 1
    c = cases[0]
    assert (c.doc, c.word, c.ending) == (0, "北京", "。")
    assert c.context == filler + "我们明天一起去"
    # the fewest whole sentences that reach min_chars
    c2 = build_cloze(docs, ClozeConfig(min_chars=20))[0]
    assert c2.context == "这是一个很长的句子用来凑够字数。" + "我们明天一起去"
    vocab = CharVocab.build(["这是"], specials=SPECIALS)
    assert build_cloze(docs, ClozeConfig(min_chars=50), vocab) == []  # word outside the vocabulary


def _tiny_lm(v=4):
    torch.manual_seed(0)
    m = GPT(GPTConfig(vocab_size=v, block_size=12, n_layer=1, n_head=1, n_embd=8)).eval()
    with torch.no_grad():
        m.wte.weight.mul_(50)  # a peaked, non-uniform model
    return m


def _logp(m, seq, start):
    lp = torch.log_softmax(m(torch.tensor([seq[:-1]])), -1)[0]
    return sum(lp[t - 1, seq[t]].item() for t in range(start, len(seq)))


def test_beam_search_equals_brute_force_when_the_beam_holds_everything():
    m, ctx, ending = _tiny_lm(), [1, 2, 0, 3], [2, 1]
    for n in (1, 2):
        got = beam_candidates(m, ctx, n, ending, beam=4 ** n)
        brute = sorted(((c, _logp(m, ctx + list(c), len(ctx)), _logp(m, ctx + list(c) + ending, len(ctx)))
                        for c in itertools.product(range(4), repeat=n)), key=lambda r: -r[2])
        assert [c for c, _, _ in got] == [c for c, _, _ in brute]
        for (_, g1, t1), (_, g2, t2) in zip(got, brute):
            assert abs(g1 - g2) < 1e-4 and abs(t1 - t2) < 1e-4


def test_narrow_beam_keeps_the_best_prefixes_per_step():
    m, ctx = _tiny_lm(), [1, 2, 0, 3]
    got = beam_candidates(m, ctx, 2, [], beam=2)
    first = sorted(range(4), key=lambda t: -_logp(m, ctx + [t], len(ctx)))[:2]
    assert len(got) == 2 and {c[0] for c, _, _ in got} <= set(first)
    assert [t for _, _, t in got] == sorted((t for _, _, t in got), reverse=True)


def test_evaluate_cloze_counts_ranks():
    vocab = CharVocab.build(["北京上海。天气"], specials=SPECIALS)
    m = _tiny_lm(len(vocab))
    from hanzilm.papers.backpack.cloze import ClozeCase
    cases = [ClozeCase(0, "天气上海", "北京", "。"), ClozeCase(1, "上海", "天气", "。")]
    scores, rows = evaluate_cloze(m, cases, vocab, beam=len(vocab) ** 2)
    assert scores["cases"] == 2 and all(r["rank"] >= 0 for r in rows)  # an exhaustive beam always finds it
    assert scores["top1"] == sum(r["rank"] == 0 for r in rows) / 2


def test_the_decoder_fed_piecewise_gives_the_full_forwards_logits_for_both_models():
    from hanzilm.papers.backpack.backpack import Backpack, BackpackConfig
    from hanzilm.papers.backpack.decode import Decoder
    torch.manual_seed(0)
    ids = torch.randint(0, 20, (3, 10))
    for m in (GPT(GPTConfig(vocab_size=20, block_size=12, n_layer=2, n_head=2, n_embd=8)).eval(),
              Backpack(BackpackConfig(vocab_size=20, block_size=12, n_layer=2, n_head=2, n_embd=8,
                                      n_senses=2)).eval()):
        full = m(ids)
        d = Decoder(m)
        got = torch.cat([d.feed(ids[:, :5]), d.feed(ids[:, 5:6]), d.feed(ids[:, 6:])], dim=1)
        assert torch.allclose(got, full, atol=1e-5)
        assert torch.allclose(Decoder(m).feed(ids, last=2), full[:, -2:], atol=1e-5)
        # a beam's reordering: the cache follows the rows kept, repeats included
        d = Decoder(m)
        d.feed(ids[:, :6])
        rows = torch.tensor([2, 0, 0])
        d.select(rows)
        assert torch.allclose(d.feed(ids[rows, 6:]), full[rows, 6:], atol=1e-5)
        with pytest.raises(ValueError, match="longer than block_size"):
            d.feed(ids[:, :3])


def test_the_decoder_refuses_training_mode():
    from hanzilm.papers.backpack.decode import Decoder
    with pytest.raises(ValueError, match="eval mode"):
        Decoder(GPT(GPTConfig(vocab_size=20, block_size=12, n_layer=1, n_head=1, n_embd=8)))
