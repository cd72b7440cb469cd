"""Composition ratios lambda (Section 5.1.2, Eq. 8-10; Tables 3 and 8): how a word's characters share each
sense's weight in the predictions after the word, and how stable that share is across contexts.

For a context c holding the word w = x_1..x_p at positions j_1..j_p:

    lambda(c)_{l j_s} = mean over i >= j_p of  alpha_{l i j_s} / sum_t alpha_{l i j_t}          (Eq. 9)

i.e. over every prediction from the one right after the word to the end of the context (the paper's
1/(|c| - j_p) normaliser counts one prediction fewer than its sum has; we take the mean), then normalised over
the characters (Eq. 8, already 1 after Eq. 9). A word is stably composed on sense l if lambda(c)_l hardly
moves between contexts. Our variation measure (the paper does not define one): the largest absolute
deviation, over contexts and characters, of lambda(c)_{l j_s} from its mean over contexts, in ratio points,
bucketed as <= 0.10, (0.10, 0.20], > 0.20 (the paper's "<= ±10 %, <= ±20 %, >= ±20 %"), over the contexts
where lambda is defined (a sense that puts exactly zero weight on the word in every prediction after it has
none); a sense defined in fewer than two contexts is "undefined".

Eq. 10 represents the word by its characters' senses weighted by the mean ratios:
    C(w)_l = sum_s mean_m lambda(c_m)_{l j_s} C(x_s)_l."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
import torch

from ... import spread
from ...data.corpus import load_lm_corpus
from ...data.lexicon import cedict, compound_candidates, idioms, loanwords
from ...data.vocab import CharVocab
from ...results import paper_values
from .common import SensesConfig, encode, in_vocab
from .prompts import NOUN_PROMPTS, TABLE8_UNSTABLE, TABLE8_WORDS, fill

BUCKETS = ("within_10pct", "within_20pct", "beyond_20pct")
UNDEFINED = "undefined"   # the sense never weighs the word after it (see lambdas_from_alpha)


@dataclass(frozen=True)
class Context:
    text: str
    start: int          # index of the word's first character in text
    source: str         # "prompt" | "corpus"


def lambdas_from_alpha(alpha: torch.Tensor, positions: Sequence[int], end: int | None = None) -> torch.Tensor:
    """Eq. 8-9 for one context: alpha (k, T, T) of the model on it, the word's positions j_1..j_p, the
    context's length `end` (rows from j_p to end - 1 are used). Returns lambda (k, p), rows summing to 1."""
    end = alpha.shape[-2] if end is None else end
    rows = alpha[:, positions[-1]:end][:, :, list(positions)]           # (k, R, p)
    share = rows / rows.sum(-1, keepdim=True)                           # inner fraction of Eq. 9
    # A prediction in which sense l puts no weight at all on the word (alpha underflows to exactly 0: Eq. 6 has
    # no 1/sqrt(d) and some senses attend to one position only) has no split to measure: 0/0, left out. A sense
    # with no such prediction in the context has an undefined lambda (NaN).
    lam = share.nanmean(1)                                              # Eq. 9
    return lam / lam.sum(-1, keepdim=True)                              # Eq. 8


@torch.no_grad()
def word_lambdas(model: torch.nn.Module, vocab: CharVocab, word: str, contexts: Sequence[Context],
                 block_size: int | None = None) -> torch.Tensor:
    """lambda(c)_l of `word` in every context: (q, k, p). The contexts go through the model as one batch,
    right-padded: alpha is causal, so padding cannot change the rows used."""
    seqs = [encode(vocab, c.text) for c in contexts]
    block = block_size or model.block_size
    if max(map(len, seqs)) > block:
        raise ValueError(f"a context of {max(map(len, seqs))} tokens is longer than the block ({block})")
    T = max(map(len, seqs))
    ids = torch.full((len(seqs), T), seqs[0][0], dtype=torch.long)
    for b, s in enumerate(seqs):
        ids[b, :len(s)] = torch.tensor(s)
    alpha = model.alpha(ids)
    out = []
    for b, (c, s) in enumerate(zip(contexts, seqs)):
        positions = [1 + c.start + t for t in range(len(word))]          # +1: the <doc> token
        assert c.text[c.start:c.start + len(word)] == word
        out.append(lambdas_from_alpha(alpha[b], positions, len(s)))
    return torch.stack(out)


