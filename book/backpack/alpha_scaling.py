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
# # Ablation: the scale of the sense weights α
#
# **The answer at this profile**: the evidence favours the Backpack {glue:text}`favoured`; {glue:text}`choice`.
# Of the {glue:text}`n_findings` findings below, the registry's verdict is favourable for {glue:text}`unscaled_holds`
# with the unscaled Backpack and for {glue:text}`scaled_holds` with the scaled one; the scaled one is nearer the paper on {glue:text}`scaled_nearer` of the
# {glue:text}`n_compared` that have a paper value. Test perplexity: {glue:text}`unscaled_ppl:.2f` unscaled,
# {glue:text}`scaled_ppl:.2f` scaled.
#
# The paper's Eq. 6 writes the contextualisation weights as α = softmax(q kᵀ), and the Chinese authors' code
# computes them so. The original Backpack code (Hewitt et al. 2023) divides the logits by √(d/k), as attention
# usually does; without it they are √(d/k) times larger (√8 at our 128 dimensions and 16 senses), the softmax
# is sharper from the first step, and a sense's weight can collapse onto a few positions. The composition
# analysis (Table 3) reads exactly those weights. So the chapter's Backpack is trained a second time with only
# the scale changed (same data order, seed and GPT-2 beside it) and both are read the same way: the entropy of α
# per sense over dev blocks (as a share of its maximum, log i over the i positions a row can weigh: 1 is
# uniform over the past, 0 all weight on one position), test perplexity, and every finding of the
# {doc}`trends` page with the claims registry's verdict.
#
# Data: the stand-in pretraining corpus and our WPLC-style cloze set, as everywhere in this chapter.

# %% tags=["parameters"]
profile = "cpu"
seed = 0

# %%
import matplotlib.pyplot as plt
from IPython.display import HTML

from hanzilm import claims
from hanzilm.notebook import glue_values, show, start
from hanzilm.papers.backpack import alpha_scaling, experiment, trends
from hanzilm.results import write_results

prof, run = start(profile, seed)

# %%
# the chapter's training step: the models of its run list (`experiment.runs`: the GPT-2/Backpack pair and the
# alpha-scaling ablation's second Backpack) that the store lacks train now, each resuming; stored ones load
ch = experiment.train_chapter(prof)

# %%
corpus = experiment.load_corpus(ch)
findings, entropy = alpha_scaling.ablation(ch, corpus, prof.name)
write_results(alpha_scaling.long_form(findings, entropy), chapter="backpack",
              name="alpha_scaling", run=run, datasets=trends.DATASETS,
              notes=alpha_scaling.NOTES)
glue_values(alpha_scaling.reading(findings, entropy, ch.lm.scaled_alpha))

# %% [markdown]
# ## How spread the sense weights are
#
# Mean relative entropy of α per sense: unscaled {glue:text}`unscaled_relative_entropy:.2f` (lowest sense
# {glue:text}`unscaled_min_relative_entropy:.2f`), scaled {glue:text}`scaled_relative_entropy:.2f` (lowest
# {glue:text}`scaled_min_relative_entropy:.2f`).

# %%
fig, ax = plt.subplots(figsize=(7, 2.8))
for i, (label, g) in enumerate(entropy.groupby("variant", sort=False)):
    ax.bar(g.sense + (i - 0.5) * 0.4, g.relative_entropy, width=0.4, label=label)
ax.set_xlabel("sense")
ax.set_ylabel("entropy of α / log i")
ax.set_ylim(0, 1)
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## The findings with each
#
# Each finding's quantity as the claims registry computes it (the {doc}`trends` page's list), the paper's value
# and the verdict for each variant.

# %%
HTML(claims.verdicts_frame_html(alpha_scaling.comparison(findings).round(4)))
