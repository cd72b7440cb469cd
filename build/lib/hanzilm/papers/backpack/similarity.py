"""Lexical similarity from character representations (Section 5.1.3, Table 4): a word is the mean of its
characters' sense vectors (per sense, or all senses) for the Backpack and the mean of its characters' input
embeddings for GPT-2; the cosine similarity of each pair is correlated with the human scores.

The paper's text says Spearman, its Table 4 caption Pearson: we report both. A pair is covered when every
character of both words is in the model's vocabulary; uncovered pairs are left out and counted."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch
from scipy import stats

from ... import spread
from ...data.vocab import CharVocab
from ...results import paper_values
from .common import in_vocab
from .composition import prompt_contexts, word_lambdas, word_vector
from .prompts import NOUN_PROMPTS

Vectors = Callable[[str], torch.Tensor]   # word -> (..., dim): one vector per representation in the batch dims


@torch.no_grad()
def backpack_word_senses(model: torch.nn.Module, vocab: CharVocab) -> Vectors:
    """word -> (k, d): the mean over its characters of C(x)_l, for every sense l."""
    return lambda word: model.senses(torch.tensor(vocab.encode(word))).mean(0)


@torch.no_grad()
def embedding_word_vector(model: torch.nn.Module, vocab: CharVocab) -> Vectors:
    """word -> (d,): the mean of its characters' input embeddings E x."""
    return lambda word: model.wte(torch.tensor(vocab.encode(word))).mean(0)


