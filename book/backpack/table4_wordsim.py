# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---


# %% [markdown]
# # Table 4: lexical similarity from characters
#
# Sun & Hewitt represent a word by the **mean of its characters' sense vectors** and correlate the cosine
# similarity of word pairs with human scores on WordSim-240 and WordSim-297 (Niu et al. 2017's Chinese sets),
# reporting the best single sense (#14 for micro) against GPT-2, whose words are the mean of their characters'
# input embeddings.
#
# What we do:
#
# - **Both correlations.** The paper's text says Spearman, its Table 4 caption Pearson; we report both, and put
#   the paper's value beside each.
# - **Representations.** Every single sense $\ell$ (mean over the characters of $C(x)_\ell$), all senses (their
#   mean, and their concatenation), the Backpack's own input embedding (a diagnostic), GPT-2's mean input
#   embedding, and the Eq. 10 word vector (senses weighted by the composition ratios $\lambda$ of the Table 9
#   prompts, see {doc}`table3_composition`).
# - **Best sense, as the paper reports it**, is the maximum over 16 senses on the evaluation set itself, which
#   favours the Backpack (16 tries against one). We therefore also report the sense chosen on the *other* set.
# - **Coverage.** A pair counts only if every character of both words is in the model's vocabulary; the rest are
#   out of vocabulary and left out (their number is in the table).
# - Models: the `cpu` pair of {doc}`table1` (trained if missing).

# %% tags=["parameters"]
profile = "cpu"
seed = 0

# %%
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from hanzilm.data.corpus import lm_dataset_names
from hanzilm.data.lexicon import wordsim
from hanzilm.notebook import show, start
from hanzilm.results import paper_values, write_results
from hanzilm.papers.backpack import prompts as paper
from hanzilm.papers.backpack.common import stand_in, configure, in_vocab, load_pair
from hanzilm.papers.backpack.composition import prompt_contexts, word_lambdas, word_vector
from hanzilm.papers.backpack.similarity import all_senses, backpack_word_senses, correlations, embedding_word_vector

prof, run = start(profile, seed)
cfg = configure(prof)
corpus, models = load_pair(prof)
backpack, gpt, vocab = models["backpack"], models["gpt"], corpus.vocab
k = backpack.config.n_senses
sets = {name: wordsim(name) for name in ("ws240", "ws297")}

# %%
per_sense = backpack_word_senses(backpack, vocab)
eq10_cache = {}


def eq10(word):
    """Eq. 10 with the prompts of Table 9 as the contexts."""
    if word not in eq10_cache:
        lams = word_lambdas(backpack, vocab, word, prompt_contexts(word, paper.NOUN_PROMPTS))
        eq10_cache[word] = word_vector(backpack, vocab, word, lams)
    return eq10_cache[word]


representations = {
    "Backpack sense": per_sense,
    "Backpack all senses (mean)": all_senses(per_sense, "mean"),
    "Backpack all senses (concatenated)": all_senses(per_sense, "concat"),
    "Backpack Eq. 10, all senses (concatenated)": lambda w: eq10(w).flatten(),
    "Backpack input embedding": embedding_word_vector(backpack, vocab),
    "GPT-2 input embedding": embedding_word_vector(gpt, vocab),
}
rows = []
for set_name, pairs in sets.items():
    for rep, vectors in representations.items():
        t = correlations(pairs, vectors, vocab)
        for _, r in t.iterrows():
            label = f"{rep} {int(r['index'])}" if rep == "Backpack sense" else rep
            rows.append({"representation": label, "set": set_name, "spearman": r.spearman, "pearson": r.pearson,
                         "pairs": r.pairs, "coverage": r.coverage})
scores = pd.DataFrame(rows)
scores[scores.set == "ws240"].iloc[:3]

# %% [markdown]
# ## Every sense

# %%
senses_only = scores[scores.representation.str.startswith("Backpack sense")].copy()
senses_only["sense"] = senses_only.representation.str.split().str[-1].astype(int)
fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
for ax, metric in zip(axes, ("spearman", "pearson")):
    for set_name, g in senses_only.groupby("set"):
        ax.plot(g.sense, g[metric], "o-", label=set_name)
        gpt_value = scores[(scores.set == set_name) & (scores.representation == "GPT-2 input embedding")][metric].item()
        ax.axhline(gpt_value, ls="--", color=ax.lines[-1].get_color(), alpha=0.6)
    ax.set_xlabel("sense")
    ax.set_title(f"{metric} (dashed: GPT-2)")
axes[0].legend()
plt.tight_layout()
plt.show()
senses_only.pivot(index="sense", columns="set", values=["spearman", "pearson"])

# %% [markdown]
# ## Table 4

