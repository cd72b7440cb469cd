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
# # The data, counted
#
# The data-statistics tables of the papers, computed from the files we actually train and test on, beside
# the official figures of the same data: the SIGHAN 2005 bakeoff sets of Pei et al. (2014, Table 1), the SNLM
# splits of Downey et al. (2021, Table 1), and the composition of our pretraining corpus for the Backpack
# chapter. The papers' own Table 1 cells did not survive the text conversion, so the "paper" column has
# the official release figures (each row names its source).

# %% tags=["parameters"]
profile = "cpu"
seed = 0

# %%
import matplotlib.pyplot as plt

from hanzilm.data import stats
from hanzilm.data.corpus import LMSplitConfig, lm_dataset_names, load_lm_corpus, split_documents
from hanzilm.data.readers import read_segmented
from hanzilm.data.resolve import resolve
from hanzilm.data.snlm import load_snlm
from hanzilm.notebook import show, start
from hanzilm.results import paper_values, write_results

prof, run = start(profile, seed)

# %% [markdown]
# ## SIGHAN 2005 PKU and MSR (Pei et al. 2014, Table 1)
#
# Sentences are non-empty lines; words are whitespace-separated tokens; characters exclude whitespace.
# The official training files could not be obtained: both training rows are **stand-ins** and differ from
# the official figures by design (the `data` column says which).

# %%
sighan = {
    ("PKU", "train"): read_segmented(resolve("pku_training_pd199801")),
    ("PKU", "test"): read_segmented(resolve("sighan2005", "pku_test_gold.utf8")),
    ("MSR", "train"): read_segmented(resolve("msr_training_sample")),
    ("MSR", "test"): read_segmented(resolve("sighan2005", "msr_test_gold.utf8")),
}
train_data = {"PKU": ["pku_training_pd199801"], "MSR": ["msr_training_sample"]}
table1 = write_results(
    stats.stats_table(sighan, ["sentences", "words", "characters", "word_types"]),
    chapter="data", name="mmtnn_table1", run=run,
    datasets={**{(d, "train"): v for d, v in train_data.items()}, ("PKU", "test"): ["sighan2005"],
              ("MSR", "test"): ["sighan2005"]}, by=("dataset", "split"),
    paper=paper_values("data_statistics.csv", keys={"dataset": "dataset", "split": "split"},
                       metrics={m: m for m in ("sentences", "words", "characters")},
                       where={"table": "mmtnn_table1"}),
    notes="training rows are stand-ins; test rows are the official gold files",
)
show(table1)

# %% [markdown]
# Pei et al. select models on the last 10 % of the training sentences; the sizes of that split, on our
# training files:

# %%
show(write_results(stats.stats_table(stats.train_dev_split(sighan), ["sentences", "words", "characters"]),
                   chapter="data", name="mmtnn_dev_split", run=run, datasets=train_data, by="dataset",
                   notes="stand-in training files"))

# %% [markdown]
# ## SNLM splits of PKU and PTB (Downey et al. 2021, Table 1)
#
# PTB is the authors' data throughout. For PKU, `dev` (`va`) and `test` (`te`) are the authors' files, but
# their `train` (`tr`) could not be obtained: ours is the People's Daily stand-in minus every sentence that
# occurs in `va` or `te`. PKU is counted in the form the models read, SNLM's `_cws` files: a number, a run
# of Latin letters or a run of punctuation is one character (`<num>`, `<eng>`, `<punc>`), so our PKU character
# counts are below the paper column's, which counts the characters of `va.txt`/`te.txt`.

# %%
snlm = {(corpus.upper(), split): sents for corpus in ("pku", "ptb") for split, sents in load_snlm(corpus).items()}
for corpus in ("PKU", "PTB"):
    snlm[(corpus, "all")] = [s for split in ("train", "dev", "test") for s in snlm[(corpus, split)]]
# PKU's tr is rebuilt from the People's Daily stand-in; its va/te and all of PTB are the authors' files
rebuilt = ["snlm_pku", "pku_training_pd199801"]
snlm_data = {("PKU", "train"): rebuilt, ("PKU", "all"): rebuilt, ("PKU", "dev"): ["snlm_pku"], ("PKU", "test"): ["snlm_pku"],
             **{("PTB", s): ["snlm_ptb"] for s in ("train", "dev", "test", "all")}}
table1_mslm = write_results(
    stats.stats_table(snlm, ["sentences", "words", "characters", "character_types", "characters_per_word"]),
    chapter="data", name="mslm_table1", run=run, datasets=snlm_data, by=("dataset", "split"),
    paper=paper_values("data_statistics.csv", keys={"dataset": "dataset", "split": "split"},
                       metrics={m: m for m in ("sentences", "words", "characters")},
                       where={"table": "mslm_table1"}),
    notes="PKU train is rebuilt from the People's Daily 1998-01 stand-in minus every va/te sentence; PKU in the "
          "SNLM _cws form (<num>/<eng>/<punc> count as one character each)",
)
show(table1_mslm)

# %% [markdown]
# ## The pretraining corpus (Backpack chapter)
#
# Sun & Hewitt pretrain on wiki2019zh, news2016zh and webtext2019zh, which could not be obtained. We use a
# 29.5 M-character mix of modern Chinese (news transcripts, laws, reviews and posts, Wikipedia, exam
# passages; `../shared/data/SOURCES-lm.md`). The split is by document and deterministic (a hash of each
# document), with the paper's fractions: 1 % test, 0.5 % dev.

# %%
split_cfg = LMSplitConfig()
splits = split_documents(load_lm_corpus(), test_fraction=split_cfg.test_fraction,
                         dev_fraction=split_cfg.dev_fraction)
lm_table = write_results(
    stats.lm_table(splits), chapter="data", name="lm_corpus", run=run, datasets=lm_dataset_names(),
    notes=f"document-level split, test {split_cfg.test_fraction:.1%}, dev {split_cfg.dev_fraction:.1%}; "
          "vocabulary: every distinct training character",
)
lm_table[lm_table.genre == "all"].pivot(index="metric", columns="split", values="ours")

# %%
characters = lm_table[(lm_table.metric == "characters") & (lm_table.genre != "all")]
by_genre = characters.pivot(index="genre", columns="split", values="ours")
ax = (by_genre[["train", "dev", "test"]] / 1e6).plot.barh(stacked=True, figsize=(7, 3.2))
ax.set_xlabel("million characters")
ax.set_ylabel("")
ax.set_title("Pretraining corpus by genre and split")
plt.tight_layout()
plt.show()
