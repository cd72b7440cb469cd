from __future__ import annotations

import dataclasses
import random

import pytest

from hanzilm.data.corpus import Document, LMSplitConfig, load_lm_corpus, read_documents, split_documents
from hanzilm.errors import DataError, HanzilmError


def test_read_documents_blank_lines_end_documents(tmp_path):
    path = tmp_path / "lm.txt"
    path.write_text("标题一\n第一段。\n第二段。\n\n\n标题二\n正文。\n\n标题三\n最后一段。", encoding="utf-8")
    assert read_documents(path) == ["标题一\n第一段。\n第二段。", "标题二\n正文。", "标题三\n最后一段。"]


def test_read_documents_one_per_line(tmp_path):
    path = tmp_path / "ugc.txt"
    path.write_text("酒店很干净\n\n服务一般\n送餐很快\n", encoding="utf-8")
    assert read_documents(path, one_per_line=True) == ["酒店很干净", "服务一般", "送餐很快"]


def docs(n: int, source: str = "lm/x.txt") -> list[Document]:
    return [Document(source, "news", f"第{i}条新闻。") for i in range(n)]


def test_split_is_deterministic_and_independent_of_order_and_company():
    corpus = docs(5000)
    split = split_documents(corpus)
    assert split == split_documents(corpus)
    shuffled = corpus[:]
    random.Random(0).shuffle(shuffled)
    assert {k: set(v) for k, v in split_documents(shuffled).items()} == {k: set(v) for k, v in split.items()}
    # a document's split does not depend on which other documents are present
    subset = corpus[::7]
    split_of = {doc: name for name, part in split.items() for doc in part}
    assert all(split_of[doc] == name for name, part in split_documents(subset).items() for doc in part)


def test_split_keeps_input_order_within_each_split():
    corpus = docs(2000)
    position = {doc: i for i, doc in enumerate(corpus)}
    for part in split_documents(corpus).values():
        assert part == sorted(part, key=position.__getitem__)


def test_split_fractions_are_roughly_right():
    sizes = {k: len(v) for k, v in split_documents(docs(40000), test_fraction=0.1, dev_fraction=0.05).items()}
    assert sum(sizes.values()) == 40000
    assert abs(sizes["test"] / 40000 - 0.1) < 0.01
    assert abs(sizes["dev"] / 40000 - 0.05) < 0.01
    assert split_documents(docs(100), test_fraction=0, dev_fraction=0)["train"] == docs(100)


def test_exact_duplicates_share_a_split_even_across_sources():
    texts = [f"重复的文章{i}" for i in range(300)]
    corpus = [Document(src, "legal", t) for t in texts for src in ("lm/laws_01.txt", "lm/laws_02.txt")]
    for part in split_documents(corpus, test_fraction=0.3, dev_fraction=0.3).values():
        counts = {t: sum(d.text == t for d in part) for t in {d.text for d in part}}
        assert set(counts.values()) <= {2}


@pytest.mark.parametrize("test, dev", [(-0.1, 0.0), (0.6, 0.4), (0.0, 1.0)])
def test_split_rejects_impossible_fractions(test, dev):
    with pytest.raises(HanzilmError):
        split_documents(docs(3), test_fraction=test, dev_fraction=dev)


def test_split_defaults_are_the_papers():
    """Sun & Hewitt: 1 % test, 0.5 % dev (the vocabulary cut-off belongs to the model config, not the split)."""
    assert [f.name for f in dataclasses.fields(LMSplitConfig)] == ["test_fraction", "dev_fraction"]
    assert (LMSplitConfig().test_fraction, LMSplitConfig().dev_fraction) == (0.01, 0.005)


def test_load_lm_corpus_from_toy_manifest(toy_mirror, monkeypatch):
    mirror = toy_mirror(
        {
            "lm_news": {"lm/news/a.txt": "标题\n正文。\n\n第二条\n内容。\n".encode()},
            "lm_ugc": {"lm/ugc/r.txt": "好评\n差评\n".encode()},
            "wordsim": {"eval/ws.tsv": "老虎\t猫\t7.35\n".encode()},
        },
        extra={"lm_news": {"genre": "news"}, "lm_ugc": {"genre": "user-generated", "one_document_per_line": True}},
    )
    monkeypatch.setenv("HANZILM_DATA_MIRROR", str(mirror))
    assert load_lm_corpus() == [
        Document("lm/news/a.txt", "news", "标题\n正文。"),
        Document("lm/news/a.txt", "news", "第二条\n内容。"),
        Document("lm/ugc/r.txt", "user-generated", "好评"),
        Document("lm/ugc/r.txt", "user-generated", "差评"),
    ]
    assert [d.text for d in load_lm_corpus(["lm_ugc"])] == ["好评", "差评"]
    with pytest.raises(DataError, match="not an LM corpus"):
        load_lm_corpus(["wordsim"])


def test_real_lm_corpus_split(real_mirror):
    corpus = load_lm_corpus()
    assert {d.genre for d in corpus} == {"encyclopedia", "exam", "user-generated", "news", "legal"}
    assert sum(d.source == "lm/wiki_zhwiki_sample/zhwiki_AA_wiki_00.t2s.txt" for d in corpus) == 64
    split = split_documents(corpus)
    n = len(corpus)
    assert 0.008 < len(split["test"]) / n < 0.012 and 0.003 < len(split["dev"]) / n < 0.007
