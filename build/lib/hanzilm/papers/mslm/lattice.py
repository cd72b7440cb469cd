"""The segmentation lattice of a segmental language model (Downey et al. 2021, Sec. 2; Kawakami et al. 2019).

Input everywhere: `seg_logp` of shape (B, T, K), where seg_logp[b, t, l - 1] = log p(x[b, t:t+l] | context) is
the log probability of the segment of length l starting at character t (end-of-segment symbol included), and
`lengths` (B,), the number of characters of each sequence. Entries with t + l > lengths[b] are ignored (whatever
they hold), so a padded batch needs no cleaning by the caller.

    log_marginal(seg_logp, lengths)   log p(x) = log alpha_n, Eq. (2), differentiable (the training loss)
    viterbi(seg_logp, lengths)        the best segmentation (segment lengths) and its log probability

Both are vectorised over the batch and over the segment lengths k = 1..K; the recursion over positions j is
the only Python loop (it is sequential by nature). Both run in fp32 whatever autocast their caller is under.
"""

from __future__ import annotations

import functools

import torch

# a finite "minus infinity": impossible lattice edges. -inf would make logsumexp's gradient NaN (0/0) at
# positions past a sequence's end, where every incoming edge is impossible; NaN times a zero mask stays NaN.
NEG = -1e30


def _fp32(lattice_fn):
    """`lattice_fn` in fp32 at least, outside autocast: a sentence's log-sum-exps over thousands of edges stay
    exact when the segment scores come from a bf16 model (training and scoring alike)."""

    @functools.wraps(lattice_fn)
    def in_fp32(seg_logp: torch.Tensor, lengths: torch.Tensor):
        with torch.autocast(seg_logp.device.type, enabled=False):
            return lattice_fn(seg_logp.to(torch.promote_types(seg_logp.dtype, torch.float32)), lengths)
    return in_fp32


def valid_mask(lengths: torch.Tensor, T: int, K: int) -> torch.Tensor:
    """(B, T, K) bool: the segment of length l = k + 1 starting at t lies inside the sequence."""
    t = torch.arange(T, device=lengths.device)[:, None]
    l = torch.arange(1, K + 1, device=lengths.device)[None, :]
    return (t + l)[None] <= lengths[:, None, None]


def by_end(seg_logp: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Re-index the segment scores by their end position: E[b, j - 1, l - 1] = seg_logp[b, j - l, l - 1], the
    edge from lattice node j - l to node j (j = 1..T); impossible edges (outside the sequence) hold NEG."""
    B, T, K = seg_logp.shape
    scores = torch.where(valid_mask(lengths, T, K), seg_logp, torch.full_like(seg_logp, NEG))
    padded = torch.cat([scores.new_full((B, K, K), NEG), scores], dim=1)          # row t + K = start t
    j = torch.arange(1, T + 1, device=seg_logp.device)[:, None]
    l = torch.arange(1, K + 1, device=seg_logp.device)[None, :]
    return padded[:, j - l + K, l - 1]                                              # (B, T, K)


@_fp32
def log_marginal(seg_logp: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """log p(x) for each sequence, summed over every segmentation into segments of length <= K.

    The forward recursion of Eq. (2) in log space: alpha_0 = 0 (p = 1) and
    log alpha_j = logsumexp_{l=1..K} (log alpha_{j-l} + log p(x_{j-l:j} | x_{<j-l})). Returns (B,)."""
    B, T, K = seg_logp.shape
    edges = by_end(seg_logp, lengths)
    # window[:, l - 1] = log alpha_{j-l} for the node j being computed: the K previous nodes, newest first
    window = torch.cat([seg_logp.new_zeros(B, 1), seg_logp.new_full((B, K - 1), NEG)], dim=1)
    alphas = [window[:, 0]]
    for j, edge in enumerate(edges.unbind(1), start=1):     # unbind: one gradient buffer, not one per step
        alpha_j = torch.logsumexp(window + edge, dim=1)
        alphas.append(alpha_j)
        window = torch.cat([alpha_j[:, None], window[:, :-1]], dim=1)
    return torch.stack(alphas, dim=1).gather(1, lengths[:, None].long()).squeeze(1)


@torch.no_grad()
@_fp32
def viterbi(seg_logp: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, list[list[int]]]:
    """The maximum-probability segmentation of each sequence, read off back-pointers.

    Returns (best log probability (B,), segment lengths per sequence, left to right)."""
    B, T, K = seg_logp.shape
    edges = by_end(seg_logp, lengths)
    window = torch.cat([edges.new_zeros(B, 1), edges.new_full((B, K - 1), NEG)], dim=1)
    deltas, back = [window[:, 0]], torch.zeros(B, T + 1, dtype=torch.long)
    for j, edge in enumerate(edges.unbind(1), start=1):
        best, arg = (window + edge).max(dim=1)
        deltas.append(best)
        back[:, j] = arg.cpu() + 1                   # the length of the last segment of the best path to j
        window = torch.cat([best[:, None], window[:, :-1]], dim=1)
    score = torch.stack(deltas, dim=1).gather(1, lengths[:, None].long()).squeeze(1)
    back_np, segmentations = back.numpy(), []
    for b, n in enumerate(lengths.tolist()):
        seg, j = [], n
        while j > 0:
            seg.append(int(back_np[b, j]))
            j -= seg[-1]
        segmentations.append(seg[::-1])
    return score, segmentations


def split(text: str, segment_lengths: list[int]) -> list[str]:
    """Cut `text` into words of the given lengths."""
    out, i = [], 0
    for n in segment_lengths:
        out.append(text[i:i + n])
        i += n
    assert i == len(text), (i, len(text))
    return out


__all__ = ["NEG", "by_end", "log_marginal", "split", "valid_mask", "viterbi"]
