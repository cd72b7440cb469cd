"""The measured spreads of the Backpack chapter's Table 3, 5 and 6 claims (`hanzilm.spread`): one row per claim,
paired bootstraps over the items each table averages (words, prompts), and the same quantity the registry
computes from the tables."""

import numpy as np
import pandas as pd
import pytest

from hanzilm import claims
from hanzilm.papers.backpack import amplify, bias, composition
from hanzilm.papers.backpack.composition import WordSets
from hanzilm.papers.backpack.prompts import BIAS_WORDS

T3 = {f"t3.{t}.{c}" for t in ("compound", "loanword", "idiom") for c in ("stable_90pct", "within_10pct")} | {"t3.order"}
T5 = {f"t5.{w}.removal_lowers_bias" for _, w in BIAS_WORDS} | {
    "t5.halving_lowers_bias", "t5.halving_less_than_removal", "t5.larger_drop_where_more_biased",
    "t5.better_than_gpt2", "t5.second_approach_less_effective"}
T6 = {"t6.amplify_first", "t6.amplify_second"}


def _registry(prefix: str) -> list[claims.Claim]:
    """The registry's claims a spread covers: the comparative ones and the value claims on the share within 10 %,
    each with a spread row of its own (a pooled claim's spread is composed of those rows: `_pooled`)."""
    return [c for c in claims.load_claims() if c.id.startswith(prefix) and c.quantity
            and (c.expect or c.id.endswith("within_10pct")) and c not in _pooled(prefix)]


def _pooled(prefix: str) -> list[claims.Claim]:
    """The claims that pool others (all three word types, all four words, both characters): their spread is the
    pooled claims' spreads combined, so it names no row of its own."""
    return [c for c in claims.load_claims() if c.id.startswith(prefix) and c.noise
            and f"quantity={c.id.removeprefix('backpack.')}]" not in c.noise]


@pytest.mark.parametrize("prefix, table, own", [("backpack.t3.", "table3_spread", T3),
                                                ("backpack.t5.", "table5_spread", T5),
                                                ("backpack.t6.", "table6_spread", T6)])
def test_a_pooled_claims_spread_is_made_of_the_spreads_the_chapter_measures(prefix, table, own):
    for c in _pooled(prefix):
        named = {r.where[0][1] for r in c.noise_refs() if r.table == f"backpack/{table}"}
        assert named and named <= own, (c.id, named - own)


def _ids(prefix: str) -> set[str]:
    return {c.id.removeprefix("backpack.") for c in _registry(prefix)}


# --- Table 3: words, each with all its senses ---------------------------------------------------------------
def _per_sense(variations: dict[str, np.ndarray]) -> tuple[pd.DataFrame, WordSets]:
    """per_sense rows from (words, senses) variations per type; the words named like t0, t1, ..."""
    rows, words = [], {}
    for t, v in variations.items():
        words[t] = [f"{t}{i}" for i in range(len(v))]
        rows += [{"type": t, "word": f"{t}{i}", "sense": s, "contexts": 9, "variation": x}
                 for i, row in enumerate(v) for s, x in enumerate(row)]
    return pd.DataFrame(rows), WordSets(candidates={t: w for t, w in words.items()}, words=words)


def _random_variations(rng, n_words=30, k=4, nan_share=0.1):
    v = rng.uniform(0, 0.35, size=(n_words, k))
    v[rng.random(v.shape) < nan_share] = np.nan
    return v


def test_table3_spread_covers_each_claim_and_is_zero_for_identical_words():
    rng = np.random.default_rng(0)
    per_sense, sets = _per_sense({t: _random_variations(rng) for t in ("compound", "loanword", "idiom")})
    out = composition.table3_spread(per_sense, sets)
    assert list(out.columns) == ["quantity", "source", "metric", "ours"] and set(out.metric) == {"sd"}
    assert len(out) == len(T3) and set(out.quantity) == T3 == _ids("backpack.t3.")
    assert (out.ours > 0).all()
    assert out.set_index("quantity").source["t3.idiom.within_10pct"] == (
        "bootstrap over 30 drawn idiom words (each with all its senses) (1,000 resamples)")
    same = np.array([[0.05, 0.15, 0.5, np.nan]] * 20)
    per_sense, sets = _per_sense({"compound": same, "loanword": same, "idiom": same})
    assert composition.table3_spread(per_sense, sets).ours.tolist() == pytest.approx([0.0] * len(T3), abs=1e-12)


