"""Appendix B: which senses predict the last character of an idiom from its first three.

For the prediction at the third character (position i), the logit of the target c splits exactly by
sense and position (Eq. 4-5):
    logit(c) = sum_l sum_j alpha_{l i j} (E^T C(x_j)_l)[c]
We report, per sense l, its total contribution, the rank of c when only sense l's part of the logits is
used, and the raw projections (E^T C(x_j)_l)[c] of the three characters (proj_1..3) with their ranks in
the projection (proj_rank_1..3; 0: c is that sense's top character)."""

from __future__ import annotations

import pandas as pd
import torch

from ...data.vocab import CharVocab
from .common import banned_ids, encode


def _rank(scores: torch.Tensor, index: int) -> int:
    """0-based rank of scores[index] among scores (0: the highest)."""
    return int((scores > scores[index]).sum())


@torch.no_grad()
def idiom_senses(model: torch.nn.Module, vocab: CharVocab, idiom: str) -> tuple[dict, pd.DataFrame]:
    """(summary of the full model's prediction, per-sense table) for predicting idiom[-1] from idiom[:-1]."""
    head, target = idiom[:-1], vocab.stoi[idiom[-1]]
    ids = torch.tensor([encode(vocab, head)])
    alpha = model.alpha(ids)[0, :, -1]                                 # (k, T): weights of the last prediction
    proj = model.senses(ids[0]) @ model.wte.weight.T                   # (T, k, V)
    per_sense = torch.einsum("lj,jlv->lv", alpha, proj)                # (k, V); <doc> included: it is summed too
    logits = per_sense.sum(0)                                          # = the model's logits (Eq. 4)
    p = logits.softmax(-1)
    banned = banned_ids(vocab)
    logits[banned], per_sense[:, banned], proj[..., banned] = float("-inf"), float("-inf"), float("-inf")
    summary = {"idiom": idiom, "target": idiom[-1], "p_target": p[target].item(), "rank": _rank(logits, target),
               "prediction": vocab.itos[int(logits.argmax())]}
    rows = []
    chars = [1 + t for t in range(len(head))]                           # +1: the <doc> token
    for l in range(alpha.shape[0]):
        row = {"idiom": idiom, "sense": l, "contribution": per_sense[l, target].item(),
               "weight": alpha[l, chars].sum().item(), "rank_alone": _rank(per_sense[l], target)}
        for t, j in enumerate(chars):
            row[f"proj_{t + 1}"] = proj[j, l, target].item()
            row[f"proj_rank_{t + 1}"] = _rank(proj[j, l], target)
        rows.append(row)
    return summary, pd.DataFrame(rows)
