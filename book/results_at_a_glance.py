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
# Every number of this run that the papers also report, ours beside theirs with the difference, gathered
# from `results/<profile>/` (the book shows the `cpu` run). Each row's table holds the full context, the
# `data` column saying where a stand-in was used, and a `.json` provenance record.

# %% tags=["parameters"]
profile = "cpu"
seed = 0

# %%
import pandas as pd

from hanzilm.notebook import show, start
from hanzilm.results import glance, not_reproduced

prof, run = start(profile, seed)
table = glance(profile)
with pd.option_context("display.max_rows", None):
    show(table)

# %% [markdown]
# Paper numbers not reproduced yet, per targets file (their chapters say why):

# %%
not_reproduced(table)
