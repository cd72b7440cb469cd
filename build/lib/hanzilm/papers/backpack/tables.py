"""The Backpack chapter's Section 4 tables: parameter accounting and Table 1 (training, perplexity, cloze), in
the long form that `write_results` takes, and the plain-language verdict printed under Table 1. The Section 5
tables are built by their analyses: `projection` (Tables 2, 7), `composition` (3, 8), `similarity` (4),
`bias` (5), `amplify` (6, 11), `idioms` (Appendix B)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from ... import spread
from ...results import paper_values
from .backpack import BackpackConfig
from .data import EncodedCorpus
from .experiment import (MODELS, PAPER_NAMES, BackpackChapter, Evaluation, LMConfig, batches, build, histories,
                         model_config, param_count, summary)
from .gpt import GPTConfig

# The paper does not state its vocabulary. Its tokenization is "utilized by Chinese GPT2 (Du 2019)", whose
# vocabulary is bert-base-chinese's vocab.txt: 21,128 entries. We count with that size.
PAPER_VOCAB = 21128
PAPER_SIZES = {"micro": dict(n_layer=6, n_head=6, n_embd=384), "small": dict(n_layer=12, n_head=12, n_embd=768)}
MODEL_LABELS = {"gpt": "GPT2", "backpack": "Backpack"}


def paper_configs(vocab_size: int = PAPER_VOCAB) -> dict[str, GPTConfig | BackpackConfig]:
    out: dict[str, GPTConfig | BackpackConfig] = {}
    for size, arch in PAPER_SIZES.items():
        g = GPTConfig(vocab_size=vocab_size, block_size=1024, **arch)
        out[f"GPT2-{size}"] = g
        out[f"Backpack-{size}"] = BackpackConfig.matching(g, 16)
    return out


def parameter_rows(configs: dict[str, GPTConfig | BackpackConfig]) -> pd.DataFrame:
    """params_m: without position embeddings (nanoGPT's get_num_params, what the authors' code reports);
    params_m_with_positions; and the breakdown."""
    rows = []
    for name, mc in configs.items():
        d = mc.n_embd
        emb = mc.vocab_size * d
        total = param_count(mc, positions=True)
        values = {"params_m": param_count(mc, positions=False) / 1e6, "params_m_with_positions": total / 1e6,
                  "embedding_m": emb / 1e6, "transformer_blocks": mc.n_layer,
                  "sense_network_m": (total - param_count(mc.transformer_config(), positions=True) - 2 * d * d) / 1e6
                  if isinstance(mc, BackpackConfig) else 0.0}
        for metric, value in values.items():
            rows.append({"model": name, "vocab": mc.vocab_size, "metric": metric, "ours": value})
    return pd.DataFrame(rows)


def profile_configs(cfg: LMConfig, vocab_size: int, label: str) -> dict[str, GPTConfig | BackpackConfig]:
    """The chapter's pair, named "GPT2 (<label>)" and "Backpack (<label>)" (label: the profile)."""
    return {f"{MODEL_LABELS[name]} ({label})": model_config(c, vocab_size) for name, c in cfg.pair().items()}


def parameters(ch: BackpackChapter, vocab_size: int, label: str) -> pd.DataFrame:
    """The parameter table: the paper's four models (counted with PAPER_VOCAB), then the chapter's pair with
    our vocabulary."""
    return pd.concat([parameter_rows(paper_configs(PAPER_VOCAB)),
                      parameter_rows(profile_configs(ch.lm, vocab_size, label))], ignore_index=True)


def architecture(ch: BackpackChapter, corpus: EncodedCorpus) -> pd.DataFrame:
    """One row per model of the pair: its sizes, parameter count and training length. Checks first that both
    models get the same batches."""
    pair, cfg = ch.lm.pair(), ch.lm
    if not torch.equal(batches(pair["gpt"], corpus)(0), batches(pair["backpack"], corpus)(0)):
        raise AssertionError("the two models would not see the same batches")
    return pd.DataFrame({"model": list(pair), "blocks": [cfg.n_layer, cfg.n_layer - 1],
                         "parameters": [sum(p.numel() for p in build(c, len(corpus.vocab)).parameters())
                                        for c in pair.values()]}).assign(
        d=cfg.n_embd, heads=cfg.n_head, senses=[0, cfg.n_senses], block=cfg.block_size, batch=cfg.batch_size,
        steps=cfg.train.steps, precision=[c.train.precision for c in pair.values()], vocabulary=len(corpus.vocab))


