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
gathers; the weighted sum of Eq. 3 is causal attention with k heads whose values are the senses, so it
runs through `F.scaled_dot_product_attention` in causal query chunks (scale 1: Eq. 6 has no 1/sqrt(d/k);
`scaled_alpha` adds it).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from ...softmax import linear_selected_log_probs
from .gpt import MLP, GPTConfig, Transformer, gpt_param_count, init_gpt2_


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
            return (alpha.to(values.dtype) @ values).sum(1)
        q, key = self._qk(ids)
        return causal_sense_mix(q, key, values, dropout=self.alpha_dropout if self.training else 0.0,
                                scale=self.alpha_scale)

    def forward(self, ids: torch.Tensor, sense_scale: torch.Tensor | None = None,
                alpha: torch.Tensor | None = None) -> torch.Tensor:
        """Next-token logits E^T o (B, T, V); see `represent` for sense_scale and alpha.

        Always in fp32, under bf16 autocast too: o is a weighted sum of 16 layer-normed senses with no layer
        norm after it, so its logits span a wider range than a GPT's, and bf16's 8-bit mantissa blurs them. With
        the mix already in fp32, bf16 logits left the cpu Backpack at test perplexity 64.6 and fp32 ones at 63.1
        (fp32 throughout: 61.9; AVX512_BF16 EPYC, 2026-12-04). GPT-2's final layer norm keeps its logits in
        range: its bf16 perplexity equals its fp32 one."""
        o = self.represent(ids, sense_scale, alpha)
        with torch.autocast(o.device.type, enabled=False):
            return o.to(_wide(o)) @ self.wte.weight.to(_wide(o)).T

    def loss(self, batch: torch.Tensor) -> torch.Tensor:
        """Mean next-token cross-entropy: `forward`'s fp32 logits, normalised a block of rows at a time."""
        o = self.represent(batch[:, :-1])
        return -linear_selected_log_probs(o, self.wte.weight, None, batch[:, 1:, None], dtype=_wide(o)).mean()

    def batch_size_units(self, batch: torch.Tensor) -> int:
        return batch[:, 1:].numel()


def _wide(t: torch.Tensor) -> torch.dtype:
    """The dtype of the parts kept out of bf16: fp32, or the float64 of the gradient checks."""
    return torch.promote_types(t.dtype, torch.float32)


def causal_sense_mix(q: torch.Tensor, key: torch.Tensor, values: torch.Tensor, dropout: float = 0.0,
                     scale: float = 1.0, chunk: int = 64) -> torch.Tensor:
    """sum_l softmax_causal(scale q_l k_l^T) @ values_l: Eq. 3 with Eq. 6's alpha, (B, k, T, *) -> (B, T, d).

    The queries and keys are d/k wide, the values (senses) d wide, which sends `scaled_dot_product_attention`
    down its materialising path on the CPU (no causal skipping); cutting the queries into chunks of `chunk`
    positions lets each chunk skip the keys after its end. Measured at B=16, k=16, T=256, d=128, forward and
    backward: on an AVX2 EPYC, one thread, 464 ms against 706 for the fused kernel with q and k zero-padded to
    the values' width (chunks of 64: 468, of 32: 766; plain matmuls with the sense sum inside one bmm, 64-position
    blocks: 571); on an AVX512_BF16 EPYC, two threads, 204 against 273 ms (fp32) and 228 against 258 (bf16).
    There, chunks of 64 skip a sixth more of the work than chunks of 128 and it shows in a whole training step
    (`benchmarks/lm_throughput.py --corpus`, cpu config, fp32, 2026-12-04): the Backpack/GPT step-time ratio
    1.28, 1.24, 1.29, 1.32 in four processes against 1.31-1.38 in five with 128 (chunks of 32: 1.43); the paper's
    micro config 1.23-1.26 either way.

    Always in fp32, under bf16 autocast too: the chunks take SDPA's masked path, whose softmax over Eq. 6's
    unscaled logits then ran in bfloat16, and the cpu Backpack's test perplexity rose from 61.9 (fp32) to 66.2
    (2026-12-02, same code and data otherwise); fp32 chunks were also the faster ones above."""
    wide = _wide(q)
    with torch.autocast(q.device.type, enabled=False):
        return _causal_sense_mix(q.to(wide), key.to(wide), values.to(wide), dropout, scale, chunk)


def _causal_sense_mix(q: torch.Tensor, key: torch.Tensor, values: torch.Tensor, dropout: float, scale: float,
                      chunk: int) -> torch.Tensor:
    T = q.shape[2]
    if T <= chunk:
        return F.scaled_dot_product_attention(q, key, values, is_causal=True, scale=scale, dropout_p=dropout).sum(1)
    causal = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    outs = []
    for start in range(0, T, chunk):
        end = min(start + chunk, T)
        outs.append(F.scaled_dot_product_attention(
            q[:, :, start:end], key[:, :, :end], values[:, :, :end], attn_mask=causal[start:end, :end],
            scale=scale, dropout_p=dropout).sum(1))
    return torch.cat(outs, dim=1)


def backpack_param_count(cfg: BackpackConfig, *, positions: bool = True) -> int:
    """Closed form of the Backpack's parameter count (tied embedding counted once)."""
    d, k, b = cfg.n_embd, cfg.n_senses, int(cfg.bias)
    contextualiser = gpt_param_count(cfg.transformer_config(), positions=positions)  # includes E
    qk = 2 * d * d
    ff_1 = d * 4 * d + b * 4 * d + 4 * d * d + b * d
    ff_2 = d * 4 * d + b * 4 * d + 4 * d * k * d + b * k * d
    lns = (d + b * d) + (k * d + b * k * d)
    return contextualiser + qk + ff_1 + ff_2 + lns
