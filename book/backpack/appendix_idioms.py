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
# # Appendix B: which senses predict the last character of an idiom
#
# Sun & Hewitt feed the first three characters of 画蛇添(足) ("drawing legs on a snake") and ask which senses
# make the model say 足. They find that no single sense leads to 足 (only the weighted sum does), and that none
# of the 16 senses projects disproportionately strongly or weakly onto 足: "the top components of sense vectors
# may not effectively capture how they will compose to make predictions".
#
# Because the Backpack's logits are linear in the senses (Eq. 4), the logit of the target splits exactly into one
# part per sense, $\sum_j \alpha_{\ell ij} (E^\top C(x_j)_\ell)_{足}$. For 画蛇添足 and other idioms (the first ones
# of the seeded draw of {doc}`table3_composition`) we report the full model's probability and rank of the last
# character, each sense's part of its logit, the rank of the target when only one sense's part is used, and the
# raw projections of the three characters' senses onto the target with their ranks. Models: the `cpu` Backpack
# of {doc}`table1` (trained if missing). The paper gives no numbers here, only the reading above.

# %% tags=["parameters"]
profile = "cpu"
seed = 0

# %%
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from hanzilm.data.corpus import lm_dataset_names
from hanzilm.notebook import start
from hanzilm.papers.backpack import experiment, idioms
from hanzilm.papers.backpack import prompts as paper
from hanzilm.papers.backpack.composition import CorpusText
from hanzilm.results import write_results

prof, run = start(profile, seed)

# %%
# the chapter's training step: the models of its run list (`experiment.runs`: the GPT-2/Backpack pair and the
# alpha-scaling ablation's second Backpack) that the store lacks train now, each resuming; stored ones load
ch = experiment.train_chapter(prof)

# %%
pair = experiment.load_pair(ch)
backpack, vocab = pair.backpack, pair.vocab
k = backpack.config.n_senses
text = CorpusText.of_lm_corpus()

# %%
results = idioms.analyse(backpack, vocab, idioms.chosen_idioms(vocab, text, ch.senses))

# %% [markdown]
# ## 画蛇添(足)

# %%
summary, table = results[paper.APPENDIX_IDIOM]
print(f"p(足 | 画蛇添) = {summary['p_target']:.4f}, rank {summary['rank']}, the model's top prediction: {summary['prediction']}")
table.drop(columns="idiom").set_index("sense")

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
axes[0].bar(table.sense, table.contribution)
axes[0].set_xlabel("sense")
axes[0].set_title("part of logit(zu2) per sense")
axes[1].bar(table.sense, table.rank_alone + 1)
axes[1].set_yscale("log")
axes[1].set_xlabel("sense")
axes[1].set_title("rank of zu2 from that sense alone (1 = top)")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## All idioms

# %%
write_results(idioms.appendix_table(results), chapter="backpack", name="appendix_idioms", run=run,
              datasets=[*lm_dataset_names(), "idioms"],
              notes="prediction of an idiom's last character from its first three; rank 0 = top; "
                    "largest_sense_share = max |sense part of the target logit| / sum of |parts|")
overview = idioms.overview(results)
overview

# %%
display(Markdown(idioms.appendix_reading(overview, k)))

# %% [markdown]
# ## Reading the result
#
# The paper's reading is that single senses do not explain an idiom's completion. The summary above says how
# often, on our model, one sense alone already puts the target first, and how concentrated the target's logit is
# on one sense. A small model that rarely completes idioms at all (see the full model's ranks) says little about
# how a well-trained one composes them.

# %% [markdown]
# ## The paper's claims on this table
#
# Each claim the paper makes about Appendix B, judged on this run by the claims registry (the verdicts and their
# rules: {doc}`../results_at_a_glance`):
#
# ```{glue} claims_backpack_appB
# :doc: /results_at_a_glance.ipynb
# ```
