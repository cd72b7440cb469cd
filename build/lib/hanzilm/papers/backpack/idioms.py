"""Appendix B: which senses predict the last character of an idiom from its first three.

For the prediction at the third character (position i), the logit of the target c splits exactly by
sense and position (Eq. 4-5):
    logit(c) = sum_l sum_j alpha_{l i j} (E^T C(x_j)_l)[c]
We report, per sense l, its total contribution, the rank of c when only sense l's part of the logits is
used, and the raw projections (E^T C(x_j)_l)[c] of the three characters (proj_1..3) with their ranks in
the projection (proj_rank_1..3; 0: c is that sense's top character)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import torch

from ...data.lexicon import idioms
from ...data.vocab import CharVocab
from .common import SensesConfig, banned_ids, encode, in_vocab
from .composition import CorpusText, draw_words
from .prompts import APPENDIX_IDIOM


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


def chosen_idioms(vocab: CharVocab, text: CorpusText, cfg: SensesConfig) -> list[str]:
    """画蛇添足 and `cfg.idioms` idioms drawn as in Table 3 (in the vocabulary, frequent enough)."""
    drawn = draw_words(idioms(), cfg.idioms, lambda w: in_vocab(vocab, w) and text.count(w) >= cfg.min_word_count,
                       cfg.seed)
    return [APPENDIX_IDIOM] + [w for w in drawn if w != APPENDIX_IDIOM]


def analyse(model: torch.nn.Module, vocab: CharVocab, words: Sequence[str]) -> dict[str, tuple[dict, pd.DataFrame]]:
    """`idiom_senses` of every idiom."""
    return {w: idiom_senses(model, vocab, w) for w in words}


def _overview_row(summary: dict, table: pd.DataFrame) -> dict:
    proj_ranks = table[[c for c in table.columns if c.startswith("proj_rank_")]]
    return {"p_target": summary["p_target"], "rank": summary["rank"],
            "best_single_sense_rank": int(table.rank_alone.min()),
            "senses_with_target_in_top10": int((table.rank_alone < 10).sum()),
            "largest_sense_share": table.contribution.abs().max() / table.contribution.abs().sum(),
            "best_projection_rank": int(proj_ranks.min().min())}


def overview(results: dict[str, tuple[dict, pd.DataFrame]]) -> pd.DataFrame:
    """Per idiom: the full model's p and rank of the target, the best rank one sense alone gives it, how many
    senses alone have it in their top 10, the largest sense's share of the target logit and the best rank of
    the target in a raw projection."""
    return pd.DataFrame([{"idiom": w, **_overview_row(s, t)} for w, (s, t) in results.items()]).set_index("idiom")


# the row over every idiom: whether the model completes idioms at all (Appendix B's claims need one that does)
ALL_IDIOMS = "all idioms"


def appendix_table(results: dict[str, tuple[dict, pd.DataFrame]]) -> pd.DataFrame:
    """Per idiom, long: the `overview` columns and every sense's part of the target logit; then, over every
    idiom (`ALL_IDIOMS`), the median rank of the last character under the full model."""
    long = []
    for w, (s, t) in results.items():
        long += [{"idiom": w, "metric": m, "ours": v} for m, v in _overview_row(s, t).items()]
        long += [{"idiom": w, "metric": f"sense{int(x.sense)}_contribution", "ours": x.contribution}
                 for x in t.itertuples()]
    long.append({"idiom": ALL_IDIOMS, "metric": "median_rank",
                 "ours": float(np.median([s["rank"] for s, _ in results.values()]))})
    return pd.DataFrame(long)


def appendix_reading(o: pd.DataFrame, k: int) -> str:
    """Markdown: 画蛇添足's numbers, and over all idioms how often one sense alone puts the target first."""
    i = APPENDIX_IDIOM
    return (f"- 画蛇添足: p(足) = {o.loc[i, 'p_target']:.3f} (rank {int(o.loc[i, 'rank'])}); "
            f"the best single sense ranks 足 at {int(o.loc[i, 'best_single_sense_rank'])}, "
            f"{int(o.loc[i, 'senses_with_target_in_top10'])} of {k} senses alone have it in their top 10.\n"
            f"- Over {len(o)} idioms: the full model ranks the last character first for {int((o['rank'] == 0).sum())}; "
            f"some single sense ranks it first for {int((o.best_single_sense_rank == 0).sum())}; median largest sense "
            f"share of the target logit {o.largest_sense_share.median():.2f} (1/{k} = {1 / k:.2f} if all senses "
            f"weighed the same).")
