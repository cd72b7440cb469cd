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
# # Results at a glance
#
# What the papers' findings come to on our runs (the book shows the `cpu` run): first each paper's main
# findings, then every claim of the three papers that a reader comes to check, checked one by one on
# `results/<profile>/`.

# %% tags=["parameters", "hide-input"]
profile = "cpu"
seed = 0

# %% tags=["hide-input"]
from IPython.display import HTML

from hanzilm import claims
from hanzilm.notebook import start
from hanzilm.results import glance, write_results

prof, run = start(profile, seed)
stable = claims.stability(profile)
verdicts = claims.settle(claims.evaluate(profile), stable)
write_results(claims.long_table(verdicts), chapter="summary",
              name="claims", run=run, notes="claims.settle(claims.evaluate(profile), claims.stability(profile))")
heads = claims.headlines(verdicts, profile)
write_results(claims.headlines_long(heads), chapter="summary", name="headlines", run=run,
              notes="claims.headlines: each headline's verdict, that of the registry row deciding it")
claims.glue_pages(verdicts, heads)

# %% [markdown]
# ## The papers' main findings
#
# Each paper's headline findings (from its abstract, its conclusion and the sentences its results lead with),
# each decided by the one row of the claims registry that states it in the paper's words. How many our runs
# answer, one way or the other:

# %% tags=["hide-input"]
HTML(claims.headline_counts_html(heads))

# %% [markdown]
# The reason beside each is made from the deciding row's numbers; where a finding is not answered, the last
# columns say what would answer it (more training or more seeds, and what that costs at this profile's measured
# speed). Every other claim of the papers sits under the headline it supports, further down.

# %% tags=["hide-input"]
HTML(claims.headlines_html(heads))

# %% [markdown]
# ## Every claim
#
# The verdicts of every row of the registry, per paper:

# %% tags=["hide-input"]
HTML(claims.counts_html(verdicts))

# %% [markdown]
# Each claim (the papers' headline findings, each ordering their tables state and each claim of their text) is
# one row of the claims registry, `lib/hanzilm/targets/claims.csv`: where the paper makes it, the claim in the
# paper's words and how it is checked. The registry is the book's only judge: every page shows its verdicts
# through it, and no page words one of its own. The spread a claim is judged against is a standard deviation
# measured on every run from the result files (`hanzilm/spread.py`): over seeds where the models are trained
# again, and by the bootstrap over test items (sentences, cloze items, word pairs) where the test sample is the
# larger noise; each row names its source.

# %% tags=["hide-input"]
HTML(claims.rules_html())

# %% [markdown]
# Each paper's claims follow (click *evidence* for the numbers a claim is computed from), then a figure of every
# number of ours that the paper also reports: ours against the paper's on log axes, since they range from
# correlations to perplexities, with the grey band at ±10 %. Numbers are comparable only as far as the data and
# scale allow: each chapter says what differs. The same claims table is on each chapter's first page.

# %%
numbers = glance(profile)

# %% [markdown]
# ## Sun & Hewitt 2023, *Character-level Chinese Backpack Language Models*

# %% tags=["hide-input"]
claims.show_paper(verdicts, numbers, "backpack")

# %% [markdown]
# ## Downey et al. 2021, *A Masked Segmental Language Model for Unsupervised Natural Language Segmentation*

# %% tags=["hide-input"]
claims.show_paper(verdicts, numbers, "mslm")

# %% [markdown]
# ## Pei, Ge & Chang 2014, *Max-Margin Tensor Neural Network for Chinese Word Segmentation*

# %% tags=["hide-input"]
claims.show_paper(verdicts, numbers, "mmtnn")


# %% [markdown]
# ## How stable the verdicts are
#
# A verdict should not hang on the seed or on the CPU's arithmetic. Each replicate below is one chapter run
# again differing only in that (`results/<profile>/replicates/<name>/`: `fp32`, in fp32 where the book's run
# used bfloat16; `seed1`, every model from another seed), judged by the same registry with the replicate's tables
# in place of the chapter's. A claim whose verdict moves between the runs is settled by neither run: the
# verdicts above already take the replicates into account (the rules above say how).

# %% tags=["hide-input"]
write_results(claims.stability_long(stable), chapter="summary", name="stability", run=run,
              notes="claims.stability(profile): each replicate's verdicts beside the book run's")
HTML(claims.stability_html(stable))
