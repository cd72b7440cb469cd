"""The store-key rule (`hanzilm.versions`): code that computes the same numbers keeps its version and so every
stored run; new numbers need a new chapter version, and a new version needs the chapter's cpu re-run."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from hanzilm import paths, versions

SMOKE = paths.RESULTS / "smoke"


def _advice(c: str, f: str) -> str:
    v = versions.version(c)
    known = {*versions.MEASURED_ANEW.get(c, {}).get(v, {}), *versions.table_fingerprints(SMOKE, c)}
    tables = ", ".join(f'"{t}": "{fp}"' for t, fp in versions.table_fingerprints(SMOKE, c).items() if t in known)
    return (f"\nchapter {c}: its smoke numbers (results/smoke/{c}/*.csv) changed under version {v}. If they are "
            f"meant to change, add `{v + 1}: \"{f}\"` under \"{c}\" in lib/hanzilm/versions.py and re-run `make "
            f"paper ONLY={c}/`; if the same models were only measured anew (a table added or re-measured, "
            f"{', '.join(versions.TRAINING_TABLES[c]) or 'its training tables'} unchanged), record those tables under "
            f"MEASURED_ANEW[\"{c}\"][{v}] instead (each table's fingerprint: {tables}); "
            "if not, the change altered what the code computes.")


def test_every_chapters_smoke_numbers_are_those_of_its_version():
    changed = versions.smoke_mismatches(SMOKE)
    assert not changed, "".join(_advice(c, f) for c, f in changed.items())


def test_every_committed_cpu_result_was_made_by_its_chapters_current_version():
    stale = versions.stale_results(paths.RESULTS / "cpu")
    assert not stale, "".join(
        f"\nchapter {c}: re-run it at cpu (`make paper ONLY={c}/`): {len(files)} results made by another version, "
        f"e.g. {files[0]}" for c, files in stale.items())


def test_every_book_chapter_has_a_version():
    chapters = {p.parent.name for p in paths.BOOK.glob("*/*.py")}
    assert chapters == set(versions.CHAPTERS)
    assert all(list((SMOKE / c).glob("*.csv")) for c in versions.CHAPTERS)
    assert {p.name for p in (SMOKE / "notebooks").iterdir() if p.is_dir()} == set(versions.CHAPTERS)


@pytest.fixture
def planted(tmp_path):
    """A copy of every chapter's smoke tables."""
    root = tmp_path / "smoke"
    for c in versions.CHAPTERS:
        shutil.copytree(SMOKE / c, root / c, ignore=shutil.ignore_patterns("*.json"))
    return root


def test_a_changed_number_names_its_chapter(planted):
    before = set(versions.smoke_mismatches(planted))
    assert "mmtnn" not in before
    table = planted / "mmtnn" / "table3.csv"
    frame = pd.read_csv(table)
    frame.loc[0, "ours"] += 0.01    # one F1 moved by 0.01 points
    frame.to_csv(table, index=False)
    assert set(versions.smoke_mismatches(planted)) == before | {"mmtnn"}


def test_a_table_added_under_a_version_is_recorded_apart_and_then_held(planted, monkeypatch):
    """A new measurement of the same models keeps the version (and so every stored model): the new table is
    recorded on its own; changing it afterwards, or any older table, is a mismatch again."""
    assert "mmtnn" not in versions.smoke_mismatches(planted)
    added = planted / "mmtnn" / "extra.csv"
    pd.DataFrame({"metric": ["sd"], "ours": [0.25]}).to_csv(added, index=False)
    assert "mmtnn" in versions.smoke_mismatches(planted)
    v = versions.version("mmtnn")
    recorded = versions.MEASURED_ANEW.get("mmtnn", {}).get(v, {})
    monkeypatch.setattr(versions, "MEASURED_ANEW", {**versions.MEASURED_ANEW, "mmtnn": {
        v: {**recorded, "extra.csv": versions.fingerprint([added])}}})
    assert "mmtnn" not in versions.smoke_mismatches(planted)
    pd.DataFrame({"metric": ["sd"], "ours": [0.5]}).to_csv(added, index=False)
    assert "mmtnn" in versions.smoke_mismatches(planted)
    added.unlink()  # a recorded table that is gone is a change too
    assert "mmtnn" in versions.smoke_mismatches(planted)


def test_a_chapters_training_tables_are_never_measured_anew():
    for chapter, by_version in versions.MEASURED_ANEW.items():
        for v, tables in by_version.items():
            assert not set(tables) & set(versions.TRAINING_TABLES[chapter]), (chapter, v)
    assert set(versions.TRAINING_TABLES) == set(versions.CHAPTERS)


def test_a_page_timing_or_label_can_change_without_a_version(planted):
    """Only the numbers the code computes are fingerprinted: a notebook's layout, prose or plots (not in the
    tables), a run's timings, a stand-in label or a paper value may change freely."""
    before = versions.smoke_mismatches(planted)
    table = planted / "backpack" / "training.csv"
    rows = table.read_text().splitlines()
    timing = next(i for i, r in enumerate(rows) if ",wall_time_s," in r)
    rows[timing] = rows[timing].rsplit(",", 1)[0] + ",12345.6"
    table.write_text("\n".join(rows).replace("stand-in:", "a stand-in:") + "\n")
    assert versions.smoke_mismatches(planted) == before


def test_a_result_of_another_version_is_stale(tmp_path):
    made = {"chapter_versions": versions.recorded("mslm")}
    (tmp_path / "mslm").mkdir()
    (tmp_path / "summary").mkdir()
    (tmp_path / "mslm" / "table2.json").write_text(json.dumps(made))
    (tmp_path / "summary" / "claims.json").write_text(json.dumps({"chapter_versions": versions.recorded("summary")}))
    assert versions.stale_results(tmp_path) == {}
    (tmp_path / "mslm" / "table2.json").write_text(json.dumps({"chapter_versions": {"mslm": 0}}))
    (tmp_path / "summary" / "claims.json").write_text(json.dumps({}))
    assert versions.stale_results(tmp_path) == {"mslm": ["mslm/table2.json (made by {'mslm': 0})"],
                                                 "summary": ["summary/claims.json (made by no version)"]}


def test_a_table_measured_anew_makes_its_older_record_stale(tmp_path, monkeypatch):
    """Measuring anew keeps the store key (`key`) but not the table's results record: its page re-runs; the
    chapter's other records stay current."""
    v = versions.version("mmtnn")
    key = versions.key("mmtnn")
    for table in ("gain_spread", "table3"):
        record = tmp_path / "mmtnn" / f"{table}.json"
        record.parent.mkdir(exist_ok=True)
        record.write_text(json.dumps({"chapter_versions": versions.recorded("mmtnn", table)}))
    assert versions.stale_results(tmp_path) == {}
    monkeypatch.setattr(versions, "MEASURED_ANEW", {"mmtnn": {v: {"gain_spread.csv": "0" * 64}}})
    assert versions.key("mmtnn") == key
    assert versions.stale_results(tmp_path) == {"mmtnn": [f"mmtnn/gain_spread.json (made by {{'mmtnn': {v}}})"]}