def variation(lams: torch.Tensor, min_contexts: int = 2) -> torch.Tensor:
    """(k,): the largest |lambda(c)_{l,s} - mean_c lambda(c)_{l,s}| over contexts c and characters s, over
    the contexts where lambda is defined; NaN for a sense defined in fewer than `min_contexts` contexts."""
    defined = ~lams.isnan().any(-1)                                     # (q, k)
    dev = (lams - lams.nanmean(0, keepdim=True)).abs().nan_to_num(nan=-1.0).amax(dim=(0, 2))
    return torch.where(defined.sum(0) >= min_contexts, dev, torch.full_like(dev, float("nan")))


def bucket(v: float) -> str:
    if v != v:
        return UNDEFINED
    return BUCKETS[0] if v <= 0.10 else BUCKETS[1] if v <= 0.20 else BUCKETS[2]


def bucket_counts(v: Iterable[float]) -> dict[str, int]:
    """How many variations fall in each bucket; NaN (lambda undefined) counted as UNDEFINED."""
    counts = dict.fromkeys((*BUCKETS, UNDEFINED), 0)
    for x in v:
        counts[bucket(float(x))] += 1
    return counts


def sense_variation(model: torch.nn.Module, vocab: CharVocab, words: Sequence[tuple[str, str]],
                    contexts: Callable[[str, int], Sequence[Context]]) -> tuple[pd.DataFrame, dict]:
    """Every sense's variation for each (type, word) in vocabulary, over `contexts(word, index)`: a long table
    (type, word, sense, contexts, variation) and the lambdas per (type, word), each word computed once."""
    rows, lambdas = [], {}
    for index, (kind, word) in enumerate(words):
        if (kind, word) in lambdas or not in_vocab(vocab, word):
            continue
        ctx = contexts(word, index)
        lambdas[kind, word] = lams = word_lambdas(model, vocab, word, ctx)
        rows += [{"type": kind, "word": word, "sense": sense, "contexts": len(ctx), "variation": v}
                 for sense, v in enumerate(variation(lams).tolist())]
    return pd.DataFrame(rows, columns=["type", "word", "sense", "contexts", "variation"]), lambdas


def bucket_shares(per_sense: pd.DataFrame) -> pd.DataFrame:
    """Table 3, long form per word type: the share of (word, sense) pairs with a defined ratio in each bucket,
    the share left undefined, the number of words, the median variation and the mean number of contexts."""
    rows = []
    for kind, g in per_sense.groupby("type", sort=False):
        counts = bucket_counts(g.variation)
        defined = len(g) - counts[UNDEFINED]
        rows += [{"word_type": kind, "metric": b, "ours": counts[b] / defined if defined else np.nan} for b in BUCKETS]
        rows += [{"word_type": kind, "metric": "undefined_share", "ours": counts[UNDEFINED] / len(g)},
                 {"word_type": kind, "metric": "n_words", "ours": g.word.nunique()},
                 {"word_type": kind, "metric": "median_variation", "ours": g.variation.median()},
                 {"word_type": kind, "metric": "mean_contexts", "ours": g.groupby("word").contexts.first().mean()}]
    return pd.DataFrame(rows)


@torch.no_grad()
def word_vector(model: torch.nn.Module, vocab: CharVocab, word: str, lams: torch.Tensor) -> torch.Tensor:
    """Eq. 10: C(w)_l = sum_s (mean over contexts of lambda_{l,s}) C(x_s)_l, (k, d). A sense whose lambda is
    undefined in every context gets equal weights 1/p (Eq. 10 has nothing to say about it)."""
    senses = model.senses(torch.tensor(vocab.encode(word)))             # (p, k, d)
    weights = lams.nanmean(0).nan_to_num(nan=1.0 / len(word)).T          # (p, k)
    return (weights.unsqueeze(-1) * senses).sum(0)


