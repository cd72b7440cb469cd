"""The Backpack findings along training: each headline finding re-computed on the weight snapshots the pair
kept while training (`BackpackChapter.snapshots`, steps doubling up to the last), against the tokens seen.

The findings are the claims registry's own quantities (`targets/claims.csv`), evaluated on the same tables the
chapter's notebooks write, computed here for each snapshot of the pair by the same functions; one more is the
share of Table 6's amplified cells whose direction (ratio above or below 1) agrees with the paper's. Nothing is
trained for this: the snapshots belong to the run whose final weights the chapter reports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import torch

from ... import claims as registry
from ...data.corpus import lm_dataset_names
from ...data.lexicon import wordsim
from ...parallel import run_all, torch_threads
from ...results import with_paper
from ...store import load_model
from ...trends import trend_table
from . import amplify, bias, composition, experiment, similarity, tables
from .composition import CorpusText
from .data import EncodedCorpus
from .experiment import MODELS, BackpackChapter, LMConfig
from .prompts import AMPLIFY_TARGETS, MULTIPLIERS, NOUN_PROMPTS

AMPLIFIED_WORD = "沙滩"
AGREEMENT = "t6.agreement"
DATASETS = [*lm_dataset_names(), "wplc", "wordsim", "cedict", "loanwords", "idioms", "professions"]
NOTES = ("each finding's claims-registry quantity on the weight snapshots of the pair's run; t6.agreement: share "
         "of Table 6's amplified cells on the paper's side of 1")


@dataclass(frozen=True)
class Finding:
    name: str                  # a panel of the figure
    claims: tuple[str, ...]    # registry ids (without the "backpack." prefix), one line each
    ylabel: str


FINDINGS = (
    Finding("Perplexity, |Backpack / GPT-2 − 1| (Table 1)", ("t1.micro_ppl",), "distance of the ratio from 1"),
    Finding("Cloze top-1, Backpack − GPT-2 (Table 1)", ("t1.cloze_top1",), "accuracy difference"),
    Finding("Cloze top-3, Backpack − GPT-2 (Table 1)", ("t1.cloze_top3",), "accuracy difference"),
    Finding("Word similarity, Backpack sense − GPT-2 embedding (Table 4)",
            ("t4.ws240.backpack_over_gpt2", "t4.ws297.backpack_over_gpt2"), "Pearson difference"),
    Finding("Bias drop from removing the gendered sense (Table 5)",
            ("t5.士兵.removal_lowers_bias", "t5.警察.removal_lowers_bias", "t5.演员.removal_lowers_bias",
             "t5.教师.removal_lowers_bias"), "1 − ratio after / before"),
    Finding("Amplification directions agreeing with Table 6", (AGREEMENT,), "share of the 18 cells"),
    Finding("Composition stability: share within 10 % (Table 3)",
            ("t3.compound.within_10pct", "t3.loanword.within_10pct", "t3.idiom.within_10pct"), "share"),
    Finding("Composition stability: share moving ≤ 20 % (Table 3)",
            ("t3.compound.stable_90pct", "t3.loanword.stable_90pct", "t3.idiom.stable_90pct"), "share"),
    Finding("Stability order idiom > compound > loanword (Table 3)", ("t3.order",), "smaller share difference"),
    Finding("Unstable words of Table 8 minus stable ones (Table 8)", ("t8.unstable_subset",), "share difference"),
    Finding("Word similarity, each model's correlation (Table 4)",
            ("t4.ws240.gpt2_value", "t4.ws240.backpack_value", "t4.ws297.gpt2_value", "t4.ws297.backpack_value"),
            "Pearson"),
    Finding("Halving the sense, and editing both characters (Table 5)",
            ("t5.halving_lowers_bias", "t5.halving_less_than_removal", "t5.larger_drop_where_more_biased",
             "t5.second_approach_less_effective"), "bias ratio difference"),
    Finding("Debiased Backpack / projected GPT-2 (Table 5)", ("t5.better_than_gpt2",), "bias ratio ratio"),
    Finding("Amplified: related minus unrelated characters (Table 6)", ("t6.amplify_first", "t6.amplify_second"),
            "probability ratio difference"),
)


def paper_tokens() -> float:
    """Tokens the paper's micro models trained on: 500k steps of 180 x 1,024 (LMConfig's defaults)."""
    paper = LMConfig()
    return float(paper.train.steps * paper.batch_size * paper.block_size)


class Inputs:
    """What every snapshot's analyses share and that does not depend on the weights: the corpus, the cloze
    cases, the drawn word sets, the bias prompts' edits, the word-similarity sets."""

    def __init__(self, ch: BackpackChapter, corpus: EncodedCorpus):
        self.ch, self.corpus, self.vocab = ch, corpus, corpus.vocab
        self.text = CorpusText.of_lm_corpus()
        self.cases = experiment.cloze_cases(ch, corpus)
        self.word_sets = composition.draw_word_sets(self.vocab, self.text, ch.senses)
        self.edits = bias.edits(self.vocab, self.text, ch.senses)
        self.wordsim = {name: wordsim(name) for name in ("ws240", "ws297")}
        self.contexts: dict = {}  # the composition study's corpus windows, found once


