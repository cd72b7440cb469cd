"""The Backpack language model (Hewitt et al. 2023) as Sun & Hewitt (2023) train it on Chinese characters.

    p(x_i | x_<i) = softmax(E^T o_{i-1})                                  (Eq. 1)
    C(x) = FF(E x),  k sense vectors of size d per token                   (Eq. 2, Sec. 3.3)
    o_i = sum_j sum_l alpha_lij C(x_j)_l                                   (Eq. 3)
    alpha_l = softmax(h^T K^(l)T Q^(l) h), causally masked                  (Eq. 6)
    h = Transformer(E x)                                                   (Eq. 7)

with the paper's Appendix A choices: the sense network's second residual (A.1: the first feed-forward's
output, broadcast over the k senses, is added to the second feed-forward's k*d output), dropout after the
softmax of alpha (A.2), and a contextualisation transformer with one block fewer than the GPT-2 it is
compared with. E is tied between the input, the sense network and the output.

Sense network, per token (no context), with e = E x:
    h1 = LN_1(e + FF_1(e))                       FF_1: d -> 4d -> d
    C  = LN_2(h1 (broadcast to k senses) + FF_2(h1))    FF_2: d -> 4d -> k*d, LN_2 over the k*d values

Speed: the sense vectors depend only on the token, so a batch computes them once per distinct token and
gathers; the weighted sum of Eq. 3 (`sense_sum`) is causal attention with k heads whose values are the senses,
computed in causal query chunks by `kernels.causal_sense_mix` (scale 1: Eq. 6 has no 1/sqrt(d/k);
`scaled_alpha` adds it).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from ...softmax import linear_selected_log_probs
from .gpt import MLP, GPTConfig, Transformer, init_gpt2_
from .kernels import causal_sense_mix, wide


@dataclass(frozen=True)
class BackpackConfig:
    vocab_size: int
    block_size: int = 1024
    n_layer: int = 5        # contextualisation transformer: one block fewer than the GPT-2 (6 for micro)
    n_head: int = 6
    n_embd: int = 384
    n_senses: int = 16
    dropout: float = 0.0
    bias: bool = True
    # Eq. 6 as the paper and the Chinese authors' code write it: softmax(q k^T), unscaled. True: divided by
    # sqrt(d/k), as the original Backpack code does (and as attention does by convention)
    scaled_alpha: bool = False

    @classmethod
    def matching(cls, gpt: GPTConfig, n_senses: int = 16, scaled_alpha: bool = False) -> BackpackConfig:
        """The Backpack the paper compares with `gpt`: same tokenizer, width, heads, one block fewer."""
        return cls(vocab_size=gpt.vocab_size, block_size=gpt.block_size, n_layer=gpt.n_layer - 1,
                   n_head=gpt.n_head, n_embd=gpt.n_embd, n_senses=n_senses, dropout=gpt.dropout, bias=gpt.bias,
                   scaled_alpha=scaled_alpha)

    def transformer_config(self) -> GPTConfig:
        return GPTConfig(vocab_size=self.vocab_size, block_size=self.block_size, n_layer=self.n_layer,
                         n_head=self.n_head, n_embd=self.n_embd, dropout=self.dropout, bias=self.bias)


class SenseNetwork(nn.Module):
    """C(x) = FF(E x): (..., d) embeddings -> (..., k, d) sense vectors, with the second residual (A.1)."""

    def __init__(self, cfg: BackpackConfig):
        super().__init__()
        d, k = cfg.n_embd, cfg.n_senses
        self.k, self.d = k, d
        self.ff_1 = MLP(d, 4 * d, d, cfg.bias, cfg.dropout)
        self.ln_1 = nn.LayerNorm(d, bias=cfg.bias)
        self.ff_2 = MLP(d, 4 * d, k * d, cfg.bias, cfg.dropout)
        self.ln_2 = nn.LayerNorm(k * d, bias=cfg.bias)

    def forward(self, e: torch.Tensor) -> torch.Tensor:
        h = self.ln_1(e + self.ff_1(e))
        c = h.unsqueeze(-2) + self.ff_2(h).unflatten(-1, (self.k, self.d))
        return self.ln_2(c.flatten(-2)).unflatten(-1, (self.k, self.d))


def sense_sum(alpha: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """Eq. 3, o_i = sum_l sum_j alpha_lij C(x_j)_l: weights (B, k, T, T) and senses (B, k, T, d) -> (B, T, d).
    Training computes the same with Eq. 6's causal alpha fused in (`kernels.causal_sense_mix`, tested against
    this expression)."""
    return (alpha @ values).sum(1)


class Backpack(nn.Module):
    def __init__(self, cfg: BackpackConfig):
        super().__init__()
        if cfg.n_embd % cfg.n_senses:
            raise ValueError(f"n_embd {cfg.n_embd} must be a multiple of n_senses {cfg.n_senses}")
        self.config = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.sense_network = SenseNetwork(cfg)
        self.transformer = Transformer(cfg.transformer_config())
        self.c_attn = nn.Linear(cfg.n_embd, 2 * cfg.n_embd, bias=False)  # Q^(l), K^(l) of every sense l
        self.alpha_dropout = cfg.dropout
        self.alpha_scale = (cfg.n_senses / cfg.n_embd) ** 0.5 if cfg.scaled_alpha else 1.0
        init_gpt2_(self, cfg.n_layer)

    @property
    def block_size(self) -> int:
        return self.config.block_size

    # --- the two halves ------------------------------------------------------------------------------------
    def senses(self, ids: torch.Tensor) -> torch.Tensor:
        """C(x_j) for every position: (..., k, d). Computed once per distinct token of `ids`."""
        uniq, inverse = torch.unique(ids, return_inverse=True)
        table = self.sense_network(self.wte(uniq))                   # (U, k, d)
        # A lookup, not table[inverse]: on CPU the backward of indexing adds the gradients of a repeated token
        # with atomic float adds from every thread, in an order the scheduler picks, so no two training runs
        # had the same bits. The embedding's backward adds them in position order (same forward values).
        return F.embedding(inverse, table.flatten(-2)).unflatten(-1, table.shape[-2:])

    def vocabulary_senses(self) -> torch.Tensor:
        """C(x) of every vocabulary entry: (V, k, d)."""
        return self.sense_network(self.wte.weight)

    def _qk(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.transformer(self.wte(ids))                          # Eq. 7, (B, T, d)
        B, T, d = h.shape
        k = self.config.n_senses
        q, key = self.c_attn(h).split(d, dim=2)
        q, key = (t.view(B, T, k, d // k).transpose(1, 2) for t in (q, key))  # (B, k, T, d/k)
        return q, key

    def alpha(self, ids: torch.Tensor) -> torch.Tensor:
        """Contextualisation weights alpha (B, k, T, T): alpha[b, l, i, j] weighs C(x_j)_l in o_i (Eq. 6);
        zero for j > i, each row sums to 1 over j. (No dropout: analyses call this in eval mode.)"""
        q, key = self._qk(ids)
        T = ids.shape[-1]
        scores = (q @ key.transpose(-2, -1)) * self.alpha_scale
        causal = torch.ones(T, T, dtype=torch.bool, device=ids.device).tril()
        return scores.masked_fill(~causal, float("-inf")).softmax(-1)

    # --- the model -------------------------------------------------------------------------------------------
    def represent(self, ids: torch.Tensor, sense_scale: torch.Tensor | None = None,
                  alpha: torch.Tensor | None = None) -> torch.Tensor:
        """o (B, T, d) of Eq. 3.

        sense_scale: multiplies C(x_j)_l before the sum; shape broadcastable to (B, T, k) (e.g. (T, k)),
        so sense_scale[..., j, l] = 0 removes sense l of position j from every o_i. alpha: use these
        weights (B, k, T, T) instead of the model's (for interventions on alpha, e.g. amplification)."""
        senses = self.senses(ids)                                     # (B, T, k, d)
        if sense_scale is not None:
            senses = senses * sense_scale.to(senses.dtype).unsqueeze(-1)
        values = senses.transpose(1, 2)                                # (B, k, T, d)
        if alpha is not None:
            return sense_sum(alpha.to(values.dtype), values)
        q, key = self._qk(ids)
        return causal_sense_mix(q, key, values, dropout=self.alpha_dropout if self.training else 0.0,
                                scale=self.alpha_scale)

    def forward(self, ids: torch.Tensor, sense_scale: torch.Tensor | None = None,
                alpha: torch.Tensor | None = None) -> torch.Tensor:
        """Next-token logits E^T o (B, T, V); see `represent` for sense_scale and alpha.

        Always in fp32, under bf16 autocast too: o is a weighted sum of 16 layer-normed senses with no layer
        norm after it, so its logits span a wider range than a GPT's, and bf16's 8-bit mantissa blurs them (it
        raised the cpu Backpack's test perplexity). GPT-2's final layer norm keeps its logits in range."""
        o = self.represent(ids, sense_scale, alpha)
        with torch.autocast(o.device.type, enabled=False):
            return o.to(wide(o)) @ self.wte.weight.to(wide(o)).T

    def loss(self, batch: torch.Tensor) -> torch.Tensor:
        """Mean next-token cross-entropy: `forward`'s fp32 logits, normalised a block of rows at a time."""
        o = self.represent(batch[:, :-1])
        return -linear_selected_log_probs(o, self.wte.weight, None, batch[:, 1:, None], dtype=wide(o)).mean()

    def batch_size_units(self, batch: torch.Tensor) -> int:
        return batch[:, 1:].numel()
