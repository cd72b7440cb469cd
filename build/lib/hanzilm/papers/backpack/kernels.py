"""The Backpack's fused kernel: Eq. 3 with Eq. 6's causal alpha, by hand, a chunk of queries at a time.

`causal_sense_mix(q, key, values)` equals `backpack.sense_sum(softmax_causal(q key^T), values)`, forward and
backward (`tests/test_backpack.py` checks both in float64); it is the training path because it skips the keys
after each chunk's end and keeps no (T, T) weights beyond a chunk's.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def wide(t: torch.Tensor) -> torch.dtype:
    """The dtype of the parts kept out of bf16: fp32, or the float64 of the gradient checks."""
    return torch.promote_types(t.dtype, torch.float32)


def causal_sense_mix(q: torch.Tensor, key: torch.Tensor, values: torch.Tensor, dropout: float = 0.0,
                     scale: float = 1.0, chunk: int = 64) -> torch.Tensor:
    """sum_l softmax_causal(scale q_l k_l^T) @ values_l: Eq. 3 with Eq. 6's alpha, (B, k, T, *) -> (B, T, d).

    The queries and keys are d/k wide, the values (senses) d wide, which sends `scaled_dot_product_attention`
    down its materialising path on the CPU (no causal skipping). Queries in chunks of `chunk` positions let each
    chunk skip the keys after its end; `_CausalSenseMix` computes those chunks by hand, faster than SDPA on them
    (`benchmarks/` measures both).

    Always in fp32, under bf16 autocast too: the chunks' softmax over Eq. 6's unscaled logits in bfloat16 raised
    the cpu Backpack's test perplexity."""
    fp = wide(q)
    keep = torch.is_grad_enabled() and any(t.requires_grad for t in (q, key, values))   # a backward will come
    with torch.autocast(q.device.type, enabled=False):
        return _CausalSenseMix.apply(q.to(fp), key.to(fp), values.to(fp), scale, dropout, chunk, keep)


class _CausalSenseMix(torch.autograd.Function):
    """Eq. 3 with Eq. 6's alpha, a chunk of query positions at a time, by hand rather than through
    `F.scaled_dot_product_attention`'s masked path: there, each chunk's slice of the senses cost a zero-filled
    gradient of all of them in the backward, and the boolean mask was converted in every call. Here the causal
    mask is an additive bias folded into the scores' matmul, the backward walks the chunks from the last (which
    sees every key) so that it writes the gradients of keys and senses before adding into them, and the softmax's
    backward is torch's fused kernel. Shapes as (B*k, T, width): one batched matmul per product and chunk."""

    @staticmethod
    def forward(ctx, q, key, values, scale, dropout, chunk, keep):
        B, k, T, d = values.shape
        q, key, values = (t.reshape(B * k, T, -1) for t in (q, key, values))
        future = torch.full((chunk, chunk), float("-inf"), dtype=q.dtype, device=q.device).triu_(1)
        out = values.new_empty(B, T, d)
        saved = []
        for s in range(0, T, chunk):
            e = min(s + chunk, T)
            bias = F.pad(future[:e - s, :e - s], (s, 0))                      # j > i: -inf, diagonal block only
            alpha = torch.baddbmm(bias, q[:, s:e], key[:, :e].transpose(1, 2), alpha=scale).softmax(-1)
            mask = None
            if dropout > 0.0:                                                 # dropout after the softmax (A.2)
                mask = torch.empty_like(alpha).bernoulli_(1.0 - dropout).div_(1.0 - dropout)
            mixed = torch.bmm(alpha * mask if mask is not None else alpha, values[:, :e])   # (B*k, c, d)
            torch.sum(mixed.view(B, k, e - s, d), dim=1, out=out[:, s:e])
            if keep:
                saved.append((alpha, mask))
        if keep:
            ctx.save_for_backward(q, key, values)
            ctx.alphas, ctx.scale, ctx.chunk, ctx.k = saved, scale, chunk, k
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        q, key, values = ctx.saved_tensors
        k, scale = ctx.k, ctx.scale
        BK, T, d = values.shape
        grad_q, grad_key, grad_values = torch.empty_like(q), torch.empty_like(key), torch.empty_like(values)
        starts = range(0, T, ctx.chunk)
        for s, (alpha, mask) in zip(reversed(starts), reversed(ctx.alphas)):
            e = min(s + ctx.chunk, T)
            first = e == T                                   # the last chunk: its keys and senses are all of them
            g = grad[:, None, s:e].expand(-1, k, -1, -1).reshape(BK, e - s, d)   # o sums the k senses' mixes
            dropped = alpha * mask if mask is not None else alpha
            if first:
                torch.bmm(dropped.transpose(1, 2), g, out=grad_values)
            else:     # (a product into a slice, or baddbmm_ on one, falls back to one matmul per batch entry)
                grad_values[:, :e] += torch.bmm(dropped.transpose(1, 2), g)
            grad_alpha = torch.bmm(g, values[:, :e].transpose(1, 2))          # (B*k, c, e)
            if mask is not None:
                grad_alpha.mul_(mask)
            grad_scores = torch.ops.aten._softmax_backward_data(grad_alpha, alpha, -1, alpha.dtype)
            grad_q[:, s:e] = torch.bmm(grad_scores, key[:, :e])
            if first:
                torch.bmm(grad_scores.transpose(1, 2), q[:, s:e], out=grad_key)
            else:
                grad_key[:, :e] += torch.bmm(grad_scores.transpose(1, 2), q[:, s:e])
        if scale != 1.0:
            grad_q.mul_(scale), grad_key.mul_(scale)
        ctx.alphas = None
        shape = (BK // k, k, T, -1)
        return grad_q.view(shape), grad_key.view(shape), grad_values.view(shape), None, None, None, None
