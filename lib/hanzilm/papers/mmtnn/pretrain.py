"""Pre-trained character embeddings: word2vec (skip-gram, gensim) over our unlabeled LM corpus.

Pei et al. pre-train on Chinese Gigaword, which we do not have; we train on the training split of the project's
LM corpus (`hanzilm.data.corpus`), one paragraph per "sentence", characters as tokens, normalised like the
segmenters' lookup (half-width ASCII -> full-width). The vectors are cached (safetensors + JSON) under
results/<profile>/checkpoints/Word2VecConfig-<key>/ and keyed by the config and the corpus checksums.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from ...io import atomic_path, atomic_write_text
from ...profiles import Profile
from ...store import is_complete, run_dir_for

_MAX_TOKENS = 10_000  # gensim's limit per sentence


@dataclass(frozen=True)
class Word2VecConfig:
    profile_key: ClassVar[str] = "mmtnn_w2v"

    dim: int = 25
    window: int = 5
    sg: int = 1              # skip-gram (Mikolov et al. 2013)
    negative: int = 5
    min_count: int = 1
    epochs: int = 5
    max_chars: int | None = None   # use only the first max_chars characters of the corpus (profiles)
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


def word2vec_vectors(key: Any, sentences: Callable[[], list[list[str]]], *, profile: str | Profile,
                     data: Mapping[str, str], **options: Any) -> dict[str, np.ndarray]:
    """Character -> vector from gensim word2vec, trained once per (key config, data checksums) and loaded
    afterwards from results/<profile>/checkpoints/. `sentences` is only called when training is needed;
    `options` go to gensim's Word2Vec (one worker unless given: deterministic)."""
    run_dir = run_dir_for(key, profile=profile, data=data)
    if not is_complete(run_dir):
        from gensim.models import Word2Vec

        sents = sentences()
        model = Word2Vec(sents, **{"workers": 1, **options})
        itos = list(model.wv.index_to_key)
        run_dir.mkdir(parents=True, exist_ok=True)
        with atomic_path(run_dir / "vectors.safetensors") as tmp:
            save_file({"vectors": torch.from_numpy(np.ascontiguousarray(model.wv.vectors))}, str(tmp))
        atomic_write_text(run_dir / "itos.json", json.dumps(itos, ensure_ascii=False))
        info = {"config": dataclasses.asdict(key), "data": dict(data), "tokens": sum(map(len, sents)),
                "types": len(itos)}
        atomic_write_text(run_dir / "done.json", json.dumps(info, indent=1))
    vectors = load_file(str(run_dir / "vectors.safetensors"))["vectors"].numpy()
    itos = json.loads((run_dir / "itos.json").read_text(encoding="utf-8"))
    return dict(zip(itos, vectors))


def char_vectors(cfg: Word2VecConfig, profile: str | Profile) -> dict[str, np.ndarray]:
    """MMTNN pre-training: vectors over the LM corpus's training split."""
    from ...data.corpus import lm_dataset_names
    from ...data.manifest import load_manifest

    sums = {f.path: f.sha256 for name in lm_dataset_names() for f in load_manifest().get(name).files}
    return word2vec_vectors(cfg, lambda: _corpus(cfg), profile=profile, data=sums, vector_size=cfg.dim,
                            window=cfg.window, sg=cfg.sg, negative=cfg.negative, min_count=cfg.min_count,
                            epochs=cfg.epochs, workers=cfg.workers, seed=cfg.seed)


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


__all__ = ["Word2VecConfig", "char_vectors", "init_table", "nearest", "word2vec_vectors"]