def training(ch: BackpackChapter, corpus: EncodedCorpus) -> pd.DataFrame:
    """The stored runs of the pair, long: steps, best step and dev loss, tokens seen, wall time, throughput
    and the number of non-finite steps."""
    runs = histories(ch, corpus)
    rows = []
    for name in MODELS:
        s, h = summary(ch, corpus, name), runs[name]
        values = {"steps": s["steps"], "best_step": s["best_step"], "best_dev_loss": s["best_metrics"]["dev_loss"],
                  "train_tokens_m": s["steps"] * ch.lm.batch_size * ch.lm.block_size / 1e6,
                  "wall_time_s": s["wall_time"], "train_tokens_per_s": h["tokens_per_s"].dropna().median(),
                  "nonfinite_steps": int(h.get("nonfinite", pd.Series(dtype=float)).notna().sum())}
        rows += [{"arch": name, "metric": metric, "ours": value} for metric, value in values.items()]
    return pd.DataFrame(rows)


def table1(ch: BackpackChapter, vocab_size: int, ev: Evaluation, label: str) -> pd.DataFrame:
    """Table 1, long: per model its parameters (millions, no position embeddings), test perplexity and cloze
    top-1 / top-3 accuracy; `paper_model` names the paper's row it is compared with."""
    rows = []
    for name, cfg in ch.lm.pair().items():
        base = {"model": f"{MODEL_LABELS[name]} ({label})", "arch": name, "paper_model": PAPER_NAMES[name]}
        n_params = param_count(model_config(cfg, vocab_size), positions=False)
        accuracy = ev.cloze[name][0]
        rows += [{**base, "metric": "params_m", "ours": n_params / 1e6},
                 {**base, "metric": "test_ppl", "ours": ev.perplexity[name]["ppl"]},
                 {**base, "metric": "cloze_top1", "ours": accuracy["top1"]},
                 {**base, "metric": "cloze_top3", "ours": accuracy["top3"]}]
    return pd.DataFrame(rows)


def paper_table1() -> pd.DataFrame:
    """The paper's Table 1 values, keyed on `paper_model` (the row of ours each is compared with)."""
    return paper_values("backpack_table1.csv", keys={"model": "paper_model"},
                        metrics={"params_m": "params_m", "ppl": "test_ppl", "wplc_top1": "cloze_top1",
                                 "wplc_top3": "cloze_top3"})


def table1_spread(ev: Evaluation) -> pd.DataFrame:
    """The bootstrap sd of Table 1's comparisons (`hanzilm.spread`), paired: the perplexity ratio Backpack / GPT-2
    over the test windows (both models' NLL of the same windows drawn), and the cloze accuracy differences over
    the cases. `quantity` is the claims registry's id without `backpack.`."""
    b, g = ev.perplexity["backpack"]["windows"], ev.perplexity["gpt"]["windows"]
    ratio = lambda tb, tg: np.exp(tb[:, 0] / tb[:, 1] - tg[:, 0] / tg[:, 1])  # noqa: E731
    rows = [{"quantity": "t1.micro_ppl", "source": spread.source(1, len(b), "test windows"), "metric": "sd",
             "ours": spread.bootstrap_sd(ratio, [b, g])}]
    for k, claim in ((1, "t1.cloze_top1"), (3, "t1.cloze_top3")):
        hits = [np.array([[0 <= r["rank"] < k] for r in ev.cloze[m][1]], dtype=float) for m in ("backpack", "gpt")]
        diff = lambda hb, hg: (hb[:, 0] - hg[:, 0]) / len(hits[0])  # noqa: E731
        rows.append({"quantity": claim, "source": spread.source(1, len(hits[0]), "cloze cases"), "metric": "sd",
                     "ours": spread.bootstrap_sd(diff, hits)})
    return pd.DataFrame(rows)


def paired_cloze(backpack_rows: list[dict], gpt_rows: list[dict], k: int) -> dict[str, float]:
    """Per-case comparison of two models on the same cloze cases (top-k correct or not): the cases only the
    Backpack gets right, only GPT-2 gets right, and the two-sided exact sign-test (McNemar) p-value."""
    hit = lambda r: 0 <= r["rank"] < k  # noqa: E731
    only_b = sum(hit(b) and not hit(g) for b, g in zip(backpack_rows, gpt_rows))
    only_g = sum(hit(g) and not hit(b) for b, g in zip(backpack_rows, gpt_rows))
    n = only_b + only_g
    tail = sum(math.comb(n, i) for i in range(min(only_b, only_g) + 1)) / 2 ** n if n else 0.5
    p = min(1.0, 2 * tail)
    return {"only_backpack": only_b, "only_gpt": only_g, "p_value": p}


