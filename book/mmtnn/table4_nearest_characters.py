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
# # Table 4: nearest characters in the learned embeddings
#
# Pei et al. list, for a number character, a family name and a punctuation mark, the five characters nearest to
# it (Euclidean distance) in MMTNN's character lookup table after training on PKU, to show that the embeddings
# group characters by syntactic and semantic class. The paper's own characters did not survive the text
# conversion, so we query one of each class: 五 (five), 王 (Wang) and ， (comma). The model is Table 3's MMTNN
# (trained on the PKU stand-in, random initialisation), loaded, not retrained. Beside it, the same queries in the
# word2vec vectors that initialise the pre-trained models (skip-gram over our LM corpus, the stand-in for the
# paper's Gigaword): what pre-training brings to the lookup table before segmentation training starts.

# %% tags=["parameters"]
profile = "cpu"
seed = 0

# %%
from hanzilm.notebook import glue_values, show, start
from hanzilm.papers.mmtnn import tables
from hanzilm.papers.mmtnn.experiment import train_chapter
from hanzilm.results import write_results

prof, run = start(profile, seed)

# %%
# the chapter's training step: the segmenters its pages report that the store lacks train now (the
# learning-rate grid, then each model at the rate its PKU dev F1 chose); stored ones load
ch = train_chapter(prof)

# %%
notes = ("nearest characters in the MMTNN lookup table (PKU stand-in "
         "training, random init) and in the word2vec vectors of the "
         "pre-trained models")
table4 = write_results(tables.table4(ch), chapter="mmtnn", name="table4",
                       run=run, datasets=["pku_training_pd199801"],
                       notes=notes)
glue_values(tables.class_shares(table4))
show(table4.drop(columns=["metric"]))

# %% [markdown]
# The five neighbours of each query, as the paper lays them out (one column per query):

# %%
tables.neighbours(table4)

# %% [markdown]
# How many of the five neighbours are of the query's class (a numeral; a family name, i.e. a character CC-CEDICT
# glosses "surname ..."; punctuation): in MMTNN's lookup table {glue:text}`lookup_number` for 五
# ({glue:text}`lookup_number_chars`), {glue:text}`lookup_family_name` for 王 ({glue:text}`lookup_family_name_chars`)
# and {glue:text}`lookup_punctuation` for ， ({glue:text}`lookup_punctuation_chars`); in the word2vec vectors
# {glue:text}`word2vec_number` ({glue:text}`word2vec_number_chars`), {glue:text}`word2vec_family_name`
# ({glue:text}`word2vec_family_name_chars`) and {glue:text}`word2vec_punctuation`
# ({glue:text}`word2vec_punctuation_chars`). The lookup table is 25-dimensional and trained only through the
# segmentation loss on the stand-in data, and the paper shows its three hand-picked columns only, so this is a
# qualitative check, not a number to match.
