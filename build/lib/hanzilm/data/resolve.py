"""Find the local copy of every dataset file named in the manifest, downloading it if needed, and verify it.

Each file (a path relative to the data mirror's root) is looked for in this order:

1. `$HANZILM_DATA_MIRROR/<path>`: a directory laid out like the data mirror;
2. `<shared data>/<path>`: `../shared/data` beside the checkout; `$HANZILM_SHARED_DATA` points elsewhere, and
   setting it to the empty string turns this place off;
3. `<cache>/downloads/<path>`: an earlier download (`$HANZILM_CACHE`, default data/cache);
4. a download from `$HANZILM_DATA_URL/<path>` if that base URL is set, else from the file's own URL, into the
   cache. The bytes go to a temporary file and are moved into place only once their sha256 matches.

Every file found is checked against the manifest's sha256 before it is returned; a mismatch is an error, never a
reason to look further, so a corrupt mirror cannot go unnoticed.
"""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable
from http.client import HTTPException
from pathlib import Path

from tqdm import tqdm

from ..errors import DataError
from ..io import atomic_path
from ..paths import ROOT, cache_dir
from .manifest import Dataset, FileEntry, load_manifest

MIRROR_ENV = "HANZILM_DATA_MIRROR"
SHARED_ENV = "HANZILM_SHARED_DATA"
URL_ENV = "HANZILM_DATA_URL"

DOWNLOAD_TIMEOUT_S = 60
_CHUNK = 1 << 20

# sha256 of files already hashed in this process, keyed on (path, size, mtime_ns): a notebook that resolves the
# same 30 MB file many times hashes it once, and a file changed on disk is hashed again.
_hashed: dict[tuple[str, int, int], str] = {}


def resolve(dataset: str, path: str | None = None) -> Path:
    """Local, verified path of one file of `dataset`.

    `path` is the file's mirror-relative path or a unique suffix of it ("pku_test_gold.utf8"); it may be
    omitted when the dataset has a single file."""
    ds = load_manifest().get(dataset)
    return resolve_file(ds, ds.file(path))


def dataset_paths(dataset: str) -> dict[str, Path]:
    """Every file of `dataset`, resolved and verified: mirror-relative path -> local path."""
    ds = _available(dataset)
    return {entry.path: resolve_file(ds, entry) for entry in ds.files}


def checksums(datasets: Iterable[str]) -> dict[str, str]:
    """Mirror-relative path -> sha256 of every file of `datasets`, after verifying each (for provenance)."""
    sums: dict[str, str] = {}
    for name in [datasets] if isinstance(datasets, str) else datasets:  # a lone name is not its letters
        ds = _available(name)
        for entry in ds.files:
            resolve_file(ds, entry)
            sums[entry.path] = entry.sha256
    return sums


def resolve_file(ds: Dataset, entry: FileEntry) -> Path:
    found = locate(entry)
    if found is not None:
        verify(found[1], entry, ds.name)
        return found[1]
    return _download(ds, entry)


def shared_data_dir() -> Path | None:
    value = os.environ.get(SHARED_ENV)
    if value is None:
        return ROOT.parent / "shared" / "data"
    return Path(value) if value else None


def download_dir() -> Path:
    return cache_dir() / "downloads"


def mirror_dir() -> Path | None:
    """$HANZILM_DATA_MIRROR, which must be a directory when set: a mistyped path is an error, not a silent fall
    through to the next place."""
    mirror = os.environ.get(MIRROR_ENV)
    if not mirror:
        return None
    if not Path(mirror).is_dir():
        raise DataError(f"${MIRROR_ENV} is set, but is not a directory; fix it (a directory laid out like the data "
                        "mirror) or unset it to use ../shared/data and the download cache", path=Path(mirror))
    return Path(mirror)


def local_places() -> list[tuple[str, Path | None]]:
    """(label, root) of the local places, in lookup order; root is None when that place is not configured."""
    return [
        ("mirror", mirror_dir()),
        ("shared", shared_data_dir()),
        ("cache", download_dir()),
    ]


