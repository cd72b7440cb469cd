"""Sentences to the arrays the window taggers read: padded character ids, window bigram ids, BMES tags.

`arrays` builds them in NumPy (what decoding reads, torch or not); `batch` hands the same to torch for training."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ...data.vocab import CharVocab
from ...errors import DataError
from ...io import atomic_write_text
from .tags import normalize, words_to_tags

if TYPE_CHECKING:
    import torch

PAD_START, PAD_END = "<s>", "</s>"
SPECIALS = ("<unk>", PAD_START, PAD_END)
HALF = 2  # window 5 = 2 characters either side


class Encoder:
    """Character vocabulary (training characters, normalised) and, optionally, the bigram vocabulary.

    A sentence of n characters becomes n + 4 character ids (two start, two end symbols) and n + 3 bigram ids
    (adjacent pairs of that padded sequence); the window of character i is ids[i:i+5], its bigrams
    bigram_ids[i:i+4]."""

    def __init__(self, vocab: CharVocab, bigrams: list[str] | None = None):
        self.vocab = vocab
        self.start, self.end = vocab.stoi[PAD_START], vocab.stoi[PAD_END]
        self.bigrams = bigrams
        self.bigram_stoi = {b: i for i, b in enumerate(bigrams)} if bigrams is not None else None

    @classmethod
    def build(cls, texts: Sequence[str], *, min_freq: int = 2, bigrams: bool = False,
              bigram_min_freq: int = 2) -> Encoder:
        texts = [normalize(t) for t in texts]
        vocab = CharVocab.build(texts, min_freq=min_freq, specials=SPECIALS)
        bigram_list = None
        if bigrams:
            counts: Counter[str] = Counter()
            for t in texts:
                padded = "\x02" + t + "\x03"
                counts.update(padded[i:i + 2] for i in range(len(padded) - 1))
            kept = sorted((b for b, n in counts.items() if n >= bigram_min_freq), key=lambda b: (-counts[b], b))
            bigram_list = ["<unk>", *kept]
        return cls(vocab, bigram_list)

    @property
    def n_bigrams(self) -> int:
        return len(self.bigrams) if self.bigrams is not None else 0

    def char_ids(self, text: str) -> list[int]:
        return [self.start, self.start, *self.vocab.encode(normalize(text)), self.end, self.end]

    def bigram_ids(self, text: str) -> list[int]:
        # the boundary pairs <s><s> and </s></s> share the ids of "\x02\x02"/"\x03\x03" (absent: unk)
        padded = "\x02\x02" + normalize(text) + "\x03\x03"
        get = self.bigram_stoi.get
        return [get(padded[i:i + 2], 0) for i in range(len(padded) - 1)]

    def arrays(self, texts: Sequence[str], tags: Sequence[Sequence[int]] | None = None) -> dict[str, np.ndarray]:
        """Padded int64 arrays for a list of texts: chars (B, L+4), lengths (B,), and bigrams (B, L+3), tags (B, L)
        (tags -1 beyond each length)."""
        lengths = [len(t) for t in texts]
        length = max(lengths, default=0)
        chars = np.full((len(texts), length + 4), self.end, dtype=np.int64)
        for b, t in enumerate(texts):
            chars[b, :len(t) + 4] = self.char_ids(t)
        out = {"chars": chars, "lengths": np.array(lengths, dtype=np.int64)}
        if self.bigrams is not None:
            bigrams = np.zeros((len(texts), length + 3), dtype=np.int64)
            for b, t in enumerate(texts):
                bigrams[b, :len(t) + 3] = self.bigram_ids(t)
            out["bigrams"] = bigrams
        if tags is not None:
            gold = np.full((len(texts), length), -1, dtype=np.int64)
            for b, tg in enumerate(tags):
                gold[b, :len(tg)] = tg
            out["tags"] = gold
        return out

    def batch(self, texts: Sequence[str], tags: Sequence[Sequence[int]] | None = None) -> dict[str, torch.Tensor]:
        """`arrays` as torch tensors (sharing the memory)."""
        import torch

        return {name: torch.from_numpy(a) for name, a in self.arrays(texts, tags).items()}

    def batch_words(self, sentences: Sequence[Sequence[str]]) -> dict[str, torch.Tensor]:
        return self.batch(["".join(s) for s in sentences], [words_to_tags(s) for s in sentences])

    # ---- persistence: JSON only (no pickle) ----
    def save(self, directory: str | Path) -> None:
        directory = Path(directory)
        self.vocab.save(directory / "chars.json")
        if self.bigrams is not None:
            atomic_write_text(directory / "bigrams.json", json.dumps(self.bigrams, ensure_ascii=False))

    @classmethod
    def load(cls, directory: str | Path) -> Encoder:
        directory = Path(directory)
        vocab = CharVocab.load(directory / "chars.json")
        bigrams = None
        if (directory / "bigrams.json").is_file():
            try:
                bigrams = json.loads((directory / "bigrams.json").read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise DataError(f"not a valid bigram list: {e}", path=directory / "bigrams.json") from None
            if not isinstance(bigrams, list) or not all(isinstance(b, str) for b in bigrams):
                raise DataError("not a list of strings", path=directory / "bigrams.json")
        return cls(vocab, bigrams)
