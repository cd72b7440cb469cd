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

# %%

# %% [markdown]
# # Table 5: gender bias of profession words, and removing it through one sense
#
# Sun & Hewitt fill profession words into the prompts of Table 10 ("那个WORD说，", ...) and measure the
# **bias ratio** $\mathbb{E}_{\text{prompts}}[\max(p(他)/p(她),\, p(她)/p(他))]$ of the next character (1 = unbiased).
# They pick a sense by comparing the pronouns' senses, $|E^\top(C(他)_\ell - C(她)_\ell)|$, and halve or remove that
# sense of one character of the word (兵 in 士兵, 警 in 警察, ...). The GPT-2 baseline projects the input
# embeddings of the same characters onto the nullspace of the gender direction $E x_{他} - E x_{她}$ (after
# Bolukbasi et al. 2016).
#
# What we do, and where the paper is ambiguous:
#
# - **The sense.** The criterion is read as the sense $\ell$ maximising the mean over the vocabulary of
#   $|E^\top(C(他)_\ell - C(她)_\ell)|$; it is computed once and used for every word, whatever the result. (The
#   paper names sense 3 in the text and removes sense 15 in Table 5; indices of another training run mean nothing
#   for ours.) As a diagnostic only, we also print the per-sense gender projection
#   $(E x_{他} - E x_{她})^\top C(x)_\ell$ of the edited characters.
# - **The character.** Table 5's characters: 兵, 警, 演, and "会 (teach)" for 教师, which is not a character of
#   教师; we take 教. For a wider list of profession words (the most frequent two-character names of people in
#   funNLP's profession list, in our corpus), and as a second row for the paper's four, the sense is edited in **every**
#   character of the word (the paper's "second approach").
# - **Where.** The edit applies at the word's positions in the prompt; the prediction is the character right
#   after the prompt. The ratio is $\exp|\text{logit}(他) - \text{logit}(她)|$ (the softmax normaliser cancels).

# %% tags=["parameters"]
profile = "cpu"
seed = 0

# %%
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from hanzilm.data.corpus import lm_dataset_names
from hanzilm.notebook import show, start
from hanzilm.papers.backpack import bias, experiment
from hanzilm.papers.backpack.composition import CorpusText
from hanzilm.results import write_results

prof, run = start(profile, seed)

# %%
# the chapter's training step: the models of its run list (`experiment.runs`: the GPT-2/Backpack pair and the
# alpha-scaling ablation's second Backpack) that the store lacks train now, each resuming; stored ones load
ch = experiment.train_chapter(prof)

# %%
pair = experiment.load_pair(ch)
backpack, gpt, vocab = pair.backpack, pair.gpt, pair.vocab
k = backpack.config.n_senses

# %% [markdown]
# ## The sense

# %%
sense, diagnostic = bias.chosen_sense(backpack, vocab)
print(f"chosen sense: {sense}")
diagnostic

# %% [markdown]
# ## The paper's four words and a wider list

# %%
text = CorpusText.of_lm_corpus()
cases = bias.edits(vocab, text, ch.senses)
per_prompt = bias.bias_per_prompt(backpack, gpt, vocab, cases, sense)
wide = bias.bias_means(per_prompt, text)
table5 = write_results(bias.table5(wide, sense), chapter="backpack",
                       name="table5_bias", run=run,
                       datasets=[*lm_dataset_names(), "professions"],
                       paper=bias.paper_table5(),
                       notes=bias.table5_notes(sense))
paper_rows = table5[table5.edit == bias.PAPER_CHARACTER]
dropped = ["characters", "edit", "sense", "corpus_count"]
show(paper_rows.drop(columns=dropped))

# %% [markdown]
# How far each Table 5 claim's quantity would move on another draw of prompts: its bootstrap standard deviation
# over the prompts of Table 10, the same draw for every word, metric and edit (`hanzilm.spread`), which the claims
# registry judges the claim against.

# %%
show(write_results(bias.table5_spread(per_prompt), chapter="backpack", name="table5_spread", run=run,
                   datasets=[*lm_dataset_names(), "professions"],
                   notes="bootstrap over the prompts of Table 10, one draw for every word, metric and edit "
                         "(hanzilm.spread)"))

# %%
wide.set_index(["word", "edit"])[bias.METRICS].round(2)

# %%
fig, ax = plt.subplots(figsize=(8, 3.5))
w = wide[wide.edit == bias.ALL_CHARACTERS].set_index("word")
x = np.arange(len(w))
for i, m in enumerate(["gpt2", "gpt2_proj", "backpack", "remove_sense"]):
    ax.bar(x + i * 0.2, w[m], width=0.2, label=m)
ax.set_yscale("log")
# one character under the other, upright
ax.set_xticks(x + 0.3, ["\n".join(wd) for wd in w.index])
ax.set_ylabel("bias ratio (log)")
ax.legend(ncol=4, fontsize=8)
plt.tight_layout()
plt.show()

# %%
display(Markdown(bias.table5_reading(wide, sense)))

# %% [markdown]
# ## What the corpus teaches
#
# A language model can only be as biased as the text it learns from lets it be. For each word, the first
# 他 or 她 in the 30 characters after each of its occurrences in our pretraining corpus (the stand-in mix, at
# most 10,000 occurrences), counted; `corpus_ratio` is the larger count over the smaller (half a count added
# to each): roughly the ratio a model that learned these co-occurrences exactly would show. The first row is
# the two pronouns' own counts. Where a word is seen with a pronoun a few dozen times, its ratio rests on a
# handful of contexts, and a model trained on 6 M tokens has seen each of them at most once or twice.

# %%
counts = bias.corpus_gender_counts(text, wide.word)
_ = write_results(bias.corpus_table(counts), chapter="backpack",
                  name="table5_corpus", run=run,
                  datasets=[*lm_dataset_names(), "professions"],
                  notes="first 他/她 within 30 characters after each "
                        "occurrence; corpus_ratio with half a count "
                        "added to each")
ratios = wide[wide.edit == bias.ALL_CHARACTERS].set_index("word").backpack
show(counts.set_index("word").assign(backpack_ratio=ratios))
display(Markdown(bias.corpus_reading(counts, wide)))

# %% [markdown]
# ## Reading the result
#
# The paper's claim: removing the chosen sense from one character lowers the bias ratio of the most biased
# words a lot (士兵 58.1 -> 21.3, 警察 23.6 -> 9.5) and of the least biased a little, more than the nullspace
# projection does for GPT-2. The list above gives our numbers; the registry's verdicts close the page. Our bias ratios start from a much smaller model,
# and the chosen sense is fixed by the pronouns alone, so whether it carries gender for 兵 or 警 is a test, not a
# given: the diagnostic table shows how much each sense of the edited characters pushes 他 over 她.

# %% [markdown]
# ## The paper's claims on this table
#
# Each claim the paper makes about Table 5, judged on this run by the claims registry (the verdicts and their
# rules: {doc}`../results_at_a_glance`):
#
# ```{glue} claims_backpack_t5
# :doc: /results_at_a_glance.ipynb
# ```
