"""The CRF baseline of Table 3: a linear-chain CRF over BMES with unigram window features only (the characters
c[-2..2], as the CRF++ template U00..U04 the paper used), trained with python-crfsuite (L-BFGS, L2)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .tags import TAGS, normalize, tags_to_words, words_to_tags


@dataclass(frozen=True)
class CRFSpec:
    c2: float = 0.5               # L2; CRF++'s default C = 1 corresponds to c2 = 1 / (2C)
    max_iterations: int = 200


def features(text: str) -> list[list[str]]:
    chars = ["<s>", "<s>", *normalize(text), "</s>", "</s>"]
    return [[f"U{k}={chars[i + 2 + k]}" for k in (-2, -1, 0, 1, 2)] for i in range(len(text))]


def train_crf(sentences: Sequence[Sequence[str]], spec: CRFSpec, path: str | Path) -> None:
    import pycrfsuite

    trainer = pycrfsuite.Trainer(algorithm="lbfgs", verbose=False)
    for words in sentences:
        text = "".join(words)
        if text:
            trainer.append(features(text), [TAGS[t] for t in words_to_tags(words)])
    trainer.set_params({"c1": 0.0, "c2": spec.c2, "max_iterations": spec.max_iterations})
    trainer.train(str(path))


class CRFSegmenter:
    """Segments unsegmented lines with a trained crfsuite model (same interface as `Segmenter.segment_lines`)."""

    def __init__(self, path: str | Path):
        import pycrfsuite

        self.tagger = pycrfsuite.Tagger()
        self.tagger.open(str(path))

    def segment_lines(self, lines: Sequence[str]) -> list[list[str]]:
        out = []
        for line in lines:
            words: list[str] = []
            for chunk in line.split():
                tags = [TAGS.index(t) for t in self.tagger.tag(features(chunk))]
                words += tags_to_words(chunk, tags)
            out.append(words)
        return out
