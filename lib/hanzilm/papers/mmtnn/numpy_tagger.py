"""A saved window tagger run with NumPy: the same scores as `WindowTagger.scores`, without importing torch.

`hanzilm segment` decodes with this: importing torch takes about a second, longer than segmenting a few
thousand characters, and decoding needs no gradients. The two are kept equal by a test on every model variant
(`tests/test_cli.py`); the torch model stays the one that is trained.

The character part of every linear map is one product: a (positions x H1) @ (H1 x [W1 | P | Q | cross]) with
the char-tag terms of the tensor layer folded into `cross`, as `WindowTagger.scores` does per call; here the
parameters are combined once, at load time.

That product is most of a decode and runs at the BLAS's peak (PKU MMTNN + pre-training, PKU test input, one
thread, AVX2 EPYC, 2026-12-04: 0.93 s of 1.41, 63 GFLOP/s). Tried and left: tables of each window slot's
characters already multiplied by the maps ((5, V, 1,300) floats, 107 MB for PKU), which turn the product into a
gather and a sum of five rows: 0.51-0.57 s against the product's 0.80 through scipy's sparse product, 0.72 with
NumPy's take and add (the gather is memory-bound), single-threaded where the product uses every thread, and
0.65 s to build at load. Left for the next change of this file: a fifth of the hidden layer (and of `cross`) is
the start tag's, which only each piece's first position needs (about 8 % of a decode).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...errors import DataError
from .spec import TaggerSpec
from .tags import N_TAGS
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
        columns = [w["w1.weight"].T]
        self.tag_part = np.zeros((1, h), np.float32)    # per previous tag: W1_tag t_p (+ the tag-tag term)
        if spec.tag_embedding:
            t = w["tag.weight"]
            self.tag_part = t @ w["w1_tag.weight"].T
            if spec.tensor:
                pt = (t @ w["p_tag.weight"].T).reshape(5, h, r)
                qt = (t @ w["q_tag.weight"].T).reshape(5, h, r)
                pw = w["p_char.weight"].reshape(h, r, -1)
                qw = w["q_char.weight"].reshape(h, r, -1)
                cross = np.einsum("krj,pkr->jpk", pw, qt) + np.einsum("krj,pkr->jpk", qw, pt)
                self.tag_part = self.tag_part + (pt * qt).sum(-1)
                # P and Q factor-major, (r, h): the sum over the r factors then runs along contiguous rows of h
                # (2.7x faster than over the last axis of (h, r))
                columns += [pw.transpose(2, 1, 0).reshape(-1, r * h), qw.transpose(2, 1, 0).reshape(-1, r * h),
                            cross.reshape(cross.shape[0], 5 * h)]
        self.char_maps = np.ascontiguousarray(np.concatenate(columns, axis=1))
        self.tag_part = self.tag_part + w["w1.bias"]                      # b1 folded in
        self.w2, self.b2 = np.ascontiguousarray(w["w2.weight"].T), w["w2.bias"]
        n_prev = self.tag_part.shape[0]
        # W2 once per previous tag, block-diagonal: the output layer of all (position, previous tag) pairs is
        # one product with the rows of the hidden layer as they lie in memory (no copy)
        self.w2_blocks = np.kron(np.eye(n_prev, dtype=np.float32), self.w2)   # (n_prev * H2, n_prev * 4)
        self.b2_blocks = np.tile(self.b2, n_prev)
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
        """(B, L, 5, 4): the score of tag t at position i given previous tag p, as WindowTagger.scores."""
        s, h, r = self.spec, self.spec.hidden, self.spec.factors
        chars = batch["chars"]
        nb, length = chars.shape[0], chars.shape[1] - 4
        # each position's window of ids (a view), gathered in one go: (B, L, window, dim) is the input row
        windows = np.lib.stride_tricks.sliding_window_view(chars, s.window, axis=1)[:, :length]
        a = self.char[windows].reshape(nb * length, -1)
        if s.bigram:
            pairs = np.lib.stride_tricks.sliding_window_view(batch["bigrams"], s.window - 1, axis=1)[:, :length]
            a = np.concatenate([a, self.bigram[pairs].reshape(nb * length, -1)], axis=1)
        y = a @ self.char_maps
        base = y[:, :h]                                                     # W1 a, then + the tensor term
        if s.tensor:
            pc = y[:, h:h + h * r].reshape(-1, r, h)
            qc = y[:, h + h * r:h + 2 * h * r].reshape(-1, r, h)
            base += np.einsum("nrk,nrk->nk", pc, qc)
            pre = y[:, h + 2 * h * r:].reshape(-1, 5, h)                    # the char-tag cross terms, in place
            pre += base[:, None, :]
            pre += self.tag_part
        else:
            pre = base[:, None, :] + self.tag_part                          # (N, 5|1, H2)
        np.tanh(pre, out=pre)
        n_prev = pre.shape[1]
        out = (pre.reshape(len(a), -1) @ self.w2_blocks + self.b2_blocks).reshape(nb, length, n_prev, N_TAGS)
        if self.transition is not None:
            out = out + self.transition
        elif out.shape[2] == 1:
            out = np.broadcast_to(out, (nb, length, 5, N_TAGS))
        return out

    def decode(self, batch: dict[str, np.ndarray], allowed: np.ndarray | None = None) -> np.ndarray:
        tags, _ = viterbi(self.scores(batch), batch["lengths"], constrain=self.spec.constrain, allowed=allowed)
        return tags