def test_table3_spread_of_a_mean_share_is_its_standard_error():
    """Every sense defined: the share within 0.10 is the mean over words of each word's share."""
    rng = np.random.default_rng(1)
    per_sense, sets = _per_sense({t: _random_variations(rng, n_words=200, nan_share=0) for t in ("compound", "idiom")})
    sd = composition.table3_spread(per_sense, sets).set_index("quantity").ours
    per_word = composition.word_buckets(per_sense, sets)
    share = per_word[per_word.type == "idiom"].within_10pct / 4
    assert sd["t3.idiom.within_10pct"] == pytest.approx(share.std() / np.sqrt(len(share)), rel=0.15)
    assert np.isnan(sd["t3.order"])        # no loanwords


def test_table3_claim_values_at_the_drawn_words_are_the_registrys_quantities():
    rng = np.random.default_rng(2)
    per_sense, sets = _per_sense({t: _random_variations(rng, n_words=12) for t in ("compound", "loanword", "idiom")})
    per_word = composition.word_buckets(per_sense, sets)
    ones = {t: np.ones((1, len(w))) for t, w in sets.words.items()}
    values = composition.table3_claim_values(per_word, ones)
    tables = {"backpack/table3_composition": composition.table3(per_sense, sets)}
    for c in _registry("backpack.t3."):
        assert values[c.id.removeprefix("backpack.")][0] == pytest.approx(claims.quantity_of(c, tables)), c.id


# --- Table 5: the prompts of Table 10 ------------------------------------------------------------------------
def _bias_per_prompt(rng, n_prompts=5, same=False) -> pd.DataFrame:
    """Per-prompt bias ratios of the paper's four words under both edits and two wider words."""
    cases = [(w, c, bias.PAPER_CHARACTER) for c, w in BIAS_WORDS] + [(w, w, bias.ALL_CHARACTERS) for _, w in BIAS_WORDS]
    cases += [("医生", "医生", bias.ALL_CHARACTERS), ("律师", "律师", bias.ALL_CHARACTERS)]
    level = {"gpt2": 8.0, "gpt2_proj": 6.0, "backpack": 10.0, "half_sense": 7.0, "remove_sense": 4.0}
    rows = []
    for word, chars, edit in cases:
        for m in bias.METRICS:
            r = np.full(n_prompts, level[m]) if same else level[m] * rng.lognormal(0, 0.4, n_prompts)
            rows += [{"word": word, "edit": edit, "characters": chars, "metric": m, "prompt": f"p{i:03d}WORD",
                      "ratio": x} for i, x in enumerate(r)]
    return pd.DataFrame(rows)


def test_table5_spread_covers_each_claim_and_is_zero_for_identical_prompts():
    per_prompt = _bias_per_prompt(np.random.default_rng(0))
    out = bias.table5_spread(per_prompt)
    assert list(out.columns) == ["quantity", "source", "metric", "ours"] and set(out.metric) == {"sd"}
    assert len(out) == len(T5) and set(out.quantity) == T5 == _ids("backpack.t5.")
    assert (out.ours > 0).all()
    assert set(out.source) == {"bootstrap over 5 prompts of Table 10 (one draw for every word, metric and edit) "
                               "(1,000 resamples)"}
    flat = bias.table5_spread(_bias_per_prompt(np.random.default_rng(0), same=True))
    assert flat.ours.tolist() == pytest.approx([0.0] * len(T5), abs=1e-12)


def test_table5_spread_of_a_mean_difference_is_its_standard_error():
    """halving_less_than_removal is the mean over prompts of the per-prompt difference averaged over the words."""
    per_prompt = _bias_per_prompt(np.random.default_rng(1), n_prompts=200)
    sd = bias.table5_spread(per_prompt).set_index("quantity").ours["t5.halving_less_than_removal"]
    p = per_prompt[per_prompt.edit == bias.PAPER_CHARACTER].pivot_table(index="prompt", columns="metric",
                                                                        values="ratio", aggfunc="mean")
    diff = p.half_sense - p.remove_sense
    assert sd == pytest.approx(diff.std() / np.sqrt(len(diff)), rel=0.15)


