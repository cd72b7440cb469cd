"""A GPT-2 character language model, read like nanoGPT's model.py: pre-LN blocks, causal scaled-dot-product
attention, learned positions, tied input/output embeddings and the GPT-2 initialisation.

The Backpack (`backpack.py`) reuses `Block` for its contextualisation transformer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from ...softmax import cross_entropy


@dataclass(frozen=True)
class GPTConfig:
    vocab_size: int
    block_size: int = 1024
    n_layer: int = 6
    n_head: int = 6
    n_embd: int = 384
    dropout: float = 0.0
    bias: bool = True  # GPT-2 has biases in its linear layers and layer norms


class MLP(nn.Module):
    """Linear d_in -> hidden, GELU, linear hidden -> d_out (GPT-2's feed-forward when 4d / d)."""

    def __init__(self, d_in: int, hidden: int, d_out: int, bias: bool = True, dropout: float = 0.0):
        super().__init__()
        self.c_fc = nn.Linear(d_in, hidden, bias=bias)
        self.c_proj = nn.Linear(hidden, d_out, bias=bias)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.c_proj(F.gelu(self.c_fc(x), approximate="tanh")))


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        assert cfg.n_embd % cfg.n_head == 0, "n_embd must be a multiple of n_head"
        self.n_head, self.dropout = cfg.n_head, cfg.dropout
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.resid_drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           dropout_p=self.dropout if self.training else 0.0)
        return self.resid_drop(self.c_proj(y.transpose(1, 2).reshape(B, T, C)))


class Block(nn.Module):
    """Pre-LN transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.mlp = MLP(cfg.n_embd, 4 * cfg.n_embd, cfg.n_embd, cfg.bias, cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Transformer(nn.Module):
    """Positions + blocks + final layer norm over given token embeddings (the embedding is the caller's, so
    that GPT and the Backpack can tie it to their output layer)."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.block_size = cfg.block_size
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.h = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)

    def forward(self, tok_emb: torch.Tensor) -> torch.Tensor:
        T = tok_emb.shape[1]
        if T > self.block_size:
            raise ValueError(f"sequence of {T} tokens is longer than block_size {self.block_size}")
        x = self.drop(tok_emb + self.wpe(torch.arange(T, device=tok_emb.device)))
        for block in self.h:
            x = block(x)
        return self.ln_f(x)


def init_gpt2_(model: nn.Module, n_layer: int) -> None:
    """GPT-2 initialisation: N(0, 0.02) weights and embeddings, zero biases, and residual projections
    (`c_proj`) scaled down by sqrt(2 * n_layer)."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
    for name, p in model.named_parameters():
        if name.endswith("c_proj.weight"):
            nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * max(1, n_layer)))


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.config = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.transformer = Transformer(cfg)
        init_gpt2_(self, cfg.n_layer)

    @property
    def block_size(self) -> int:
        return self.config.block_size

    def hidden(self, ids: torch.Tensor) -> torch.Tensor:
        """The final (layer-normed) hidden states, (B, T, d): what the tied output layer reads."""
        return self.transformer(self.wte(ids))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Next-token logits (B, T, V) for token ids (B, T)."""
        return self.hidden(ids) @ self.wte.weight.T

    def loss(self, batch: torch.Tensor) -> torch.Tensor:
        """Mean next-token cross-entropy of a (B, T+1) block of ids."""
        return cross_entropy(self(batch[:, :-1]), batch[:, 1:])

    def batch_size_units(self, batch: torch.Tensor) -> int:
        return batch[:, 1:].numel()
