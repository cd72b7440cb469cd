"""Character vectors from gensim's word2vec, made once per (config, data) through the model store.

    vectors = word2vec_vectors(store, cfg, lambda: sentences, data=checksums, vector_size=25, sg=1)

The caller's frozen dataclass `cfg` keys the vectors (with the data checksums); `sentences` (lists of
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
                     data: Mapping[str, str], **options: Any) -> dict[str, np.ndarray]:
    """Character -> vector. `options` go to gensim's Word2Vec (one worker unless given: deterministic)."""

    def make(run_dir: Path) -> dict[str, Any]:
        from gensim.models import Word2Vec

        sents = sentences()
        model = Word2Vec(sents, **{"workers": 1, **options})
        itos = list(model.wv.index_to_key)
        with atomic_path(run_dir / "vectors.safetensors") as tmp:
            save_file({"vectors": torch.from_numpy(np.ascontiguousarray(model.wv.vectors))}, str(tmp))
        atomic_write_text(run_dir / "itos.json", json.dumps(itos, ensure_ascii=False))
        return {"tokens": sum(map(len, sents)), "types": len(itos)}

    run_dir = store.make_or_load(key, make, data=data)
    vectors = load_file(str(run_dir / "vectors.safetensors"))["vectors"].numpy()
    itos = json.loads((run_dir / "itos.json").read_text(encoding="utf-8"))
    return dict(zip(itos, vectors))
