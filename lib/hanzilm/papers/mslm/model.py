"""Segmental language models (Downey et al. 2021): RSLM, MSLM and DMSLM.

A context encoder reads the unsegmented characters; for every position t it gives an encoding h_{t-1} of the
context of a segment starting at t. A segment decoder (a one-layer LSTM) generates the segment's characters and
an end-of-segment symbol from that encoding; the lattice (`hanzilm.papers.mslm.lattice`) sums over segmentations.

Encoders (`SLMConfig.encoder`):
    rslm   an LSTM over <s> x_0 .. x_{n-1}: the encoding for a segment starting at t has read x_{<t}
    mslm   the segmental transformer: position i may not attend to i+1 .. i+k (the span mask), so the encoding
           for a segment x_{t:t+l} (l <= k) sees every character outside it, left and right
    dmslm  the same transformer with a causal (directional) mask

Encoder input positions: 0 = <s>, 1 + t = character t, n + 1 = </s>. The encoding at position t is the
context of the segment starting at character t (the paper's "encoding at timestep t-1").

Batch: {"chars": LongTensor (B, T) padded with PAD_ID, "lengths": LongTensor (B,)}.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from ...softmax import linear_selected_log_probs
from .lattice import log_marginal, viterbi

# special symbols, first in the character vocabulary, in this order
SPECIALS = ("<pad>", "<unk>", "<s>", "</s>", "<eoseg>")
PAD_ID, UNK_ID, BOS_ID, EOS_ID, EOSEG_ID = range(len(SPECIALS))
ENCODERS = ("rslm", "mslm", "dmslm")


@dataclass(frozen=True)
class SLMConfig:
    """Defaults: the paper and the authors' configs (targets/mslm_hyperparameters.csv)."""

    encoder: str = "mslm"
    dim: int = 256                 # embedding and hidden size
    encoder_layers: int = 1
    num_heads: int = 4
    feedforward_dim: int = 509     # the authors' choice: matches the LSTM encoder's parameter count
    encoder_dropout: float = 0.15  # inside the transformer encoder (the authors used 0 for the RSLM)
    model_dropout: float = 0.1     # on embeddings and decoder outputs
    max_seg_len: int = 5           # k: 5 for PKU, 10 for PTB
    first_layer_residual: bool = False  # the paper is silent; the authors' released code adds no residual around
                                        # the first layer's attention (on our cpu-scale PKU MSLM it made no
                                        # difference to dev MCC over the first 1,200 steps)
    # where the paper is silent and the authors' released code (cmdowney88/SegmentalLMs) chose otherwise than
    # our first reading; off: our reading
    input_projection: bool = False  # a linear map of the embeddings before the encoder, positions added to it and
                                    # dropout on the sum (off: dropout on the embeddings, positions added after)
    released_init: bool = False     # embeddings and the start, h and output maps U(-0.1, 0.1) with zero biases;
                                    # the position gate without bias and its weights 1e-4 (it starts at 1)
    start_tanh: bool = False        # start = tanh(g_start(h)) like h_0 (off: linear)
    encoder_norm: bool = False      # a LayerNorm over the transformer encoder's output
    decoder_input_dropout: bool = False  # dropout on every decoder input, the start symbol's too, and none on its
                                         # outputs (off: on the characters' embeddings and on the outputs)
    bf16_output: bool = False      # training only: the output layer's matmuls in bfloat16 (2-3x faster on CPUs
                                   # with AVX512-BF16; softmax and everything else stay fp32); an evaluation
                                   # under bf16 autocast gets them from autocast

    def __post_init__(self):
        if self.encoder not in ENCODERS:
            raise ValueError(f"encoder must be one of {ENCODERS}, not {self.encoder!r}")
        if self.dim % self.num_heads:
            raise ValueError(f"dim {self.dim} is not divisible by num_heads {self.num_heads}")


