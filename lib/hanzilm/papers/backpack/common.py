"""What every sense analysis needs: its sizes per profile, the trained Backpack/GPT-2 pair of part 1 and the
encoding of a prompt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from ...data.vocab import CharVocab
from ...errors import HanzilmError
from . import experiment as lmx
from .data import DOC, EncodedCorpus, encoded_corpus
from ...profiles import Profile, get_profile
from ...store import is_complete, load_model
from ...train import best_name


@dataclass(frozen=True)
class SensesConfig:
    """Sizes of the sense analyses. The paper states only its word-set sizes (120 compounds, 102 loanwords,
    104 idioms); everything else is our choice, fixed before looking at results."""

    profile_key: ClassVar[str] = "backpack_senses"

    top: int = 10                    # characters listed per sense (Tables 2 and 7 list five to six)
    frequent_chars: int = 500        # the wider character set of the composition heatmap
    words_per_type: int = 100        # compounds, loanwords, idioms drawn for Table 3 ("about 100 each")
    min_word_count: int = 3          # a drawn word occurs at least this often in the corpus (for contexts)
    corpus_contexts: int = 9         # corpus windows per word, besides the 7 prompts of Table 9
    context_before: int = 30         # characters of a corpus window before and after the word
    context_after: int = 15
    professions: int = 40            # the wider profession list of Table 5: the most frequent two-character names
    generate_chars: int = 20         # greedy continuation length (Table 11)
    idioms: int = 30                 # idioms of the Appendix B analysis besides 画蛇添足
    seed: int = 0                    # every random selection


def configure(profile: str | Profile) -> SensesConfig:
    return get_profile(profile).configure(SensesConfig())


def load_pair(profile: str | Profile) -> tuple[EncodedCorpus, dict[str, torch.nn.Module]]:
    """The corpus and the trained {"gpt", "backpack"} pair of `profile` (part 1, book/backpack/table1): loaded
    from the model store; trained first (the same run as table1's) if the store has none.

    Afterwards torch runs on one thread: the sense analyses are thousands of tiny forwards, for which one
    thread is fastest and two contend badly on a busy 2-core machine (100x slower, measured)."""
    cfg, split = lmx.configure(profile)
    corpus = encoded_corpus(split, cfg.min_char_freq)
    models = {name: lmx.train_model(c, corpus, profile) for name, c in cfg.pair().items()}
    torch.set_num_threads(1)
    return corpus, models


def load_trained(profile: str | Profile, model: str = "backpack") -> tuple[torch.nn.Module, CharVocab]:
    """A trained model of `profile` without ever training: an error says which notebook trains it."""
    prof = get_profile(profile)
    cfg, split = lmx.configure(prof)
    corpus = encoded_corpus(split, cfg.min_char_freq)
    c = cfg.pair()[model]
    run_dir = lmx.run_dir(c, corpus, prof)
    if not is_complete(run_dir):
        raise HanzilmError(f"no trained {model} for profile {prof.name!r} ({run_dir} is not complete); train it with "
                           f"`hanzilm paper run --profile {prof.name} --only backpack/table1`")
    net = load_model(lmx.build(c, len(corpus.vocab)), run_dir / f"{best_name()}.safetensors").eval()
    return net, corpus.vocab


def encode(vocab: CharVocab, text: str) -> list[int]:
    """`<doc>` + the text's ids: a prompt starts a document, as every training document does."""
    return [vocab.stoi[DOC]] + vocab.encode(text)


def in_vocab(vocab: CharVocab, word: str) -> bool:
    return all(c in vocab.stoi and c not in vocab.specials for c in word)


def banned_ids(vocab: CharVocab) -> list[int]:
    return [vocab.stoi[s] for s in vocab.specials]


MODEL_NOTE = ("stand-in: models trained on our 29.5 M-character mix (cpu: 1,500 steps), not the paper's "
              "wiki2019zh / news2016zh / webtext2019zh micro models")


def stand_in(table, note: str = MODEL_NOTE):
    """`table` with a `data` column (before `metric`) saying what the numbers were measured on."""
    out = table.copy()
    out.insert(list(out.columns).index("metric"), "data", note)
    return out