def pair_cosines(pairs: Sequence[tuple[str, str, float]], vectors: Vectors, vocab: CharVocab
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(cosines (covered pairs, representations), human scores (covered pairs)) of the pairs whose characters
    are all in the vocabulary."""
    kept = [(a, b, s) for a, b, s in pairs if in_vocab(vocab, a) and in_vocab(vocab, b)]
    if len(kept) < 3:
        raise ValueError(f"only {len(kept)} of {len(pairs)} pairs are covered by the vocabulary")
    with torch.no_grad():
        va = torch.stack([vectors(a) for a, _, _ in kept])
        vb = torch.stack([vectors(b) for _, b, _ in kept])
    cos = torch.nn.functional.cosine_similarity(va, vb, dim=-1)         # (n, ...)
    return cos.reshape(len(kept), -1).double().numpy(), np.array([s for _, _, s in kept])


def correlations(pairs: Sequence[tuple[str, str, float]], vectors: Vectors, vocab: CharVocab) -> pd.DataFrame:
    """Spearman and Pearson correlation of cos(v(w1), v(w2)) with the human scores, over the covered pairs;
    one row per representation (the leading dims of `vectors`' output, flattened)."""
    cos, human = pair_cosines(pairs, vectors, vocab)
    rows = []
    for r in range(cos.shape[1]):
        rows.append({"index": r, "spearman": stats.spearmanr(cos[:, r], human).statistic,
                     "pearson": stats.pearsonr(cos[:, r], human).statistic,
                     "pairs": len(human), "coverage": len(human) / len(pairs)})
    return pd.DataFrame(rows)


def all_senses(per_sense: Vectors, how: str) -> Vectors:
    """All senses as one vector: their mean ("mean") or their concatenation ("concat")."""
    if how == "mean":
        return lambda w: per_sense(w).mean(-2)
    if how == "concat":
        return lambda w: per_sense(w).flatten(-2)
    raise ValueError(how)


# --- Table 4 -------------------------------------------------------------------------------------------------
PER_SENSE = "Backpack sense"   # one representation per sense: "Backpack sense 0", "Backpack sense 1", ...
BEST, ELSEWHERE = "Backpack, best sense (on this set)", "Backpack, sense chosen on the other set"
GPT_EMBEDDING = "GPT-2 input embedding"
PAPER_ROWS = ("Backpack-micro (best sense 14)", "GPT2-micro")


def eq10_vectors(model: torch.nn.Module, vocab: CharVocab, prompts=NOUN_PROMPTS) -> Vectors:
    """word -> (k*d,): the Eq. 10 word vector, all senses concatenated, with `prompts` as the contexts."""
    cache: dict[str, torch.Tensor] = {}

    def vector(word: str) -> torch.Tensor:
        if word not in cache:
            lams = word_lambdas(model, vocab, word, prompt_contexts(word, prompts))
            cache[word] = word_vector(model, vocab, word, lams)
        return cache[word].flatten()

    return vector


def representations(backpack: torch.nn.Module, gpt: torch.nn.Module, vocab: CharVocab) -> dict[str, Vectors]:
    """The word representations of Table 4 by name (PER_SENSE: one per sense)."""
    per_sense = backpack_word_senses(backpack, vocab)
    return {
        PER_SENSE: per_sense,
        "Backpack all senses (mean)": all_senses(per_sense, "mean"),
        "Backpack all senses (concatenated)": all_senses(per_sense, "concat"),
        "Backpack Eq. 10, all senses (concatenated)": eq10_vectors(backpack, vocab),
        "Backpack input embedding": embedding_word_vector(backpack, vocab),
        GPT_EMBEDDING: embedding_word_vector(gpt, vocab),
    }


def scores(sets: dict[str, Sequence[tuple[str, str, float]]], reps: dict[str, Vectors],
           vocab: CharVocab) -> pd.DataFrame:
    """One row per (representation, set): Spearman, Pearson, covered pairs and coverage (`correlations`)."""
    rows = []
    for set_name, pairs in sets.items():
        for rep, vectors in reps.items():
            for _, r in correlations(pairs, vectors, vocab).iterrows():
                label = f"{rep} {int(r['index'])}" if rep == PER_SENSE else rep
                rows.append({"representation": label, "set": set_name, "spearman": r.spearman, "pearson": r.pearson,
                             "pairs": r.pairs, "coverage": r.coverage})
    return pd.DataFrame(rows)


def per_sense_scores(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of `scores` of single senses, with their sense index."""
    out = table[table.representation.str.startswith(PER_SENSE)].copy()
    out["sense"] = out.representation.str.split().str[-1].astype(int)
    return out


def table4(table: pd.DataFrame, sets: dict[str, Sequence]) -> pd.DataFrame:
    """Table 4, long: per set and correlation, the best sense on the set and the sense chosen on the other
    set (value and index), every other representation, and the coverage; `paper_model` names the paper's row."""
    senses = per_sense_scores(table)
    names = list(sets)
    other = dict(zip(names, names[::-1]))   # the two sets: each one's fairer sense is chosen on the other
    reps = [r for r in dict.fromkeys(table.representation) if not r.startswith(PER_SENSE)]
    long = []
    for set_name in sets:
        for metric in ("spearman", "pearson"):
            s = senses[senses.set == set_name].set_index("sense")[metric]
            chosen = int(senses[senses.set == other[set_name]].set_index("sense")[metric].idxmax())
            m = f"{set_name}_{metric}"
            long += [{"representation": BEST, "paper_model": PAPER_ROWS[0], "metric": m, "ours": s.max()},
                     {"representation": BEST, "paper_model": None, "metric": f"{m}_sense", "ours": int(s.idxmax())},
                     {"representation": ELSEWHERE, "paper_model": None, "metric": m, "ours": s[chosen]},
                     {"representation": ELSEWHERE, "paper_model": None, "metric": f"{m}_sense", "ours": chosen}]
            for rep in reps:
                value = table[(table.set == set_name) & (table.representation == rep)][metric].item()
                long.append({"representation": rep, "paper_model": PAPER_ROWS[1] if rep.startswith("GPT-2") else None,
                             "metric": m, "ours": value})
        cov = table[table.set == set_name].iloc[0]
        long += [{"representation": "all", "paper_model": None, "metric": f"{set_name}_pairs_covered", "ours": cov.pairs},
                 {"representation": "all", "paper_model": None, "metric": f"{set_name}_pairs_total",
                  "ours": len(sets[set_name])}]
    return pd.DataFrame(long)


def pearson_sums(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(n, 6) per-pair sums (1, x, y, x², y², xy): Pearson's r of any resample is a function of their totals."""
    return np.stack([np.ones_like(x), x, y, x * x, y * y, x * y], axis=1)


def pearson_of_totals(t: np.ndarray) -> np.ndarray:
    """Pearson's r from (resamples, 6) totals of `pearson_sums`."""
    n, sx, sy, sxx, syy, sxy = t.T
    return (n * sxy - sx * sy) / np.sqrt((n * sxx - sx * sx) * (n * syy - sy * sy))


def table4_spread(sets: dict[str, Sequence], reps: dict[str, Vectors], vocab: CharVocab,
                  table: pd.DataFrame) -> pd.DataFrame:
    """The bootstrap sd over the word pairs (`hanzilm.spread`) of Table 4's Pearson correlations the claims
    registry judges: the Backpack's sense chosen on the other set minus GPT-2 (paired: one draw of pairs for
    both), and the best sense's and GPT-2's own values; the senses are the ones `table` (Table 4) chose.
    `quantity` is the registry's id without `backpack.`."""
    t = table.set_index(["representation", "metric"])["ours"]
    rows = []
    for set_name, pairs in sets.items():
        senses, human = pair_cosines(pairs, reps[PER_SENSE], vocab)
        gpt, _ = pair_cosines(pairs, reps[GPT_EMBEDDING], vocab)
        pick = lambda rep: pearson_sums(senses[:, int(t[rep, f"{set_name}_pearson_sense"])], human)  # noqa: E731
        g = pearson_sums(gpt[:, 0], human)
        source = spread.source(1, len(human), "word pairs")
        diff = lambda a, b: pearson_of_totals(a) - pearson_of_totals(b)  # noqa: E731
        sds = {"backpack_over_gpt2": spread.bootstrap_sd(diff, [pick(ELSEWHERE), g]),
               "backpack_value": spread.bootstrap_sd(pearson_of_totals, [pick(BEST)]),
               "gpt2_value": spread.bootstrap_sd(pearson_of_totals, [g])}
        rows += [{"quantity": f"t4.{set_name}.{k}", "source": source, "metric": "sd", "ours": v} for k, v in sds.items()]
    return pd.DataFrame(rows)


def paper_table4() -> pd.DataFrame:
    """The paper's Table 4 rows we compare with (the micro Backpack's best sense and GPT-2), both correlations
    (the paper prints one number per set: its text says Spearman, its caption Pearson)."""
    paper = pd.concat([paper_values("backpack_table4_wordsim.csv", keys={"representation": "paper_model"},
                                    metrics={"ws240": f"ws240_{m}", "ws297": f"ws297_{m}"})
                       for m in ("spearman", "pearson")], ignore_index=True)
    return paper[paper.paper_model.isin(PAPER_ROWS)]


def table4_reading(table: pd.DataFrame, sets: dict[str, Sequence]) -> str:
    """Markdown: per set and correlation, the best sense against GPT-2 and the fairer sense chosen elsewhere;
    the coverage."""
    t = table.set_index(["representation", "metric"])["ours"]
    lines = []
    for set_name in sets:
        for metric in ("spearman", "pearson"):
            m = f"{set_name}_{metric}"
            b, g, o = t[BEST, m], t[GPT_EMBEDDING, m], t[ELSEWHERE, m]
            lines.append(f"- {set_name} {metric}: Backpack best sense {int(t[BEST, f'{m}_sense'])} "
                         f"{b:.3f} vs GPT-2 {g:.3f} ({'Backpack higher' if b > g else 'GPT-2 higher or equal'}); "
                         f"with the sense chosen on the other set {o:.3f}.")
    lines.append(f"- Coverage: {int(t['all', 'ws240_pairs_covered'])}/{int(t['all', 'ws240_pairs_total'])} WS-240 pairs, "
                 f"{int(t['all', 'ws297_pairs_covered'])}/{int(t['all', 'ws297_pairs_total'])} WS-297 pairs.")
    return "\n".join(lines)
