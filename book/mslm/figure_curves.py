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
# # Learning curves: dev bpc and dev segmentation quality over training
#
# The two model selections of {doc}`table2` are two points on these curves: the step of the lowest dev
# bits per character (unsupervised) and the step of the highest dev boundary MCC (light supervision). Where
# the curves peak at different steps, the two selections differ; the paper notes that a slightly
# under-trained model often segments better. One curve per run (every seed).

# %% tags=["parameters"]
profile = "cpu"
seed = 0

# %%
import matplotlib.pyplot as plt

from hanzilm.notebook import start
from hanzilm.results import write_results
from hanzilm.papers.mslm import experiment, tables
from hanzilm.papers.mslm.experiment import configure

prof, run = start(profile, seed)
ch = configure(prof)
experiment.train_all(ch)
curves = tables.learning_curves(ch)
_ = write_results(curves, chapter="mslm", name="figure_curves", run=run, datasets=tables.DATASETS, by="dataset",
                  notes="dev metrics per evaluation")

# %%
labels = {"dev_bpc": "dev bits per character", "dev_f1": "dev word F1 (%)", "dev_mcc": "dev boundary MCC (%)"}
fig, axes = plt.subplots(2, 3, figsize=(11, 6), sharex="row")
for r, (dataset, part) in enumerate(curves.groupby("dataset")):
    for c, metric in enumerate(labels):
        ax = axes[r, c]
        for i, model in enumerate(["RSLM", "MSLM", "DMSLM"]):
            for k, (_, sub) in enumerate(part[(part.model == model) & (part.metric == metric)].groupby("seed")):
                ax.plot(sub.step, sub.ours, color=f"C{i}", alpha=0.8, label=model if k == 0 else None)
        ax.set_title(f"{dataset}: {labels[metric]}", fontsize=9)
        ax.set_xlabel("step")
axes[0, 0].legend(frameon=False, fontsize=8)
plt.tight_layout()

# %%
tables.last_evaluation(curves)
