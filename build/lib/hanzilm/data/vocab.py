"""Character vocabularies: built deterministically from a corpus, saved as JSON with their provenance."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..errors import DataError, HanzilmError
from ..io import atomic_write_text

UNK = "<unk>"
_FORMAT = "hanzilm.char_vocab/1"


def corpus_checksum(texts: Iterable[str]) -> str:
    """sha256 over the texts in order; each is length-prefixed so ["ab", "c"] and ["a", "bc"] differ."""
    digest = hashlib.sha256()
    for text in texts:
        data = text.encode("utf-8")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


class CharVocab:
    """Specials first, then every character with count >= min_freq, most frequent first (ties by code point)."""

    def __init__(
        self,
        counts: Mapping[str, int],
        *,
        min_freq: int = 1,
        specials: Sequence[str] = (UNK,),
        corpus_sha256: str = "",
        ignore: str = "",
    ):
        specials = tuple(specials)
        if UNK not in specials:
            raise HanzilmError(f"the specials {specials} must include {UNK!r}")
        if len(set(specials)) != len(specials):
            raise HanzilmError(f"repeated special tokens: {specials}")
        if min_freq < 1:
            raise HanzilmError(f"min_freq must be at least 1, got {min_freq}")
        self.counts: dict[str, int] = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        self.min_freq = min_freq
        self.specials = specials
        self.corpus_sha256 = corpus_sha256
        self.ignore = ignore
        kept = [c for c, n in self.counts.items() if n >= min_freq and c not in specials]
        self.itos: list[str] = [*specials, *kept]
        self.stoi: dict[str, int] = {s: i for i, s in enumerate(self.itos)}
        self.unk_id: int = self.stoi[UNK]

    @classmethod
    def build(
        cls,
        texts: Iterable[str],
        *,
        min_freq: int = 1,
        specials: Sequence[str] = (UNK,),
        corpus_sha256: str = "",
        ignore: str = "",
    ) -> CharVocab:
        """Count the characters of `texts`. Characters in `ignore` are not counted (and encode to UNK).

        Nothing is ignored by default: LM documents separate paragraphs with "\\n", which must encode to a real
        id; pass ignore="\\n" for data whose line ends are not text."""
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(text)
        for c in ignore:
            counts.pop(c, None)
        return cls(counts, min_freq=min_freq, specials=specials, corpus_sha256=corpus_sha256, ignore=ignore)

    def __len__(self) -> int:
        return len(self.itos)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CharVocab) and self._state() == other._state()

    def __repr__(self) -> str:
        return f"CharVocab({len(self)} entries, min_freq={self.min_freq}, specials={self.specials})"

    def encode(self, text: str) -> list[int]:
        get, unk = self.stoi.get, self.unk_id
        return [get(c, unk) for c in text]

    def decode(self, ids: Iterable[int]) -> str:
        return "".join(self.itos[i] for i in ids)

    def save(self, path: str | Path) -> None:
        # one key per line: the small fields stay readable above the long itos and counts lines
        lines = (f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in self._state().items())
        atomic_write_text(path, "{\n" + ",\n".join(lines) + "\n}\n")

    @classmethod
    def load(cls, path: str | Path) -> CharVocab:
        path = Path(path)
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
            if state.get("format") != _FORMAT:
                raise ValueError(f"format is {state.get('format')!r}, expected {_FORMAT!r}")
            counts = {c: n for c, n in state["counts"]}
            if len(counts) != len(state["counts"]) or not all(
                isinstance(c, str) and len(c) == 1 and isinstance(n, int) and n > 0 for c, n in counts.items()
            ):
                raise ValueError("counts must be [character, positive count] pairs, each character once")
            vocab = cls(
                counts,
                min_freq=state["min_freq"],
                specials=state["specials"],
                corpus_sha256=state["corpus_sha256"],
                ignore=state["ignore"],
            )
        except (OSError, UnicodeDecodeError, AttributeError, KeyError, TypeError, ValueError) as e:
            raise DataError(f"not a valid character vocabulary: {type(e).__name__}: {e}", path=path) from None
        except HanzilmError as e:
            raise DataError(f"not a valid character vocabulary: {e}", path=path) from None
        if vocab.itos != state["itos"]:
            # the ids are what a trained model depends on: never silently renumber them
            raise DataError("itos does not follow from counts, min_freq and specials (edited file?)", path=path)
        return vocab

    def _state(self) -> dict:
        return {
            "format": _FORMAT,
            "min_freq": self.min_freq,
            "specials": list(self.specials),
            "ignore": self.ignore,
            "corpus_sha256": self.corpus_sha256,
            "itos": self.itos,
            "counts": [[c, n] for c, n in self.counts.items()],
        }
