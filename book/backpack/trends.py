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

# %% [markdown]
# # The findings along training: closing, flat or opening?
#
# **The answer at this profile**, over the {glue:text}`n_quantities` quantities below: closing
# {glue:text}`n_closing`, flat {glue:text}`n_flat`, opening {glue:text}`n_opening` (the sentences at the end say
# which is which).
#
# The paper's micro models train on 92 billion tokens (500,000 steps of 180 × 1,024 characters); the `cpu` pair
# on four orders of magnitude fewer. Most Backpack findings are not resolved at `cpu` ({doc}`index`), and the natural question is
# how far the 15,000-fold shorter training explains it. This page cannot answer it by training longer; it can
# show which way each finding moves while the pair trains. Both models kept their weights at six points of
# their one run, each step twice the one before (47, 94, 188, 375, 750 and 1,500 steps at `cpu`), and every
# headline finding is computed on each, by the same functions as its table and as the claims registry checks it.
#
# Each panel: our quantity against the tokens seen (log scale), the paper's value as a dotted line and a star at
# the paper's token count. Below, one sentence per finding, computed from the last three snapshots (the last
# fourfold of training): a straight line in log tokens gives the change per tenfold training; a change per
# tenfold no larger than the finding's run-to-run spread (where the registry has one) or a tenth of its gap to
# the paper is **flat** (`hanzilm.trends`). Where the gap closes, the same line says where it would reach the
# paper's value: a rough, straight-line reading of a learning curve that usually bends, which says whether
# training length could plausibly explain the gap, not when it closes.
#
# The snapshots are of the very run the chapter reports: for a run stored before snapshots were kept, the
# store trains it again from scratch and keeps the snapshots only if that replay ends in the stored weights bit
# for bit (`Store.train_or_load(snapshots=...)`). Data: the stand-in pretraining corpus, as everywhere in
# this chapter; the cloze set is our WPLC-style set, not WPLC.

# %% tags=["parameters"]
profile = "cpu"
seed = 0

# %%
from IPython.display import Markdown, display

from hanzilm.notebook import glue_values, show, start
from hanzilm.papers.backpack import experiment, trends
from hanzilm.results import write_results

prof, run = start(profile, seed)

# %%
# the chapter's training step: the models of its run list (`experiment.runs`: the GPT-2/Backpack pair and the
# alpha-scaling ablation's second Backpack) that the store lacks train now, each resuming; stored ones load
ch = experiment.train_chapter(prof)

# %%
corpus = experiment.load_corpus(ch)
along = trends.along_training(ch, corpus, prof.name)
table = write_results(trends.long_form(along), chapter="backpack",
                      name="trends", run=run, datasets=trends.DATASETS,
                      notes=trends.NOTES)
write_results(trends.settled(along), chapter="backpack", name="trends_settled", run=run,
              datasets=trends.DATASETS, notes="each claim's quantity at the last snapshot minus the one before: the "
                                              "claims registry's scale gate")

# %%
fig = trends.figure(along)

# %% [markdown]
# ## Which way each finding moves

# %%
directions = trends.directions(along)
glue_values(trends.direction_counts(directions))
display(Markdown("\n".join(f"- {s}" for s in directions.sentence)))

# %%
show(trends.direction_table(directions))
