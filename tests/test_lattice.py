"""The segmental lattice: forward marginal and Viterbi against brute-force enumeration of segmentations."""

from __future__ import annotations

import math

import pytest
import torch

from hanzilm.papers.mslm.lattice import log_marginal, split, viterbi


def compositions(n: int, K: int):
    """Every segmentation of n characters into segments of length 1..K (as lists of lengths)."""
    if n == 0:
        yield []
        return
    for l in range(1, min(K, n) + 1):
        for rest in compositions(n - l, K):
            yield [l, *rest]


def path_score(seg_logp_b: torch.Tensor, lengths: list[int]) -> float:
    t, total = 0, 0.0
    for l in lengths:
        total += float(seg_logp_b[t, l - 1])
        t += l
    return total


def brute(seg_logp: torch.Tensor, lengths: torch.Tensor):
    K = seg_logp.shape[2]
    marg, best = [], []
    for b, n in enumerate(lengths.tolist()):
        scores = {tuple(c): path_score(seg_logp[b], c) for c in compositions(n, K)}
        marg.append(math.log(sum(math.exp(s) for s in scores.values())))
        best.append(max(scores.items(), key=lambda kv: kv[1]))
    return marg, best


def random_batch(B: int, T: int, K: int, seed: int, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    seg_logp = -5 * torch.rand(B, T, K, generator=g, dtype=dtype)
    lengths = torch.randint(1, T + 1, (B,), generator=g)
    lengths[0] = T
    return seg_logp, lengths


@pytest.mark.parametrize("K", [1, 2, 3, 5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_marginal_equals_brute_force(K, seed):
    seg_logp, lengths = random_batch(B=5, T=9, K=K, seed=seed)
    marg, _ = brute(seg_logp, lengths)
    got = log_marginal(seg_logp, lengths)
    assert got.tolist() == pytest.approx(marg, rel=1e-10, abs=1e-10)


@pytest.mark.parametrize("K", [1, 3, 5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_viterbi_equals_brute_force_argmax(K, seed):
    seg_logp, lengths = random_batch(B=5, T=9, K=K, seed=seed)
    _, best = brute(seg_logp, lengths)
    score, segs = viterbi(seg_logp, lengths)
    for b in range(len(lengths)):
        assert segs[b] == list(best[b][0])
        assert sum(segs[b]) == int(lengths[b])
        assert float(score[b]) == pytest.approx(best[b][1], abs=1e-9)


def test_padding_is_ignored_and_batching_is_independent():
    seg_logp, lengths = random_batch(B=4, T=8, K=4, seed=3)
    garbage = seg_logp.clone()
    garbage[:, :, :] += 100 * (torch.arange(8)[None, :, None] + torch.arange(1, 5)[None, None, :]
                               > lengths[:, None, None]).double()          # scribble on impossible entries
    full = log_marginal(garbage, lengths)
    for b in range(4):
        n = int(lengths[b])
        alone = log_marginal(seg_logp[b:b + 1, :n], lengths[b:b + 1])
        assert float(full[b]) == pytest.approx(float(alone[0]), abs=1e-10)
        assert viterbi(garbage, lengths)[1][b] == viterbi(seg_logp[b:b + 1, :n], lengths[b:b + 1])[1][0]


def test_gradient_is_finite_with_padding_and_is_the_posterior():
    seg_logp, lengths = random_batch(B=3, T=7, K=3, seed=4)
    seg_logp.requires_grad_(True)
    log_marginal(seg_logp, lengths).sum().backward()
    grad = seg_logp.grad
    assert torch.isfinite(grad).all()
    # d log p(x) / d seg_logp[t, l] is the posterior probability of that segment: brute-force it for b = 0
    n, K = int(lengths[0]), 3
    paths = list(compositions(n, K))
    weights = torch.tensor([path_score(seg_logp[0].detach(), c) for c in paths]).softmax(0)
    posterior = torch.zeros(7, K, dtype=torch.float64)
    for w, c in zip(weights, paths):
        t = 0
        for l in c:
            posterior[t, l - 1] += w
            t += l
    assert torch.allclose(grad[0], posterior, atol=1e-10)


def test_float32_long_sequence_is_finite():
    seg_logp, _ = random_batch(B=2, T=300, K=10, seed=5, dtype=torch.float32)
    lengths = torch.tensor([300, 17])
    out = log_marginal(seg_logp.requires_grad_(True), lengths)
    out.sum().backward()
    assert torch.isfinite(out).all() and torch.isfinite(seg_logp.grad).all()
    assert all(sum(s) == n for s, n in zip(viterbi(seg_logp, lengths)[1], [300, 17]))


def test_split():
    assert split("abcdef", [2, 1, 3]) == ["ab", "c", "def"]
