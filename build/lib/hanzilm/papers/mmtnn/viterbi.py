"""Batched Viterbi over BMES with previous-tag-dependent scores.

scores[b, i, p, t] is the score of tag t at position i of sentence b given previous tag p (p = 4 is START,
used at i = 0). The recursion is vectorised over the batch and over previous tags; only the positions loop.
Loss-augmented decoding (max-margin training) is the same search on scores + kappa * [t != gold_i].
"""

from __future__ import annotations

import numpy as np

from .tags import START, VALID, VALID_END

NEG = np.float32(-1e9)


def viterbi(scores: np.ndarray, lengths: np.ndarray, *, constrain: bool = True,
            allowed: np.ndarray | None = None, jump: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Best tag sequences (B, L) (-1 beyond each length) and their scores (B,).

    constrain: only valid BMES sequences (B/M followed by M/E, a sentence starting with B/S and ending with
    E/S). allowed: optional (B, L, 4) boolean mask of the tags each position may take. jump: a lone sentence's
    stretches where the mask leaves one tag a position are passed in one step (the same path and score as the
    step-by-step loop, which `jump=False` keeps)."""
    scores = np.asarray(scores, dtype=np.float32)
    nb, length = scores.shape[:2]
    lengths = np.asarray(lengths)
    if length == 0:
        return np.full((nb, 0), -1, dtype=np.int64), np.zeros(nb, dtype=np.float32)
    trans = np.where(VALID, 0.0, NEG).astype(np.float32) if constrain else np.zeros((5, 4), np.float32)
    cur = scores[:, :, :4, :] + trans[None, None, :4, :]          # (B, L, 4, 4)
    first = scores[:, 0, START, :] + trans[START]                  # (B, 4)
    if allowed is not None:
        penalty = np.where(allowed, 0.0, NEG).astype(np.float32)  # (B, L, 4)
        cur += penalty[:, :, None, :]
        first = first + penalty[:, 0]
    # positions past a sentence's end carry each state over unchanged (0 to itself, NEG to the others), so the
    # loop needs no per-step mask: a finite delta_t + 0 beats delta_p + NEG, and the backpointer is t itself
    past = np.arange(length)[None, :] >= lengths[:, None]
    if past.any():
        cur[past] = np.where(np.eye(4, dtype=bool), 0.0, NEG).astype(np.float32)
    # previous tags outermost, (prev, B, cur): each step is a few elementwise NumPy calls on contiguous rows, the
    # max over the four previous tags and its argmax (the first on a tie, as argmax) by pairs; reducing over the
    # middle axis of (B, prev, cur) took 3.3x as long per step with the hundreds of pieces a segmenter searches
    cur = np.ascontiguousarray(cur.transpose(1, 2, 0, 3))          # (L, prev, B, cur)
    delta = first.T                                                # (prev, B)
    back = np.empty((length, nb, 4), dtype=np.int8)
    back[0] = np.arange(4)
    cand = np.empty((4, nb, 4), dtype=np.float32)
    forced = _forced_runs(allowed, lengths) if jump and allowed is not None and nb == 1 else {}
    i = 1
    while i < length:
        if i in forced:  # a stretch where the mask leaves one tag a position: its path is known, one step
            i, delta = _through_forced(cur, delta, back, forced[i], allowed[0], i)
            continue
        np.add(delta[:, :, None], cur[i], out=cand)
        c0, c1, c2, c3 = cand
        m01, m23 = np.maximum(c0, c1), np.maximum(c2, c3)
        back[i] = np.where(m23 > m01, (c3 > c2) + np.int8(2), (c1 > c0).view(np.int8))
        delta = np.maximum(m01, m23).T
        i += 1
    delta = delta.T
    final = delta + (np.where(VALID_END, 0.0, NEG).astype(np.float32) if constrain else 0.0)
    last = final.argmax(axis=1)
    total = final[np.arange(nb), last]
    tags = np.empty((nb, length), dtype=np.int64)
    tags[:, -1] = last
    rows = np.arange(nb)
    for i in range(length - 1, 0, -1):
        tags[:, i - 1] = back[i][rows, tags[:, i]]
    tags[np.arange(length)[None, :] >= lengths[:, None]] = -1
    return tags, total


# a stretch of forced positions shorter than this goes through the loop: jumping it costs more than its steps
MIN_FORCED = 16


def _forced_runs(allowed: np.ndarray, lengths: np.ndarray) -> dict[int, int]:
    """{i: j} for each stretch of positions i-1 .. j-1 of one sentence where the mask allows exactly one tag
    (the inside of a long ASCII run or of a grapheme cluster), at least MIN_FORCED long."""
    one = allowed[0, :int(lengths[0])].sum(axis=1) == 1
    edges = np.flatnonzero(np.diff(np.concatenate([[0], one.view(np.int8), [0]])))
    return {int(a) + 1: int(b) for a, b in zip(edges[::2], edges[1::2]) if b - a >= MIN_FORCED}


def _through_forced(cur: np.ndarray, delta: np.ndarray, back: np.ndarray, end: int, allowed: np.ndarray,
                    i: int) -> tuple[int, np.ndarray]:
    """The recursion over forced positions i .. end-1 (position i-1 forced too), at once: each position's one
    tag follows the one before it, its score the running sum (float32, added in the loop's order)."""
    tags = allowed[i - 1:end].argmax(axis=1)                     # the one tag of each position
    steps = cur[np.arange(i, end), tags[:-1], 0, tags[1:]]       # cur is (L, prev, B, cur)
    running = np.cumsum(np.concatenate([[delta[tags[0], 0]], steps]).astype(np.float32), dtype=np.float32)
    back[i:end, 0, :] = tags[:-1, None]
    out = np.full_like(delta, 2 * NEG)                           # the other tags: out of reach, as in the loop
    out[tags[-1], 0] = running[-1]
    return end, out


def path_scores(scores: np.ndarray, tags: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Score of given tag sequences under `scores` (numpy reference; the models use the torch version)."""
    nb, length = tags.shape
    total = np.zeros(nb, dtype=np.float64)
    for b in range(nb):
        prev = START
        for i in range(int(lengths[b])):
            total[b] += scores[b, i, prev, tags[b, i]]
            prev = tags[b, i]
    return total
