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
# # Table 4: example PTB segmentations
#
# The paper shows PTB sentences segmented by each (unsupervised) model beside the gold words and discusses
# false splits (*be + fore*, *quest + ion*), morphologically valid splits the gold does not make
# (*question + able*) and rare words (*asbestos*). The paper's own example rows were lost in the text
# conversion; we segment the PTB training sentence its discussion quotes and the first short test
# sentences with the first seed of each model of {doc}`table2`. Words are separated by spaces.

# %% tags=["parameters"]
profile = "cpu"
seed = 0

# %%
import pandas as pd
from IPython.display import display

from hanzilm.notebook import start
from hanzilm.results import write_results
from hanzilm.papers.mslm import experiment, tables
from hanzilm.papers.mslm.experiment import chapter

prof, run = start(profile, seed)
ch = chapter(prof)
experiment.train_all(ch)
sentences = tables.example_sentences("ptb")
examples = tables.segment_examples(ch, "ptb", sentences)
with pd.option_context("display.max_colwidth", None):
    display(examples.set_index(["sentence", "segmentation"]))

# %%
_ = write_results(tables.segment_examples_long(examples, "PTB"), chapter="mslm", name="table4_examples", run=run,
                  datasets=tables.DATASETS["PTB"], notes="unsupervised selection, first seed of each model")
