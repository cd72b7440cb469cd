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

SMOKE_FINGERPRINTS: dict[str, dict[int, str | dict[str, str]]] = {
    "data": {1: "9e044ff6d9f09581f6b71cb9396deb7396d6b77480a0917a231109f7d4b6dd8c"},
    # 1: table by table (what the combined fingerprint of its first record hashed), so that a table can be
    # measured anew under it
    "backpack": {1: {
        "alpha_scaling.csv": "8d738881ca89e5f8672840d64af18dc352df605131f7968ca50c060d7ce61968",
        "appendix_idioms.csv": "984b99e0a79dafca17c3fb6639a64aa34ca81934350d5e3a013ad3074a686a96",
        "parameters.csv": "478895165b83e73bc7707b773dc842e203b487cfd2f88ec9d22d541c752b081f",
        "table1.csv": "488587c4b45dbf383d657fc5fdc4b85ae0ea08b98122c47102f0f10a744f5cfb",
        "table11_continuations.csv": "0b4dc8caa237daacf84137cb3b7a82b6573b184f5fcc62184969ecb8fa0bcfe8",
        "table2_composition_rate.csv": "8eb85aae834feaa306720710f67969893968f2848caadde09613e4bc2b5181c3",
        "table2_sense_projections.csv": "307b80c18a4a4db677d6513842c1f05b76701ecfe8f14075ae5a6994bf12d7fa",
        "table3_composition.csv": "95dbef892e2bdc910c6067e082d8bfc59beb399b15dee8c9267cfa8e97288132",
        "table3_words.csv": "ed35cdb139c44fc1ad358aa1740faaaf63bb27848abb8aec323bcdbe1e1fdd9a",
        "table4_wordsim.csv": "7406c2794955078dc73f754dd2e4c6633cebd88fe70d0478e94e3a9883eddbfe",
        "table5_bias.csv": "5a68ef9b757dfd5330e4c0c1a49003a0514f9dd958cc3592565278c8b3086d02",
        "table5_corpus.csv": "669de70baaa1481c0a4803c4012f6cf192e1bdcc2ff9d8b52cb9fb5b154b3b40",
        "table6_amplification.csv": "8d579c4a7bbd08be98b804abe335bc1f96de810d29e3fd2ad03904482c2a7934",
        "table8_words.csv": "108b2c7bc78852f474e9257cd6f1a05d4a8be4b30fac3d2c2642e73c8bbfef5f",
        "training.csv": "035a44624cc7ec28e26dc42b85cf1da150f439a86b21f4e1d12f7931ab3289f7",
        "trends.csv": "83f9d3f168480a2916a8dbcf4976a6a47ffdcddf033ad31f4f83dba4e1c73fb6",
    }},
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
MEASURED_ANEW: dict[str, dict[int, dict[str, str]]] = {
    # the claims' bootstrap spreads, the scale gate's last change along training, and the trend and ablation
    # pages' registry quantities (Table 4 by Pearson, the perplexity's distance from a ratio of 1)
    "backpack": {1: {
        "alpha_scaling.csv": "df836f13363e7ad32ef49a7a81594605ccc2fd504ef2e87e39e0479fa4105306",
        "trends.csv": "1e84f234454b2f6c54fedd06a71deab9fc59cf5b6d7aed6dc571ab7cedcb017c",
        "table1_spread.csv": "e7db310de96f2b2e72b1d3ea001e4141d9ec19146f302cacd19cd48b91429814",
        "table2_spread.csv": "dcc28ffdc2d0fe113c73ad1cfc72ed9c2d06ef913497cb81cd8c57dcf55ec474",
        "table3_spread.csv": "878e397021be71d661c838cdf5d088f8425d6decb3f3855e4d63e83cbe3cce3f",
        "table4_spread.csv": "cca7d31a3a61bfcc32ba6b7a149639f2ed69d38fdec8da04e7c962612febb95c",
        "table5_spread.csv": "b890d7947cf842444c707a44ffdebcab7453056f65abcf4865185c360727a35b",
        "table6_spread.csv": "df045364db43383c5be0f6aeccf604b71acd0f0ac94cb9029eaec41f3b780cda",
        "trends_settled.csv": "c6afe7efa663cb1a309eded82bf59037d4b264dd9a052fd5aa11d1312662a064",
        "table8_spread.csv": "56115d50446d1226b8cf194d2c4b83edc26cd9ef1ad064733d905805a5b1f911",
        # Appendix B's scale gate: the median rank of the last character over every chosen idiom
        "appendix_idioms.csv": "ac05fdf4bf2f91bfabdf4335a4dd2dcb884687aa47fb995ea44964336e7bb62c",
    }},
    # each model's own spread for the values the paper states (over seeds and test sentences)
    "mmtnn": {3: {"model_spread.csv": "cd81ea8591327f860a9ff94aaccc296258543c9ab64cf644c352dcf12ea88280"}},
    # each cell's spread for the claims: the sd over its seeds and the bootstrap over its scored sentences
    "mslm": {1: {"cell_spread.csv": "89122ee67d6542c436ebab7614005714a490ba3dfa11841aa20abed968a44914",
                 # the headline at scale: its runs, their spreads, and our curves beside the authors'
                 "pku_at_scale.csv": "9b21780ed9053a768f15a0b1d82e9d9813f69246369fc592b9c73ec6223b27f7",
                 "pku_at_scale_dropout.csv": "505016ae59e7eb9016bb3547f47ad68a3f4aaff0bcd126cfd62665d85e424d43",
                 "pku_at_scale_matched.csv": "3ed8ff0ee8f26e131f77ec99edee640cb8a3d7053152a6104af3dfc18f668ca8",
                 "pku_at_scale_spread.csv": "a7b9b6ff33e58aa258270190bd96530d158a40a0728980a2e8479927529db072"}},
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


def recorded(chapter: str, table: str = "") -> dict[str, int | str]:
    """The versions a results record of `chapter` carries: its own, or every chapter's for a derived one; for a
    table its version measured anew (MEASURED_ANEW), that measurement too (its smoke fingerprint, shortened), so
    that the page writing it is re-run after the table changes."""
    if chapter in DERIVED:
        return {c: version(c) for c in CHAPTERS}
    if chapter not in SMOKE_FINGERPRINTS:
        return {}
    anew = MEASURED_ANEW.get(chapter, {}).get(version(chapter), {}).get(f"{table}.csv")
    return {chapter: version(chapter)} | ({"measured anew": anew[:12]} if anew else {})


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
    """{chapter: its tables' combined fingerprint now} for each chapter whose smoke tables under `results`
    (results/smoke: one folder per chapter) no longer have the fingerprints recorded for its current version:
    all its tables at once, or table by table, with the tables it measured anew (MEASURED_ANEW) apart."""
    out = {}
    for c in CHAPTERS:
        record, anew = SMOKE_FINGERPRINTS[c][version(c)], MEASURED_ANEW.get(c, {}).get(version(c), {})
        tables = {t.name: t for t in sorted((results / c).glob("*.csv"))}
        same = lambda n, fp: n in tables and fingerprint([tables[n]]) == fp  # noqa: E731
        if isinstance(record, dict):
            expected = {**record, **anew}
            ok = set(tables) == set(expected) and all(same(n, fp) for n, fp in expected.items())
        else:
            ok = (fingerprint(t for n, t in tables.items() if n not in anew) == record
                  and all(same(n, fp) for n, fp in anew.items()))
        if not ok:
            out[c] = fingerprint(tables.values())
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
        if chapter in (*CHAPTERS, *DERIVED) and made_by != recorded(chapter, record.stem):
            stale.setdefault(chapter, []).append(f"{chapter}/{record.name} (made by {made_by or 'no version'})")
    return stale
