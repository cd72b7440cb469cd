"""A saved window tagger run with NumPy: the same scores as `WindowTagger.scores`, without importing torch.

`hanzilm segment` decodes with this: importing torch takes about a second, longer than segmenting a few
thousand characters, and decoding needs no gradients. The two are kept equal by a test on every model variant
(`tests/test_cli.py`); the torch model stays the one that is trained.

The character part of every linear map is one product: a (positions x H1) @ (H1 x [P | Q | linear]), where
`linear` holds, per previous tag, the char-tag terms of the tensor layer plus W1 (as `WindowTagger.scores`
builds them per call; here the parameters are combined once, at load time). The start tag is the previous tag
of a piece's first position only: its part of the hidden layer is computed for those rows alone.

That product is linear in each window slot's character embedding, so it is looked up rather than multiplied:
per slot, every character's embedding times that slot's rows of the maps, computed once at load time
(`slot_maps`), and a position's row is the sum of its window's five looked-up rows: a sparse product with five
ones per row (`first_layer`), a few thousand additions per character instead of 125 times as many
multiply-adds. `first_layer_dense` is the plain product it must equal. The rest is the tensor layer, tanh, the
output layer and the search (`benchmarks/segment_speed.py` measures it against jieba, in one process).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...errors import DataError
from .spec import TaggerSpec
from .tags import N_TAGS, START
from .viterbi import viterbi


class NumpyTagger:
    def __init__(self, spec: TaggerSpec, weights: dict[str, np.ndarray]):
        if spec.tensor and not spec.tag_embedding:
            raise ValueError("the tensor layer is defined on [characters; previous tag]")
        self.spec = spec
        h, r = spec.hidden, spec.factors
        w = {name: np.asarray(v, dtype=np.float32) for name, v in weights.items()}
        self.char = w["char.weight"]
        self.bigram = w.get("bigram.weight")
        w1 = w["w1.weight"].T                                              # (H1, H2)
        self.tag_part = np.zeros((1, h), np.float32)    # per previous tag: W1_tag t_p (+ the tag-tag term)
        self.char_maps = w1                             # the character part of the hidden layer, (H1, columns)
        if spec.tag_embedding:
            t = w["tag.weight"]
            self.tag_part = t @ w["w1_tag.weight"].T
        if spec.tensor:
            pt = (t @ w["p_tag.weight"].T).reshape(5, h, r)
            qt = (t @ w["q_tag.weight"].T).reshape(5, h, r)
            pw = w["p_char.weight"].reshape(h, r, -1)
            qw = w["q_char.weight"].reshape(h, r, -1)
            # per previous tag, the char-tag terms and W1 a in one map (H1, 5, H2): W1 a needs no columns of its own
            linear = np.einsum("krj,pkr->jpk", pw, qt) + np.einsum("krj,pkr->jpk", qw, pt) + w1[:, None, :]
            self.tag_part = self.tag_part + (pt * qt).sum(-1)
            # P and Q factor-major, (r, h): the sum over the r factors then runs along contiguous rows of h
            # (2.7x faster than over the last axis of (h, r))
            self.char_maps = np.concatenate([pw.transpose(2, 1, 0).reshape(-1, r * h),
                                             qw.transpose(2, 1, 0).reshape(-1, r * h),
                                             linear[:, :START].reshape(len(linear), START * h)], axis=1)
            self.start_maps = np.ascontiguousarray(linear[:, START])        # (H1, H2), the first positions'
        self.char_maps = np.ascontiguousarray(self.char_maps)
        d, n_chars = self.char.shape[1], len(self.char)
        self.slot_maps = np.concatenate([self.char @ self.char_maps[j * d:(j + 1) * d] for j in range(spec.window)])
        self.slot_offsets = (np.arange(spec.window) * n_chars).astype(np.int32)
        self.bigram_maps = self.char_maps[spec.window * d:]      # (4 x bigram dim, columns), bigram models only
        self.tag_part = self.tag_part + w["w1.bias"]                      # b1 folded in
        self.w2, self.b2 = np.ascontiguousarray(w["w2.weight"].T), w["w2.bias"]
        # W2 once per previous tag but the start tag, block-diagonal: the output layer of all (position, previous
        # tag) pairs is one product with the rows of the hidden layer as they lie in memory, within the rows of the
        # big product (reshaped to one row per pair they would be copied first: half as slow again)
        self.w2_blocks = np.kron(np.eye(START, dtype=np.float32), self.w2)   # (4 * H2, 4 * 4)
        self.b2_blocks = np.tile(self.b2, START)
        self.transition = w.get("transition")

    @classmethod
    def load(cls, path: str | Path, spec: TaggerSpec, n_chars: int, n_bigrams: int = 0) -> NumpyTagger:
        """The weights of a saved WindowTagger (safetensors); a DataError names the file when they do not fit."""
        from safetensors import SafetensorError
        from safetensors.numpy import load_file

        try:
            weights = load_file(str(path))
        except (OSError, SafetensorError) as e:
            raise DataError(f"cannot read the model weights: {e}", path=path) from None
        expected = spec.weight_shapes(n_chars, n_bigrams)
        found = {name: tuple(v.shape) for name, v in weights.items()}
        if found != expected:
            wrong = sorted(n for n in expected.keys() | found.keys() if expected.get(n) != found.get(n))
            raise DataError("the weights do not fit the model in config.json: "
                            + "; ".join(f"{n}: {found.get(n, 'missing')} (expected {expected.get(n, 'none')})"
                                        for n in wrong[:5]), path=path)
        bad = sorted(n for n, v in weights.items() if not np.isfinite(v).all())
        if bad:
            raise DataError(f"the weights hold NaN or infinite values ({', '.join(bad[:5])}): a damaged file",
                            path=path)
        return cls(spec, weights)

    def scores(self, batch: dict[str, np.ndarray]) -> np.ndarray:
        """(B, L, 5, 4): the score of tag t at position i given previous tag p, as WindowTagger.scores, but for
        the start tag (p = 4) at the first position only (0 elsewhere: no path goes through it there)."""
        s, h, r = self.spec, self.spec.hidden, self.spec.factors
        chars = batch["chars"]
        nb, length = chars.shape[0], chars.shape[1] - 4
        # each position's window of character ids (a view): the rows its first layer sums
        windows = np.lib.stride_tricks.sliding_window_view(chars, s.window, axis=1)[:, :length]
        pairs = np.lib.stride_tricks.sliding_window_view(batch["bigrams"], s.window - 1, axis=1)[:, :length] \
            if s.bigram else None
        y = self.first_layer(windows, pairs)
        if not s.tag_embedding:
            out = (np.tanh(y + self.tag_part) @ self.w2 + self.b2).reshape(nb, length, 1, N_TAGS)
            if self.transition is not None:
                return out + self.transition
            return np.broadcast_to(out, (nb, length, 5, N_TAGS))
        if s.tensor:                            # the char-char term of the tensor layer, then the rest in place
            shared = np.einsum("nrk,nrk->nk", y[:, :h * r].reshape(-1, r, h), y[:, h * r:2 * h * r].reshape(-1, r, h))
            pre = y[:, 2 * h * r:].reshape(-1, START, h)
            pre += shared[:, None, :]
        else:                                   # W1 a, the same for every previous tag
            shared = y
            pre = np.repeat(y[:, None, :], START, axis=1)
        pre += self.tag_part[:START]
        np.tanh(pre, out=pre)
        out = np.zeros((nb, length, 5, N_TAGS), np.float32)
        out[:, :, :START] = (pre.reshape(len(y), -1) @ self.w2_blocks + self.b2_blocks).reshape(nb, length, START,
                                                                                                N_TAGS)
        if length:  # the start tag, at each piece's first position
            first = np.arange(nb) * length
            pre0 = shared[first] + self.tag_part[START]
            if s.tensor:
                pre0 += self.inputs(windows[:, :1], None if pairs is None else pairs[:, :1]) @ self.start_maps
            out[:, 0, START] = np.tanh(pre0) @ self.w2 + self.b2
        return out

    def first_layer(self, windows: np.ndarray, pairs: np.ndarray | None = None) -> np.ndarray:
        """(positions, columns): `first_layer_dense`, each row the sum of its window's rows of `slot_maps`."""
        from scipy.sparse import csr_matrix

        n, width = windows.shape[0] * windows.shape[1], windows.shape[2]
        rows = (windows.reshape(n, width) + self.slot_offsets).ravel()
        picks = csr_matrix((np.ones(len(rows), np.float32), rows, np.arange(0, len(rows) + 1, width)),
                           shape=(n, len(self.slot_maps)))
        y = np.asarray(picks @ self.slot_maps)
        if pairs is not None:
            y += self.bigram[pairs].reshape(n, -1) @ self.bigram_maps
        return y

    def first_layer_dense(self, windows: np.ndarray, pairs: np.ndarray | None = None) -> np.ndarray:
        """(positions, columns): the input rows times the maps."""
        return self.inputs(windows, pairs) @ self.char_maps

    def inputs(self, windows: np.ndarray, pairs: np.ndarray | None = None) -> np.ndarray:
        """(positions, H1): each position's window of character embeddings (and of bigram embeddings)."""
        n = windows.shape[0] * windows.shape[1]
        a = self.char[windows].reshape(n, -1)
        if pairs is not None:
            a = np.concatenate([a, self.bigram[pairs].reshape(n, -1)], axis=1)
        return a

    decode_scores = scores  # the name the segmenter calls on either engine

    def decode(self, batch: dict[str, np.ndarray], allowed: np.ndarray | None = None) -> np.ndarray:
        tags, _ = viterbi(self.scores(batch), batch["lengths"], constrain=self.spec.constrain, allowed=allowed)
        return tags
