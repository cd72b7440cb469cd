"""Gender bias of profession words and its removal (Section 5.2.1, Table 5).

Bias ratio over the prompts of Table 10 with the word filled in, at the next character:
    E_prompts[ max(p(他|x)/p(她|x), p(她|x)/p(他|x)) ]      (1 = unbiased)
Since both are probabilities from the same softmax, the ratio is exp(|logit(他) - logit(她)|).

Backpack intervention: scale sense l of a character of the word (0.5: "half", 0: "remove"), at the word's
positions; sense_scale multiplies C(x_j)_l before the weighted sum of Eq. 3, so alpha is untouched.
The sense: the issue's reading of the paper's criterion |E^T(C(他)_l - C(她)_l)|: the sense in which the two
pronouns' predictions differ most (mean absolute difference over the vocabulary).

GPT-2 baseline (the paper, after Bolukbasi et al. 2016): the gender direction E x_他 - E x_她 of the input
embeddings; the embeddings of the biased characters are projected onto its nullspace, x - (x.u)u, at the
word's positions, and the transformer runs on the edited embeddings."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch

from ... import spread
from ...data.lexicon import professions
from ...data.vocab import CharVocab
from ...results import paper_values
from .common import SensesConfig, encode, in_vocab
from .composition import CorpusText
from .prompts import BIAS_PROMPTS, BIAS_WORDS, HE, SHE, fill


def ratio_from_logits(logits: torch.Tensor, he: int, she: int) -> torch.Tensor:
    """max(p(he)/p(she), p(she)/p(he)) from next-token logits (..., V)."""
    return torch.exp((logits[..., he] - logits[..., she]).abs())


@torch.no_grad()
def gender_sense_scores(model: torch.nn.Module, vocab: CharVocab) -> torch.Tensor:
    """(k,): mean over the vocabulary of |E^T (C(他)_l - C(她)_l)|."""
    c = model.senses(torch.tensor([vocab.stoi[HE], vocab.stoi[SHE]]))   # (2, k, d)
    return ((c[0] - c[1]) @ model.wte.weight.T).abs().mean(-1)


@torch.no_grad()
def gender_projection(model: torch.nn.Module, vocab: CharVocab, chars: str) -> torch.Tensor:
    """(n, k): (E x_他 - E x_她)^T C(x)_l, how much sense l of each character pushes 他 over 她 wherever it
    is summed in (Hewitt et al.'s reading of a gendered sense). A diagnostic beside the selection criterion."""
    E = model.wte.weight
    direction = E[vocab.stoi[HE]] - E[vocab.stoi[SHE]]
    return model.senses(torch.tensor(vocab.encode(chars))) @ direction


def _prompt(vocab: CharVocab, prompt: str, word: str, edit: str) -> tuple[torch.Tensor, list[int]]:
    text = fill(prompt, word)
    start = prompt.index("WORD")
    ids = torch.tensor([encode(vocab, text)])
    positions = [1 + start + t for t, c in enumerate(word) if c in edit]   # +1: the <doc> token
    return ids, positions


@torch.no_grad()
def backpack_bias(model: torch.nn.Module, vocab: CharVocab, word: str, prompts: Sequence[str], edit: str = "",
                  sense: int | None = None, scale: float = 1.0) -> np.ndarray:
    """Bias ratio per prompt, with sense `sense` of the characters of `word` that are in `edit` scaled."""
    he, she = vocab.stoi[HE], vocab.stoi[SHE]
    out = []
    for p in prompts:
        ids, positions = _prompt(vocab, p, word, edit)
        sense_scale = None
        if sense is not None and positions:
            sense_scale = torch.ones(ids.shape[1], model.config.n_senses)
            sense_scale[positions, sense] = scale
        out.append(ratio_from_logits(model(ids, sense_scale=sense_scale)[0, -1], he, she).item())
    return np.array(out)


def nullspace_project(x: torch.Tensor, direction: torch.Tensor) -> torch.Tensor:
    """x with its component along `direction` removed (rows of x orthogonal to it afterwards)."""
    u = direction / direction.norm()
    return x - (x @ u).unsqueeze(-1) * u


@torch.no_grad()
def gpt_bias(model: torch.nn.Module, vocab: CharVocab, word: str, prompts: Sequence[str], edit: str = "",
             project: bool = False) -> np.ndarray:
    """Bias ratio per prompt for GPT-2; with `project`, the input embeddings of the characters of `word` in
    `edit` are projected onto the nullspace of the gender direction E x_他 - E x_她."""
    he, she = vocab.stoi[HE], vocab.stoi[SHE]
    E = model.wte.weight
    direction = E[he] - E[she]
    out = []
    for p in prompts:
        ids, positions = _prompt(vocab, p, word, edit)
        emb = model.wte(ids)
        if project and positions:
            emb[0, positions] = nullspace_project(emb[0, positions], direction)
        logits = model.transformer(emb)[0, -1] @ E.T
        out.append(ratio_from_logits(logits, he, she).item())
    return np.array(out)


# funNLP's profession list also holds activities and institutions (管理, 政府, 销售): keep the names of people,
# by a fixed list of person-forming last characters (decided before any result was seen)
PERSON_SUFFIXES = frozenset("员师家者生长工手人官士兵警医匠农民夫姐嫂婆妈爷娘")


def wider_professions(words: Sequence[str], vocab: CharVocab, count: Callable[[str], int], n: int,
                      exclude: Sequence[str] = ()) -> list[str]:
    """The `n` most frequent (by `count`, ties in list order) two-character person words of `words` whose
    characters are all in the vocabulary, leaving out `exclude` (the paper's own words)."""
    candidates = [w for w in words if len(w) == 2 and w[-1] in PERSON_SUFFIXES and in_vocab(vocab, w)]
    ranked = sorted(candidates, key=lambda w: -count(w))        # stable: ties keep the list order
    return [w for w in ranked if w not in exclude][:n]



# --- Table 5 -------------------------------------------------------------------------------------------------
METRICS = ["gpt2", "gpt2_proj", "backpack", "half_sense", "remove_sense"]
PAPER_CHARACTER, ALL_CHARACTERS = "paper character", "all characters"   # the two edits


def chosen_sense(model: torch.nn.Module, vocab: CharVocab) -> tuple[int, pd.DataFrame]:
    """The sense maximising `gender_sense_scores`, and per sense that criterion beside the diagnostic
    `gender_projection` of each of Table 5's edited characters."""
    scores = gender_sense_scores(model, vocab).numpy()
    edited = "".join(c for c, _ in BIAS_WORDS)
    diagnostic = pd.DataFrame(gender_projection(model, vocab, edited).numpy().T, columns=list(edited))
    diagnostic.insert(0, "criterion |E^T(C(他)-C(她))|", scores)
    diagnostic.index.name = "sense"
    return int(scores.argmax()), diagnostic


def edits(vocab: CharVocab, text: CorpusText, cfg: SensesConfig) -> list[tuple[str, str, str]]:
    """(word, characters edited, edit) of Table 5: the paper's four words with the paper's character edited,
    the same with every character edited, and `cfg.professions` more profession words (every character)."""
    paper_words = [w for _, w in BIAS_WORDS]
    wider = wider_professions(professions(), vocab, text.count, cfg.professions, exclude=paper_words)
    return ([(w, c, PAPER_CHARACTER) for c, w in BIAS_WORDS] + [(w, w, ALL_CHARACTERS) for w in paper_words]
            + [(w, w, ALL_CHARACTERS) for w in wider])


def bias_per_prompt(backpack: torch.nn.Module, gpt: torch.nn.Module, vocab: CharVocab,
                    cases: Sequence[tuple[str, str, str]], sense: int,
                    prompts: Sequence[str] = BIAS_PROMPTS) -> pd.DataFrame:
    """Table 5's items: one row per (word, characters, edit) of `cases`, metric (METRICS: GPT-2 without and with
    the nullspace projection, the Backpack without, with half and without `sense`) and prompt: the bias ratio."""
    rows = []
    for word, edit, scope in cases:
        ratios = {"gpt2": gpt_bias(gpt, vocab, word, prompts),
                  "gpt2_proj": gpt_bias(gpt, vocab, word, prompts, edit=edit, project=True),
                  "backpack": backpack_bias(backpack, vocab, word, prompts),
                  "half_sense": backpack_bias(backpack, vocab, word, prompts, edit=edit, sense=sense, scale=0.5),
                  "remove_sense": backpack_bias(backpack, vocab, word, prompts, edit=edit, sense=sense, scale=0.0)}
        rows += [{"word": word, "edit": scope, "characters": edit, "metric": m, "prompt": p, "ratio": r}
                 for m, values in ratios.items() for p, r in zip(prompts, values)]
    return pd.DataFrame(rows, columns=["word", "edit", "characters", "metric", "prompt", "ratio"])


def bias_means(per_prompt: pd.DataFrame, text: CorpusText) -> pd.DataFrame:
    """One row per (word, characters, edit) of `bias_per_prompt`: each metric's mean bias ratio over the prompts."""
    rows = []
    for (word, scope, edit), g in per_prompt.groupby(["word", "edit", "characters"], sort=False):
        rows.append({"word": word, "edit": scope, "characters": edit, "corpus_count": text.count(word),
                     **{m: g[g.metric == m].ratio.to_numpy().mean() for m in METRICS}})
    return pd.DataFrame(rows, columns=["word", "edit", "characters", "corpus_count", *METRICS])


def bias_ratios(backpack: torch.nn.Module, gpt: torch.nn.Module, vocab: CharVocab,
                cases: Sequence[tuple[str, str, str]], sense: int, text: CorpusText,
                prompts: Sequence[str] = BIAS_PROMPTS) -> pd.DataFrame:
    """One row per (word, characters, edit) of `cases`: the mean bias ratio over `prompts` of GPT-2 without and
    with the nullspace projection, and of the Backpack without, with half and without `sense` (METRICS)."""
    return bias_means(bias_per_prompt(backpack, gpt, vocab, cases, sense, prompts), text)


def table5(wide: pd.DataFrame, sense: int) -> pd.DataFrame:
    """`bias_ratios` in the long form, with the sense edited."""
    long = wide.melt(id_vars=["word", "edit", "characters", "corpus_count"], value_vars=METRICS, var_name="metric",
                     value_name="ours")
    long["sense"] = sense
    return long[["word", "edit", "characters", "sense", "corpus_count", "metric", "ours"]]


def table5_notes(sense: int) -> str:
    return (f"bias ratio E[max(p(他)/p(她), p(她)/p(他))] over the {len(BIAS_PROMPTS)} prompts of Table 10; sense "
            f"{sense} chosen by max mean |E^T(C(他)_l - C(她)_l)|; paper: its sense 15, micro")


def paper_table5() -> pd.DataFrame:
    """The paper's Table 5 (its sense 15, its character per word), keyed like `table5`'s PAPER_CHARACTER rows."""
    pv = paper_values("backpack_table5_bias.csv", keys={"target_word": "word"},
                      metrics={"gpt2": "gpt2", "gpt2_proj": "gpt2_proj", "backpack": "backpack",
                               "half_sense15": "half_sense", "remove_sense15": "remove_sense"})
    pv["edit"] = PAPER_CHARACTER
    return pv


PRONOUN_WINDOW = 30  # characters after a word searched for its pronoun


def corpus_gender_counts(text: CorpusText, words: Sequence[str], window: int = PRONOUN_WINDOW) -> pd.DataFrame:
    """What the pretraining corpus says about each word's gender: over the word's occurrences (at most
    CorpusText's 10,000), the first 他 or 她 within `window` characters after it on the same line, counted.
    `corpus_ratio` = max(he, she) / min(he, she) with half a count added to each (a word never followed by a
    pronoun gets 1): the bias a model that learned these co-occurrences exactly would show, to set beside its
    bias ratio. A first row gives the two pronouns' own counts in the corpus."""
    rows = [{"word": f"{HE} / {SHE} (all text)", "occurrences": text.count(HE) + text.count(SHE),
             "he": text.count(HE), "she": text.count(SHE)}]
    for word in dict.fromkeys(words):
        he = she = 0
        positions = text.occurrences(word)
        for i in positions:
            start = i + len(word)
            line_end = text.text.find("\n", start)
            after = text.text[start:min(start + window, line_end if line_end >= 0 else len(text.text))]
            h, s = after.find(HE), after.find(SHE)
            if h >= 0 and (s < 0 or h < s):
                he += 1
            elif s >= 0:
                she += 1
        rows.append({"word": word, "occurrences": len(positions), "he": he, "she": she})
    out = pd.DataFrame(rows)
    out["with_pronoun"] = out.he + out.she
    out["corpus_ratio"] = np.maximum(out.he + 0.5, out.she + 0.5) / np.minimum(out.he + 0.5, out.she + 0.5)
    return out[["word", "occurrences", "with_pronoun", "he", "she", "corpus_ratio"]]


def corpus_table(counts: pd.DataFrame) -> pd.DataFrame:
    """`corpus_gender_counts` in the long form of the results."""
    return counts.melt(id_vars=["word"], var_name="metric", value_name="ours")


def corpus_reading(counts: pd.DataFrame, wide: pd.DataFrame) -> str:
    """Markdown: for the paper's four words, the corpus's pronoun counts beside our Backpack's bias ratio and
    the paper's model's."""
    paper = paper_table5().set_index(["word", "metric"]).paper
    ours = wide[wide.edit == PAPER_CHARACTER].set_index("word").backpack
    c = counts.set_index("word")
    lines = []
    for _, word in BIAS_WORDS:
        r = c.loc[word]
        lines.append(f"- {word}: {int(r.with_pronoun)} of its {int(r.occurrences):,} occurrences are followed within "
                     f"{PRONOUN_WINDOW} characters by a pronoun ({int(r.he)} {HE}, {int(r.she)} {SHE}): corpus ratio {r.corpus_ratio:.3g}; our Backpack "
                     f"{ours[word]:.3g}, the paper's {paper.get((word, 'backpack'), float('nan')):.3g}.")
    return "\n".join(lines)


def table5_reading(wide: pd.DataFrame, sense: int) -> str:
    """Markdown: each paper word's ratios, and over the wider list how often removing the sense lowers it."""
    p = wide[wide.edit == PAPER_CHARACTER].set_index("word")
    a = wide[wide.edit == ALL_CHARACTERS]
    lines = [f"- {wd}: GPT-2 {r.gpt2:.2f}, projected {r.gpt2_proj:.2f}; Backpack {r.backpack:.2f}, sense {sense} halved "
             f"{r.half_sense:.2f}, removed {r.remove_sense:.2f} ({'lower' if r.remove_sense < r.backpack else 'not lower'} "
             f"than the Backpack)." for wd, r in p.iterrows()]
    lines.append(f"- Wider list ({len(a)} words, sense {sense} removed from every character): the bias ratio drops for "
                 f"{int((a.remove_sense < a.backpack).sum())}; median {a.backpack.median():.2f} -> "
                 f"{a.remove_sense.median():.2f} (GPT-2 {a.gpt2.median():.2f} -> projected {a.gpt2_proj.median():.2f}).")
    return "\n".join(lines)


# --- Table 5's spread ----------------------------------------------------------------------------------------
MOST_BIASED, LEAST_BIASED = ("士兵", "警察"), ("演员", "教师")   # the paper's Table 5, by its Backpack column


def table5_claim_values(per_prompt: pd.DataFrame, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Table 5's claims (the registry's `backpack.t5.*` quantities, its prefix left out) on draws of the prompts:
    `weights` (draws, prompts in sorted order) says how often each prompt is drawn (all ones: the table itself);
    every bias ratio is the weighted mean over the prompts, as in `bias_means`. `per_prompt`: `bias_per_prompt`."""
    ratios = per_prompt.pivot(index="prompt", columns=["metric", "word", "edit"], values="ratio")
    if ratios.isna().any().any():
        raise ValueError("bias ratios per prompt: not every (word, edit, metric) has every prompt")
    means = (weights @ ratios.to_numpy(float)) / weights.sum(axis=1, keepdims=True)
    column = {key: j for j, key in enumerate(ratios.columns)}

    def v(metric, word, edit=PAPER_CHARACTER):
        j = column.get((metric, word, edit))
        return means[:, j] if j is not None else np.full(len(means), np.nan)

    def drop(w):    # the share of the bias that removing the sense takes away
        return 1 - v("remove_sense", w) / v("backpack", w)

    words = [w for _, w in BIAS_WORDS]
    return {**{f"t5.{w}.removal_lowers_bias": drop(w) for w in words},
            "t5.halving_lowers_bias": sum((v("backpack", w) - v("half_sense", w)) / v("backpack", w) for w in words),
            "t5.halving_less_than_removal": sum(v("half_sense", w) - v("remove_sense", w) for w in words) / len(words),
            "t5.larger_drop_where_more_biased": (sum(drop(w) for w in MOST_BIASED) / len(MOST_BIASED)
                                                 - sum(drop(w) for w in LEAST_BIASED) / len(LEAST_BIASED)),
            "t5.better_than_gpt2": sum(v("remove_sense", w) / v("gpt2_proj", w) for w in words) / len(words),
            "t5.second_approach_less_effective": sum(
                (v("remove_sense", w) - v("remove_sense", w, ALL_CHARACTERS)) / v("backpack", w) for w in words)
                / len(words)}


def table5_spread(per_prompt: pd.DataFrame) -> pd.DataFrame:
    """The bootstrap sd (`hanzilm.spread`) of each Table 5 claim's quantity (`table5_claim_values`) over the
    prompts of Table 10: the prompts drawn again with replacement, the same draw for every word, metric and
    edit (paired). `per_prompt`: `bias_per_prompt`."""
    n = per_prompt.prompt.nunique()
    values = table5_claim_values(per_prompt, spread.draws(n))
    src = spread.source(1, n, "prompts of Table 10 (one draw for every word, metric and edit)")
    return pd.DataFrame([{"quantity": q, "source": src, "metric": "sd", "ours": spread.sd(v)}
                         for q, v in values.items()])