def paired_cloze_table(ev: Evaluation) -> pd.DataFrame:
    """`paired_cloze` at top-1 and top-3."""
    return pd.DataFrame([{"k": k, **paired_cloze(ev.cloze["backpack"][1], ev.cloze["gpt"][1], k)} for k in (1, 3)])


def cloze_examples(ev: Evaluation) -> pd.DataFrame:
    """Per cloze case: the end of the passage, the masked word, the ending, and each model's best candidate and
    the rank it gave the masked word (-1: not in its final beam)."""
    examples = pd.DataFrame({"passage end": [c.context[-24:] for c in ev.cases], "word": [c.word for c in ev.cases],
                             "ending": [c.ending for c in ev.cases]})
    for name, (_, per_case) in ev.cloze.items():
        examples[f"{name} best"] = [r["best"] for r in per_case]
        examples[f"{name} rank"] = [r["rank"] for r in per_case]
    return examples


def table1_reading(table: pd.DataFrame) -> str:
    """Markdown: our Backpack beside our GPT-2 on each of Table 1's measures, the paper's micro pair beside them
    (numbers only: the verdicts are the claims registry's)."""
    t = table.set_index(["arch", "metric"])
    v, p = t["ours"], t["paper"]
    b, g = ("backpack", "test_ppl"), ("gpt", "test_ppl")
    lines = [f"- Test perplexity: Backpack {v[b]:.2f}, GPT-2 {v[g]:.2f}, a ratio of {v[b] / v[g]:.3f} (the paper's "
             f"micro pair: {p[b]:.2f} and {p[g]:.2f}, {p[b] / p[g]:.3f})."]
    for k in ("top1", "top3"):
        b, g = ("backpack", f"cloze_{k}"), ("gpt", f"cloze_{k}")
        lines.append(f"- Cloze {k.replace('top', 'top-')}: Backpack {v[b]:.2%}, GPT-2 {v[g]:.2%}, a difference of "
                     f"{100 * (v[b] - v[g]):+.1f} points (the paper's micro pair: {p[b]:.2%} and {p[g]:.2%}).")
    return "\n".join(lines)


# ---- the numbers the readings cite (glued into their prose: hanzilm.notebook.glue_values) ----

def budget_params_m(mc: BackpackConfig) -> float:
    """Parameters (millions, no position embeddings) if the sense network's second feed-forward were one d -> k d
    map, the "(k-2)d^2 ~ k d^2" that Appendix A.2 budgets for the senses, instead of our (and the authors'
    code's) d -> 4d -> k d."""
    d, k, bias = mc.n_embd, mc.n_senses, int(mc.bias)
    ours = d * 4 * d + 4 * d * k * d + bias * (4 * d + k * d)
    budget = d * k * d + bias * k * d
    return (param_count(mc, positions=False) - ours + budget) / 1e6


def parameter_numbers(params: pd.DataFrame) -> dict[str, float]:
    """The parameter page's reading (`params`: the written `parameters` table): each paper model's count, ours and
    the paper's, our difference in percent, and the Backpacks' count with the Appendix A.2 sense budget."""
    v = params[params.metric == "params_m"].set_index("model")
    configs = paper_configs()
    out: dict[str, float] = {}
    for size in PAPER_SIZES:
        for arch in MODEL_LABELS.values():
            name, key = f"{arch}-{size}", f"{arch.lower()}_{size}"
            out[f"{key}_m"], out[f"paper_{key}_m"] = v.ours[name], v.paper[name]
            out[f"{key}_vs_paper_pct"] = 100 * (v.ours[name] / v.paper[name] - 1)
        out[f"backpack_{size}_budget_m"] = budget_params_m(configs[f"Backpack-{size}"])
    return out


def table1_numbers(table: pd.DataFrame, ev: Evaluation) -> dict[str, float]:
    """Table 1's reading: each model's cloze accuracies (fractions), and the sizes of the test split and the
    cloze set."""
    v = table.set_index(["arch", "metric"])["ours"]
    out = {f"{arch}_cloze_{k}": float(v[(arch, f"cloze_{k}")]) for arch in MODELS for k in ("top1", "top3")}
    out.update({"test_tokens": int(ev.perplexity["gpt"]["tokens"]), "cloze_cases": len(ev.cases)})
    return out
