"""`hanzilm data list | verify | fetch`: what the manifest lists, whether the local copies are intact, and
getting the files that are not here yet."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from ..cliutil import add_threads
from ..errors import DataError
from .manifest import Dataset, FileEntry, load_manifest
from .resolve import dataset_paths, download_url, file_sha256, local_places, locate


def register(subparsers: argparse._SubParsersAction) -> None:
    data = subparsers.add_parser("data", help="list, verify and fetch the datasets", description=__doc__)
    sub = data.add_subparsers(dest="data_command", required=True)
    sub.add_parser("list", help="the datasets, their size and where each resolves from").set_defaults(func=cmd_list)
    for name, func, summary in (
        ("verify", cmd_verify, "hash every local file and compare with the manifest"),
        ("fetch", cmd_fetch, "resolve every file, downloading what is not available locally"),
    ):
        p = sub.add_parser(name, help=summary)
        p.add_argument("names", nargs="*", metavar="NAME", help="datasets (default: all)")
        if name == "verify":
            add_threads(p, what="files hashed at once")
        p.set_defaults(func=func)


def cmd_list(args: argparse.Namespace) -> int:
    manifest = load_manifest()
    rows = [("name", "files", "MB", "stand-in", "resolves from")]
    for ds in manifest.datasets.values():
        mb = f"{ds.total_bytes / 1e6:.1f}"
        rows.append((ds.name, str(len(ds.files)), mb, "yes" if ds.stand_in else "no", _where(ds)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [cell.rjust(w) if i in (1, 2) else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths))]
        print("  ".join(cells).rstrip())
    print(f"\nmanifest: {manifest.path}")
    for label, root in local_places():
        print(f"{label}: {root if root is not None else '(not configured)'}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    failures = total = absent = 0
    selected = _selected(args.names)
    width = max(len(ds.name) for ds in selected)
    with ThreadPoolExecutor(args.threads) as pool:  # hashlib releases the GIL: files hash in parallel
        for ds in selected:
            if ds.missing:  # documented in the manifest: not a problem of the local copies, however asked for
                print(f"NOT OBTAINED  {ds.name}: {ds.note}")
                absent += 1
                continue
            for entry, (status, where) in zip(ds.files, pool.map(_check, ds.files)):
                total += 1
                failures += status != "OK"
                print(f"{status:<8}  {ds.name:<{width}}  {entry.path}  ({where})")
    print(f"{total} files checked, {failures} problem(s)" + f", {absent} dataset(s) not obtained" * bool(absent))
    return 1 if failures else 0


def _check(entry: FileEntry) -> tuple[str, str]:
    found = locate(entry)
    if found is None:
        return "MISSING", "not available locally; try `hanzilm data fetch`"
    return "OK" if file_sha256(found[1]) == entry.sha256 else "MISMATCH", f"{found[0]}: {found[1]}"


def cmd_fetch(args: argparse.Namespace) -> int:
    failures = 0
    for ds in _selected(args.names):
        if ds.missing and not args.names:
            continue
        try:
            paths = dataset_paths(ds.name)
        except DataError as e:
            print(f"hanzilm: error: {e}", file=sys.stderr)
            failures += 1
            continue
        places = Counter(found[0] for found in map(locate, ds.files) if found is not None)
        print(f"{ds.name}: {len(paths)} files OK ({', '.join(f'{n} from {p}' for p, n in places.items())})")
    return 1 if failures else 0


def _selected(names: list[str]) -> list[Dataset]:
    manifest = load_manifest()
    return [manifest.get(name) for name in names] if names else list(manifest.datasets.values())


def _where(ds: Dataset) -> str:
    if ds.missing:
        return "not obtained"
    places = Counter(_file_place(entry) for entry in ds.files)
    if len(places) == 1:
        return next(iter(places))
    return ", ".join(f"{n} {place}" for place, n in places.most_common())


def _file_place(entry: FileEntry) -> str:
    found = locate(entry)
    if found is not None:
        return found[0]
    return "download" if download_url(entry) else "unavailable"
