"""The LM pretraining corpus: documents from every `lm_*` dataset, and a document-level train/dev/test split."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import DataError, HanzilmError
from .manifest import load_manifest
from .readers import read_lines
from .resolve import dataset_paths

SPLITS = ("train", "dev", "test")


@dataclass(frozen=True)
class Document:
    source: str  # the file's mirror-relative path
    genre: str
    text: str  # paragraphs joined by "\n"


@dataclass(frozen=True)
class LMSplitConfig:
    test_fraction: float = 0.01
    dev_fraction: float = 0.005


def read_documents(path: str | Path, *, one_per_line: bool = False) -> list[str]:
    """Documents of an LM file: paragraphs (lines) joined by "\\n", a blank line ending each document.

    one_per_line=True makes every non-blank line its own document (the user-generated texts)."""
    lines = read_lines(path, keep_empty=True)
    if one_per_line:
        return [line for line in lines if line]
    documents: list[str] = []
    paragraphs: list[str] = []
    for line in lines:
        if line:
            paragraphs.append(line)
        elif paragraphs:
            documents.append("\n".join(paragraphs))
            paragraphs = []
    if paragraphs:
        documents.append("\n".join(paragraphs))
    return documents


def lm_dataset_names() -> list[str]:
    return [name for name in load_manifest().datasets if name.startswith("lm_")]


def load_lm_corpus(datasets: list[str] | None = None) -> list[Document]:
    """Every document of `datasets` (default: all `lm_*` datasets), in manifest and file order."""
    manifest = load_manifest()
    documents: list[Document] = []
    for name in datasets if datasets is not None else lm_dataset_names():
        ds = manifest.get(name)
        if ds.genre is None:
            raise DataError(f"dataset {name!r} is not an LM corpus (the manifest gives it no genre)", manifest.path)
        for source, path in dataset_paths(name).items():
            texts = read_documents(path, one_per_line=ds.one_document_per_line)
            documents.extend(Document(source=source, genre=ds.genre, text=text) for text in texts)
    return documents


def split_documents(
    docs: Iterable[Document], *, test_fraction: float = 0.01, dev_fraction: float = 0.005
) -> dict[str, list[Document]]:
    """Assign each document to train, dev or test by a sha256 of its text mapped into [0, 1).

    The split of a document depends only on its text, not on document order or on which other documents are
    present (adding a source leaves the others' splits unchanged), and identical texts, even from different
    sources, always share a split, so no duplicate leaks from train into test. Input order is kept per split."""
    if not (0 <= test_fraction and 0 <= dev_fraction and test_fraction + dev_fraction < 1):
        raise HanzilmError(
            f"split fractions must be >= 0 and sum to less than 1 (test {test_fraction}, dev {dev_fraction})"
        )
    splits: dict[str, list[Document]] = {name: [] for name in SPLITS}
    for doc in docs:
        u = _unit_interval(doc.text)
        name = "test" if u < test_fraction else "dev" if u < test_fraction + dev_fraction else "train"
        splits[name].append(doc)
    return splits


def _unit_interval(text: str) -> float:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64
