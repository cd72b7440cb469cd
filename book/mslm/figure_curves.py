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
# # Learning curves beside the authors' own: dev bpc, boundary MCC and word F1 against characters seen
#
# The two model selections of {doc}`table2` are two points on these curves: the step of the lowest dev
# bits per character (unsupervised) and the step of the highest dev boundary MCC (light supervision). Where
# the curves peak at different steps, the two selections differ; the paper notes that a slightly
# under-trained model often segments better.
#
# The x axis is training characters (log): our `cpu` runs see 0.8 M (PKU) and 1.5 M (PTB) characters, the
# paper's 67 M. Downey et al. publish the dev statistics of each of their runs every 128 steps of 8,192
# characters (`targets/mslm_training_logs.csv`, from their repository); the dashed lines are their runs at the
# logged learning rate nearest ours, every seed they ran (ours are higher: at 1-3 % of their training our dev
# set prefers higher rates; their dev set is the whole dev split, ours 300 of its sentences; their bpc is a mean
# over dev batches, ours total bits over total characters). They log boundary F1, not word F1, so the word F1
# panels carry no authors' curve. Stars mark the reference each trend below is read against at the paper's
# 67 M characters: the authors' final dev bpc and MCC at that rate, and Table 2's word F1. On PKU
# the authors warm the learning rate up over their first 1,024 steps, so their first logged points, at
# 1 M characters, are at an eighth of the rate; our `cpu` runs warm up over the same eighth of their much
# shorter training (50 of 400 steps).
# Data: PKU training is the People's Daily 1998-01 stand-in; PTB is the SNLM release.

# %% tags=["parameters"]
profile = "cpu"
seed = 0

# %%
from IPython.display import Markdown, display

from hanzilm.notebook import start
from hanzilm.results import write_results
from hanzilm.papers.mslm import experiment, tables, trends
from hanzilm.papers.mslm.experiment import chapter

prof, run = start(profile, seed)
ch = chapter(prof)
experiment.train_all(ch)
curves = tables.learning_curves(ch)
_ = write_results(curves, chapter="mslm", name="figure_curves", run=run,
                  datasets=tables.DATASETS, by="dataset",
                  notes="dev metrics per evaluation; chars: characters seen")
authors = trends.authors_curves()
refs = trends.references(curves, authors)

# %%
fig = trends.figure(curves, authors, refs)

# %% [markdown]
# ## Which way each curve is heading
#
# Read off the evaluations of the last fourfold of characters (the median over seeds where a run has several):
# the change per tenfold characters, flat when no more than a tenth of the gap to the reference, and where a
# straight line in log characters would reach the reference (a rough reading: learning curves bend). Beside
# it, where the authors' own run stood when it had seen as many characters as ours (their first logged point
# at or past our last one).

# %%
directions = trends.directions(curves, refs)
_ = write_results(trends.results_table(directions), chapter="mslm",
                  name="curve_trends", run=run, datasets=tables.DATASETS,
                  by="dataset", notes=trends.NOTES)
display(Markdown("\n".join(f"- {s}" for s in directions.sentence)))

# %%
tables.last_evaluation(curves)
