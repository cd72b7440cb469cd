"""Character amplification control (Section 5.2.2, Tables 6 and 11).

For a word x_1 x_2 in the context, every prediction i after the word and every sense l: multiply
alpha_{l i j_s} by m_s, then rescale the word's weights so that their sum over the word's characters is what
it was ("keeping the total contribution of the word unchanged"). Predictions before the second character see
only the first, so the rescaling leaves them as they were.

Effect on a target character c: E_prompts[ p(c | x_amp) / p(c | x) ] (the paper's ratio of expectations; the
paper does not print its open-topic prompt, so we average over the prompts of Table 9)."""

from __future__ import annotations

from typing import Sequence

import pandas as pd
import torch

from ...data.vocab import CharVocab
from .common import banned_ids, encode
from .prompts import fill


def amplify_alpha(alpha: torch.Tensor, positions: Sequence[int], multipliers: Sequence[float]) -> torch.Tensor:
    """alpha (..., k, T, T) with columns `positions` multiplied by `multipliers` and rescaled, per row and
    sense, to their original sum."""
    positions = list(positions)
    out = alpha.clone()
    sub = alpha[..., positions]
    total = sub.sum(-1, keepdim=True)
    scaled = sub * torch.tensor(multipliers, dtype=alpha.dtype)
    denom = scaled.sum(-1, keepdim=True)
    out[..., positions] = torch.where(denom > 0, scaled * total / denom.clamp_min(1e-30), sub)
    return out


@torch.no_grad()
def next_logits(model: torch.nn.Module, ids: torch.Tensor, positions: Sequence[int],
                multipliers: Sequence[float]) -> torch.Tensor:
    """Next-token logits (V,) after `ids` (1, T) with the word at `positions` amplified."""
    alpha = amplify_alpha(model.alpha(ids), positions, multipliers)
    return model(ids, alpha=alpha)[0, -1]


def _word_positions(prompt: str, word: str) -> list[int]:
    start = prompt.index("WORD")
    return [1 + start + t for t in range(len(word))]   # +1: the <doc> token


@torch.no_grad()
def target_ratios(model: torch.nn.Module, vocab: CharVocab, word: str, prompts: Sequence[str],
                  targets: Sequence[str], multipliers: Sequence[Sequence[float]]) -> pd.DataFrame:
    """One row per (prompt, multipliers, target): p without and with the amplification and their ratio."""
    rows = []
    tid = [vocab.stoi[t] for t in targets]
    for p in prompts:
        ids = torch.tensor([encode(vocab, fill(p, word))])
        positions = _word_positions(p, word)
        base = next_logits(model, ids, positions, [1.0] * len(word)).softmax(-1)
        for m in multipliers:
            amp = next_logits(model, ids, positions, m).softmax(-1)
            for t, i in zip(targets, tid):
                rows.append({"prompt": p, "multipliers": ",".join(f"{x:g}" for x in m), "target": t,
                             "p_base": base[i].item(), "p_amp": amp[i].item(), "ratio": (amp[i] / base[i]).item()})
    return pd.DataFrame(rows)


@torch.no_grad()
def greedy(model: torch.nn.Module, vocab: CharVocab, word: str, multipliers: Sequence[float], n: int,
           prompt: str = "WORD") -> str:
    """Greedy continuation of the prompt with the word amplified at every step (special tokens excluded)."""
    ids = torch.tensor([encode(vocab, fill(prompt, word))])
    positions = _word_positions(prompt, word)
    banned = banned_ids(vocab)
    for _ in range(n):
        logits = next_logits(model, ids[:, -model.block_size:], positions, multipliers)
        logits[banned] = float("-inf")
        ids = torch.cat([ids, logits.argmax().view(1, 1)], dim=1)
    return fill(prompt, word) + vocab.decode(ids[0, 1 + len(fill(prompt, word)):].tolist())
