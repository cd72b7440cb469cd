"""The alpha-scaling ablation: Eq. 6 with and without 1/sqrt(d/k).

The paper writes the contextualisation weights as softmax(q k^T), and the Chinese authors' code computes them
so; the original (English) Backpack code divides the logits by sqrt(d/k), as attention does. Unscaled logits are
sqrt(d/k) times larger (sqrt(8) at the cpu size), so the softmax is sharper from the first step: the weights of a
sense may collapse onto few positions, which is what the composition analysis (Table 3) measures. Here the
chapter's Backpack is trained a second time with only that changed (same data order, seed and GPT-2), and both
are read the same way: the entropy of alpha per sense, test perplexity, and every finding of the trend page
(the claims registry's quantities and verdicts).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from ...parallel import run_all, torch_threads
from . import experiment, trends
from .data import EncodedCorpus
from .experiment import BackpackChapter

VARIANTS = {False: "unscaled (paper, authors' code)", True: "scaled by 1/√(d/k) (original Backpack code)"}
NOTES = ("the chapter's Backpack and the same Backpack with alpha logits divided by sqrt(d/k), beside the same "
         "GPT-2; alpha entropy over dev blocks; findings as on the trend page")


@torch.no_grad()
def alpha_entropy(model: torch.nn.Module, blocks: torch.Tensor) -> pd.DataFrame:
    """Per sense: the mean entropy of alpha's rows (nats) over `blocks` (B, T) and every position past the first,
    and the same as a share of its maximum (log i for the i positions a row may weigh): 1 is uniform over the
    past, 0 all weight on one position."""
    alpha = model.alpha(blocks).double()                                   # (B, k, T, T)
    entropy = -(alpha * alpha.clamp_min(1e-300).log()).sum(-1)[..., 1:]     # (B, k, T - 1)
    most = torch.log(torch.arange(2, blocks.shape[1] + 1, dtype=torch.float64))
    return pd.DataFrame({"sense": range(alpha.shape[1]),
                         "entropy": entropy.mean((0, 2)).numpy(),
                         "relative_entropy": (entropy / most).mean((0, 2)).numpy()})


def dev_blocks(ch: BackpackChapter, corpus: EncodedCorpus, n: int = 8) -> torch.Tensor:
    """The first n whole blocks of the dev split (the same for both variants)."""
    dev = np.asarray(corpus.splits["dev"])
    T = ch.lm.block_size
    n = min(n, len(dev) // T)
    return torch.from_numpy(dev[: n * T].astype(np.int64).reshape(n, T))


def ablation(ch: BackpackChapter, corpus: EncodedCorpus, profile: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(findings, entropy): per variant, every trend-page finding (ours, paper, verdict) with the test
    perplexity ratio among them, and alpha's entropy per sense. Reads both variants (trained by the chapter's
    training step: `experiment.runs`) in `ch.workers` one-thread processes (the findings' thousands of tiny
    forwards)."""
    backpacks = {scaled: experiment.trained(experiment.alpha_variant(ch, scaled), corpus, "backpack")
                 for scaled in VARIANTS}
    workers = max(1, min(ch.workers, len(VARIANTS)))
    jobs = [(ch, None if workers > 1 else corpus, profile, scaled) for scaled in VARIANTS]
    found = run_all(_variant_findings, jobs, workers=workers, threads=1, desc="alpha variants", unit="variant")
    blocks = dev_blocks(ch, corpus)
    entropy = [alpha_entropy(backpacks[scaled], blocks).assign(variant=label, scaled=scaled)
               for scaled, label in VARIANTS.items()]
    return pd.concat(found, ignore_index=True), pd.concat(entropy, ignore_index=True)


def _variant_findings(job: tuple[BackpackChapter, EncodedCorpus | None, str, bool]) -> pd.DataFrame:
    """One variant's findings beside the chapter's GPT-2, on one thread (module level: the workers unpickle it)."""
    ch, corpus, profile, scaled = job
    corpus = experiment.load_corpus(ch) if corpus is None else corpus
    gpt = experiment.trained(ch, corpus, "gpt")
    backpack = experiment.trained(experiment.alpha_variant(ch, scaled), corpus, "backpack")
    with torch_threads(1):
        tables_ = trends.snapshot_tables(trends.Inputs(ch, corpus), backpack, gpt, profile)
    return trends.findings_at(tables_, profile).assign(variant=VARIANTS[scaled], scaled=scaled,
                                                       backpack_ppl=_ppl(tables_["backpack/table1"], "Backpack"))


