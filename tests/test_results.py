import json
from pathlib import Path

import pandas as pd
import pytest

from hanzilm import results
from hanzilm.errors import HanzilmError
from hanzilm.results import Provenance, glance, paper_values, write_results


@pytest.fixture
def results_root(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "RESULTS", tmp_path)
    import hanzilm.data.resolve as resolve

    monkeypatch.setattr(resolve, "checksums", lambda names: {f"{n}/file": "ab" * 32 for n in names})
    return tmp_path


def test_paper_values_long_form():
    df = paper_values("mmtnn_tables.csv", keys={"dataset": "dataset", "model": "model"},
                      metrics={"f1": "F1", "precision": "P"}, where={"table": 5})
    row = df[(df.dataset == "PKU") & (df.model == "MMTNN") & (df.metric == "F1")]
    assert row["paper"].tolist() == [93.5]
    assert row["paper_source"].iloc[0].startswith("mmtnn_tables.csv: ")
    assert not df["paper"].isna().any()


def test_write_results_puts_paper_beside_ours(results_root):
    ours = pd.DataFrame({"dataset": ["PKU", "PKU", "MSR"], "model": ["MMTNN"] * 3,
                         "metric": ["F1", "P", "F1"], "ours": [92.0, 93.0, 95.0]})
    paper = paper_values("mmtnn_tables.csv", keys={"dataset": "dataset", "model": "model"},
                         metrics={"f1": "F1", "precision": "P"}, where={"table": 5})
    run = Provenance(profile="smoke", seed=3)
    out = write_results(ours, chapter="mmtnn", name="t5", run=run, datasets=["sighan2005"], paper=paper)
    assert list(out.columns) == ["dataset", "model", "data", "metric", "ours", "paper", "diff", "paper_source"]
    assert set(out["data"]) == {"official"}
    pku_f1 = out[(out.dataset == "PKU") & (out.metric == "F1")].iloc[0]
    assert pku_f1["paper"] == 93.5 and pku_f1["diff"] == pytest.approx(-1.5)
    csv = results_root / "smoke" / "mmtnn" / "t5.csv"
    assert pd.read_csv(csv).shape == (3, 8)
    prov = json.loads(csv.with_suffix(".json").read_text())
    assert prov["profile"] == "smoke" and prov["seed"] == 3
    assert prov["data_sha256"] == {"sighan2005/file": "ab" * 32}
    assert {"git_commit", "git_dirty", "versions", "wall_time_s", "machine"} <= prov.keys()
    assert prov["versions"]["torch"] and prov["versions"]["python"]
    assert not list(csv.parent.glob("*.tmp")) and not list(csv.parent.glob(".*"))


def test_write_results_rejects_bad_tables(results_root):
    run = Provenance(profile="smoke", seed=0)
    with pytest.raises(HanzilmError, match="needs columns 'metric' and 'ours'"):
        write_results(pd.DataFrame({"x": [1]}), chapter="c", name="n", run=run)
    paper = pd.DataFrame({"model": ["A", "A"], "metric": ["F1", "F1"], "paper": [1.0, 2.0], "paper_source": ["s", "s"]})
    ours = pd.DataFrame({"model": ["A"], "metric": ["F1"], "ours": [1.0]})
    with pytest.raises(HanzilmError, match="duplicate keys"):
        write_results(ours, chapter="c", name="n", run=run, paper=paper)
    with pytest.raises(HanzilmError, match="lacks"):
        write_results(ours.drop(columns="model"), chapter="c", name="n", run=run, paper=paper.iloc[:1])


def test_data_labels_come_from_the_manifest(results_root):
    """The `data` column: each stand-in's manifest note (once), "official" otherwise, "n/a" for no data; per row
    through by= (one column or several); a table may not bring its own label."""
    from hanzilm.data.manifest import load_manifest

    note = load_manifest().get("pku_training_pd199801").stand_in_note
    run = Provenance(profile="smoke", seed=0)
    ours = pd.DataFrame({"dataset": ["PKU", "MSR", "none"], "split": ["train", "test", "x"],
                         "metric": ["F1"] * 3, "ours": [1.0, 2.0, 3.0]})
    out = write_results(ours, chapter="c", name="n", run=run, by="dataset",
                        datasets={"PKU": ["sighan2005", "pku_training_pd199801", "pku_training_pd199801"],
                                  "MSR": ["sighan2005"], "none": []})
    assert out["data"].tolist() == [f"stand-in: {note}", "official", "n/a"]
    assert list(out.columns).index("data") == list(out.columns).index("metric") - 1
    out = write_results(ours, chapter="c", name="n", run=run, by=("dataset", "split"),
                        datasets={("PKU", "train"): ["pku_training_pd199801"], ("MSR", "test"): ["sighan2005"],
                                  ("none", "x"): ["wplc"]})
    assert out["data"].tolist()[:2] == [f"stand-in: {note}", "official"]
    assert out["data"].iloc[2].startswith("stand-in: a WPLC-style cloze set")   # missing, replaced
    with pytest.raises(HanzilmError, match="no datasets given for dataset"):
        write_results(ours, chapter="c", name="n", run=run, by="dataset", datasets={"PKU": ["sighan2005"]})
    with pytest.raises(HanzilmError, match="has a 'data' column"):
        write_results(ours.assign(data="mine"), chapter="c", name="n", run=run, datasets=["sighan2005"])
    with pytest.raises(HanzilmError, match="not the string"):
        write_results(ours, chapter="c", name="n", run=run, datasets="sighan2005")


def test_glance_collects_compared_numbers(results_root):
    run = Provenance(profile="cpu", seed=0)
    paper = pd.DataFrame({"model": ["A"], "metric": ["F1"], "paper": [90.0], "paper_source": ["x.csv: t"]})
    write_results(pd.DataFrame({"model": ["A", "B"], "metric": ["F1", "F1"], "ours": [91.0, 80.0]}),
                  chapter="c", name="t", run=run, paper=paper)
    write_results(pd.DataFrame({"metric": ["n"], "ours": [1]}), chapter="c", name="no_paper", run=run)
    g = glance("cpu")
    assert g[["table", "row", "metric", "ours", "paper", "diff"]].iloc[0].tolist() == ["c/t", "A", "F1", 91.0, 90.0, 1.0]
    assert len(g) == 1  # only numbers with a paper value: not B, not the table without a paper column


def test_no_committed_result_was_made_from_uncommitted_code():
    """Every committed cpu result names the commit that made it, clean (`hanzilm paper run` refuses a dirty tree
    unless --allow-dirty): a result of code nobody can check out cannot be re-made."""
    import json
    import subprocess

    from hanzilm.paths import ROOT

    committed = subprocess.run(["git", "ls-files", "results/cpu"], cwd=ROOT, capture_output=True, text=True,
                               check=True).stdout.split()
    dirty = {str(Path(p).relative_to("results/cpu").with_suffix("")) for p in committed if p.endswith(".json")
             and json.loads((ROOT / p).read_text(encoding="utf-8")).get("git_dirty")}
    assert not dirty, f"made from uncommitted code: {sorted(dirty)}"
