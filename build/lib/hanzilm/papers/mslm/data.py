"""Character data for segmental LMs: the vocabulary, batches by characters (a pure function of the step, as
the trainer requires), and length-sorted evaluation batches."""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np
import torch

from ...data.vocab import CharVocab
from .model import PAD_ID, SPECIALS


def build_vocab(texts: Sequence[str]) -> CharVocab:
    """Every character of the training text; the SLM's special symbols first (their ids are fixed)."""
    vocab = CharVocab.build(texts, specials=SPECIALS)
    assert vocab.itos[:len(SPECIALS)] == list(SPECIALS)
    return vocab


def collate(rows: Sequence[Sequence[int]]) -> dict[str, torch.Tensor]:
    T = max(map(len, rows))
    chars = torch.full((len(rows), T), PAD_ID, dtype=torch.long)
    for i, r in enumerate(rows):
        chars[i, :len(r)] = torch.as_tensor(r, dtype=torch.long)
    return {"chars": chars, "lengths": torch.tensor([len(r) for r in rows], dtype=torch.long)}


def pack(lengths: Sequence[int], order: Sequence[int], batch_chars: int) -> list[list[int]]:
    """Cut `order` (sentence indices) into consecutive batches of at most batch_chars characters (a longer
    sentence forms a batch of its own)."""
    batches, cur, size = [], [], 0
    for i in order:
        if cur and size + lengths[i] > batch_chars:
            batches.append(cur)
            cur, size = [], 0
        cur.append(i)
        size += lengths[i]
    if cur:
        batches.append(cur)
    return batches


class CharBatches:
    """train_batches(step) for the trainer: each epoch shuffles the sentences, sorts them by length within
    pools of `pool` batches (little padding), packs batches of up to batch_chars characters and shuffles the
    batch order. Deterministic in (seed, step).

    within_pools: pack each pool on its own. Packed across pools (the default, as the stored runs were), the
    batch at the seam of two pools takes the longest sentences of one and the shortest of the next: at PKU's
    2,048 characters, e.g. 161 sentences padded to 551 characters, 40x the padding of a typical batch, whose
    attention peaks above 6 GB."""

    def __init__(self, rows: Sequence[Sequence[int]], batch_chars: int, seed: int = 0, pool: int = 50,
                 within_pools: bool = False):
        self.rows, self.batch_chars, self.seed, self.pool = rows, batch_chars, seed, pool
        self.within_pools = within_pools
        self.lengths = [len(r) for r in rows]
        self._epochs: list[list[list[int]]] = []
        self._starts: list[int] = [0]          # first global step of each epoch

    def _epoch(self, e: int) -> list[list[int]]:
        rng = np.random.default_rng([self.seed, e])
        perm = rng.permutation(len(self.rows))
        per_pool = max(1, self.pool * self.batch_chars // max(1, int(np.mean(self.lengths))))
        pools = [sorted(perm[k:k + per_pool].tolist(), key=lambda i: self.lengths[i])
                 for k in range(0, len(perm), per_pool)]
        if self.within_pools:
            batches = [b for p in pools for b in pack(self.lengths, p, self.batch_chars)]
        else:
            batches = pack(self.lengths, [i for p in pools for i in p], self.batch_chars)
        return [batches[i] for i in rng.permutation(len(batches))]

    def indices(self, step: int) -> list[int]:
        while self._starts[-1] <= step:
            self._epochs.append(self._epoch(len(self._epochs)))
            self._starts.append(self._starts[-1] + len(self._epochs[-1]))
        e = int(np.searchsorted(self._starts, step, side="right")) - 1
        return self._epochs[e][step - self._starts[e]]

    def __call__(self, step: int) -> dict[str, torch.Tensor]:
        return collate([self.rows[i] for i in self.indices(step)])


def eval_batches(rows: Sequence[Sequence[int]], batch_chars: int) -> Iterator[tuple[list[int], dict]]:
    """(sentence indices, batch) over every row once, sorted by length."""
    lengths = [len(r) for r in rows]
    order = sorted(range(len(rows)), key=lambda i: lengths[i])
    for idx in pack(lengths, order, batch_chars):
        yield idx, collate([rows[i] for i in idx])