def snapshot_tables(inputs: Inputs, backpack: torch.nn.Module, gpt: torch.nn.Module, label: str
                    ) -> dict[str, pd.DataFrame]:
    """The chapter's tables for one pair of weights, keyed like `results.read_results` ("backpack/table1"),
    each with the paper's values beside ours."""
    ch, vocab = inputs.ch, inputs.vocab
    models = {"gpt": gpt, "backpack": backpack}
    ev = experiment.evaluate(ch, inputs.corpus, models, cases=inputs.cases)
    per_sense, _ = composition.variation_study(backpack, vocab, inputs.word_sets, inputs.text, ch.senses,
                                               cache=inputs.contexts)
    scores = similarity.scores(inputs.wordsim, similarity.representations(backpack, gpt, vocab), vocab)
    sense, _ = bias.chosen_sense(backpack, vocab)
    wide = bias.bias_ratios(backpack, gpt, vocab, inputs.edits, sense, inputs.text)
    targets = AMPLIFY_TARGETS[AMPLIFIED_WORD]
    per_prompt = amplify.target_ratios(backpack, vocab, AMPLIFIED_WORD, NOUN_PROMPTS, targets, MULTIPLIERS)
    built = {
        "table1": (tables.table1(ch, len(vocab), ev, label), tables.paper_table1()),
        "table3_composition": (composition.table3(per_sense, inputs.word_sets), composition.paper_table3()),
        "table8_words": (composition.table8(per_sense), composition.paper_table8()),
        "table4_wordsim": (similarity.table4(scores, inputs.wordsim), similarity.paper_table4()),
        "table5_bias": (bias.table5(wide, sense), bias.paper_table5()),
        "table6_amplification": (amplify.table6(per_prompt, AMPLIFIED_WORD), amplify.paper_table6(targets)),
    }
    return {f"backpack/{name}": with_paper(t, p, f"backpack/{name}") for name, (t, p) in built.items()}


def _claims() -> list[registry.Claim]:
    wanted = {f"backpack.{c}" for f in FINDINGS for c in f.claims if c != AGREEMENT}
    found = [c for c in registry.load_claims() if c.id in wanted]
    missing = wanted - {c.id for c in found}
    if missing:
        raise KeyError(f"findings name claims the registry lacks: {sorted(missing)}")
    return found


def findings_at(tables_: dict[str, pd.DataFrame], profile: str) -> pd.DataFrame:
    """Each finding's quantity (ours, the paper's, the verdict) on one snapshot's tables."""
    v = registry.evaluate(profile, _claims(), tables=tables_, require_all=False)
    rows = [{"claim": r.id.removeprefix("backpack."), "ours": r.ours, "paper_value": r.paper_value,
             "verdict": r.verdict, "noise": r.spread} for r in v.itertuples()]
    rows.append({"claim": AGREEMENT, "ours": amplify.agreement(tables_["backpack/table6_amplification"]),
                 "paper_value": 1.0, "verdict": "", "noise": math.nan})
    return pd.DataFrame(rows)


def along_training(ch: BackpackChapter, corpus: EncodedCorpus, profile: str) -> pd.DataFrame:
    """Long table: each finding's quantity on every snapshot the pair kept (step, tokens seen). The snapshots are
    dealt out to `ch.workers` processes of one thread each: thousands of tiny forwards run fastest on one
    thread, so a single process left the second core idle for the page's 18 minutes. Each snapshot's
    quantities are the same whichever process computes them."""
    snaps = {m: experiment.snapshots(ch, corpus, m) for m in MODELS}   # the runs keep them (`BackpackChapter.run`)
    steps = sorted(set(snaps["gpt"]) & set(snaps["backpack"]))
    workers = max(1, min(ch.workers, len(steps)))
    shares = [[(step, {m: snaps[m][step] for m in MODELS}) for step in steps[i::workers]] for i in range(workers)]
    # in this process the corpus is at hand; a worker loads its own rather than receive it pickled
    jobs = [(ch, None if workers > 1 else corpus, profile, share) for share in shares]
    parts = run_all(_findings_on, jobs, workers=workers, threads=1, desc="snapshot shares", unit="share")
    found = sorted((f for part in parts for f in part), key=lambda f: int(f.step.iloc[0]))
    return pd.concat(found, ignore_index=True)


