"""Sense projections E^T C(x)_l (Section 5.1.1, Tables 2 and 7) and how often a sense's top characters form a
dictionary word with x (the paper's "word composition" vs "relatedness" reading of senses 10 and 12).

Because o_i is a non-negative combination of sense vectors (Eq. 3-5), E^T C(x)_l is exactly what sense l of x
adds to the next-character logits wherever x occurs: its top entries are what that sense predicts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
import torch

from ... import spread
from ...data.lexicon import Dictionary, is_han
from ...data.vocab import CharVocab
from .common import banned_ids
from .sense_reader import label
from .prompts import PAPER_COMPOSING_SENSE, PAPER_RELATED_SENSE, PAPER_TOP


@torch.no_grad()
def sense_projection(model: torch.nn.Module, ids: torch.Tensor) -> torch.Tensor:
    """E^T C(x)_l for every id: (n, k, V)."""
    return model.senses(ids) @ model.wte.weight.T


@torch.no_grad()
def top_ids(model: torch.nn.Module, vocab: CharVocab, chars: Sequence[str], top: int) -> torch.Tensor:
    """(n, k, top) ids of the highest-scoring vocabulary entries of every sense (special tokens left out)."""
    proj = sense_projection(model, torch.tensor([vocab.stoi[c] for c in chars]))
    proj[..., banned_ids(vocab)] = float("-inf")
    return proj.topk(top, dim=-1).indices


def top_characters(model: torch.nn.Module, vocab: CharVocab, char: str, top: int = 10,
                   dictionary: Dictionary | None = None) -> pd.DataFrame:
    """One row per (sense, rank): the character, its score, whether char + it is a dictionary word and an
    English gloss (of the word if it is one, shown "(天)涯" as the paper does, else of the character)."""
    x = torch.tensor([vocab.stoi[char]])
    scores = sense_projection(model, x)[0]
    scores[:, banned_ids(vocab)] = float("-inf")
    best = scores.topk(top, dim=-1)
    rows = []
    for sense in range(scores.shape[0]):
        for rank, (i, s) in enumerate(zip(best.indices[sense].tolist(), best.values[sense].tolist())):
            shown, composes, gloss = label(char, vocab.itos[i], dictionary)
            rows.append({"char": char, "sense": sense, "rank": rank, "top": shown, "score": s,
                         "composes": composes, "gloss": gloss})
    return pd.DataFrame(rows)


def sense_columns(table: pd.DataFrame, senses: Sequence[int] | None = None, gloss: bool = True) -> pd.DataFrame:
    """The paper's layout: one column per sense, its top characters (with glosses) down the rows."""
    t = table if senses is None else table[table.sense.isin(senses)]
    label = [f"{c} ({g})" if gloss and g else c for c, g in zip(t["top"], t["gloss"])]
    return t.assign(label=label).pivot(index="rank", columns="sense", values="label")


def composition_rate(model: torch.nn.Module, vocab: CharVocab, chars: Sequence[str], dictionary: Dictionary,
                     top: int = 10) -> np.ndarray:
    """(k, n): for sense l and character x, the fraction of the `top` characters c of E^T C(x)_l such that
    xc is a dictionary word. High: a word-composition sense; low: relatedness (or noise)."""
    ids = top_ids(model, vocab, chars, top)                        # (n, k, top)
    composes = np.array([[[x + vocab.itos[i] in dictionary for i in row] for row in per_char]
                         for x, per_char in zip(chars, ids.tolist())], dtype=float)
    return composes.mean(-1).T


def frequent_characters(vocab: CharVocab, n: int) -> list[str]:
    """The n most frequent Chinese characters of the vocabulary (training-split counts)."""
    return [c for c in vocab.counts if is_han(c) and c in vocab.stoi][:n]


# --- Tables 2 and 7 ------------------------------------------------------------------------------------------
PAPER_MODEL = "paper (micro)"


def sense_tops(model: torch.nn.Module, vocab: CharVocab, chars: Sequence[str], top: int,
               dictionary: Dictionary) -> pd.DataFrame:
    """`top_characters` of every character of `chars`, one table."""
    return pd.concat([top_characters(model, vocab, c, top, dictionary) for c in chars], ignore_index=True)


def projection_table(tops: pd.DataFrame) -> pd.DataFrame:
    """`sense_tops` in the long form: the score of each listed character as metric "score"."""
    keys = [c for c in tops.columns if c != "score"]
    return tops[keys].assign(metric="score", ours=tops["score"])


def every_sense_text(tops: pd.DataFrame, dictionary: Dictionary, ranks: int = 6, per_block: int = 8) -> str:
    """Per character (with its gloss): the top `ranks` characters of every sense, one column per sense, in
    blocks of `per_block` senses (printed text does not wrap: 16 columns are wider than the book's page)."""
    def blocks(g: pd.DataFrame) -> str:
        wide = sense_columns(g[g["rank"] < ranks], gloss=False)
        return "\n".join(wide.iloc[:, i:i + per_block].to_string() for i in range(0, wide.shape[1], per_block))
    return "\n".join(f"{c} ({dictionary.gloss(c)})\n" + blocks(g) for c, g in tops.groupby("char", sort=False))


@dataclass(frozen=True)
class SenseRoles:
    """Composition rates per sense (`composition_rate`) and the senses they single out."""

    characters: list[str]        # the characters of Tables 2 and 7 (and any added)
    frequent: list[str]          # the most frequent characters of the vocabulary
    heat: pd.DataFrame           # sense x (each of `characters`, the mean over `frequent`): top-`top` rates
    frequent_rates: np.ndarray   # (k, len(frequent)) top-`top` rates
    top5: np.ndarray             # (k, 4) top-5 rates of the paper's four characters (as Table 7 prints five)
    top: int
    composing: int               # the sense with the highest mean rate over `frequent`
    relating: int                # the lowest