# --- contexts ------------------------------------------------------------------------------------------------
def prompt_contexts(word: str, prompts: Sequence[str]) -> list[Context]:
    """The paper's prompts (Table 9) with the word filled in."""
    out = []
    for p in prompts:
        text = fill(p, word)
        out.append(Context(text, p.index("WORD"), "prompt"))
    return out


class CorpusText:
    """The corpus as one string (documents joined by newlines) for finding a word's occurrences."""

    def __init__(self, texts: Iterable[str]):
        self.text = "\n".join(texts)

    @classmethod
    def of_lm_corpus(cls) -> CorpusText:
        """The whole LM corpus (every split: the analyses count and find words, they train nothing)."""
        return cls(d.text for d in load_lm_corpus())

    def count(self, word: str) -> int:
        return self.text.count(word)

    def occurrences(self, word: str, limit: int = 10_000) -> list[int]:
        out, i = [], self.text.find(word)
        while i >= 0 and len(out) < limit:
            out.append(i)
            i = self.text.find(word, i + len(word))
        return out

    def contexts(self, word: str, n: int, before: int, after: int, rng: np.random.Generator) -> list[Context]:
        """n windows around occurrences of `word` drawn with `rng` (all if fewer), each cut at line ends:
        up to `before` characters before the word and `after` after it."""
        occ = self.occurrences(word)
        if len(occ) > n:
            occ = sorted(rng.choice(occ, size=n, replace=False).tolist())
        out = []
        for i in occ:
            lo = max(0, i - before, self.text.rfind("\n", 0, i) + 1)
            nl = self.text.find("\n", i + len(word))
            hi = min(len(self.text), i + len(word) + after, nl if nl >= 0 else len(self.text))
            out.append(Context(self.text[lo:hi], i - lo, "corpus"))
        return out


def draw_words(candidates: Sequence[str], n: int, accept: Callable[[str], bool], seed: int) -> list[str]:
    """The first n candidates, in a random order fixed by `seed`, that `accept` keeps (all kept ones if fewer)."""
    order = np.random.default_rng(seed).permutation(len(candidates))
    out = []
    for i in order:
        if accept(candidates[i]):
            out.append(candidates[i])
            if len(out) == n:
                break
    return out


# --- Tables 3 and 8 ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WordSets:
    candidates: dict[str, list[str]]     # word type -> every candidate of the lexicons
    words: dict[str, list[str]]          # word type -> the drawn words


def draw_word_sets(vocab: CharVocab, text: CorpusText, cfg: SensesConfig) -> WordSets:
    """About `cfg.words_per_type` words of each type (compounds from CC-CEDICT, its loanwords, THUOCL's
    idioms), drawn with `cfg.seed`: all characters in the vocabulary, at least `cfg.min_word_count`
    occurrences in the corpus."""
    loans = loanwords()
    candidates = {"compound": compound_candidates(cedict(), set(loans)), "loanword": loans, "idiom": idioms()}

    def usable(word):
        return in_vocab(vocab, word) and text.count(word) >= cfg.min_word_count

    return WordSets(candidates, {t: draw_words(c, cfg.words_per_type, usable, cfg.seed) for t, c in candidates.items()})


def selection_table(sets: WordSets, text: CorpusText) -> pd.DataFrame:
    """The drawn words with their corpus counts, long."""
    return pd.DataFrame([{"type": t, "word": w, "metric": "corpus_count", "ours": text.count(w)}
                         for t, ws in sets.words.items() for w in ws])


def word_set_summary(sets: WordSets, shown: int = 8) -> pd.DataFrame:
    return pd.DataFrame({t: [len(c), len(sets.words[t]), " ".join(sets.words[t][:shown])]
                         for t, c in sets.candidates.items()}, index=["candidates", "drawn", "first drawn"])


def variation_study(model: torch.nn.Module, vocab: CharVocab, sets: WordSets, text: CorpusText,
                    cfg: SensesConfig, cache: dict | None = None) -> tuple[pd.DataFrame, dict]:
    """`sense_variation` of the drawn words and Table 8's, each over the prompts of Table 9 and up to
    `cfg.corpus_contexts` corpus windows (drawn with the seed and the word's index). cache: a dict kept between
    calls on other weights of the same vocabulary (the contexts do not depend on the model)."""
    cache = {} if cache is None else cache

    def contexts(word, index):
        if (word, index) not in cache:
            rng = np.random.default_rng([cfg.seed, index])
            cache[word, index] = prompt_contexts(word, NOUN_PROMPTS) + text.contexts(
                word, cfg.corpus_contexts, cfg.context_before, cfg.context_after, rng)
        return cache[word, index]

    words = [(t, w) for t, ws in sets.words.items() for w in ws] + list(TABLE8_WORDS)
    return sense_variation(model, vocab, words, contexts)


