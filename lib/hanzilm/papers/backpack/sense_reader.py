"""A stored Backpack's sense projections E^T C(x)_l in NumPy: what `hanzilm senses` prints, without torch.

The sense network is a small feed-forward over one embedding (`backpack.SenseNetwork`), so answering for one
character is a few 128 x 512 products: NumPy computes them in microseconds, where importing torch takes over
a second. Only the weights it needs are read (safetensors reads tensors by name), and the vocabulary comes from
the run directory's `vocab.json`. `tests/test_senses.py` checks it against the torch model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...data.vocab import CharVocab
from ...errors import DataError

VOCAB = "vocab.json"   # the run's vocabulary, written beside its weights (`experiment.train_run`)


def _gelu(x: np.ndarray) -> np.ndarray:  # the tanh form, as the model's MLP
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, eps: float = 1e-5) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    out = (x - mean) / np.sqrt(var + eps) * weight
    return out + bias if bias is not None else out


@dataclass
class SenseReader:
    wte: np.ndarray                     # (V, d) E, the embedding (tied to the output)
    net: dict[str, np.ndarray]          # the sense network's weights, by the torch module's names
    n_senses: int
    vocab: CharVocab

    @classmethod
    def load(cls, run_dir: str | Path, weights: str = "best.safetensors") -> SenseReader:
        from safetensors import SafetensorError, safe_open

        run_dir = Path(run_dir)
        path, vocab_path = run_dir / weights, run_dir / VOCAB
        if not vocab_path.is_file():
            raise DataError(f"no {VOCAB} beside the weights (a run trained before the vocabulary was kept "
                            "there): train it again", path=run_dir)
        try:
            with safe_open(str(path), framework="numpy") as f:
                names = [n for n in f.keys() if n == "wte.weight" or n.startswith("sense_network.")]
                tensors = {n: f.get_tensor(n).astype(np.float32) for n in names}
        except (SafetensorError, OSError) as e:
            raise DataError(f"cannot read the weights: {str(e).splitlines()[0]}", path=path) from None
        if "wte.weight" not in tensors or "sense_network.ff_2.c_proj.weight" not in tensors:
            raise DataError("not a Backpack's weights (no sense network)", path=path)
        bad = [n for n, t in tensors.items() if not np.isfinite(t).all()]
        if bad:
            raise DataError(f"the weights hold NaN or infinite values ({', '.join(bad[:3])})", path=path)
        wte = tensors.pop("wte.weight")
        net = {n.removeprefix("sense_network."): t for n, t in tensors.items()}
        vocab = CharVocab.load(vocab_path)
        if len(vocab) != len(wte):
            raise DataError(f"{VOCAB} has {len(vocab)} entries, the embedding {len(wte)} rows: they are not one "
                            "model's", path=vocab_path)
        return cls(wte, net, net["ff_2.c_proj.weight"].shape[0] // wte.shape[1], vocab)

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        y = x @ self.net[f"{name}.weight"].T
        return y + self.net[f"{name}.bias"] if f"{name}.bias" in self.net else y

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        return _layer_norm(x, self.net[f"{name}.weight"], self.net.get(f"{name}.bias"))

    def senses(self, ids: np.ndarray) -> np.ndarray:
        """C(x) (n, k, d) for token ids (n,): the sense network of `backpack.SenseNetwork`."""
        e = self.wte[ids]
        h = self._norm(e + self._linear(_gelu(self._linear(e, "ff_1.c_fc")), "ff_1.c_proj"), "ln_1")
        ff = self._linear(_gelu(self._linear(h, "ff_2.c_fc")), "ff_2.c_proj")
        c = h[:, None, :] + ff.reshape(len(ids), self.n_senses, -1)
        return self._norm(c.reshape(len(ids), -1), "ln_2").reshape(len(ids), self.n_senses, -1)

    def top(self, char: str, k: int) -> list[list[tuple[str, float]]]:
        """For each sense l, the k vocabulary characters of highest E^T C(char)_l with their scores (the
        special tokens left out), as `projection.top_characters` ranks them."""
        scores = self.senses(np.array([self.vocab.stoi[char]]))[0] @ self.wte.T     # (k_senses, V)
        scores[:, [self.vocab.stoi[s] for s in self.vocab.specials]] = -np.inf
        order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        return [[(self.vocab.itos[i], float(row[i])) for i in idx] for row, idx in zip(scores, order)]


def label(char: str, top: str, dictionary) -> tuple[str, bool, str]:
    """How a top character is shown: "(天)涯" when char + top is a dictionary word (as the paper marks it), with
    whether it is and an English gloss (of the word if it is one, else of the character); no gloss without a
    dictionary."""
    composes = dictionary is not None and char + top in dictionary
    gloss = "" if dictionary is None else dictionary.gloss(char + top if composes else top)
    return (f"({char}){top}" if composes else top), composes, gloss
