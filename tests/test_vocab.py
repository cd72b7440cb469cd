from __future__ import annotations

import json

import pytest

from hanzilm.data.vocab import UNK, CharVocab, corpus_checksum
from hanzilm.errors import DataError, HanzilmError

TEXTS = ["中国人民", "人民日报\n中国", "人"]


def test_build_orders_by_count_then_character():
    vocab = CharVocab.build(TEXTS)
    # 人 x3; 中 国 民 x2 (ordered by code point); then the singletons
    assert vocab.itos[:5] == [UNK, "人", "中", "国", "民"]
    assert sorted(vocab.itos[5:]) == vocab.itos[5:] == sorted(["日", "报", "\n"])
    assert vocab.counts["人"] == 3 and vocab.unk_id == 0 and len(vocab) == 8
    assert all(vocab.stoi[c] == i for i, c in enumerate(vocab.itos))


def test_min_freq_ignore_and_specials():
    vocab = CharVocab.build(TEXTS, min_freq=2, specials=("<pad>", UNK, "<eos>"), ignore="\n")
    assert vocab.itos == ["<pad>", UNK, "<eos>", "人", "中", "国", "民"]
    assert vocab.unk_id == 1 and "\n" not in vocab.counts
    assert vocab.counts["日"] == 1  # counted, though below min_freq
    with pytest.raises(HanzilmError, match="must include"):
        CharVocab.build(TEXTS, specials=("<pad>",))
    with pytest.raises(HanzilmError, match="min_freq"):
        CharVocab.build(TEXTS, min_freq=0)


def test_encode_maps_unknown_characters_to_unk_and_decodes_back():
    vocab = CharVocab.build(TEXTS)
    ids = vocab.encode("中国猫人")
    assert ids[2] == vocab.unk_id and vocab.decode(ids) == f"中国{UNK}人"
    assert vocab.decode(vocab.encode("人民日报")) == "人民日报"


def test_build_is_deterministic_whatever_the_text_order():
    assert CharVocab.build(TEXTS) == CharVocab.build(list(reversed(TEXTS)))
    assert CharVocab.build(TEXTS).itos == CharVocab.build(iter(TEXTS)).itos


def test_save_load_round_trip(tmp_path):
    vocab = CharVocab.build(TEXTS, min_freq=2, corpus_sha256=corpus_checksum(TEXTS))
    path = tmp_path / "vocab.json"
    vocab.save(path)
    loaded = CharVocab.load(path)
    assert loaded == vocab and loaded.itos == vocab.itos and loaded.counts == vocab.counts
    assert loaded.corpus_sha256 == corpus_checksum(TEXTS) and loaded.min_freq == 2
    assert [p.name for p in tmp_path.iterdir()] == ["vocab.json"]  # no temporary files left
    state = json.loads(path.read_text(encoding="utf-8"))
    assert {"min_freq", "specials", "corpus_sha256", "counts", "itos"} <= set(state)


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda text: text[: len(text) // 2],
        lambda text: text.replace('"min_freq": 1', '"min_freq": "one"'),
        lambda text: text.replace('"format": "hanzilm.char_vocab/1"', '"format": "other"'),
        lambda text: json.dumps({**json.loads(text), "itos": [UNK, "国", "人"]}),
        lambda text: json.dumps({**json.loads(text), "counts": [["人人", 3]]}),
        lambda text: "[]",
    ],
)
def test_corrupt_file_is_a_data_error_naming_it(tmp_path, corrupt):
    path = tmp_path / "vocab.json"
    CharVocab.build(TEXTS).save(path)
    path.write_text(corrupt(path.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(DataError) as err:
        CharVocab.load(path)
    assert str(path) in str(err.value)


def test_corpus_checksum_is_stable_and_boundary_sensitive():
    assert corpus_checksum(TEXTS) == corpus_checksum(iter(TEXTS))
    assert corpus_checksum(["ab", "c"]) != corpus_checksum(["a", "bc"])
    assert corpus_checksum(TEXTS) != corpus_checksum(list(reversed(TEXTS)))
    # a fixed value: the checksum goes into provenance records and must not drift between versions
    assert corpus_checksum([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
