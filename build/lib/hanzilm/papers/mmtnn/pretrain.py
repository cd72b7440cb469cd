"""Pre-trained character embeddings: word2vec (skip-gram, gensim) over our unlabeled LM corpus.

Pei et al. pre-train on Chinese Gigaword, which we do not have; we train on the training split of the project's
LM corpus (`hanzilm.data.corpus`), one paragraph per "sentence", characters as tokens, normalised like the
segmenters' lookup (half-width ASCII -> full-width). The vectors are made once in the chapter's store
(`hanzilm.word2vec`: Word2VecConfig-<key>/, keyed by the config and the corpus checksums).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ... import versions
from ...store import Store
from ...word2vec import word2vec_vectors

_MAX_TOKENS = 10_000  # gensim's limit per sentence


@dataclass(frozen=True)
class Word2VecConfig:
    dim: int = 25
    window: int = 5
    sg: int = 1              # skip-gram (Mikolov et al. 2013)
    negative: int = 5
    min_count: int = 1
    epochs: int = 5
    max_chars: int | None = None   # use only the first max_chars characters of the corpus (profiles)
    # train until an epoch leaves the nearest neighbours as they were (this share of the top 10 of the 500
    # most frequent characters), `epochs` at most; None: exactly `epochs`
    until_stable: float | None = None
    workers: int = 1         # one worker: deterministic
    seed: int = 0


def _corpus(cfg: Word2VecConfig) -> list[list[str]]:
    from ...data.corpus import LMSplitConfig, load_lm_corpus, split_documents
    from .tags import normalize

    split = LMSplitConfig()
    docs = split_documents(load_lm_corpus(), test_fraction=split.test_fraction,
                           dev_fraction=split.dev_fraction)["train"]
    sentences: list[list[str]] = []
    budget = cfg.max_chars if cfg.max_chars is not None else float("inf")
    for doc in docs:
        for para in doc.text.split("\n"):
            chars = [c for c in normalize(para) if not c.isspace()]
            for k in range(0, len(chars), _MAX_TOKENS):
                piece = chars[k:k + _MAX_TOKENS]
                if piece and budget > 0:
                    sentences.append(piece[:int(min(len(piece), budget))])
                    budget -= len(piece)
        if budget <= 0:
            break
    return sentences


def corpus_checksums() -> dict[str, str]:
    """The LM corpus files' checksums: they key the vectors with the config."""
    from ...data.corpus import lm_dataset_names
    from ...data.manifest import load_manifest

    return {f.path: f.sha256 for name in lm_dataset_names() for f in load_manifest().get(name).files}


def char_vectors(cfg: Word2VecConfig, store: Store) -> dict[str, np.ndarray]:
    """MMTNN pre-training: vectors over the LM corpus's training split, made once in `store`."""
    return word2vec_vectors(store, cfg, lambda: _corpus(cfg), data=corpus_checksums(),
                            version=versions.key("mmtnn"), vector_size=cfg.dim,
                            window=cfg.window, sg=cfg.sg, negative=cfg.negative, min_count=cfg.min_count,
                            epochs=cfg.epochs, workers=cfg.workers, seed=cfg.seed,
                            until_stable=cfg.until_stable)


def init_table(itos: list[str], vectors: dict[str, np.ndarray], table: torch.Tensor, std: float) -> int:
    """Copy pre-trained vectors into `table` rows of the characters that have one, rescaled so that the copied
    vectors have standard deviation `std` (the random initialisation's); returns how many rows were set."""
    rows = [(i, vectors[c]) for i, c in enumerate(itos) if c in vectors]
    if not rows:
        return 0
    mat = np.stack([v for _, v in rows])
    mat = mat / (mat.std() + 1e-12) * std
    with torch.no_grad():
        table[[i for i, _ in rows]] = torch.from_numpy(mat).to(table.dtype)
    return len(rows)


def nearest(table: torch.Tensor, itos: list[str], query: str, k: int = 5) -> list[tuple[str, float]]:
    """The k characters nearest to `query` by Euclidean distance in an embedding table (query excluded)."""
    i = itos.index(query)
    dist = torch.cdist(table[i:i + 1].float(), table.float())[0]
    dist[i] = float("inf")
    for j, c in enumerate(itos):
        if len(c) != 1:  # special symbols (<unk>, <s>, </s>) are not characters
            dist[j] = float("inf")
    order = torch.argsort(dist)[:k]
    return [(itos[j], float(dist[j])) for j in order.tolist()]

