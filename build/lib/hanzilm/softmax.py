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


def selected_log_probs(logits: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """log_softmax(logits, -1).gather(-1, index), in the logits' dtype (cast to fp32 first under autocast)."""
    return _SelectedLogProbs.apply(logits, index)


class _LinearSelectedLogProbs(torch.autograd.Function):
    """log softmax(x @ weight.T + bias)[..., index], the logits computed and normalised a block of rows at a time
    and never stored whole in fp32: training keeps e = exp(logits - max) in the matmul dtype for the backward
    (written once, as each block is done), evaluation nothing. Built whole, the fp32 logits of a segmental-LM step
    (12 k rows x 4.6 k characters) were written, shifted, exponentiated and summed in separate passes and
    page-faulted in afresh, which on a 2-core CPU cost more than the output layer's bf16 matmuls themselves
    (benchmarks/segmental_lm.py --profile pku/mslm)."""

    @staticmethod
    def forward(ctx, x, weight, bias, index, dtype, rows, keep):
        M, V = x.shape[0], weight.shape[0]
        xc, wt = x.to(dtype), weight.to(dtype).t()
        bc = bias.to(dtype) if bias is not None else None
        e = torch.empty(M, V, dtype=dtype, device=x.device) if keep else None
        acc = torch.promote_types(dtype, torch.float32)   # the normalisation's dtype: fp32, or fp64 for tests
        total = x.new_empty(M, 1, dtype=acc)
        out = x.new_empty(index.shape, dtype=acc)
        for r in range(0, M, rows):
            s = slice(r, min(r + rows, M))
            inplace = keep and dtype == acc          # the block's logits become e's block
            logits = torch.addmm(bc, xc[s], wt, out=e[s] if inplace else None) if bc is not None else \
                torch.mm(xc[s], wt, out=e[s] if inplace else None)
            logits = logits.to(acc)
            peak = logits.amax(dim=-1, keepdim=True)
            picked = logits.gather(-1, index[s])
            logits.sub_(peak).exp_()
            total[s] = logits.sum(dim=-1, keepdim=True)
            out[s] = picked - (total[s].log() + peak)
            if keep and not inplace:
                e[s] = logits
        if keep:
            ctx.save_for_backward(xc, wt, e, total, index)
            ctx.rows, ctx.dtypes = rows, (x.dtype, weight.dtype, bias.dtype if bias is not None else None)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        xc, wt, e, total, index = ctx.saved_tensors
        # d/dlogits sum_m g_m (logits[i_m] - lse) = scatter(g) - softmax(logits) * sum_m g_m, built in e's storage
        # a block at a time (in fp32, rounded once to e's dtype), then the two matmuls over all rows
        scale = grad.sum(-1, keepdim=True).div_(total).neg_()
        grad_b = scale.new_zeros(e.shape[1]) if ctx.needs_input_grad[2] else None
        for r in range(0, e.shape[0], ctx.rows):
            s = slice(r, r + ctx.rows)
            block = e[s].to(scale.dtype).mul_(scale[s]).scatter_add_(-1, index[s], grad[s])
            if grad_b is not None:
                grad_b += block.sum(0)
            if e.dtype != block.dtype:
                e[s] = block
        grad_x = (e @ wt.t()).to(ctx.dtypes[0]) if ctx.needs_input_grad[0] else None
        grad_w = None
        if ctx.needs_input_grad[1]:    # oneDNN's bf16 e.t() @ xc would copy e whole first; MKL's fp32 need not
            grad_w = (e.t() @ xc if e.dtype == torch.float32 else (xc.t() @ e).t()).to(ctx.dtypes[1]).contiguous()
        grad_b = grad_b.to(ctx.dtypes[2]) if grad_b is not None else None
        return grad_x, grad_w, grad_b, None, None, None, None


def linear_selected_log_probs(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                              index: torch.Tensor, dtype: torch.dtype | None = None,
                              rows: int | None = None) -> torch.Tensor:
    """log_softmax(F.linear(x, weight, bias), -1).gather(-1, index) in fp32, for x (..., D) and index (..., S).

    dtype: the output layer's matmuls (torch.bfloat16 on CPUs that multiply it natively; default: x's dtype, or
    autocast's where it is on); the normalisation is fp32 either way, as autocast's log-softmax is.
    rows: the block of rows whose logits are computed at once (default: about 4 M logits, 16 MB in fp32)."""
    if dtype is None:
        dtype = (torch.get_autocast_dtype(x.device.type) if torch.is_autocast_enabled(x.device.type)
                 else x.dtype)
    rows = rows or max(16, (1 << 22) // weight.shape[0])
    # what the backward needs is kept only when there will be one (not in evaluation under no_grad)
    keep = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (x, weight, bias))
    with torch.autocast(x.device.type, enabled=False):
        out = _LinearSelectedLogProbs.apply(x.reshape(-1, x.shape[-1]), weight, bias,
                                            index.reshape(-1, index.shape[-1]), dtype, rows, keep)
    return out.view(*index.shape)


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy of (..., V) logits against (...) target ids: F.cross_entropy's value, at least
    in fp32 (bf16 logits of autocast are widened first), at about half its cost over a large vocabulary (see
    _SelectedLogProbs)."""
    if logits.dtype not in (torch.float32, torch.float64):
        logits = logits.float()
    lp = selected_log_probs(logits.reshape(-1, logits.size(-1)), targets.reshape(-1, 1))
    return -lp.mean()
