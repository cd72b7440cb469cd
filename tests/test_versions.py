"""The store-key rule (`hanzilm.versions`): code that computes the same numbers keeps its version and so every
stored run; new numbers need a new chapter version, and a new version needs the chapter's cpu re-run."""

from __future__ import annotations

import configparser
import json
import shutil

import pytest

from hanzilm import paths, versions

SMOKE = paths.RESULTS / "smoke" / "notebooks"


def _sanitize() -> list[tuple[str, str]]:
    cfg = configparser.ConfigParser()
    cfg.read(paths.ROOT / "tests" / "nbval_sanitize.cfg")
    return [(cfg[s]["regex"], cfg[s]["replace"]) for s in cfg.sections()]


def test_every_chapters_smoke_outputs_are_those_of_its_version():
    changed = versions.smoke_mismatches(SMOKE, _sanitize())
    assert not changed, "".join(
        f"\nchapter {c}: its smoke notebooks' outputs changed under version {versions.version(c)}. If the numbers "
        f"are meant to change, add `{versions.version(c) + 1}: \"{f}\"` under \"{c}\" in lib/hanzilm/versions.py "
        f"and re-run `make paper ONLY={c}/`; if not, the change altered what the code computes."
        for c, f in changed.items())


def test_every_committed_cpu_result_was_made_by_its_chapters_current_version():
    stale = versions.stale_results(paths.RESULTS / "cpu")
    assert not stale, "".join(
        f"\nchapter {c}: re-run it at cpu (`make paper ONLY={c}/`): {len(files)} results made by another version, "
        f"e.g. {files[0]}" for c, files in stale.items())


def test_every_book_chapter_has_a_version():
    chapters = {p.parent.name for p in paths.BOOK.glob("*/*.py")}
    assert chapters == set(versions.CHAPTERS)
    assert {p.name for p in SMOKE.iterdir() if p.is_dir()} == set(versions.CHAPTERS)


@pytest.fixture
def planted(tmp_path):
    """A copy of every chapter's smoke notebooks."""
    root = tmp_path / "notebooks"
    for c in versions.CHAPTERS:
        shutil.copytree(SMOKE / c, root / c)
    return root


def _edit_first_output(root, edit):
    path = sorted((root / "mmtnn").glob("*.ipynb"))[0]
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            if "text/plain" in out.get("data", {}) or out.get("output_type") == "stream":
                key = "text" if out.get("output_type") == "stream" else None
                text = "".join(out[key] if key else out["data"]["text/plain"])
                new = edit(text)
                if new != text:
                    if key:
                        out[key] = new
                    else:
                        out["data"]["text/plain"] = new
                    path.write_text(json.dumps(nb))
                    return
    raise AssertionError("no output to edit")


def test_a_changed_number_names_its_chapter(planted):
    before = set(versions.smoke_mismatches(planted, _sanitize())) - {"mmtnn"}
    _edit_first_output(planted, lambda t: next((t.replace(d, str((int(d) + 1) % 10), 1) for d in t if d.isdigit()), t))
    assert set(versions.smoke_mismatches(planted, _sanitize())) == before | {"mmtnn"}


def test_a_wall_time_or_an_image_is_not_a_changed_number(planted):
    nb_path = sorted((planted / "backpack").glob("*.ipynb"))[0]
    nb = json.loads(nb_path.read_text())
    outputs = nb["cells"][0].setdefault("outputs", [])
    fingerprints = []
    for took, image in [("3.5 s", "AAAA"), ("9.25 s", "AAAA"), ("1 min", "BBBB")]:
        outputs[:] = [{"output_type": "stream", "name": "stdout", "text": f"took {took}\n"},
                      {"output_type": "display_data", "data": {"image/png": image}, "metadata": {}}]
        nb_path.write_text(json.dumps(nb))
        fingerprints.append(versions.fingerprint([nb_path], _sanitize()))
    assert len(set(fingerprints)) == 1
    outputs[0]["text"] = "took 1 min, F1 93.5\n"
    nb_path.write_text(json.dumps(nb))
    assert versions.fingerprint([nb_path], _sanitize()) != fingerprints[0]


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
