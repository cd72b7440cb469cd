"""Chapter versions: the part of a stored run's key that stands for the code.

A trained artefact is keyed by its config, its data's checksums and its chapter's version (`key(chapter)`), not
by a hash of the source: a rename, a split function or a kernel moved to its own module keeps every key, so
nothing retrains. A change that alters a chapter's numbers bumps its version, which re-keys its runs, and lands
with the chapter's cpu re-run. Two tests hold that rule (`tests/test_versions.py`):

- each chapter's smoke notebooks (`results/smoke/notebooks/<chapter>/`, the nbval reference) have the output
  fingerprint recorded below for the chapter's current version, so new numbers under an old version fail and
  name the chapter;
- every committed `results/cpu/<chapter>/*.json` records the chapter's current version, so a bump cannot leave
  results of code that no longer exists.

To bump a chapter: add `<version + 1>: "<the fingerprint the test prints>"` under it here, then re-run its
notebooks at cpu (`make paper ONLY=<chapter>/`). The newest entry is the current version; older ones stay as
the chapter's history.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Iterable, Sequence

SMOKE_FINGERPRINTS: dict[str, dict[int, str]] = {
    "data": {1: "d8859183bd072eb86fe9c283e91044e471fc0f43b441392d8b1f66bdf1c5b5a8"},
    "backpack": {1: "f5f3d5b5d01ed941ec9efa5c1750b75811f39d66cda966bcd0cdc8bc39c14c4a"},
    "mslm": {1: "5954c6bd40ef0f19a60ef977342e32281ea5945dc9f34fdd944e581ea1cdbbca"},
    "mmtnn": {1: "6eb171702de9b6533abea06fe13414d1f32aa43dd5347235ae164ad565595e30",
              2: "78b008bfebd28dc53b2b7804199f28f5db20659ba5ea49115741d71bf34cbd77"},
}
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


def recorded(chapter: str) -> dict[str, int]:
    """The versions a results record of `chapter` carries: its own, or every chapter's for a derived one."""
    if chapter in DERIVED:
        return {c: version(c) for c in CHAPTERS}
    return {chapter: version(chapter)} if chapter in SMOKE_FINGERPRINTS else {}


def fingerprint(notebooks: Iterable[Path], sanitize: Sequence[tuple[str, str]] = ()) -> str:
    """sha256 of what nbval compares in these executed notebooks: each code cell's text outputs (streams,
    errors, every non-image MIME type), after the `sanitize` (regex, replacement) pairs nbval applies."""
    h = hashlib.sha256()
    for path in sorted(Path(p) for p in notebooks):
        h.update(f"\0{path.name}\0".encode())
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for text in (_output_text(o) for o in cell.get("outputs", [])):
                for pattern, replacement in sanitize:
                    text = re.sub(pattern, replacement, text)
                h.update(text.encode() + b"\0")
    return h.hexdigest()


def _output_text(output: dict) -> str:
    def joined(v: str | list[str]) -> str:
        return v if isinstance(v, str) else "".join(v)
    if output.get("output_type") == "stream":
        return joined(output.get("text", ""))
    if output.get("output_type") == "error":
        return f"{output.get('ename')}: {output.get('evalue')}"
    data = output.get("data", {})
    return "\n".join(f"{mime}\n{joined(data[mime])}" for mime in sorted(data) if not mime.startswith("image/"))


def smoke_mismatches(notebooks: Path, sanitize: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    """{chapter: fingerprint now} for each chapter whose smoke notebooks under `notebooks` (one folder per
    chapter) no longer have the fingerprint recorded for its current version."""
    now = {c: fingerprint(sorted((notebooks / c).glob("*.ipynb")), sanitize) for c in CHAPTERS}
    return {c: f for c, f in now.items() if f != SMOKE_FINGERPRINTS[c][version(c)]}


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
