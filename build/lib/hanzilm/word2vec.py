"""Character vectors from gensim's word2vec, made once per (config, data) through the model store.

    vectors = word2vec_vectors(store, cfg, lambda: sentences, data=checksums, version=versions.key("mmtnn"),
                               vector_size=25, sg=1)

The caller's frozen dataclass `cfg` keys the vectors (with the data checksums and the caller's chapter version); `sentences` (lists of
characters) is only called when the store has none. The run directory holds vectors.safetensors and itos.json.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from .io import atomic_path, atomic_write_text
from .store import Store


def word2vec_vectors(store: Store, key: Any, sentences: Callable[[], list[list[str]]], *,
                     data: Mapping[str, str], version: str, until_stable: float | None = None, **options: Any
                     ) -> dict[str, np.ndarray]:
    """Character -> vector. `options` go to gensim's Word2Vec (one worker unless given: deterministic).

    until_stable: train one epoch at a time (the learning rate still decays linearly over `epochs`, now the
    most) and stop after the first epoch whose nearest neighbours agree with the previous epoch's to this
    share (`neighbour_overlap`); done.json records the epochs trained and each epoch's overlap."""

    def make(run_dir: Path) -> dict[str, Any]:
        from gensim.models import Word2Vec

        sents = sentences()
        options.setdefault("workers", 1)
        made: dict[str, Any] = {"tokens": sum(map(len, sents))}
        if until_stable is None:
            model = Word2Vec(sents, **options)
        else:
            epochs = options.pop("epochs", 5)
            model = Word2Vec(**options)
            model.build_vocab(sents)
            a0, a1 = model.alpha, model.min_alpha
            overlaps: list[float] = []
            previous = None
            for e in range(epochs):
                model.train(sents, total_examples=model.corpus_count, epochs=1,
                            start_alpha=a0 - (a0 - a1) * e / epochs, end_alpha=a0 - (a0 - a1) * (e + 1) / epochs)
                current = nearest_ids(model.wv.vectors)
                if previous is not None:
                    overlaps.append(float((current[:, :, None] == previous[:, None, :]).any(-1).mean()))
                    if overlaps[-1] >= until_stable:
                        break
                previous = current
            made.update(epochs_trained=e + 1, neighbour_overlap=overlaps)
        itos = list(model.wv.index_to_key)
        with atomic_path(run_dir / "vectors.safetensors") as tmp:
            save_file({"vectors": torch.from_numpy(np.ascontiguousarray(model.wv.vectors))}, str(tmp))
        atomic_write_text(run_dir / "itos.json", json.dumps(itos, ensure_ascii=False))
        return {**made, "types": len(itos)}

    run_dir = store.make_or_load(key, make, data=data, version=version)
    vectors = load_file(str(run_dir / "vectors.safetensors"))["vectors"].numpy()
    itos = json.loads((run_dir / "itos.json").read_text(encoding="utf-8"))
    return dict(zip(itos, vectors))


def _run_dir(store: Store, key: Any, data: Mapping[str, str], version: str) -> Path:
    return store.run_dir(key, data, version)


def vectors_summary(store: Store, key: Any, data: Mapping[str, str], version: str) -> dict[str, Any]:
    """done.json of made vectors: tokens, types, wall time and, trained until stable, the epochs and overlaps."""
    from .store import load_summary

    return load_summary(_run_dir(store, key, data, version))


def vectors_stored(store: Store, key: Any, data: Mapping[str, str], version: str) -> bool:
    """Whether `word2vec_vectors` with this key and data would load the vectors instead of training them."""
    from .store import is_complete

    return is_complete(_run_dir(store, key, data, version))


def nearest_ids(vectors: np.ndarray, probes: int = 500, k: int = 10) -> np.ndarray:
    """(probes, k): the k nearest rows by cosine of each of the first `probes` rows (gensim orders rows by
    frequency, so these are the most frequent characters), itself excluded."""
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    sims = unit[:probes] @ unit.T
    sims[np.arange(min(probes, len(unit))), np.arange(min(probes, len(unit)))] = -np.inf
    return np.argsort(-sims, axis=1)[:, :k]