def _ppl(table1: pd.DataFrame, model_prefix: str) -> float:
    rows = table1[(table1.metric == "test_ppl") & table1.model.str.startswith(model_prefix)]
    return float(rows.ours.iloc[0]) if len(rows) else math.nan


def long_form(findings: pd.DataFrame, entropy: pd.DataFrame) -> pd.DataFrame:
    """Both as one results table: variant, quantity, metric, ours (findings' verdicts in the display only)."""
    f = findings.assign(quantity=findings.claim, metric="finding")[["variant", "quantity", "metric", "ours"]]
    e = entropy.melt(id_vars=["variant", "sense"], value_vars=["entropy", "relative_entropy"], var_name="metric",
                     value_name="ours")
    e = e.assign(quantity="alpha sense " + e.sense.astype(str))[["variant", "quantity", "metric", "ours"]]
    p = findings.groupby("variant", sort=False).backpack_ppl.first().reset_index()
    p = p.assign(quantity="test perplexity", metric="perplexity").rename(columns={"backpack_ppl": "ours"})
    return pd.concat([p[["variant", "quantity", "metric", "ours"]], f, e], ignore_index=True)


def comparison(findings: pd.DataFrame) -> pd.DataFrame:
    """One row per finding: each variant's value and verdict, the paper's value."""
    wide = findings.pivot_table(index="claim", columns="scaled", values="ours", sort=False)
    verdicts = findings.pivot(index="claim", columns="scaled", values="verdict")
    paper = findings.groupby("claim", sort=False).paper_value.first()
    return pd.DataFrame({"paper": paper, "unscaled": wide[False], "scaled": wide[True],
                         "verdict unscaled": verdicts[False], "verdict scaled": verdicts[True]}).loc[paper.index]


def reading(findings: pd.DataFrame, entropy: pd.DataFrame, chosen: bool) -> dict[str, object]:
    """The page's numbers: perplexity and entropy per variant, how many findings each variant holds (verdict
    "reproduced" or "holds"), how many it brings nearer the paper, and which variant the evidence favours against the one the
    chapter uses (`chosen`: the profile's `lm.scaled_alpha`)."""
    out: dict[str, object] = {}
    key = {False: "unscaled", True: "scaled"}
    for scaled, name in key.items():
        f = findings[findings.scaled == scaled]
        e = entropy[entropy.scaled == scaled]
        out[f"{name}_ppl"] = float(f.backpack_ppl.iloc[0])
        out[f"{name}_entropy"] = float(e.entropy.mean())
        out[f"{name}_relative_entropy"] = float(e.relative_entropy.mean())
        out[f"{name}_min_relative_entropy"] = float(e.relative_entropy.min())
        out[f"{name}_holds"] = int(f.verdict.isin(["reproduced", "holds"]).sum())
    c = comparison(findings)
    finite = c[np.isfinite(c.paper.astype(float))]
    nearer = (finite.scaled - finite.paper).abs() < (finite.unscaled - finite.paper).abs()
    out["n_findings"] = len(c)
    out["n_compared"] = len(finite)
    out["scaled_nearer"] = int(nearer.sum())
    # the evidence: more findings that hold, then more findings nearer the paper, then the lower perplexity
    score = {s: (out[f"{key[s]}_holds"], int(nearer.sum()) if s else int((~nearer).sum()), -out[f"{key[s]}_ppl"])
             for s in key}
    favoured = max(key, key=lambda s: score[s])
    out["favoured"] = VARIANTS[favoured]
    out["chosen"] = VARIANTS[chosen]
    out["choice"] = ("the chapter uses it" if favoured == chosen else
                     "the chapter does not use it yet: its profile sets the other variant")
    return out
