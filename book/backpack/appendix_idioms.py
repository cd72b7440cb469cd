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
import pandas as pd
from IPython.display import Markdown, display

from hanzilm.data.corpus import lm_dataset_names, load_lm_corpus
from hanzilm.data.lexicon import idioms
from hanzilm.notebook import start
from hanzilm.results import write_results
from hanzilm.papers.backpack import prompts as paper
from hanzilm.papers.backpack.common import configure, in_vocab, load_pair, stand_in
from hanzilm.papers.backpack.composition import CorpusText, draw_words
from hanzilm.papers.backpack.idioms import idiom_senses

prof, run = start(profile, seed)
cfg = configure(prof)
corpus, models = load_pair(prof)
backpack, vocab = models["backpack"], corpus.vocab
k = backpack.config.n_senses
text = CorpusText(d.text for d in load_lm_corpus())

# %%
drawn = draw_words(idioms(), cfg.idioms, lambda w: in_vocab(vocab, w) and text.count(w) >= cfg.min_word_count, cfg.seed)
chosen = [paper.APPENDIX_IDIOM] + [w for w in drawn if w != paper.APPENDIX_IDIOM]
results = {w: idiom_senses(backpack, vocab, w) for w in chosen}

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
rows, long = [], []
for w, (s, t) in results.items():
    share = t.contribution.abs().max() / t.contribution.abs().sum()
    proj_ranks = t[[c for c in t.columns if c.startswith("proj_rank_")]]
    r = {"idiom": w, "p_target": s["p_target"], "rank": s["rank"], "best_single_sense_rank": int(t.rank_alone.min()),
         "senses_with_target_in_top10": int((t.rank_alone < 10).sum()), "largest_sense_share": share,
         "best_projection_rank": int(proj_ranks.min().min())}
    rows.append(r)
    long += [{"idiom": w, "metric": m, "ours": v} for m, v in r.items() if m != "idiom"]
    long += [{"idiom": w, "metric": f"sense{int(x.sense)}_contribution", "ours": x.contribution} for x in t.itertuples()]
overview = pd.DataFrame(rows).set_index("idiom")
write_results(stand_in(pd.DataFrame(long)), chapter="backpack", name="appendix_idioms", run=run,
              datasets=[*lm_dataset_names(), "idioms"],
              notes="prediction of an idiom's last character from its first three; rank 0 = top; "
                    "largest_sense_share = max |sense part of the target logit| / sum of |parts|")
overview

# %%
o = overview
display(Markdown(
    f"- 画蛇添足: p(足) = {o.loc[paper.APPENDIX_IDIOM, 'p_target']:.3f} (rank {int(o.loc[paper.APPENDIX_IDIOM, 'rank'])}); "
    f"the best single sense ranks 足 at {int(o.loc[paper.APPENDIX_IDIOM, 'best_single_sense_rank'])}, "
    f"{int(o.loc[paper.APPENDIX_IDIOM, 'senses_with_target_in_top10'])} of {k} senses alone have it in their top 10.\n"
    f"- Over {len(o)} idioms: the full model ranks the last character first for {int((o['rank'] == 0).sum())}; "
    f"some single sense ranks it first for {int((o.best_single_sense_rank == 0).sum())}; median largest sense share of "
    f"the target logit {o.largest_sense_share.median():.2f} (1/{k} = {1 / k:.2f} if all senses weighed the same)."))

# %% [markdown]
# ## Reading the result
#
# The paper's reading is that single senses do not explain an idiom's completion. The summary above says how
# often, on our model, one sense alone already puts the target first, and how concentrated the target's logit is
# on one sense. A small model that rarely completes idioms at all (see the full model's ranks) says little about
# how a well-trained one composes them.