def locate(entry: FileEntry) -> tuple[str, Path] | None:
    """(place label, path) of the first local copy of `entry`, unverified; None if there is none."""
    for label, root in local_places():
        if root is not None and (root / entry.path).is_file():
            return label, root / entry.path
    return None


def download_url(entry: FileEntry) -> str | None:
    base = os.environ.get(URL_ENV)
    if base:
        return base.rstrip("/") + "/" + urllib.parse.quote(entry.path)
    return entry.url


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def verify(path: Path, entry: FileEntry, dataset: str) -> None:
    """Raise DataError unless `path` has the sha256 the manifest records for `entry`."""
    stat = path.stat()
    key = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns)
    actual = _hashed.get(key)
    if actual is None:
        actual = _hashed[key] = file_sha256(path)
    if actual != entry.sha256:
        raise DataError(
            f"checksum mismatch for {entry.path} (dataset {dataset!r}): expected sha256 {entry.sha256} "
            f"({entry.bytes} bytes), found {actual} ({stat.st_size} bytes). The copy is corrupt or a different "
            "version; replace it with the file the manifest describes",
            path=path,
        )


def _available(name: str) -> Dataset:
    ds = load_manifest().get(name)
    if ds.missing:
        raise DataError(f"dataset {name!r} could not be obtained: {ds.note}")
    return ds


def _download(ds: Dataset, entry: FileEntry) -> Path:
    url = download_url(entry)
    if url is None:
        raise _not_found(ds, entry, "no download URL (a derived file: it exists only in the data mirror)")
    dest = download_dir() / entry.path
    try:
        with atomic_path(dest) as tmp:
            actual = _fetch(url, tmp, entry)
            if actual != entry.sha256:
                # raising inside atomic_path deletes the temporary file: nothing unverified enters the cache
                raise DataError(
                    f"checksum mismatch for {entry.path} (dataset {ds.name!r}) downloaded from {url}: expected "
                    f"sha256 {entry.sha256}, got {actual}; the download was discarded"
                )
    except (urllib.error.URLError, HTTPException, OSError, ValueError) as e:
        raise _not_found(ds, entry, f"{url}: {e}") from None
    stat = dest.stat()
    _hashed[(os.path.abspath(dest), stat.st_size, stat.st_mtime_ns)] = entry.sha256
    return dest


def _fetch(url: str, dest: Path, entry: FileEntry) -> str:
    digest = hashlib.sha256()
    name = entry.path.rsplit("/", 1)[-1]
    with (
        urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response,
        open(dest, "wb") as out,
        tqdm(total=entry.bytes, unit="B", unit_scale=True, desc=name, disable=None, leave=False) as bar,
    ):
        while chunk := response.read(_CHUNK):
            digest.update(chunk)
            out.write(chunk)
            bar.update(len(chunk))
    return digest.hexdigest()


_PLACE_NAMES = {
    "mirror": f"${MIRROR_ENV}",
    "shared": f"shared data (../shared/data or ${SHARED_ENV})",
    "cache": "download cache",
}
_UNCONFIGURED = {"mirror": "not set", "shared": f"turned off (${SHARED_ENV} is empty)"}


def _not_found(ds: Dataset, entry: FileEntry, download: str) -> DataError:
    lines = [f"dataset {ds.name!r}: file {entry.path} not found. Looked in:"]
    for label, root in local_places():
        if root is None:
            where = _UNCONFIGURED[label]
        elif label != "cache" and not root.is_dir():
            where = f"{root} (no such directory)"
        else:
            where = f"{root / entry.path} (no such file)"
        lines.append(f"  {_PLACE_NAMES[label]}: {where}")
    lines.append(f"  download: {download}")
    shared = shared_data_dir() or ROOT.parent / "shared" / "data"
    lines.append(
        f"To get it: set ${MIRROR_ENV} to a directory laid out like the data mirror (see data/README.md), "
        f"or put the file at {shared / entry.path} (it comes from {ds.upstream}), "
        f"or run `hanzilm data fetch {ds.name}` with network access"
        + (f" and ${URL_ENV} set to a server holding the mirror" if entry.url is None else "")
    )
    return DataError("\n".join(lines))