# the model's form where the paper is silent: our first reading, or the authors' released code's choices
FORMS: dict[str, dict[str, bool]] = {
    "ours": {},
    "released": {"input_projection": True, "released_init": True, "start_tanh": True, "encoder_norm": True,
                 "decoder_input_dropout": True},
}


def sinusoidal(length: int, dim: int, device=None) -> torch.Tensor:
    """The static position encodings of Vaswani et al. (2017), (length, dim)."""
    pos = torch.arange(length, device=device, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, dim, 2, device=device, dtype=torch.float32) * (-math.log(10000.0) / dim))
    pe = torch.zeros(length, dim, device=device)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq[: dim // 2])
    return pe


def span_mask(length: int, k: int, device=None) -> torch.Tensor:
    """(length, length) bool, True = may attend: query i may not attend to keys j with 0 < j - i <= k."""
    d = torch.arange(length, device=device)[None, :] - torch.arange(length, device=device)[:, None]
    return ~((d > 0) & (d <= k))


def causal_mask(length: int, device=None) -> torch.Tensor:
    """(length, length) bool, True = may attend: query i attends to keys j <= i (the DMSLM)."""
    return torch.ones(length, length, dtype=torch.bool, device=device).tril()


class GatedPositions(nn.Module):
    """g = 1 + ReLU(f([embedding; position])); embedding <- g * embedding + position (Sec. 3.2).

    f maps the concatenation to one gate per position (a scalar ratio of embedding to position)."""

    def __init__(self, dim: int, released_init: bool = False):
        super().__init__()
        self.f = nn.Linear(2 * dim, 1, bias=not released_init)
        if released_init:
            nn.init.constant_(self.f.weight, 1e-4)

    def forward(self, emb: torch.Tensor) -> torch.Tensor:
        pos = sinusoidal(emb.shape[1], emb.shape[2], emb.device).expand_as(emb)
        g = 1.0 + F.relu(self.f(torch.cat([emb, pos], dim=-1)))
        return g * emb + pos


class SegmentalAttentionLayer(nn.Module):
    """One post-norm transformer layer whose queries come from `query_in` (the input encodings in the first
    layer, the previous layer's output later) and whose keys and values always come from `memory`, the input
    encodings, so that nothing masked at the first layer leaks back in through a later one. `residual`: add
    `query_in` back after attention (the authors' first layer does not)."""

    def __init__(self, dim: int, heads: int, ff: int, dropout: float, residual: bool = True):
        super().__init__()
        self.heads, self.dropout, self.residual = heads, dropout, residual
        self.q, self.kv, self.out = nn.Linear(dim, dim), nn.Linear(dim, 2 * dim), nn.Linear(dim, dim)
        self.ff = nn.Sequential(nn.Linear(dim, ff), nn.ReLU(), nn.Dropout(dropout), nn.Linear(ff, dim))
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, query_in: torch.Tensor, memory: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        B, L, D = query_in.shape
        heads = lambda x: x.view(B, L, self.heads, D // self.heads).transpose(1, 2)  # noqa: E731
        q = heads(self.q(query_in))
        k, v = (heads(x) for x in self.kv(memory).chunk(2, dim=-1))
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed,
                                           dropout_p=self.dropout if self.training else 0.0)
        h = self.drop(self.out(a.transpose(1, 2).reshape(B, L, D)))
        h = self.norm1(query_in + h if self.residual else h)
        return self.norm2(h + self.drop(self.ff(h)))


class SegmentalTransformer(nn.Module):
    """The MSLM (span mask) / DMSLM (causal mask) context encoder."""

    def __init__(self, cfg: SLMConfig):
        super().__init__()
        self.k, self.causal = cfg.max_seg_len, cfg.encoder == "dmslm"
        self.positions = GatedPositions(cfg.dim, cfg.released_init)
        # with an input projection, dropout falls on the embeddings plus positions, here
        self.drop = nn.Dropout(cfg.model_dropout) if cfg.input_projection else nn.Identity()
        self.layers = nn.ModuleList(
            SegmentalAttentionLayer(cfg.dim, cfg.num_heads, cfg.feedforward_dim, cfg.encoder_dropout,
                                    residual=i > 0 or cfg.first_layer_residual)
            for i in range(cfg.encoder_layers))
        self.norm = nn.LayerNorm(cfg.dim) if cfg.encoder_norm else nn.Identity()

    def forward(self, emb: torch.Tensor, key_padding: torch.Tensor) -> torch.Tensor:
        """emb (B, L, D) input embeddings; key_padding (B, L) bool, True at padding. Returns (B, L, D)."""
        L = emb.shape[1]
        mask = causal_mask(L, emb.device) if self.causal else span_mask(L, self.k, emb.device)
        allowed = (mask[None] & ~key_padding[:, None, :])[:, None]        # (B, 1, L, L)
        memory = self.drop(self.positions(emb))
        h = memory
        for layer in self.layers:
            h = layer(h, memory, allowed)
        return self.norm(h)


class SegmentalLM(nn.Module):
    """Context encoder + segment decoder + lattice. `loss(batch)`: negative log marginal likelihood in nats per
    character (total over the batch / total characters), so bpc = loss / ln 2."""

    def __init__(self, cfg: SLMConfig, vocab_size: int):
        super().__init__()
        self.cfg, self.vocab_size = cfg, vocab_size
        D = cfg.dim
        self.embedding = nn.Embedding(vocab_size, D, padding_idx=PAD_ID)   # shared by encoder and decoder
        self.drop = nn.Dropout(cfg.model_dropout)
        if cfg.input_projection:
            self.project = nn.Linear(D, D)
        if cfg.encoder == "rslm":
            self.encoder = nn.LSTM(D, D, num_layers=cfg.encoder_layers, batch_first=True,
                                   dropout=cfg.encoder_dropout if cfg.encoder_layers > 1 else 0.0)
        else:
            self.encoder = SegmentalTransformer(cfg)
        # the segment decoder: start symbol and initial state from the encoding, one feed-forward layer each
        self.g_start = nn.Linear(D, D)
        self.g_h = nn.Linear(D, D)
        self.decoder = nn.LSTM(D, D, batch_first=True)
        self.output = nn.Linear(D, vocab_size)
        if cfg.released_init:
            self._released_init()

    @torch.no_grad()
    def _released_init(self) -> None:
        nn.init.uniform_(self.embedding.weight, -0.1, 0.1)
        self.embedding.weight[PAD_ID] = 0.0
        for linear in (self.g_start, self.g_h, self.output):
            nn.init.uniform_(linear.weight, -0.1, 0.1)
            nn.init.zeros_(linear.bias)

    # -- encoder ------------------------------------------------------------------------------------------
    def encode(self, chars: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """(B, T, D): the context encoding for a segment starting at each character position."""
        B, T = chars.shape
        inp = torch.cat([chars.new_full((B, 1), BOS_ID), chars, chars.new_full((B, 1), PAD_ID)], dim=1)
        inp[torch.arange(B, device=chars.device), lengths + 1] = EOS_ID           # </s> after the last char
        x = self.project(self.embedding(inp)) if self.cfg.input_projection else self.embedding(inp)
        if not (self.cfg.input_projection and self.cfg.encoder != "rslm"):
            x = self.drop(x)                               # else the transformer drops out after adding positions
        if self.cfg.encoder == "rslm":
            out, _ = self.encoder(x)                       # padding lies to the right: never read by t < n
        else:
            out = self.encoder(x, inp == PAD_ID)
        return out[:, :T]

    # -- segment decoder ----------------------------------------------------------------------------------
    def segment_logprobs(self, chars: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """(B, T, K): log p(x_{t:t+l} </seg> | context of t) for l = 1..K; entries past a sequence's end are 0
        (the lattice ignores them)."""
        B, T = chars.shape
        K = self.cfg.max_seg_len
        enc = self.encode(chars, lengths)
        starts = torch.arange(T, device=chars.device)[None, :] < lengths[:, None]      # (B, T)
        h = enc[starts]                                                                 # (N, D)
        windows = F.pad(chars, (0, K), value=PAD_ID).unfold(1, K, 1)[:, :T][starts]    # (N, K): x_{t..t+K-1}
        start = self.g_start(h)                                       # Sec. 2: start^i = g_start(h_{i-1})
        if self.cfg.start_tanh:
            start = torch.tanh(start)
        h0 = torch.tanh(self.g_h(h))                                  #         h^i_0 = g_h(h_{i-1})
        out = self.decoder(self.decoder_inputs(start, windows), (h0[None], torch.zeros_like(h0)[None]))[0]
        # per decoder step j: [the next character x_{t+j}, the end-of-segment symbol]; step K has no next char
        nxt = torch.cat([windows, windows.new_full((windows.shape[0], 1), PAD_ID)], dim=1)
        index = torch.stack([nxt, torch.full_like(nxt, EOSEG_ID)], dim=-1)                # (N, K + 1, 2)
        bf16 = torch.bfloat16 if self.cfg.bf16_output and self.training else None
        if not self.cfg.decoder_input_dropout:
            out = self.drop(out)
        lp = linear_selected_log_probs(out, self.output.weight, self.output.bias, index, dtype=bf16)
        char_lp, eos_lp = lp[:, :K, 0], lp[:, :, 1]              # p(y_j | y_<j, h), p(</seg> | y_<j, h)
        seg_lp = char_lp.cumsum(dim=1) + eos_lp[:, 1:]           # Sec. 2: the segment of length l = 1..K
        full = seg_lp.new_zeros(B, T, K)
        full[starts] = seg_lp
        return full

    def decoder_inputs(self, start: torch.Tensor, windows: torch.Tensor) -> torch.Tensor:
        """(N, K + 1, D): the start symbol, then the segment's characters embedded, with the dropout of the
        configured form."""
        if self.cfg.decoder_input_dropout:
            return self.drop(torch.cat([start[:, None], self.embedding(windows)], dim=1))
        return torch.cat([start[:, None], self.drop(self.embedding(windows))], dim=1)

    # -- the model's interface ----------------------------------------------------------------------------
    def log_likelihood(self, batch: dict) -> torch.Tensor:
        """log p(x) per sequence (nats), marginalised over segmentations (Eq. 1-2). (B,)"""
        return log_marginal(self.segment_logprobs(batch["chars"], batch["lengths"]), batch["lengths"])

    def loss(self, batch: dict) -> torch.Tensor:
        return -self.log_likelihood(batch).sum() / batch["lengths"].sum()

    def batch_size_units(self, batch: dict) -> int:
        return int(batch["lengths"].sum())

    @torch.no_grad()
    def analyse(self, batch: dict) -> tuple[torch.Tensor, list[list[int]]]:
        """(log p(x) per sequence, best segmentation per sequence as segment lengths) from one encoder pass."""
        seg_lp = self.segment_logprobs(batch["chars"], batch["lengths"])
        return log_marginal(seg_lp, batch["lengths"]), viterbi(seg_lp, batch["lengths"])[1]

    @torch.no_grad()
    def segment(self, batch: dict) -> list[list[int]]:
        """The maximum-probability segmentation of each sequence (segment lengths, left to right)."""
        return self.analyse(batch)[1]


__all__ = ["BOS_ID", "ENCODERS", "EOSEG_ID", "EOS_ID", "FORMS", "PAD_ID", "SPECIALS", "UNK_ID", "GatedPositions",
           "SLMConfig", "SegmentalAttentionLayer", "SegmentalLM", "SegmentalTransformer", "causal_mask",
           "sinusoidal", "span_mask"]
