"""Log-softmax over a large output vocabulary, the language models' largest tensor, touched as few times as it can
be: the segmental LMs' decoder output and the character LMs' tied output layer both end in it."""

from __future__ import annotations

import torch


class _SelectedLogProbs(torch.autograd.Function):
    """log softmax(logits)[..., index]. The forward keeps e = exp(logits - max) (what logsumexp computes anyway)
    instead of the logits or a log-softmax, so the backward's softmax is one in-place scale of e rather than a
    second exp over the whole tensor, and no zero-filled gradient of the logits' size is built to scatter into."""

    @staticmethod
    def forward(ctx, logits: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        peak = logits.amax(dim=-1, keepdim=True)
        picked = logits.gather(-1, index)
        e = (logits - peak).exp_()
        total = e.sum(dim=-1, keepdim=True)
        ctx.save_for_backward(e, total, index)
        return picked - (total.log() + peak)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad: torch.Tensor):
        e, total, index = ctx.saved_tensors
        # d/dlogits sum_m g_m (logits[i_m] - lse) = scatter(g) - softmax(logits) * sum_m g_m; e is not needed
        # after this backward, so the gradient is built in its storage
        out = e.mul_(grad.sum(-1, keepdim=True).div_(total).neg_())
        return out.scatter_add_(-1, index, grad), None


def selected_log_probs(logits: torch.Tensor, index: torch.Tensor, consume: bool = False) -> torch.Tensor:
    """log_softmax(logits, -1).gather(-1, index), in the logits' dtype (cast to fp32 first under autocast).

    consume: the logits are a temporary the caller is done with, and nothing differentiates through them
    (evaluation): they are overwritten in place, since a fresh tensor of their size costs more to allocate and
    fault in than the arithmetic; the values are the same, bit for bit."""
    if not consume:
        return _SelectedLogProbs.apply(logits, index)
    if logits.requires_grad and torch.is_grad_enabled():
        raise ValueError("selected_log_probs(consume=True) would overwrite logits that autograd needs")
    peak = logits.amax(dim=-1, keepdim=True)
    picked = logits.gather(-1, index)
    total = logits.sub_(peak).exp_().sum(dim=-1, keepdim=True)
    return picked - (total.log() + peak)


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy of (..., V) logits against (...) target ids: F.cross_entropy's value, at least
    in fp32 (bf16 logits of autocast are widened first), at about half its cost over a large vocabulary (see
    _SelectedLogProbs)."""
    if logits.dtype not in (torch.float32, torch.float64):
        logits = logits.float()
    lp = selected_log_probs(logits.reshape(-1, logits.size(-1)), targets.reshape(-1, 1))
    return -lp.mean()
