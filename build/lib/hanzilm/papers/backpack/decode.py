"""Incremental decoding for the cloze's beam search: the GPT-2 and the Backpack fed a few positions at a time,
with what earlier positions contribute cached.

Beam search re-ran the whole passage (about 250 characters) for each of its ten beams at every step, so the
cloze took three fifths of re-evaluating a snapshot (the trends page). A `Decoder` keeps, per layer, the keys
and values of the positions fed so far and, for the Backpack, the alpha keys and the sense vectors C(x_j) of
Eq. 3; a step then costs only the new positions. It computes what the models' forward computes for those
positions, through their own modules (`tests/test_lm_cloze.py` checks the logits against the full forward).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .backpack import Backpack
from .kernels import wide
from .gpt import GPT, Block, Transformer

KV = tuple[torch.Tensor, torch.Tensor]


def _visible(start: int, n: int, device: torch.device) -> torch.Tensor:
    """(n, start + n) bool: new position start + i sees positions 0 .. start + i."""
    return torch.arange(start + n, device=device)[None, :] <= torch.arange(start, start + n, device=device)[:, None]


def _block(block: Block, x: torch.Tensor, past: KV | None, start: int) -> tuple[torch.Tensor, KV]:
    """`block` on the new positions x (B, n, d), attending to the cached ones too (eval: no dropout)."""
    attn, (B, n, C) = block.attn, x.shape
    q, k, v = attn.c_attn(block.ln_1(x)).split(C, dim=2)
    q, k, v = (t.view(B, n, attn.n_head, C // attn.n_head).transpose(1, 2) for t in (q, k, v))
    if past is not None:
        k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=_visible(start, n, x.device))
    x = x + attn.c_proj(y.transpose(1, 2).reshape(B, n, C))
    return x + block.mlp(block.ln_2(x)), (k, v)


def _transformer(tr: Transformer, tok_emb: torch.Tensor, past: list[KV] | None, start: int
                 ) -> tuple[torch.Tensor, list[KV]]:
    n = tok_emb.shape[1]
    if start + n > tr.block_size:
        raise ValueError(f"sequence of {start + n} tokens is longer than block_size {tr.block_size}")
    x = tok_emb + tr.wpe(torch.arange(start, start + n, device=tok_emb.device))
    cache = []
    for i, block in enumerate(tr.h):
        x, kv = _block(block, x, past[i] if past else None, start)
        cache.append(kv)
    return tr.ln_f(x), cache


class Decoder:
    """Next-token logits of a batch of sequences that grow together: `feed(ids, last)` appends ids (B, n) to
    every sequence and returns the logits (B, last, V) at the last `last` new positions (default all n: the
    output layer E^T is the largest matrix product of a small character LM, so a passage fed whole should ask
    for one); `select(rows)` keeps sequences `rows` of the batch, in that order, repeats allowed (a beam's
    surviving parents)."""

    def __init__(self, model: GPT | Backpack):
        if not isinstance(model, (GPT, Backpack)):
            raise TypeError(f"no incremental decoding for {type(model).__name__}")
        if model.training:
            raise ValueError("decode in eval mode (dropout would differ from position to position)")
        self.model, self.length = model, 0
        self.cache: list[torch.Tensor] = []   # flat: each layer's keys and values, then the Backpack's own

    @torch.no_grad()
    def feed(self, ids: torch.Tensor, last: int | None = None) -> torch.Tensor:
        m, start = self.model, self.length
        layers = len(m.transformer.h)
        past = [(self.cache[2 * i], self.cache[2 * i + 1]) for i in range(layers)] if self.cache else None
        h, kv = _transformer(m.transformer, m.wte(ids), past, start)
        cache = [t for pair in kv for t in pair]
        if isinstance(m, GPT):
            out = h
        else:  # Eq. 6 and 3 for the new positions, over the alpha keys and senses of every position so far
            B, n, d = h.shape
            k = m.config.n_senses
            q, key = (t.view(B, n, k, d // k).transpose(1, 2) for t in m.c_attn(h).split(d, dim=2))
            values = m.senses(ids).transpose(1, 2)                             # (B, k, n, d)
            if self.cache:
                key, values = (torch.cat([old, new], dim=2) for old, new in zip(self.cache[-2:], (key, values)))
            cache += [key, values]
            fp = wide(q)                                       # the mix in fp32, as in training
            with torch.autocast(h.device.type, enabled=False):
                out = F.scaled_dot_product_attention(q.to(fp), key.to(fp), values.to(fp), scale=m.alpha_scale,
                                                     attn_mask=_visible(start, n, h.device)).sum(1)
        self.cache, self.length = cache, start + ids.shape[1]
        return out[:, -(last or ids.shape[1]):] @ m.wte.weight.T

    def select(self, rows: torch.Tensor) -> None:
        self.cache = [t[rows] for t in self.cache]
