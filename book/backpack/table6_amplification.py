# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %%

# %% [markdown]
# # Tables 6 and 11: amplifying one character of a word
#
# In a Backpack, how much each character of 沙滩 (sand + beach) contributes to a prediction is the weight
# $\alpha$ of its senses. Sun & Hewitt multiply the weights of the first (or the second) character by 4 for every
# prediction after the word, **keeping each sense's total weight on the word unchanged**, and report (Table 6)
# the ratio of the next-character probabilities of nine characters to the unamplified model's: sand-related
# characters (撒, 粒) should gain and beach-related ones (海, 晒) lose when 沙 is amplified, and the reverse for
# 滩. Table 11 shows greedy continuations of 沙滩 and 理想 under each multiplier.
#
# What we do, and how it differs:
#
# - The paper does not print the "open-topic prompt" of Table 6; we average the ratio over the seven prompts of
#   Table 9 (fixed in advance), $\mathbb{E}_{\text{prompts}}[p(c \mid x_{amp}) / p(c \mid x)]$, and show each
#   prompt too.
# - Greedy continuations start from the word alone (Table 11's outputs all start with it), re-amplifying at every
#   step; special tokens are excluded. Models: the `cpu` pair of {doc}`table1` (trained if missing).

# %% tags=["parameters"]
profile = "cpu"
seed = 0

# %%
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from hanzilm.data.corpus import lm_dataset_names
from hanzilm.notebook import show, start
from hanzilm.papers.backpack import amplify, experiment
from hanzilm.papers.backpack import prompts as paper
from hanzilm.results import write_results

prof, run = start(profile, seed)

# %%
# the chapter's training step: the models of its run list (`experiment.runs`: the GPT-2/Backpack pair and the
# alpha-scaling ablation's second Backpack) that the store lacks train now, each resuming; stored ones load
ch = experiment.train_chapter(prof)

# %%
pair = experiment.load_pair(ch)
backpack, vocab = pair.backpack, pair.vocab
datasets = lm_dataset_names()

# %% [markdown]
# ## Table 6: probability ratios of the paper's nine characters

# %%
word, targets = "沙滩", paper.AMPLIFY_TARGETS["沙滩"]
per_prompt = amplify.target_ratios(backpack, vocab, word, paper.NOUN_PROMPTS, targets, paper.MULTIPLIERS)
table6 = write_results(amplify.table6(per_prompt, word), chapter="backpack", name="table6_amplification", run=run,
                       datasets=datasets,
                       paper=amplify.paper_table6(targets),
                       notes=f"mean over the {len(paper.NOUN_PROMPTS)} prompts of Table 9 of p(c|amplified)/p(c); "
                             "the paper's own prompt is not printed")
table6.pivot_table(index="multipliers", columns="metric", values=["ours", "paper"], sort=False)[
    [(v, t) for v in ("ours", "paper") for t in targets]]

# %%
show(table6[table6.multipliers != "1,1"])

# %% [markdown]
# How far each Table 6 claim's quantity would move on another draw of prompts: its bootstrap standard deviation
# over the prompts of Table 9, the same draw for every target and multipliers (`hanzilm.spread`), which the claims
# registry judges the claim against.

# %%
show(write_results(amplify.table6_spread(per_prompt), chapter="backpack", name="table6_spread", run=run,
                   datasets=datasets,
                   notes="bootstrap over the prompts of Table 9, one draw for every target and multipliers "
                         "(hanzilm.spread)"))

# %% [markdown]
# Per prompt (amplifying 沙 by 4), and the unamplified probabilities, to see whether a mean is carried by one
# prompt:

# %%
amplify.per_prompt_view(per_prompt, targets)

# %%
fig, ax = plt.subplots(figsize=(7, 3.5))
x = np.arange(len(targets))
for i, m in enumerate(["4,1", "1,4"]):
    ours = table6[table6.multipliers == m].set_index("metric").loc[list(targets)]
    ax.bar(x + (i - 0.5) * 0.4, ours.ours, width=0.4, label=f"ours {m}")
    ax.plot(x + (i - 0.5) * 0.4, ours.paper, "k_", markersize=14, label="paper" if i == 0 else None)
ax.axhline(1, color="grey", lw=0.8)
ax.set_yscale("log")
ax.set_xticks(x, targets)
ax.set_ylabel("p(amplified) / p")
ax.set_title(f"{word}: amplifying the first (4,1) or second (1,4) character by 4")
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %%
display(Markdown(amplify.table6_reading(table6, targets)))

# %% [markdown]
# ## Table 11: greedy continuations

# %%
continuations = amplify.continuations(backpack, vocab, ch.senses.generate_chars)
write_results(continuations.drop(columns="paper"), chapter="backpack", name="table11_continuations", run=run,
              datasets=datasets,
              notes=f"greedy, {ch.senses.generate_chars} characters, the word amplified at every step")
continuations.drop(columns="metric")

# %% [markdown]
# ## Reading the result
#
# The paper's claim: amplifying 沙 shifts the next-character distribution towards sand (撒 x2.13, 粒 x1.74)
# and away from the sea (海 x0.62, 晒 x0.61), amplifying 滩 the other way. The list above gives our ratios; the
# registry's verdicts close the page. The continuations are a qualitative check: a small model trained on news,
# laws and reviews continues 沙滩 in its own way, and the question is only whether the amplified character's
# meaning shows in what follows.
#
# The prompts were fixed before any result was seen and not changed.

# %% [markdown]
# ## The paper's claims on this table
#
# Each claim the paper makes about Table 6, judged on this run by the claims registry (the verdicts and their
# rules: {doc}`../results_at_a_glance`):
#
# ```{glue} claims_backpack_t6
# :doc: /results_at_a_glance.ipynb
# ```
