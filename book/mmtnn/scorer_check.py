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
# # The scorer, checked against the official script
#
# Every F1 of this chapter and of the segmental-LM chapter comes from `hanzilm score` (`hanzilm.eval.sighan`).
# By default it matches the bakeoff's official scorer, the perl script `scripts/score` of icwb2-data, to every
# digit the script prints. The script reads gold and test line by line; for each line it writes the gold and the
# test words one per line to two files, runs `diff -y` on them (GNU diff's side-by-side output) and counts
# what diff marks: ` | ` a substitution, ` > ` an insertion, ` < ` a deletion; the left-hand word of each line,
# as diff prints it, is looked up in the training word list for the OOV figures. Ours runs the same program the
# same way, one call per line, and reads its output with the script's own patterns. It also reads the files as
# the script does: words are split on ASCII whitespace and on the ideographic space U+3000, not on a no-break
# space; a CR inside a line is deleted.
#
# GNU diff is not a minimal diff. It sets aside words that occur in only one of the two lists and, between them,
# words that repeat often, so on weak output (many one-character words) it finds fewer common words than a
# longest common subsequence does. `hanzilm score --mode exact` (`score(..., mode="exact")`) keeps that exact
# alignment: the most correct words any alignment finds.
#
# Which scoring each number of the book uses:
#
# | chapter | numbers | scoring |
# |---|---|---|
# | MMTNN | Tables 3, 5 and 6 and the seed spread: test P, R, F, OOV recall (`experiment.test_scores`) | official |
# | MMTNN | the dev F1 that picks each neural model's epoch, and the CRF's dev F1 (during training) | exact |
# | Segmental LMs | Table 2's word F1 and the word F1 of the Table 3 page (`evaluate_run`, `context_ablation`) | official |
# | Segmental LMs | the dev word F1 of the learning curves (recorded during training) | exact |
# | this page | the script's totals beside ours, and jieba beside the published check | both, side by side |
#
# The training-time numbers keep the exact alignment because the stored models were selected with it: the
# epoch MMTNN keeps is part of the trained model.
#
# Two checks follow. The script itself, run here (with the system's perl and GNU diff), beside ours on three
# outputs of very different quality; and jieba on the whole official test inputs, beside the official script's
# F that `../shared/anchors.md` records.

# %% tags=["parameters"]
profile = "cpu"
seed = 0

# %%
import matplotlib.pyplot as plt

from hanzilm.notebook import glue_values, show, start
from hanzilm.papers.mmtnn import tables
from hanzilm.papers.mmtnn.experiment import DATASETS, train_chapter
from hanzilm.results import write_results

prof, run = start(profile, seed)

# %%
# the chapter's training step: the segmenters its pages report that the store lacks train now (the
# learning-rate grid, then each model at the rate its PKU dev F1 chose); stored ones load
ch = train_chapter(prof)
lines = "all" if ch.test_lines is None else ch.test_lines
print(f"PKU test lines scored: {lines}")

# %% [markdown]
# ## 1. The official script beside ours
#
# Table 3's MMTNN, jieba 0.42.1 and one character per word, on the PKU test lines the chapter scores, against the
# official gold and training word list (the MMTNN was trained on the People's Daily stand-in, see Table 3). Each
# row is a total the script prints (its `===` lines); the last column says whether our default mode prints the
# same value.

# %%
used = {"MMTNN (Table 3)": ["sighan2005", DATASETS["pku"]["train"]],
        "jieba 0.42.1": ["sighan2005"],
        "one character per word": ["sighan2005"]}
side = write_results(
    tables.scorer_side_by_side(ch), chapter="mmtnn",
    name="scorer_side_by_side", run=run, by="system", datasets=used,
    notes="the official script run with perl and GNU diff, beside hanzilm "
          "score in both modes")
parity = tables.parity_view(side)
parity

# %% [markdown]
# ## 2. jieba on the whole official test inputs

# %%
jieba = write_results(tables.scorer_jieba(), chapter="mmtnn",
                      name="scorer_jieba", run=run, datasets=["sighan2005"],
                      notes="jieba on the official test inputs; "
                            "official_script_f1 from ../shared/anchors.md")
show(jieba)
glue_values(tables.parity_numbers(side, jieba))

# %%
columns = [tables.SCRIPT, *tables.ALIGNMENTS.values()]
f_measure = parity.xs("F MEASURE", level="metric")[columns]
ax = f_measure.plot.barh(figsize=(9, 3))
ax.set_xlabel("F (the script's F MEASURE)")
ax.set_ylabel("")
ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1, 1))
plt.tight_layout()
plt.show()

# %% [markdown]
# **What the run shows.** Our default mode prints every one of the script's {glue:text}`parity_totals` totals,
# to the last digit, for {glue:text}`parity_identical` of the {glue:text}`parity_systems` outputs (the test
# suite checks the same on seven PKU outputs, from the gold itself to one word per line, and every per-line block
# the script prints). The two alignments part where words repeat: one character per word scores F
# {glue:text}`onechar_f_script:.3f` with the script and {glue:text}`onechar_f_exact:.3f` with the exact
# alignment; Table 3's MMTNN scores {glue:text}`mmtnn_f_script:.3f` and {glue:text}`mmtnn_f_exact:.3f`.
#
# jieba scores F {glue:text}`jieba_pku_official:.2f` on PKU and {glue:text}`jieba_msr_official:.2f` on MSR in the
# official mode, where `../shared/anchors.md` has the script's 81.8 and 81.3 (one decimal). The exact alignment
# gives {glue:text}`jieba_pku_exact:.2f` and {glue:text}`jieba_msr_exact:.2f`, the character-offset alignment (a
# word is right when a gold word covers the same characters) {glue:text}`jieba_pku_offsets:.2f` and
# {glue:text}`jieba_msr_offsets:.2f`: the official MSR test input differs from its gold on 16 lines (one lacks
# the gold's final quotation mark, for example), where offsets lose their footing and a diff does not. The
# script scores such lines silently; ours stops on them unless told to score them anyway (`--allow-mismatch`),
# and then lists them.
#
# From the shell: `hanzilm score pku_training_words.utf8 pku_test_gold.utf8 OUTPUT` prints the script's summary
# (`--per-line` also its per-line blocks, diff's output included; `--mode exact` the exact alignment). diff runs
# with `LC_ALL=C.UTF-8`: it measures its columns in the locale's character widths, and a word wider than its
# column is printed, and so looked up, cut.
