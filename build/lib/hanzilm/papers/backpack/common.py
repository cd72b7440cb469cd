"""What every sense analysis needs: its sizes (`SensesConfig`, part of the chapter config) and the encoding of
a prompt. The trained pair comes from `experiment.load_pair`."""

from __future__ import annotations

from dataclasses import dataclass

from ...data.vocab import CharVocab
from .data import DOC


@dataclass(frozen=True)
class SensesConfig:
    """Sizes of the sense analyses. The paper states only its word-set sizes (120 compounds, 102 loanwords,
    104 idioms); everything else is our choice, fixed before looking at results."""

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


def encode(vocab: CharVocab, text: str) -> list[int]:
    """`<doc>` + the text's ids: a prompt starts a document, as every training document does."""
    return [vocab.stoi[DOC]] + vocab.encode(text)


def in_vocab(vocab: CharVocab, word: str) -> bool:
    return all(c in vocab.stoi and c not in vocab.specials for c in word)


def banned_ids(vocab: CharVocab) -> list[int]:
    return [vocab.stoi[s] for s in vocab.specials]
