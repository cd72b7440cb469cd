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
# # Table 2: RSLM, MSLM and DMSLM on PKU and PTB
#
# Downey et al. train three segmental language models that differ only in their context encoder: an LSTM
# (RSLM, Kawakami et al. 2019), the **masked segmental transformer** (MSLM: position $i$ may not attend to
# $i+1 \dots i+k$, the characters a segment starting after $i$ would generate) and its causal variant (DMSLM).
# Each model is selected twice from a learning-rate sweep: by the best validation bits per character
# (**unsupervised**) and by the best validation boundary MCC against gold segmentations (**lightly
# supervised**). Table 2 reports word F1 (SIGHAN scorer) and test bpc, median and mean $\pm$ sd over five seeds.
#
# What we do differently, and why:
#
# - **Scale.** The paper trains $d=256$ models for 8,192 steps of 8,192 characters (67 M characters: about 40
#   epochs of PKU) with a six-rate sweep per cell, on GPUs. The `cpu` profile (sizes in the first table below)
#   keeps $d=256$ for PKU in the authors' regime scaled down: 400 steps of 2,048 characters at lr $10^{-3}$
#   (0.8 M characters, half an epoch, 80 times fewer than the paper); PTB runs $d=128$ models for 4,000 steps of
#   512 characters at lr $3\cdot10^{-3}$ (2 M characters). One learning rate per corpus for every model (both
#   selections are read off the same run, as the checkpoints of best dev bpc and best dev MCC), three seeds
#   for the PKU RSLM and MSLM and one elsewhere. The `paper` profile runs the authors' selected rate per cell
#   and selection on their seeds 2, 3, 5, 8, 13.
# - **Why PKU needs $d=256$ and large batches.** In calibration a PKU MSLM at $d=128$, or in 512-character
#   batches at lr $3\cdot10^{-3}$, learns the language model faster per character but its segmentation stalls
#   at dev boundary MCC 0.55-0.58 whatever the training length (it keeps 的 and punctuation attached to the
#   word before); at $d=256$ in 2,048-character batches at lr $10^{-3}$ it passes 0.60 within 0.5 M characters,
#   as the authors' own training logs do. Neither change alone (nor 32 word2vec epochs, fp32 output, the
#   authors' per-sentence loss or their encoder-input projection) does it.
# - **Where F1 is measured.** The paper (after Kawakami et al.) scores segmentation over the whole corpus,
#   training text included; the `cpu` profile scores the test split (an unsupervised model never sees its
#   segmentation either way; scoring the whole corpus would cost as much as a third of the training).
# - **bpc.** Ours is total bits over total test characters. The authors' code averages per-sentence bpc;
#   both are shown (`bpc_sentence_mean`) when they differ.
# - **Data.** PTB is the SNLM release. PKU's dev and test are SNLM's; its training file could not be
#   obtained and is rebuilt from People's Daily 1998-01 (a stand-in) minus every dev/test sentence. PKU is
#   read in SNLM's `_cws` form, as the authors trained and scored it: every number, run of Latin letters and
#   run of punctuation is one symbol (`<num>`, `<eng>`, `<punc>`); our normalisation of the stand-in
#   reproduces the authors' `va_cws`/`te_cws` from `va`/`te` token for token.

# %% tags=["parameters"]
profile = "cpu"
seed = 0

# %%
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from hanzilm.notebook import show, start
from hanzilm.results import write_results
from hanzilm.papers.mslm import experiment, tables
from hanzilm.papers.mslm.experiment import configure
from hanzilm.papers.mslm.model import ENCODERS

prof, run = start(profile, seed)
ch = configure(prof)
tables.config_summary(ch)

# %% [markdown]
# ## Training and evaluation
#
# Every run trains once through the shared trainer (Adam, linear warmup then linear decay, clipping at 1.0,
# word2vec-initialised character embeddings) and is evaluated once; both are stored under
# `results/<profile>/checkpoints/`, so re-running this notebook only reads them.

# %%
runs = experiment.evaluate_all(ch)
runs[["dataset", "selection", "model", "seed", "lr", "selected_step", "word_f1", "boundary_mcc", "bpc"]]

# %% [markdown]
# ## Table 2, ours beside the paper's

# %%
table = write_results(tables.table2(runs), chapter="mslm", name="table2", run=run, datasets=tables.DATASETS,
                      by="dataset", paper=tables.paper_table2(),
                      notes=f"profile {prof.name}: {ch.f1_split} word F1, test bpc; seeds per cell as shown")
tables.side_by_side(table)

# %% [markdown]
# The full long table (every metric with its difference from the paper and the paper's source) is
# `results/<profile>/mslm/table2.csv`; its stand-in labels:

