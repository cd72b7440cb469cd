"""Corpus statistics: the data tables of the papers, computed from the files themselves."""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

import pandas as pd

from .corpus import Document

HAN_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF))


def is_han(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in HAN_RANGES)


def segmented_stats(sentences: Sequence[Sequence[str]]) -> dict[str, float]:
    """Sizes of a word-segmented corpus: sentences (non-empty lines), words, characters (no whitespace)."""
    words = [w for s in sentences for w in s]
    chars = Counter(ch for w in words for ch in w)
    n_chars = sum(chars.values())
    return {
        "sentences": sum(1 for s in sentences if s),
        "words": len(words),
        "characters": n_chars,
        "word_types": len(set(words)),
        "character_types": len(chars),
        "characters_per_word": n_chars / len(words) if words else 0.0,
    }


def stats_table(parts: dict[tuple[str, str], Sequence[Sequence[str]]], metrics: Iterable[str]) -> pd.DataFrame:
    """Long results table (dataset, split, metric, ours) for several (dataset, split) corpora."""
    rows = []
    for (dataset, split), sentences in parts.items():
        st = segmented_stats(sentences)
        rows += [{"dataset": dataset, "split": split, "metric": m, "ours": st[m]} for m in metrics]
    return pd.DataFrame(rows)


def train_dev_split(parts: dict[tuple[str, str], Sequence[Sequence[str]]], dev_fraction: float = 0.1
                    ) -> dict[tuple[str, str], Sequence[Sequence[str]]]:
    """Each training part cut as Pei et al. select models: the first 90 % train, the last 10 % are the dev set."""
    out: dict[tuple[str, str], Sequence[Sequence[str]]] = {}
    for (dataset, split), sents in parts.items():
        if split == "train":
            cut = int(len(sents) * (1 - dev_fraction))
            out[(dataset, "train (first 90%)")] = sents[:cut]
            out[(dataset, "dev (last 10%)")] = sents[cut:]
    return out


def lm_table(splits: dict[str, list[Document]]) -> pd.DataFrame:
    """The LM corpus table: per genre and split (`lm_composition`), the totals per split (genre "all") and the
    number of distinct training characters (metric character_vocabulary)."""
    from .vocab import CharVocab

    composition = lm_composition(splits)
    summary = composition.groupby(["split", "metric"], as_index=False)["ours"].sum().assign(genre="all")
    vocab = CharVocab.build(d.text for d in splits["train"])
    vocab_row = {"split": "train", "genre": "all", "metric": "character_vocabulary", "ours": len(vocab)}
    return pd.concat([composition, summary, pd.DataFrame([vocab_row])], ignore_index=True)


def lm_composition(splits: dict[str, list[Document]]) -> pd.DataFrame:
    """Documents, characters and CJK ideographs per genre and split of the LM corpus (long form)."""
    rows = []
    for split, docs in splits.items():
        per_genre: dict[str, Counter] = {}
        for d in docs:
            c = per_genre.setdefault(d.genre, Counter())
            c["documents"] += 1
            text = d.text.replace("\n", "")
            c["characters"] += len(text)
            c["han_characters"] += sum(map(is_han, text))
        for genre, c in sorted(per_genre.items()):
            rows += [{"split": split, "genre": genre, "metric": m, "ours": c[m]}
                     for m in ("documents", "characters", "han_characters")]
    return pd.DataFrame(rows)
