"""Character amplification control (Section 5.2.2, Tables 6 and 11).

For a word x_1 x_2 in the context, every prediction i after the word and every sense l: multiply
alpha_{l i j_s} by m_s, then rescale the word's weights so that their sum over the word's characters is what
it was ("keeping the total contribution of the word unchanged"). Predictions before the second character see
only the first, so the rescaling leaves them as they were.

Effect on a target character c: E_prompts[ p(c | x_amp) / p(c | x) ] (the paper's ratio of expectations; the
paper does not print its open-topic prompt, so we average over the prompts of Table 9)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import torch

from ... import spread
from ...data.vocab import CharVocab
from ...results import paper_values
from .common import banned_ids, encode
from .prompts import AMPLIFY_WORDS, MULTIPLIERS, PAPER_CONTINUATIONS, fill


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


def multiplier_key(multipliers: Sequence[float]) -> str:
    """The multipliers as the tables key them: "4,1"."""
    return ",".join(f"{x:g}" for x in multipliers)


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
                rows.append({"prompt": p, "multipliers": multiplier_key(m), "target": t,
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


# --- Tables 6 and 11 -----------------------------------------------------------------------------------------
def table6(per_prompt: pd.DataFrame, word: str) -> pd.DataFrame:
    """Table 6, long: per multipliers and target character (the metric), the mean ratio over the prompts."""
    mean = per_prompt.groupby(["multipliers", "target"], sort=False)["ratio"].mean().reset_index()
    return mean.assign(word=word).rename(columns={"target": "metric", "ratio": "ours"})[
        ["word", "multipliers", "metric", "ours"]]


def paper_table6(targets: Sequence[str]) -> pd.DataFrame:
    return paper_values("backpack_table6_amplification.csv", keys={"multipliers": "multipliers"},
                        metrics={t: t for t in targets})


def agreement(table: pd.DataFrame) -> float:
    """Share of Table 6's amplified cells (multipliers other than 1,1) where ours and the paper's ratio lie on
    the same side of 1: the target character made more likely, or less, as in the paper."""
    cells = table[(table.multipliers != "1,1") & table.paper.notna()]
    return float(((cells.ours > 1) == (cells.paper > 1)).mean()) if len(cells) else float("nan")


def per_prompt_view(per_prompt: pd.DataFrame, targets: Sequence[str], multipliers: str = "4,1") -> pd.DataFrame:
    """Per prompt: the ratios under `multipliers` beside the unamplified probabilities (formatted)."""
    pp = per_prompt[per_prompt.multipliers == multipliers].pivot(index="prompt", columns="target",
                                                                 values="ratio")[list(targets)]
    base = per_prompt[per_prompt.multipliers == "1,1"].pivot(index="prompt", columns="target",
                                                             values="p_base")[list(targets)]
    return pd.concat({f"ratio ({multipliers})": pp, "p unamplified": base.map("{:.1e}".format)}, axis=1)


def table6_reading(table: pd.DataFrame, targets: Sequence[str]) -> str:
    """Markdown: the sand and sea characters' ratios beside the paper's, and how many move the paper's way."""
    r = table.set_index(["multipliers", "metric"])["ours"]
    sand, sea = ("撒", "粒"), ("海", "晒")
    amplified = table[table.multipliers != "1,1"]
    agree = sum(np.sign(np.log(row.ours)) == np.sign(np.log(row.paper)) for row in amplified.itertuples())
    lines = ["- 沙 x4: " + ", ".join(f"p({t}) x{r['4,1', t]:.2f}" for t in sand + sea) +
             " (paper: 撒 2.13, 粒 1.74, 海 0.62, 晒 0.61).",
             "- 滩 x4: " + ", ".join(f"p({t}) x{r['1,4', t]:.2f}" for t in sand + sea) +
             " (paper: 0.54, 0.55, 1.24, 1.48).",
             f"- Ratios on the same side of 1 as the paper's, over all nine characters and both multipliers: "
             f"{agree} of {2 * len(targets)}."]
    return "\n".join(lines)


def continuations(model: torch.nn.Module, vocab: CharVocab, n: int) -> pd.DataFrame:
    """Table 11: the greedy continuation of each of AMPLIFY_WORDS under each of MULTIPLIERS (metric
    "continuation"), beside the paper's."""
    rows = []
    for w in AMPLIFY_WORDS:
        for m in MULTIPLIERS:
            key = multiplier_key(m)
            rows.append({"word": w, "multipliers": key, "metric": "continuation",
                         "ours": greedy(model, vocab, w, m, n), "paper": PAPER_CONTINUATIONS[(w, key)]})
    return pd.DataFrame(rows)


# --- Table 6's spread ----------------------------------------------------------------------------------------
# The claims' two groups of 沙滩's targets: sand-related and beach-related characters
SAND, BEACH = ("撒", "粒", "堡", "丘", "石"), ("人", "球", "海", "晒")
AMPLIFIED = {"t6.amplify_first": "4,1", "t6.amplify_second": "1,4"}   # claim (prefix left out): multipliers


def table6_claim_values(per_prompt: pd.DataFrame, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Table 6's claims (the registry's `backpack.t6.*` quantities, its prefix left out) on draws of the prompts:
    `weights` (draws, prompts in sorted order) says how often each prompt is drawn (all ones: the table itself).
    A claim's quantity: under its multipliers, the mean over SAND of the ratio's weighted mean over the prompts
    (Table 6's cell, as in `table6`) minus the same mean over BEACH. `per_prompt`: `target_ratios` of 沙滩."""
    ratios = per_prompt.pivot(index="prompt", columns=["multipliers", "target"], values="ratio")
    means = (weights @ ratios.to_numpy(float)) / weights.sum(axis=1, keepdims=True)
    column = {key: j for j, key in enumerate(ratios.columns)}

    def group(multipliers: str, targets: Sequence[str]) -> np.ndarray:
        cols = [column.get((multipliers, t)) for t in targets]
        return means[:, cols].mean(axis=1) if None not in cols else np.full(len(means), np.nan)

    return {claim: group(m, SAND) - group(m, BEACH) for claim, m in AMPLIFIED.items()}


def table6_spread(per_prompt: pd.DataFrame) -> pd.DataFrame:
    """The bootstrap sd (`hanzilm.spread`) of each Table 6 claim's quantity (`table6_claim_values`) over the
    prompts of Table 9: the prompts drawn again with replacement, one draw for every target and multipliers
    (paired). `per_prompt`: `target_ratios` of 沙滩."""
    n = per_prompt.prompt.nunique()
    values = table6_claim_values(per_prompt, spread.draws(n))
    src = spread.source(1, n, "prompts of Table 9 (one draw for every target and multipliers)")
    return pd.DataFrame([{"quantity": q, "source": src, "metric": "sd", "ours": spread.sd(v)}
                         for q, v in values.items()])
