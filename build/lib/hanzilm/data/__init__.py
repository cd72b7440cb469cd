"""The data layer: the manifest of datasets, finding and verifying their files, readers for their formats, the LM
corpus and character vocabularies. See data/README.md.

The function resolve() is deliberately not re-exported here: `hanzilm.data.resolve` must stay the module (code
imports and tests monkeypatch `hanzilm.data.resolve.checksums`). Import it as
`from hanzilm.data.resolve import resolve`.
"""

from .corpus import Document, LMSplitConfig, load_lm_corpus, read_documents, split_documents
from .manifest import Dataset, FileEntry, Manifest, load_manifest
from .readers import (
    CedictEntry,
    read_cedict,
    read_lines,
    read_segmented,
    read_text,
    read_tsv,
    read_word_list,
    read_wordsim,
)
from .resolve import checksums, dataset_paths
from .vocab import CharVocab, corpus_checksum

__all__ = [
    "CedictEntry",
    "CharVocab",
    "Dataset",
    "Document",
    "FileEntry",
    "LMSplitConfig",
    "Manifest",
    "checksums",
    "corpus_checksum",
    "dataset_paths",
    "load_lm_corpus",
    "load_manifest",
    "read_cedict",
    "read_documents",
    "read_lines",
    "read_segmented",
    "read_text",
    "read_tsv",
    "read_word_list",
    "read_wordsim",
    "split_documents",
]
