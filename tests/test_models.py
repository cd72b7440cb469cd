"""Named models (issue 13, item 3): `hanzilm models`, `--model NAME`, and the shipped PKU segmenter."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from hanzilm.errors import HanzilmError
from hanzilm.models import Model, resolve, scan
from hanzilm.paths import ROOT
from hanzilm.papers.mmtnn import commands as mmtnn_commands
from hanzilm.papers.mmtnn import experiment, load

NAMERS = mmtnn_commands.MODEL_NAMES
SHIPPED = mmtnn_commands.SHIPPED / "pku-mmtnn+pre"


def _run(root: Path, profile: str, key: str, config: dict, metrics=None) -> Path:
    d = root / profile / "checkpoints" / f"SegmentationConfig-{key}"
    d.mkdir(parents=True)
    (d / "done.json").write_text(json.dumps({"config_class": "SegmentationConfig", "config": config,
                                             "best_metrics": metrics or {"dev_f1": 90.0}}))
    return d


def test_names_and_the_preferred_profile(tmp_path):
    base = {"dataset": "pku", "model": "mmtnn", "pretrained": True, "bigram": False, "seed": 0}
    cpu = _run(tmp_path, "cpu", "a", base) / "done.json"
    smoke = _run(tmp_path, "smoke", "b", base)
    _run(tmp_path, "cpu", "c", {**base, "bigram": True, "seed": 1})
    _run(tmp_path, "cpu", "d", {**base, "model": "nn", "pretrained": False})
    shipped = Model("pku-mmtnn+pre", "mmtnn", "shipped", tmp_path / "shipped")
    models = scan(NAMERS, [shipped], root=tmp_path)
    assert sorted(m.ref for m in models) == ["pku-mmtnn+pre+bigram-s1@cpu", "pku-mmtnn+pre@cpu",
                                             "pku-mmtnn+pre@shipped", "pku-mmtnn+pre@smoke", "pku-nn@cpu"]
    assert resolve("pku-mmtnn+pre", models).path == cpu.parent      # cpu first
    assert resolve("pku-mmtnn+pre@smoke", models).path == smoke
    assert resolve("pku-mmtnn+pre", [m for m in models if m.profile != "cpu"]) is shipped  # then shipped
    with pytest.raises(HanzilmError, match="no model named 'pku-crf'; known: .*pku-nn@cpu"):
        resolve("pku-crf", models)
    newer = _run(tmp_path, "cpu", "e", {**base, "epochs": 3})  # a newer run under the same name takes it
    os.utime(newer / "done.json", (cpu.stat().st_mtime + 10,) * 2)
    models = scan(NAMERS, root=tmp_path)
    assert resolve("pku-mmtnn+pre", models).path == newer
    assert resolve("pku-mmtnn+pre~a@cpu", models).path == cpu.parent  # the older one keeps a name of its own
    # runs of a learning-rate grid: one name per rate (the CRF has none)
    assert NAMERS["SegmentationConfig"][1]({**base, "lr": 0.1, "seed": 1}) == "pku-mmtnn+pre-lr0.1-s1"
    assert NAMERS["SegmentationConfig"][1]({**base, "model": "crf", "pretrained": False, "lr": 0.05}) == "pku-crf"


def test_the_shipped_segmenter_is_the_books_model():
    """It is the run the book's cpu profile trains for Table 5 (same store key with today's code) and it scores
    Table 5's committed F1 on the official PKU test set."""
    record = json.loads((SHIPPED / "shipped.json").read_text(encoding="utf-8"))
    ch = experiment.configure("cpu")
    chosen = pd.read_csv(ROOT / "results" / "cpu" / "mmtnn" / "lr_grid.csv")  # the committed grid's choice
    lr = chosen[(chosen.family == "mmtnn") & chosen.chosen].lr.iloc[0]
    cfg = ch.model(dataset="pku", model="mmtnn", pretrained=True, lr=float(lr))
    assert record["store_run"] == f"cpu/{experiment.run_dir(ch, cfg).name}"
    counts, _ = experiment.test_scores(ch, load("pku-mmtnn+pre@shipped"), "pku")
    table5 = pd.read_csv(ROOT / "results" / "cpu" / "mmtnn" / "table5.csv")
    committed = table5[(table5.dataset == "PKU") & (table5.model == "MMTNN + pre-training") & (table5.metric == "f1")]
    assert round(100 * counts.f1, 4) == pytest.approx(committed.ours.item(), abs=1e-4)
    assert record["metrics"]["pku_test_f1"] == committed.ours.item()
    stored = experiment.segmenter_path(ch, cfg)
    if stored.is_dir():  # the local cpu store, where there is one: the same bytes
        for name in ("model.safetensors", "chars.json", "config.json"):
            assert (stored / name).read_bytes() == (SHIPPED / name).read_bytes(), name


def test_python_api_and_cli_work_before_anything_is_trained(tmp_path):
    words = load().cut("我爱北京天安门")
    assert "".join(words) == "我爱北京天安门" and len(words) >= 2
    empty = tmp_path / "fresh"
    (empty / "results").mkdir(parents=True)
    (empty / "pyproject.toml").write_text("")
    env = {**os.environ, "HANZILM_ROOT": str(empty)}
    out = subprocess.run([sys.executable, "-m", "hanzilm.cli", "segment"], input="我爱北京天安门\n".encode(),
                         capture_output=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout.decode().replace("  ", "") == "我爱北京天安门\n"
    listed = subprocess.run([sys.executable, "-m", "hanzilm.cli", "models"], capture_output=True, env=env, timeout=60)
    assert listed.returncode == 0 and "pku-mmtnn+pre@shipped" in listed.stdout.decode()
    wrong = subprocess.run([sys.executable, "-m", "hanzilm.cli", "segment", "--model", "nonesuch"], input=b"x\n",
                           capture_output=True, env=env, timeout=60)
    assert wrong.returncode == 2 and wrong.stderr.decode().count("\n") == 1 and "no model named" in wrong.stderr.decode()