def _findings_on(job: tuple[BackpackChapter, EncodedCorpus | None, str, list[tuple[int, dict]]]
                 ) -> list[pd.DataFrame]:
    """The findings on each snapshot of one share, in a process of one thread (a module-level function: the
    workers unpickle it)."""
    from ...progress import progress

    ch, corpus, profile, share = job
    corpus = experiment.load_corpus(ch) if corpus is None else corpus
    out = []
    with torch_threads(1):  # thousands of tiny forwards: one thread is fastest (see experiment.load_pair)
        inputs = Inputs(ch, corpus)
        tokens_per_step = ch.lm.batch_size * ch.lm.block_size
        with progress(len(share), "findings at snapshots", "snapshot") as bar:
            for step, weights in share:
                pair = {m: load_model(experiment.build(ch.lm.pair()[m], len(corpus.vocab)), weights[m]).eval()
                        for m in MODELS}
                found = findings_at(snapshot_tables(inputs, pair["backpack"], pair["gpt"], profile), profile)
                out.append(found.assign(step=step, tokens=step * tokens_per_step))
                bar.update(1)
    return out


def long_form(along: pd.DataFrame) -> pd.DataFrame:
    """`along` as a results table: finding, claim, step, tokens, metric, ours, and the paper's value of the
    finding as a plain column (`paper_value`): these are points along training, not results compared with the
    paper's (so they stay off the results-at-a-glance page)."""
    name_of = {c: f.name for f in FINDINGS for c in f.claims}
    t = along.assign(finding=along.claim.map(name_of), metric="quantity")
    return t[["finding", "claim", "step", "tokens", "paper_value", "metric", "ours"]].reset_index(drop=True)


def settled(along: pd.DataFrame) -> pd.DataFrame:
    """Per claim: how far its quantity moved over the last doubling of training (the last snapshot minus the one
    before), long, for the claims registry's scale gate: a claim still moving by more than its spread is not
    resolved at this scale."""
    steps = sorted(along.step.unique())[-2:]
    wide = along[along.step.isin(steps) & (along.claim != AGREEMENT)].pivot(index="claim", columns="step",
                                                                            values="ours")
    return pd.DataFrame({"claim": wide.index, "from_step": steps[0], "to_step": steps[-1], "metric": "last_change",
                         "ours": (wide[steps[-1]] - wide[steps[0]]).values})


def directions(along: pd.DataFrame) -> pd.DataFrame:
    """Per claim: the trend of its gap to the paper over the last snapshots, with its sentence."""
    last = along[along.step == along.step.max()].set_index("claim")
    label = {c: (f.name if len(f.claims) == 1 else f"{f.name} [{c.split('.')[1]}]") for f in FINDINGS for c in f.claims}
    return trend_table(along, last.paper_value.to_dict(), key="claim", noise=last.noise.to_dict(),
                       paper_tokens=paper_tokens(), labels=label)


def direction_counts(directions_: pd.DataFrame) -> dict[str, int]:
    """How many quantities close, are flat, open (glued into the page's first lines)."""
    n = directions_.direction.value_counts()
    return {"n_quantities": len(directions_), **{f"n_{d}": int(n.get(d, 0)) for d in ("closing", "flat", "opening")}}


def direction_table(directions_: pd.DataFrame) -> pd.DataFrame:
    """`directions` for reading: one row per quantity, the rates and values rounded, reach as a token count."""
    from ...trends import tokens_label

    t = directions_.set_index("claim")
    return pd.DataFrame({"direction": t.direction, "per tenfold": t.per_decade.round(4), "ours": t["last"].round(4),
                         "paper": t.paper.round(4), "would close near": t.reach_tokens.map(tokens_label)})


def figure(along: pd.DataFrame):
    """One panel per finding: our quantity against tokens (log), the paper's value as a star at its token
    count and a dotted line."""
    import matplotlib.pyplot as plt

    n = len(FINDINGS)
    fig, axes = plt.subplots((n + 1) // 2, 2, figsize=(11, 2.6 * ((n + 1) // 2)), squeeze=False)
    pt = paper_tokens()
    for ax, f in zip(axes.flat, FINDINGS):
        for i, c in enumerate(f.claims):
            g = along[along.claim == c].sort_values("tokens")
            tag = c.split(".")[1] if len(f.claims) > 1 else "ours"
            ax.plot(g.tokens, g.ours, "o-", color=f"C{i}", ms=3, label=tag)
            p = g.paper_value.iloc[-1]
            if math.isfinite(p):
                ax.axhline(p, color=f"C{i}", ls=":", lw=0.8)
                ax.plot([pt], [p], "*", color=f"C{i}", ms=9)
        ax.set_xscale("log")
        ax.set_xlim(along.tokens.min() / 2, pt * 3)
        ax.set_title(f.name, fontsize=9)
        ax.set_ylabel(f.ylabel, fontsize=8)
        ax.axvline(pt, color="grey", lw=0.6)
        ax.legend(fontsize=7, frameon=False, ncol=2)
    for ax in axes.flat[n:]:
        ax.axis("off")
    for ax in axes[-1]:
        ax.set_xlabel("training tokens (log); grey line and stars: the paper's micro models")
    fig.tight_layout()
    return fig