def test_table5_claim_values_at_the_prompts_are_the_registrys_quantities():
    per_prompt = _bias_per_prompt(np.random.default_rng(2))
    values = bias.table5_claim_values(per_prompt, np.ones((1, 5)))
    wide = bias.bias_means(per_prompt, composition.CorpusText(["士兵和警察"]))
    assert wide.backpack.iloc[0] == per_prompt[(per_prompt.word == "士兵") & (per_prompt.metric == "backpack")
                                               & (per_prompt.edit == bias.PAPER_CHARACTER)].ratio.mean()
    tables = {"backpack/table5_bias": bias.table5(wide, sense=3)}
    for c in _registry("backpack.t5."):
        assert values[c.id.removeprefix("backpack.")][0] == pytest.approx(claims.quantity_of(c, tables)), c.id


# --- Table 6: the prompts of Table 9 -------------------------------------------------------------------------
def _amplify_per_prompt(rng, n_prompts=7, same=False) -> pd.DataFrame:
    rows = []
    for m in ("1,1", "4,1", "1,4"):
        for t in amplify.SAND + amplify.BEACH:
            r = np.ones(n_prompts) if same else rng.lognormal(0, 0.5, n_prompts)
            rows += [{"prompt": f"p{i:03d}WORD", "multipliers": m, "target": t, "p_base": 0.01, "p_amp": 0.01 * x,
                      "ratio": x} for i, x in enumerate(r)]
    return pd.DataFrame(rows)


def test_table6_spread_covers_each_claim_and_is_zero_for_identical_prompts():
    out = amplify.table6_spread(_amplify_per_prompt(np.random.default_rng(0)))
    assert list(out.columns) == ["quantity", "source", "metric", "ours"] and set(out.metric) == {"sd"}
    assert len(out) == len(T6) and set(out.quantity) == T6 == _ids("backpack.t6.")
    assert (out.ours > 0).all()
    assert amplify.table6_spread(_amplify_per_prompt(None, same=True)).ours.tolist() == pytest.approx([0, 0], abs=1e-12)


def test_table6_spread_of_the_mean_difference_is_its_standard_error():
    per_prompt = _amplify_per_prompt(np.random.default_rng(1), n_prompts=200)
    sd = amplify.table6_spread(per_prompt).set_index("quantity").ours["t6.amplify_first"]
    r = per_prompt[per_prompt.multipliers == "4,1"].pivot(index="prompt", columns="target", values="ratio")
    diff = r[list(amplify.SAND)].mean(axis=1) - r[list(amplify.BEACH)].mean(axis=1)
    assert sd == pytest.approx(diff.std() / np.sqrt(len(diff)), rel=0.15)


def test_table6_claim_values_at_the_prompts_are_the_registrys_quantities():
    per_prompt = _amplify_per_prompt(np.random.default_rng(2))
    values = amplify.table6_claim_values(per_prompt, np.ones((1, 7)))
    tables = {"backpack/table6_amplification": amplify.table6(per_prompt, "沙滩")}
    for c in _registry("backpack.t6."):
        assert values[c.id.removeprefix("backpack.")][0] == pytest.approx(claims.quantity_of(c, tables)), c.id


# --- Table 8: the paper's nine words -------------------------------------------------------------------------
def _table8(within: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame([{"type": t, "word": w, "contexts": 16, "metric": "within_10pct", "ours": within[w]}
                         for t, w in composition.TABLE8_WORDS])


def test_table8_spread_is_the_standard_error_of_the_group_difference_and_zero_for_equal_words():
    rng = np.random.default_rng(3)
    within = {w: float(rng.integers(0, 17)) for _, w in composition.TABLE8_WORDS}
    sd = composition.table8_spread(_table8(within)).set_index("quantity").ours["t8.unstable_subset"]
    stable = [v for w, v in within.items() if w not in composition.TABLE8_UNSTABLE]
    unstable = [v for w, v in within.items() if w in composition.TABLE8_UNSTABLE]
    # the bootstrap's variance of a mean is the population variance over n
    expected = np.sqrt(np.var(stable) / len(stable) + np.var(unstable) / len(unstable))
    assert sd == pytest.approx(expected, rel=0.15)
    assert composition.table8_spread(_table8({w: 9.0 for w in within})).ours[0] == 0


def test_table8_spread_is_of_the_registrys_quantity():
    """The registry's t8 claim reads the same groups of words the spread draws within."""
    (c,) = _registry("backpack.t8.")
    within = {w: (4.0 if w in composition.TABLE8_UNSTABLE else 12.0) for _, w in composition.TABLE8_WORDS}
    assert claims.quantity_of(c, {"backpack/table8_words": _table8(within)}) == pytest.approx(8.0)