# %%
other = {"ws240": "ws297", "ws297": "ws240"}
long = []
for set_name in sets:
    for metric in ("spearman", "pearson"):
        s = senses_only[senses_only.set == set_name].set_index("sense")[metric]
        chosen_elsewhere = int(senses_only[senses_only.set == other[set_name]].set_index("sense")[metric].idxmax())
        long += [
            {"representation": "Backpack, best sense (on this set)", "paper_model": "Backpack-micro (best sense 14)",
             "metric": f"{set_name}_{metric}", "ours": s.max()},
            {"representation": "Backpack, best sense (on this set)", "paper_model": None,
             "metric": f"{set_name}_{metric}_sense", "ours": int(s.idxmax())},
            {"representation": "Backpack, sense chosen on the other set", "paper_model": None,
             "metric": f"{set_name}_{metric}", "ours": s[chosen_elsewhere]},
            {"representation": "Backpack, sense chosen on the other set", "paper_model": None,
             "metric": f"{set_name}_{metric}_sense", "ours": chosen_elsewhere},
        ]
        for rep in representations:
            if rep == "Backpack sense":
                continue
            value = scores[(scores.set == set_name) & (scores.representation == rep)][metric].item()
            long.append({"representation": rep, "paper_model": "GPT2-micro" if rep.startswith("GPT-2") else None,
                         "metric": f"{set_name}_{metric}", "ours": value})
    cov = scores[scores.set == set_name].iloc[0]
    long += [{"representation": "all", "paper_model": None, "metric": f"{set_name}_pairs_covered", "ours": cov.pairs},
             {"representation": "all", "paper_model": None, "metric": f"{set_name}_pairs_total", "ours": len(sets[set_name])}]
paper = pd.concat([paper_values("backpack_table4_wordsim.csv", keys={"representation": "paper_model"},
                                metrics={"ws240": f"ws240_{m}", "ws297": f"ws297_{m}"})
                   for m in ("spearman", "pearson")], ignore_index=True)
paper = paper[paper.paper_model.isin(["Backpack-micro (best sense 14)", "GPT2-micro"])]
table4 = write_results(stand_in(pd.DataFrame(long)), chapter="backpack", name="table4_wordsim",
                       run=run, datasets=[*lm_dataset_names(), "wordsim"], paper=paper,
                       notes="cosine of mean character representations vs human scores; pairs with a character outside "
                             "the vocabulary left out; paper: micro models, text says Spearman, caption Pearson")
show(table4[table4.metric.str.match(r"ws\d+_(spearman|pearson)$")].pivot_table(
    index=["representation"], columns="metric", values="ours", sort=False))
show(table4[table4.paper.notna()])

# %%
t = table4.set_index(["representation", "metric"])["ours"]
best, gpt_row = "Backpack, best sense (on this set)", "GPT-2 input embedding"
lines = []
for set_name in sets:
    for metric in ("spearman", "pearson"):
        b, g = t[best, f"{set_name}_{metric}"], t[gpt_row, f"{set_name}_{metric}"]
        o = t["Backpack, sense chosen on the other set", f"{set_name}_{metric}"]
        lines.append(f"- {set_name} {metric}: Backpack best sense {int(t[best, f'{set_name}_{metric}_sense'])} "
                     f"{b:.3f} vs GPT-2 {g:.3f} ({'Backpack higher' if b > g else 'GPT-2 higher or equal'}); "
                     f"with the sense chosen on the other set {o:.3f}.")
lines.append(f"- Coverage: {int(t['all', 'ws240_pairs_covered'])}/{int(t['all', 'ws240_pairs_total'])} WS-240 pairs, "
             f"{int(t['all', 'ws297_pairs_covered'])}/{int(t['all', 'ws297_pairs_total'])} WS-297 pairs.")
display(Markdown("\n".join(lines)))

# %% [markdown]
# ## Reading the result
#
# The paper's claim (micro): the Backpack's best sense correlates better with human similarity than GPT-2's
# mean embedding on WS-240 (0.335 vs 0.164) but not on WS-297 (0.226 vs 0.271). The list above states the same
# comparison for our model, with the caveat that the "best sense" is picked on the test set itself; the
# sense chosen on the other set is the fairer number. All correlations from character averages are low, as the
# paper also finds (word-tokenised CBOW/GloVe reach 0.56-0.63).
#
# **On the `cpu` run** the Backpack's best sense beats GPT-2 on WS-240 (Spearman 0.278 vs 0.176, Pearson 0.305 vs
# 0.188; the sense chosen on WS-297 gives almost the same, 0.278 / 0.305), as in the paper (0.335 vs 0.164). Unlike
# the paper, it also wins on WS-297 (0.398 vs 0.321 Spearman), and the mean of all senses does better still on
# WS-240 (0.376). Every WordSim pair is covered by our 5,260-character vocabulary.
