"""Perplexity: exp of the mean next-token NLL over a token stream.

The stream is cut into consecutive windows of `block_size + 1` tokens overlapping by one, so every token
after the first is predicted exactly once, from the context since the start of its window (the usual
non-overlapping evaluation of nanoGPT-style models)."""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F


@torch.no_grad()
def stream_nll(model: torch.nn.Module, tokens: np.ndarray, block_size: int, batch_size: int = 16,
               max_tokens: int | None = None, per_window: list | None = None) -> tuple[float, int]:
    """(sum of NLL in nats, number of predicted tokens) over `tokens` (optionally its first max_tokens+1);
    `per_window`, if given, receives each window's (NLL sum, tokens): the items a bootstrap resamples."""
    n = tokens.size if max_tokens is None else min(tokens.size, max_tokens + 1)
    starts = list(range(0, n - 1, block_size))
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    total, count = 0.0, 0
    try:
        for i in range(0, len(starts), batch_size):
            group = starts[i:i + batch_size]
            windows = [np.asarray(tokens[s:min(s + block_size + 1, n)], dtype=np.int64) for s in group]
            full = [w for w in windows if w.size == block_size + 1]
            rest = [w for w in windows if w.size != block_size + 1]
            for batch in ([np.stack(full)] if full else []) + [w[None] for w in rest]:
                x = torch.from_numpy(batch).to(device)
                logits = model(x[:, :-1])
                flat, target = logits.reshape(-1, logits.size(-1)), x[:, 1:].reshape(-1)
                nll = F.cross_entropy(flat, target, reduction="sum")
                total += nll.item()
                if per_window is not None:  # apart from the total, which keeps its own summation order
                    per = F.cross_entropy(flat, target, reduction="none").view(x.shape[0], -1).double().sum(1)
                    per_window += [(float(v), x.shape[1] - 1) for v in per]
                count += x[:, 1:].numel()
    finally:
        model.train(was_training)
    return total, count


def perplexity(model: torch.nn.Module, tokens: np.ndarray, block_size: int, batch_size: int = 16,
               max_tokens: int | None = None, windows: bool = False) -> dict:
    """{"nll", "ppl", "tokens"}; with `windows`, also "windows": each window's (NLL sum, tokens), (n, 2)."""
    per: list | None = [] if windows else None
    total, count = stream_nll(model, tokens, block_size, batch_size, max_tokens, per)
    out = {"nll": total / count, "ppl": math.exp(total / count), "tokens": count}
    return out | ({"windows": np.array(per, dtype=float).reshape(-1, 2)} if windows else {})
