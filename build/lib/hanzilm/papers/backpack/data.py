"""The LM corpus as token ids: a character vocabulary from the training split and the three splits encoded
as memory-mapped uint16/uint32 arrays, cached under `cache_dir()/lm/<key>/` (key: the corpus files'
sha256s, the split and the vocabulary cut-off), each file written atomically.

Every document is preceded by the document separator `<doc>`, so a model sees where documents start;
paragraphs inside a document are separated by "\\n" (a real character). The split is the foundation's
(`split_documents`: by document hash, the paper's 1 % test / 0.5 % dev).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ...data.corpus import SPLITS, Document, LMSplitConfig, lm_dataset_names, load_lm_corpus, split_documents
from ...data.resolve import checksums
from ...data.vocab import UNK, CharVocab
from ...errors import HanzilmError
from ...io import atomic_path, atomic_write_text
from ...paths import cache_dir

DOC = "<doc>"
SPECIALS = (UNK, DOC)
_FORMAT = "hanzilm.lm_encoded/1"   # the cache format tag (part of the corpus key): kept from hanzilm.lm


@dataclass
class EncodedCorpus:
    vocab: CharVocab
    splits: dict[str, np.ndarray]     # split -> 1-D memmap of ids
    key: str                          # what the cache entry is keyed by (sha256 hex)
    data: dict[str, str]              # corpus file -> sha256 (for the model store and provenance)
    directory: Path

    @property
    def unk_id(self) -> int:
        return self.vocab.unk_id


def encode_documents(docs: list[Document] | list[str], vocab: CharVocab) -> np.ndarray:
    """`<doc>` + text for every document, concatenated, as ids (uint16 if the vocabulary fits)."""
    texts = [d if isinstance(d, str) else d.text for d in docs]
    table = _lookup(vocab)
    parts = []
    sep = np.array([vocab.stoi[DOC]], dtype=np.int64)
    for text in texts:
        cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        parts += [sep, table[cps]]
    out = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return out.astype(_dtype(len(vocab)))


def _lookup(vocab: CharVocab) -> np.ndarray:
    table = np.full(0x110000, vocab.unk_id, dtype=np.int64)
    for s, i in vocab.stoi.items():
        if len(s) == 1 and s not in vocab.specials:
            table[ord(s)] = i
    return table


def _dtype(n: int) -> type:
    return np.uint16 if n <= 2**16 else np.uint32


def corpus_key(data: dict[str, str], split: LMSplitConfig, min_freq: int) -> str:
    payload = {"format": _FORMAT, "data": data, "test": split.test_fraction, "dev": split.dev_fraction,
               "min_freq": min_freq, "specials": list(SPECIALS)}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def encoded_corpus(split: LMSplitConfig, min_freq: int) -> EncodedCorpus:
    """The encoded LM corpus: built on first use (a few seconds), then memory-mapped from the cache.
    `min_freq`: the chapter's `lm.min_char_freq` (see `experiment.load_corpus`)."""
    data = checksums(lm_dataset_names())
    key = corpus_key(data, split, min_freq)
    directory = cache_dir() / "lm" / key[:16]
    meta_path = directory / "meta.json"
    if not meta_path.is_file():
        _build(directory, split, min_freq, key, data)
    meta = json.loads(meta_path.read_text())
    if meta.get("key") != key:
        raise HanzilmError(f"{directory}: cache entry of another corpus (key prefix collision); delete it")
    vocab = CharVocab.load(directory / "vocab.json")
    arrays = {name: np.memmap(directory / f"{name}.bin", dtype=meta["dtype"], mode="r", shape=(meta["sizes"][name],))
              for name in SPLITS}
    return EncodedCorpus(vocab=vocab, splits=arrays, key=key, data=data, directory=directory)


def _build(directory: Path, split: LMSplitConfig, min_freq: int, key: str, data: dict[str, str]) -> None:
    docs = split_documents(load_lm_corpus(), test_fraction=split.test_fraction, dev_fraction=split.dev_fraction)
    train_texts = [d.text for d in docs["train"]]
    from ...data.vocab import corpus_checksum
    vocab = CharVocab.build(train_texts, min_freq=min_freq, specials=SPECIALS,
                            corpus_sha256=corpus_checksum(train_texts))
    directory.mkdir(parents=True, exist_ok=True)
    vocab.save(directory / "vocab.json")
    sizes = {}
    for name in SPLITS:
        ids = encode_documents(docs[name], vocab)
        sizes[name] = int(ids.size)
        with atomic_path(directory / f"{name}.bin") as tmp:
            ids.tofile(tmp)
    meta = {"format": _FORMAT, "key": key, "dtype": np.dtype(_dtype(len(vocab))).name, "sizes": sizes,
            "vocab_size": len(vocab), "min_freq": min_freq, "data": data}
    atomic_write_text(directory / "meta.json", json.dumps(meta, indent=1))  # last: marks the entry complete


class BlockBatches:
    """`step -> (batch_size, block_size + 1)` LongTensor of training windows at random offsets, a pure
    function of (seed, step): the same data order for every model trained with the same seed."""

    def __init__(self, tokens: np.ndarray, batch_size: int, block_size: int, seed: int = 0):
        if tokens.size < block_size + 2:
            raise HanzilmError(f"{tokens.size} tokens: too few for blocks of {block_size}")
        self.tokens, self.batch_size, self.block_size, self.seed = tokens, batch_size, block_size, seed

    def offsets(self, step: int) -> np.ndarray:
        rng = np.random.default_rng([self.seed, step])
        return rng.integers(0, self.tokens.size - self.block_size - 1, size=self.batch_size)

    def __call__(self, step: int) -> torch.Tensor:
        n = self.block_size + 1
        rows = [np.asarray(self.tokens[o:o + n], dtype=np.int64) for o in self.offsets(step)]
        return torch.from_numpy(np.stack(rows))