def missing_table8_words(vocab: CharVocab) -> list[str]:
    """Table 8's words with a character outside the vocabulary."""
    return [w for _, w in TABLE8_WORDS if not in_vocab(vocab, w)]


def table3(per_sense: pd.DataFrame, sets: WordSets) -> pd.DataFrame:
    """Table 3, long (`bucket_shares`) over the drawn words (Table 8's own words left out unless drawn)."""
    return bucket_shares(drawn_only(per_sense, sets))


def drawn_only(per_sense: pd.DataFrame, sets: WordSets) -> pd.DataFrame:
    return per_sense[per_sense.apply(lambda r: r.word in sets.words[r.type], axis=1)]


def paper_table3() -> pd.DataFrame:
    return paper_values("backpack_table3_composition.csv", keys={"word_type": "word_type"},
                        metrics={"n_words": "n_words", **{b: b for b in BUCKETS}})


def paper_table8() -> pd.DataFrame:
    return paper_values("backpack_table8_words.csv", keys={"word": "word"}, metrics={b: b for b in BUCKETS})


def table8(per_sense: pd.DataFrame) -> pd.DataFrame:
    """Table 8, long: per word of the paper's nine, the number of senses in each variation bucket."""
    rows = []
    for t, w in TABLE8_WORDS:
        g = per_sense[(per_sense.type == t) & (per_sense.word == w)]
        if g.empty:
            continue
        rows += [{"type": t, "word": w, "contexts": int(g.contexts.iloc[0]), "metric": b, "ours": n}
                 for b, n in bucket_counts(g.variation).items()]
    return pd.DataFrame(rows)


def table8_spread(table8_long: pd.DataFrame) -> pd.DataFrame:
    """The bootstrap sd (`hanzilm.spread`) of Table 8's claim (the registry's t8.unstable_subset: the mean number
    of senses within 10 % of the paper's stable words minus that of its unstable ones) over the nine words, each
    group's words drawn again with replacement within the group."""
    within = table8_long[table8_long.metric == "within_10pct"].set_index("word")["ours"].astype(float)
    unstable = within[within.index.isin(TABLE8_UNSTABLE)].to_numpy()
    stable = within[~within.index.isin(TABLE8_UNSTABLE)].to_numpy()
    w_stable, w_unstable = spread.draws_within([len(stable), len(unstable)])
    values = w_stable @ stable / len(stable) - w_unstable @ unstable / len(unstable)
    source = spread.source(1, len(within), "Table 8 words, within their stability group (each with all its senses)")
    return pd.DataFrame([{"quantity": "t8.unstable_subset", "source": source, "metric": "sd",
                          "ours": spread.sd(values)}])


def first_character_shares(lambdas: dict) -> pd.DataFrame:
    """Per sense (rows) and Table 8 word (columns): the mean ratio of the word's first character."""
    share = pd.DataFrame({w: lambdas[t, w].mean(0)[:, 0].numpy() for t, w in TABLE8_WORDS if (t, w) in lambdas})
    share.index.name = "sense"
    return share


@torch.no_grad()
def eq10_cosines(model: torch.nn.Module, vocab: CharVocab, lambdas: dict) -> pd.DataFrame:
    """Per word type: how close the Eq. 10 vectors are to the plain mean of the characters' senses (cosine
    per sense, averaged; count, mean and minimum over the words)."""
    cos = {}
    for (t, w), lams in lambdas.items():
        eq10 = word_vector(model, vocab, w, lams)
        mean = model.senses(torch.tensor(vocab.encode(w))).mean(0)
        cos[t, w] = torch.nn.functional.cosine_similarity(eq10, mean, dim=-1).mean().item()
    return pd.Series(cos).rename_axis(["type", "word"]).groupby("type").describe()[["count", "mean", "min"]]