# %%
show(table[table.metric == "f1_median"][["dataset", "selection", "model", "ours", "paper", "diff", "data",
                                         "paper_source"]])

# %% [markdown]
# ## The paper's orderings on our numbers

# %%
claims = tables.orderings(runs)
claims

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 3.2), sharey=True)
for ax, (dataset, part) in zip(axes, runs.groupby("dataset")):
    for i, (selection, sub) in enumerate(part.groupby("selection")):
        for j, model in enumerate(ENCODERS):
            f1 = sub[sub.model == model.upper()].word_f1
            ax.scatter([j + 0.15 * (2 * i - 1)] * len(f1), f1, color=f"C{i}", s=18,
                       label=selection if j == 0 else None)
    ax.set_xticks(range(3), [m.upper() for m in ENCODERS])
    ax.set_title(dataset)
axes[0].set_ylabel("word F1 (%)")
axes[1].legend(frameon=False, fontsize=8)
plt.tight_layout()

# %%
display(Markdown(f"**On our runs:** {tables.verdict(claims)}."))

# %% [markdown]
# ## Reading the result
#
# **PTB reproduces at this scale**: word F1 within a few points of the paper for all three models, on one
# seed and 3 % of the paper's training characters, and the RSLM keeps the lowest bpc (by a much smaller
# margin than the paper's 0.3: our transformers are trained for far less time, and the paper attributes
# their English bpc gap to position handling that matters more as the models fit the data).
#
# **PKU, where the scale-down needed care.** Three things separate our first PKU runs (F1 about half the
# paper's, MSLM below RSLM) from these:
#
# 1. *The data form.* The authors train and score PKU in SNLM's `_cws` form (their word2vec vocabulary for
#    PKU has `<punc>`, `<num>` and `<eng>` symbols and no punctuation); we now do the same.
# 2. *The regime.* A PKU MSLM at $d=128$ in 512-character batches at lr $3\cdot10^{-3}$ learns the language
#    model faster per character than the authors' runs but its segmentation stalls at dev boundary MCC
#    0.55-0.58, keeping 的 and punctuation attached to the word before; a 4.35 M-character run of it fell from
#    0.55 to 0.53 while its bpc kept improving, so length was not the knob. At $d=256$ in 2,048-character
#    batches at lr $10^{-3}$ (the authors' configuration, with a quarter of their batch) dev MCC passes 0.60
#    after about 0.3 M characters, as in the authors' released logs (for example
#    `Output/ExperimentsA/pku/pku_mslm_lr1e-3_s13.csv` in their repository: 0.51 at 2 M characters, 0.71 at
#    4 M). Each ingredient alone ($d=256$; large batches and low rate; 32 word2vec epochs; fp32 output; the
#    authors' per-sentence loss, encoder-input projection or decoder dropout placement) left dev MCC between
#    0.35 and 0.58 in calibration runs of 0.25-1 M characters.
# 3. *What stays short.* 0.8 M characters is 1.2 % of the paper's training: our PKU bits per character are
#    about 8 against the paper's 5.6, so these are segmenters from language models early in training. The
#    two selections (best dev bpc, best dev MCC) often pick the same, last checkpoint.
#
# The PKU RSLM is where this scale shows most: at the same test bpc as our MSLMs it segments far worse, an
# exaggerated form of the paper's finding. The authors' RSLM needs far longer too: their released log
# (`Output/ExperimentsA/pku/pku_rslm_lr1e-3_s13.csv`) has dev boundary MCC 0.51 after 4 M characters and 0.56
# after 6 M, where their MSLM had 0.71 and 0.74. Longer PKU training (`pku.train.steps` under `mslm` in
# `lib/hanzilm/profiles.py`) is the knob for the RSLM cells; it costs roughly a minute per 50 steps per run.

# %%
pku = runs[runs.dataset == "PKU"].groupby(["selection", "model"]).word_f1.median()
ptb = runs[runs.dataset == "PTB"].groupby(["selection", "model"]).word_f1.median()
display(Markdown(
    f"**PKU on our runs:** lightly supervised MSLM median word F1 {pku['lightly supervised', 'MSLM']:.1f} "
    f"(paper 72.6), RSLM {pku['lightly supervised', 'RSLM']:.1f} (paper 60.2), DMSLM "
    f"{pku['lightly supervised', 'DMSLM']:.1f} (paper 72.7); unsupervised MSLM {pku['unsupervised', 'MSLM']:.1f} "
    f"(paper 64.1), RSLM {pku['unsupervised', 'RSLM']:.1f} (paper 58.7). **PTB:** unsupervised RSLM "
    f"{ptb['unsupervised', 'RSLM']:.1f} (paper 76.2)."))