def sense_roles(model: torch.nn.Module, vocab: CharVocab, characters: Sequence[str], dictionary: Dictionary,
                n_frequent: int, top: int) -> SenseRoles:
    frequent = frequent_characters(vocab, n_frequent)
    rates = composition_rate(model, vocab, frequent, dictionary, top)
    heat = pd.DataFrame(composition_rate(model, vocab, characters, dictionary, top), columns=list(characters))
    heat[f"mean of {len(frequent)} frequent"] = rates.mean(1)
    heat.index.name = "sense"
    return SenseRoles(characters=list(characters), frequent=frequent, heat=heat, frequent_rates=rates,
                      top5=composition_rate(model, vocab, characters[:4], dictionary, 5), top=top,
                      composing=int(heat.iloc[:, -1].idxmax()), relating=int(heat.iloc[:, -1].idxmin()))


def paper_rate(sense: int, dictionary: Dictionary) -> float:
    """The composition rate of the paper's printed lists of `sense` (Table 7, five per character)."""
    pairs = [(x, c) for x, cs in PAPER_TOP[sense].items() for c in cs]
    return sum(x + c in dictionary for x, c in pairs) / len(pairs)


def composition_rate_table(roles: SenseRoles, dictionary: Dictionary, model: str) -> pd.DataFrame:
    """The paper's senses 10 and 12 scored with `dictionary` (model PAPER_MODEL), our most and least composing
    senses (role "composition", "relatedness") and every sense of ours (role ""), long."""
    wide = f"composition_rate_{len(roles.frequent)}chars_top{roles.top}"
    rows = [{"model": PAPER_MODEL, "role": "composition", "sense": PAPER_COMPOSING_SENSE,
             "metric": "composition_rate_4chars_top5", "ours": paper_rate(PAPER_COMPOSING_SENSE, dictionary)},
            {"model": PAPER_MODEL, "role": "relatedness", "sense": PAPER_RELATED_SENSE,
             "metric": "composition_rate_4chars_top5", "ours": paper_rate(PAPER_RELATED_SENSE, dictionary)}]
    for role, s in (("composition", roles.composing), ("relatedness", roles.relating)):
        rows += [{"model": model, "role": role, "sense": s, "metric": "composition_rate_4chars_top5",
                  "ours": roles.top5[s].mean()},
                 {"model": model, "role": role, "sense": s, "metric": wide, "ours": roles.frequent_rates[s].mean()}]
    rows += [{"model": model, "role": "", "sense": s, "metric": wide, "ours": roles.frequent_rates[s].mean()}
             for s in range(len(roles.frequent_rates))]
    return pd.DataFrame(rows)


def roles_spread(roles: SenseRoles) -> pd.DataFrame:
    """The bootstrap sd over the frequent characters (`hanzilm.spread`) of the composing sense's composition
    rate over the relating sense's (the claims registry's `t2.composition_sense`; the senses stay the ones the
    whole set singled out)."""
    rates = roles.frequent_rates
    items = np.stack([rates[roles.composing], rates[roles.relating]], axis=1)
    ratio = lambda t: t[:, 0] / t[:, 1]  # noqa: E731
    sd = spread.bootstrap_sd(ratio, [items])
    return pd.DataFrame([{"quantity": "t2.composition_sense", "metric": "sd", "ours": sd,
                          "source": spread.source(1, len(roles.frequent), "frequent characters")}])


def side_by_side_text(tops: pd.DataFrame, roles: SenseRoles, characters: Sequence[str]) -> str:
    """Per character: the paper's senses 10, 12 and 15 (Table 7) beside our most and least composing senses'
    top five, with glosses."""
    out = []
    for c in characters:
        ours = sense_columns(tops[(tops.char == c) & (tops["rank"] < 5)], senses=[roles.composing, roles.relating])
        ours.columns = [f"ours #{s} ({'composes' if s == roles.composing else 'relates'})" for s in ours.columns]
        theirs = pd.DataFrame({f"paper #{s}": list(PAPER_TOP[s][c]) for s in PAPER_TOP})
        # the paper's three senses, then our two below them: five glossed columns are wider than the page
        out.append(f"{c}\n" + theirs.to_string() + "\n" + ours.reset_index(drop=True).to_string())
    return "\n".join(out)


def roles_reading(table: pd.DataFrame, roles: SenseRoles, model: str) -> str:
    """Markdown: the paper's senses' rates beside our composing and relating senses' (numbers from `table`)."""
    r = table.set_index(["model", "role", "metric"])["ours"]
    rates = roles.frequent_rates
    return (f"- Paper, scored with CC-CEDICT: sense {PAPER_COMPOSING_SENSE} composes "
            f"{r[PAPER_MODEL, 'composition', 'composition_rate_4chars_top5']:.0%} of its printed top-5 lists, sense "
            f"{PAPER_RELATED_SENSE} {r[PAPER_MODEL, 'relatedness', 'composition_rate_4chars_top5']:.0%}.\n"
            f"- Ours: sense {roles.composing} composes {r[model, 'composition', 'composition_rate_4chars_top5']:.0%} "
            f"of the four characters' top 5 ({rates[roles.composing].mean():.0%} of the top {roles.top} over "
            f"{len(roles.frequent)} frequent characters); sense {roles.relating} composes "
            f"{r[model, 'relatedness', 'composition_rate_4chars_top5']:.0%} ({rates[roles.relating].mean():.0%}). "
            f"Mean over all senses: {rates.mean():.0%}.")