def table3_reading(table: pd.DataFrame) -> str:
    """Markdown: the shares within 0.10 per type beside the paper's, and the order by stability."""
    t3 = table.set_index(["word_type", "metric"])["ours"]
    order = t3.xs("within_10pct", level="metric").sort_values(ascending=False)
    return ("- Share of (word, sense) ratios within 0.10: " + ", ".join(f"{t} {v:.1%}" for t, v in order.items()) +
            " (paper: idiom 84.9 %, compound 69.5 %, loanword 60.6 %); undefined (left out): " +
            ", ".join(f"{t} {t3[t, 'undefined_share']:.1%}" for t in order.index) + ".\n"
            f"- Ours, most stable first: {' > '.join(order.index)} (paper: idiom > compound > loanword).")


# --- Table 3's spread ----------------------------------------------------------------------------------------
def word_buckets(per_sense: pd.DataFrame, sets: WordSets) -> pd.DataFrame:
    """Table 3's items: per drawn word (type, word), how many of its senses fall in each variation bucket and
    how many have a defined ratio. Table 3's shares are ratios of these counts summed over a type's words."""
    rows = [{"type": t, "word": w, **bucket_counts(g.variation)}
            for (t, w), g in drawn_only(per_sense, sets).groupby(["type", "word"], sort=False)]
    out = pd.DataFrame(rows, columns=["type", "word", *BUCKETS, UNDEFINED])
    out["defined"] = out[list(BUCKETS)].sum(axis=1)
    return out


def table3_claim_values(per_word: pd.DataFrame, weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Table 3's claims (the registry's `backpack.t3.*` quantities, its prefix left out) on draws of the words:
    `weights[type]` (draws, words of the type in `word_buckets` order) says how often each word is drawn (all
    ones: the table itself). Per type, the share within 0.10 (`within_10pct`) and one minus the share beyond
    0.20 (`stable_90pct`), each a ratio of summed counts as in `bucket_shares`; `order`: min(idiom - compound,
    compound - loanword) of the shares within 0.10 (NaN unless all three types are weighted)."""
    out, within = {}, {}
    for kind, w in weights.items():
        g = per_word[per_word.type == kind]
        with np.errstate(invalid="ignore", divide="ignore"):            # a draw of words with no defined ratio
            share = {b: (w @ g[b].to_numpy(float)) / (w @ g.defined.to_numpy(float)) for b in BUCKETS}
        out[f"t3.{kind}.stable_90pct"] = 1 - share["beyond_20pct"]
        out[f"t3.{kind}.within_10pct"] = within[kind] = share["within_10pct"]
    if {"idiom", "compound", "loanword"} <= set(within):
        out["t3.order"] = np.minimum(within["idiom"] - within["compound"], within["compound"] - within["loanword"])
    else:
        out["t3.order"] = np.full(len(next(iter(weights.values()))), np.nan)
    return out


def table3_spread(per_sense: pd.DataFrame, sets: WordSets) -> pd.DataFrame:
    """The bootstrap sd (`hanzilm.spread`) of each Table 3 claim's quantity (`table3_claim_values`) over the
    drawn words: the words of each type drawn again with replacement (within the type, as the types were
    drawn apart), each word with all its senses; one draw of all three types for every quantity (paired). A
    type with fewer than two words gives NaN."""
    per_word = word_buckets(per_sense, sets)
    sizes = {kind: int((per_word.type == kind).sum()) for kind in sets.words}
    weights = dict(zip(sizes, spread.draws_within(list(sizes.values()))))
    sources = {f"t3.{kind}.{claim}": spread.source(1, n, f"drawn {kind} words (each with all its senses)")
               for kind, n in sizes.items() for claim in ("stable_90pct", "within_10pct")}
    sources["t3.order"] = spread.source(1, sum(sizes.values()), "drawn words, within each type (each with all its "
                                                                "senses)")
    return pd.DataFrame([{"quantity": q, "source": sources[q], "metric": "sd", "ours": spread.sd(v)}
                         for q, v in table3_claim_values(per_word, weights).items()])
