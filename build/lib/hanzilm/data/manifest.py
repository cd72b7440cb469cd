"""The data manifest (`data/manifest.json`): every dataset the project reads, with the sha256 of each file.

Paths are relative to the data mirror's root (see `resolve.py` for where the mirror is looked for).
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

from ..errors import DataError
from ..paths import DATA

MANIFEST_ENV = "HANZILM_MANIFEST"

_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class FileEntry:
    path: str  # relative to the mirror root, '/'-separated
    sha256: str
    bytes: int
    url: str | None  # direct download of exactly these bytes; None for derived files


@dataclass(frozen=True)
class Dataset:
    name: str
    description: str
    licence: str
    upstream: str
    stand_in: bool
    stand_in_note: str | None
    files: tuple[FileEntry, ...]
    genre: str | None = None
    one_document_per_line: bool = False
    missing: bool = False
    note: str | None = None

    @property
    def total_bytes(self) -> int:
        return sum(f.bytes for f in self.files)

    def file(self, path: str | None = None) -> FileEntry:
        """The entry whose path is `path` or ends with '/' + `path`; `path` may be omitted for one-file datasets."""
        if self.missing:
            raise DataError(f"dataset {self.name!r} could not be obtained: {self.note}")
        if path is None:
            if len(self.files) == 1:
                return self.files[0]
            raise DataError(f"dataset {self.name!r} has {len(self.files)} files; name one of: {self._listing()}")
        path = path.replace(os.sep, "/").strip("/")
        matches = [f for f in self.files if f.path == path or f.path.endswith("/" + path)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise DataError(f"dataset {self.name!r} has no file {path!r}; its files: {self._listing()}")
        raise DataError(f"{path!r} is ambiguous in dataset {self.name!r}: " + ", ".join(f.path for f in matches))

    def _listing(self) -> str:
        return ", ".join(f.path for f in self.files)


@dataclass(frozen=True)
class Manifest:
    path: Path
    datasets: dict[str, Dataset]

    def get(self, name: str) -> Dataset:
        try:
            return self.datasets[name]
        except KeyError:
            known = ", ".join(sorted(self.datasets))
            raise DataError(f"unknown dataset {name!r}; known datasets: {known}", path=self.path) from None

    def label(self, names: Iterable[str]) -> str:
        """What a number computed from the datasets `names` was measured on, for a results table's `data`
        column: "stand-in: <note>" for each dataset that is a stand-in or replaced (its `stand_in_note`, each
        note once, in order), else "official"; "n/a" for no data at all."""
        names = list(names)
        if not names:
            return "n/a"
        notes = dict.fromkeys(self.get(n).stand_in_note for n in names if self.get(n).stand_in_note)
        return "; ".join(f"stand-in: {note}" for note in notes) or "official"


def manifest_path() -> Path:
    return Path(os.environ.get(MANIFEST_ENV) or DATA / "manifest.json")


def load_manifest(path: str | Path | None = None) -> Manifest:
    """Load and validate the manifest (`$HANZILM_MANIFEST`, else data/manifest.json)."""
    path = Path(path) if path is not None else manifest_path()
    try:
        stat = path.stat()
    except OSError as e:
        raise DataError(f"cannot read the data manifest: {e.strerror}", path=path) from None
    return _load(path.resolve(), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=8)
def _load(path: Path, mtime_ns: int, size: int) -> Manifest:
    # mtime and size are part of the cache key so an edited manifest is re-read
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        entries = raw["datasets"]
        if not isinstance(entries, list):
            raise TypeError("'datasets' must be a list")
        datasets: dict[str, Dataset] = {}
        for entry in entries:
            ds = _dataset(entry)
            if ds.name in datasets:
                raise ValueError(f"dataset {ds.name!r} is listed twice")
            datasets[ds.name] = ds
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise DataError(f"invalid data manifest: {type(e).__name__}: {e}", path=path) from None
    return Manifest(path=path, datasets=datasets)


def _dataset(entry: dict[str, Any]) -> Dataset:
    name = entry["name"]
    try:
        files = tuple(_file(f) for f in entry["files"])
        ds = Dataset(
            name=_str(entry, "name"),
            description=_str(entry, "description"),
            licence=_str(entry, "licence"),
            upstream=_str(entry, "upstream"),
            stand_in=_bool(entry, "stand_in"),
            stand_in_note=entry.get("stand_in_note"),
            files=files,
            genre=entry.get("genre"),
            one_document_per_line=_bool(entry, "one_document_per_line", False),
            missing=_bool(entry, "missing", False),
            note=entry.get("note"),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"dataset {name!r}: {type(e).__name__}: {e}") from None
    if ds.stand_in and not ds.stand_in_note:
        raise ValueError(f"dataset {name!r} is a stand-in but has no stand_in_note")
    if ds.missing and (ds.files or not ds.note):
        raise ValueError(f"dataset {name!r} is marked missing: it needs a note and no files")
    if not ds.missing and not ds.files:
        raise ValueError(f"dataset {name!r} lists no files")
    return ds


def _file(entry: dict[str, Any]) -> FileEntry:
    path = _str(entry, "path")
    parts = PurePosixPath(path).parts
    # the path is joined onto mirror, cache and download roots: it must stay inside them
    if path.startswith("/") or "\\" in path or ".." in parts or "." in parts:
        raise ValueError(f"file path {path!r} must be relative, '/'-separated and without '.' or '..'")
    sha = _str(entry, "sha256")
    if not _SHA256.fullmatch(sha):
        raise ValueError(f"{path}: sha256 must be 64 lowercase hex digits")
    size = entry["bytes"]
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ValueError(f"{path}: bytes must be a non-negative integer")
    url = entry.get("url")
    if url is not None and not isinstance(url, str):
        raise ValueError(f"{path}: url must be a string or null")
    return FileEntry(path=path, sha256=sha, bytes=size, url=url)


def _str(entry: dict[str, Any], key: str) -> str:
    value = entry[key]
    if not isinstance(value, str) or not value:
        raise ValueError(f"{key!r} must be a non-empty string")
    return value


def _bool(entry: dict[str, Any], key: str, default: bool | None = None) -> bool:
    value = entry[key] if default is None else entry.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"{key!r} must be true or false")
    return value
