"""Segmenting arbitrary text: never raises, loses nothing, never splits a grapheme cluster, and a control
character is a word of its own (issue 13, item 8)."""

import random

import numpy as np
import pytest
import regex
import torch

from hanzilm.papers.mmtnn.encoding import Encoder
from hanzilm.papers.mmtnn.segmenter import Segmenter
from hanzilm.papers.mmtnn.spec import TaggerSpec
from hanzilm.papers.mmtnn.tagger import WindowTagger
from hanzilm.papers.mmtnn.tags import B, E, M, S, allowed_tags

TRAIN = ["我们在北京工作。", "今天天气很好，我们去公园。", "访问www.example.com获取iPhone12", "１９９８年北京会议。"]
PARTS = (
    list("我们北京天气很好的了是在一不人有中大") + ["，", "。", "、", "！", "？"],   # CJK and punctuation
    list("abcxyzABC") + ["café", "naïve"],                                           # Latin
    list("0123456789") + ["3.14", "1,000", "2001年"],                                # digits
    ["😀", "👍🏽", "👨\u200d👩\u200d👧", "🇨🇳", "🏳️\u200d🌈", "❤️", "☝🏿"],           # emoji: modifiers, ZWJ, flags
    ["e\u0301", "a\u0308\u0323", "\u0915\u094d\u0937", "\u1100\u1161\u11a8", "字\ufe00"],  # combining, Indic, jamo, VS
    ["\x00", "\x01", "\x07", "\x1b", "\x7f", "\x9b"],                                 # controls (not whitespace)
    [" ", "\t", "\u3000", "\u00a0"],                                                  # whitespace
)


@pytest.fixture(scope="module", params=["numpy", "torch"])
def segmenter(request, tmp_path_factory) -> Segmenter:
    torch.manual_seed(0)
    enc = Encoder.build(TRAIN, min_freq=1, bigrams=True, bigram_min_freq=1)
    model = WindowTagger(TaggerSpec(dim=8, hidden=16, factors=4, bigram=True), len(enc.vocab), enc.n_bigrams)
    directory = tmp_path_factory.mktemp("fuzz") / "segmenter"
    Segmenter(model, enc).save(directory)
    return Segmenter.load(directory, engine=request.param)


def _random_text(rng: random.Random) -> str:
    return "".join(rng.choice(rng.choice(PARTS)) for _ in range(rng.randint(0, 40)))


def _cluster_bounds(text: str) -> set[int]:
    return {m.end() for m in regex.finditer(r"\X", text)} | {0}


def test_ten_thousand_random_lines(segmenter):
    rng = random.Random(13)
    # the NumPy engine (what `hanzilm segment` runs) on 10,000 lines; the torch one on 1,000 (same decoder)
    lines = [_random_text(rng) for _ in range(10_000 if segmenter.model.__class__.__name__ == "NumpyTagger" else 1000)]
    out = segmenter.segment_lines(lines)
    assert len(out) == len(lines)
    for line, words in zip(lines, out):
        assert "".join(words) == "".join(line.split()), line   # nothing lost, nothing added, whitespace dropped
        assert all(words), line
        joined = "".join(line.split())
        ends, at = set(), 0
        for w in words:
            at += len(w)
            ends.add(at)
        assert ends <= _cluster_bounds(joined), (line, words)   # no boundary inside a grapheme cluster
        for w in words:
            if any(regex.fullmatch(r"\p{Cc}", c) for c in w):
                assert len(w) == 1, (line, words)               # a control character is a word of its own


def test_clusters_and_controls_in_the_mask():
    mask = allowed_tags("我e\u0301\x00好")
    assert mask[1].tolist() == [True, True, False, False]   # 'e' starts or continues a word, never ends it
    assert mask[2].tolist() == [False, True, True, False]   # the combining mark never starts one
    assert mask[3].tolist() == [False, False, False, True]  # NUL: a word of its own
    assert mask[0].all() and mask[4].all()
    assert allowed_tags("我们在北京工作") is None           # plain Chinese: unconstrained
    zwj = "👨\u200d👩\u200d👧"
    m = allowed_tags(zwj)
    assert m[0, B] and not m[0, E] and not m[0, S]
    assert all(m[i].tolist() == [False, True, False, False] for i in range(1, len(zwj) - 1))
    assert m[-1, E] and not m[-1, B]


def test_an_ascii_run_with_a_combining_mark_stays_decodable(segmenter):
    words = segmenter.segment("cafe\u0301很好")
    assert "".join(words) == "cafe\u0301很好"
    assert any("e\u0301" in w for w in words)  # the run 'cafe' may join its neighbours, the mark stays with 'e'


def test_the_cluster_prefilter_misses_no_cluster():
    # allowed_tags skips its per-cluster loop for texts without any of the break classes that can join code
    # points; over every code point (beside a Han character and doubled), no cluster forms without one
    import regex

    from hanzilm.papers.mmtnn.tags import _MAY_CLUSTER_OR_CONTROL

    cluster = regex.compile(r"\X")
    for cp in range(0x20, 0x30000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        if _MAY_CLUSTER_OR_CONTROL.search(c):
            continue
        for text in (f"中{c}中", c + c, f"{c}a{c}"):
            assert len(cluster.findall(text)) == len(text), (hex(cp), text)


def test_the_plain_text_shortcut_holds_no_cluster_class_or_control():
    # allowed_tags clears a text made only of _PLAIN's characters without the search for break classes: so none
    # of them may be in one (the class of U+302A, an ideographic tone mark, is why the CJK punctuation block is cut)
    from hanzilm.papers.mmtnn.tags import _MAY_CLUSTER_OR_CONTROL, _PLAIN

    plain = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF and _PLAIN.fullmatch(chr(cp))]
    assert len(plain) > 20_000 and "中" in plain and "\u302a" not in plain and "\u200d" not in plain
    assert not [hex(ord(c)) for c in plain if _MAY_CLUSTER_OR_CONTROL.search(c)]
