"""Chapter versions: the part of a stored run's key that stands for the code.

A trained artefact is keyed by its config, its data's checksums and its chapter's version (`key(chapter)`), not
by a hash of the source: a rename, a split function or a kernel moved to its own module keeps every key, so
nothing retrains. A change that alters a chapter's numbers bumps its version, which re-keys its runs, and lands
with the chapter's cpu re-run. Two tests hold that rule (`tests/test_versions.py`):

- each chapter's smoke numbers (`results/smoke/<chapter>/*.csv`, committed beside the smoke notebooks nbval
  compares, and written by the same runs) have the fingerprint recorded below for the chapter's current version,
  so new numbers under an old version fail and name the chapter (a page's layout or prose is not a number);
- every committed `results/cpu/<chapter>/*.json` records the chapter's current version, so a bump cannot leave
  results of code that no longer exists.

To bump a chapter: add `<version + 1>: "<the fingerprint the test prints>"` under it here, then re-run its
notebooks at cpu (`make paper ONLY=<chapter>/`). The newest entry is the current version; older ones stay as
the chapter's history.

A new measurement of the same models (a results table added, or one measured anew by changed evaluation code,
the tables of the chapter's training unchanged) is not a new version: each such table's own fingerprint goes
under `MEASURED_ANEW[chapter][version]`, so the stored models keep their keys and only the pages re-run. A
chapter's `TRAINING_TABLES` (its models' training outcomes: losses, dev scores) can never be measured anew:
a change there is a change of the models, a new version.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from pathlib import Path
from typing import Iterable

SMOKE_FINGERPRINTS: dict[str, dict[int, str]] = {
    "data": {1: "9e044ff6d9f09581f6b71cb9396deb7396d6b77480a0917a231109f7d4b6dd8c"},
    "backpack": {1: "1445b28485b1611bdca806f4637f8e68ca5ae0da7ace0283c7381f7a803180af"},
    "mslm": {1: "37a9b6d4c00dc6dddde38bc4eb2dad935870264a711383c7ce8fe489b3c503cc"},
    # 2: Pei et al.'s decoding (plain Viterbi) for selection and test, without the command line's rules
    # 3: the gains' spread: two further seeds of every model behind a gain, both datasets, and the bootstrap
    "mmtnn": {1: "7a0e947e6935519ad87dc803674d74205c13fb35219a0172345758ab25e28de7",
              2: "0e61f48ce3ba53c01d895716c4b2cd58e52acb1f7c6f40afb708d0664b435f8c",
              3: "fc842c74b6068e327ccaeac9d0b44d2c2804bf74e44e2ff8ed07934d2d84a2c3"},
}
# the tables a chapter's trained models are known by: their numbers change when the models do
TRAINING_TABLES = {"data": (), "backpack": ("training.csv",), "mslm": ("lr_grid.csv",), "mmtnn": ("lr_grid.csv",)}
# tables a version measured anew on its own models, after its fingerprint: {chapter: {version: {file: fp}}}
MEASURED_ANEW: dict[str, dict[int, dict[str, str]]] = {}
CHAPTERS = tuple(SMOKE_FINGERPRINTS)
# results chapters made from every chapter's results (the claims' verdicts): they record all versions
DERIVED = ("summary",)


def version(chapter: str) -> int:
    if chapter not in SMOKE_FINGERPRINTS:
        raise KeyError(f"no version for chapter {chapter!r} (chapters: {', '.join(CHAPTERS)})")
    return max(SMOKE_FINGERPRINTS[chapter])


def key(chapter: str) -> str:
    """`<chapter>/v<N>`: the code part of the store key of every artefact the chapter trains or makes."""
    return f"{chapter}/v{version(chapter)}"


def recorded(chapter: str) -> dict[str, int | str]:
    """The versions a results record of `chapter` carries: its own, or every chapter's for a derived one; with
    the tables its version measured anew (`measured_anew`), so that its pages are re-run after them."""
    chapters = CHAPTERS if chapter in DERIVED else [chapter] if chapter in SMOKE_FINGERPRINTS else []
    out: dict[str, int | str] = {}
    for c in chapters:
        out[c] = version(c)
        if measured_anew(c):
            out[f"{c} measured anew"] = measured_anew(c)
    return out


def measured_anew(chapter: str) -> str:
    """A short digest of the tables the current version measured anew ("" when none): it changes with them."""
    tables = MEASURED_ANEW.get(chapter, {}).get(version(chapter), {})
    if not tables:
        return ""
    return hashlib.sha256(json.dumps(tables, sort_keys=True).encode()).hexdigest()[:12]


# what of a results table is not the code's numbers: the stand-in labels and the paper's values beside ours, and
# the timings of the runs (different on every run)
_NOT_COMPUTED = {"data", "paper", "diff", "paper_source"}
_TIMING = re.compile(r"(seconds|wall_time_s|per_s)$")


def fingerprint(tables: Iterable[Path]) -> str:
    """sha256 of what results tables (CSV files) computed: in name order, each row's keys, metric and our value,
    numbers to 6 significant digits (the CSVs keep 10; the last may round otherwise on another CPU's kernels);
    timing rows, stand-in labels and the paper's columns left out."""
    h = hashlib.sha256()
    for path in sorted(Path(p) for p in tables):
        h.update(f"\0{path.name}\0".encode())
        with open(path, newline="", encoding="utf-8") as f:
            rows = csv.reader(f)
            header = next(rows, [])
            keep = [i for i, column in enumerate(header) if column not in _NOT_COMPUTED]
            metric = header.index("metric") if "metric" in header else None
            for row in rows:
                if metric is None or not _TIMING.search(row[metric]):
                    h.update("\x1f".join(_rounded(row[i]) for i in keep).encode() + b"\n")
    return h.hexdigest()


def _rounded(cell: str) -> str:
    try:
        return f"{float(cell):.6g}"
    except ValueError:
        return cell


def smoke_mismatches(results: Path) -> dict[str, str]:
    """{chapter: what to record} for each chapter whose smoke tables under `results` (results/smoke: one folder
    per chapter) no longer have the fingerprints recorded for its current version: the version's own tables
    (every one not in MEASURED_ANEW) and each table measured anew apart."""
    out = {}
    for c in CHAPTERS:
        added = MEASURED_ANEW.get(c, {}).get(version(c), {})
        tables = sorted((results / c).glob("*.csv"))
        base = fingerprint(t for t in tables if t.name not in added)
        changed = {t.name: fingerprint([t]) for t in tables if t.name in added and fingerprint([t]) != added[t.name]}
        if base != SMOKE_FINGERPRINTS[c][version(c)] or changed or set(added) - {t.name for t in tables}:
            out[c] = base
    return out


def table_fingerprints(results: Path, chapter: str) -> dict[str, str]:
    """{file: fingerprint} of each smoke table of `chapter` alone (what MEASURED_ANEW records)."""
    return {t.name: fingerprint([t]) for t in sorted((results / chapter).glob("*.csv"))}


def stale_results(results: Path) -> dict[str, list[str]]:
    """{chapter: its results records (relative paths)} made by other chapter versions than the current ones,
    under `results` (e.g. results/cpu)."""
    stale: dict[str, list[str]] = {}
    for record in sorted(results.glob("*/*.json")):
        chapter = record.parent.name
        made_by = json.loads(record.read_text(encoding="utf-8")).get("chapter_versions")
        if chapter in (*CHAPTERS, *DERIVED) and made_by != recorded(chapter):
            stale.setdefault(chapter, []).append(f"{chapter}/{record.name} (made by {made_by or 'no version'})")
    return stale
