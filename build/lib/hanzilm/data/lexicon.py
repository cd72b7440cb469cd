"""The lexicons and similarity sets of the Backpack sense analyses, read through the data resolver.

Each function names the manifest dataset and file it reads (so every file is verified by sha256) and returns
plain Python lists or dicts. Formats are checked line by line: a line that does not fit raises `DataError`
with the file and the line number, nothing is skipped silently except what the docstring says is filtered
(e.g. entries with Latin letters when only Chinese words are asked for).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..errors import DataError
from .readers import CedictEntry, _numbered_lines, read_cedict, read_tsv, read_wordsim
from .resolve import resolve

HAN_WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")

WORDSIM_FILES = {"ws240": "wordsim-240.tsv", "ws297": "wordsim-297.tsv"}


def is_han(word: str) -> bool:
    """Only CJK ideographs (no Latin letters, digits or punctuation)."""
    return bool(HAN_WORD.fullmatch(word))


# --- CC-CEDICT ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Dictionary:
    """CC-CEDICT keyed by simplified headword: membership ("is xc a dictionary word?") and short glosses."""

    entries: dict[str, list[CedictEntry]]

    def __contains__(self, word: str) -> bool:
        return word in self.entries

    def gloss(self, word: str, max_len: int = 40) -> str:
        """The first glosses of the word's first entry that is not a pure cross-reference ("variant of ...")."""
        entries = self.entries.get(word, [])
        if not entries:
            return ""
        useful = [e for e in entries if not all(_is_reference(g) for g in e.glosses)] or entries
        glosses = [g for g in useful[0].glosses if g and not _is_reference(g)] or list(useful[0].glosses)
        text = "; ".join(glosses[:2])
        return text if len(text) <= max_len else text[: max_len - 1] + "…"

    def is_proper_noun(self, word: str) -> bool:
        """Every entry of the word is a name (CC-CEDICT capitalises the pinyin of proper nouns)."""
        entries = self.entries.get(word, [])
        return bool(entries) and all(e.pinyin[:1].isupper() for e in entries)


def _is_reference(gloss: str) -> bool:
    return bool(re.match(r"(old |archaic |Japanese |)variant of|see |surname |used in ", gloss))


@lru_cache(maxsize=2)
def _dictionary(path: Path) -> Dictionary:
    return Dictionary(read_cedict(path))


def cedict(only: frozenset[str] | None = None) -> Dictionary:
    """CC-CEDICT (dataset `cedict`), parsed once per process; `only`: just these headwords (quick)."""
    path = resolve("cedict", "cedict_1_0_ts_utf-8_mdbg.txt")
    return _dictionary(path) if only is None else Dictionary(read_cedict(path, only))


def compound_candidates(dictionary: Dictionary, loanwords: set[str] | frozenset[str] = frozenset(),
                        length: int = 2) -> list[str]:
    """Common-noun/verb words of `length` Chinese characters from CC-CEDICT, in file order: proper nouns,
    pure cross-references, loanwords (`loanwords`, or "loanword"/"transliteration" in a gloss) excluded. These
    are the candidates for the paper's "compound words" (characters with sub-meanings); CC-CEDICT has no
    compound marker, so compositionality itself is not checked."""
    out = []
    for word, entries in dictionary.entries.items():
        if len(word) != length or not is_han(word) or word in loanwords or dictionary.is_proper_noun(word):
            continue
        glosses = " ".join(g for e in entries for g in e.glosses).lower()
        if "loanword" in glosses or "transliteration" in glosses:
            continue
        if all(_is_reference(g) for e in entries for g in e.glosses if g):
            continue
        out.append(word)
    return out


# --- word lists ---------------------------------------------------------------------------------------------
def idioms() -> list[str]:
    """Four-character idioms of THUOCL's chengyu list (most frequent first): column 1 of `idiom<TAB>count`;
    the list's few longer sayings (防患于未然) are left out."""
    path = resolve("idioms", "THUOCL_chengyu.txt")
    out = []
    for lineno, line in _numbered_lines(path):
        if not line.strip():
            continue
        fields = line.split("\t")
        word = fields[0].strip()
        if len(fields) != 2 or not fields[1].strip().isdigit():
            raise DataError(f"expected 'idiom<TAB>count', found {line!r}", path, lineno)
        if not is_han(word):
            raise DataError(f"{word!r} is not a Chinese word", path, lineno)
        if len(word) == 4:
            out.append(word)
    return out


def loanwords() -> list[str]:
    """Chinese-character loanwords of CC-CEDICT (cedict_loanwords.tsv: entries marked as loanwords), two or
    more characters, in file order, each once. Entries with Latin letters or digits (3Q, BP机) are left out."""
    path = resolve("loanwords", "cedict_loanwords.tsv")
    rows = read_tsv(path)
    if rows and "simplified" not in rows[0]:
        raise DataError(f"no 'simplified' column (columns: {list(rows[0])})", path, 1)
    seen: dict[str, None] = {}
    for row in rows:
        word = row["simplified"]
        if len(word) >= 2 and is_han(word):
            seen.setdefault(word, None)
    return list(seen)


def professions() -> list[str]:
    """Profession names of funNLP's list, one per line, in file order, each once."""
    path = resolve("professions", "funNLP_professions.txt")
    seen: dict[str, None] = {}
    for lineno, line in _numbered_lines(path):
        word = line.strip()
        if not word:
            continue
        if any(c.isspace() for c in word):
            raise DataError(f"a profession name with whitespace: {word!r}", path, lineno)
        seen.setdefault(word, None)
    return list(seen)


def wordsim(name: str) -> list[tuple[str, str, float]]:
    """Word-similarity pairs of WordSim-240 ("ws240") or WordSim-297 ("ws297"): (word1, word2, human score)."""
    if name not in WORDSIM_FILES:
        raise DataError(f"unknown word-similarity set {name!r}; choose one of {', '.join(WORDSIM_FILES)}")
    return read_wordsim(resolve("wordsim", WORDSIM_FILES[name]))
