"""Named models (issue 13, item 3): `hanzilm models`, `--model NAME`, and `hanzilm segment`'s default, the book's
PKU segmenter from the model store (no trained model is committed)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from hanzilm.errors import HanzilmError
from hanzilm.models import resolve, scan
from hanzilm.papers.mmtnn import commands as mmtnn_commands
from hanzilm.papers.mmtnn.commands import resolve_segmenter
from hanzilm.papers.mmtnn.encoding import Encoder
from hanzilm.papers.mmtnn.segmenter import Segmenter
from hanzilm.papers.mmtnn.spec import TaggerSpec
from hanzilm.papers.mmtnn.tagger import WindowTagger

NAMERS = mmtnn_commands.MODEL_NAMES
BASE = {"dataset": "pku", "model": "mmtnn", "pretrained": True, "bigram": False, "seed": 0}


def _run(root: Path, profile: str, key: str, config: dict, metrics=None) -> Path:
    d = root / profile / "checkpoints" / f"SegmentationConfig-{key}"
    d.mkdir(parents=True)
    (d / "done.json").write_text(json.dumps({"config_class": "SegmentationConfig", "config": config,
                                             "best_metrics": metrics or {"dev_f1": 90.0}}))
    return d


def test_names_and_the_preferred_profile(tmp_path):
    base = BASE
    cpu = _run(tmp_path, "cpu", "a", base) / "done.json"
    smoke = _run(tmp_path, "smoke", "b", base)
    _run(tmp_path, "cpu", "c", {**base, "bigram": True, "seed": 1})
    _run(tmp_path, "cpu", "d", {**base, "model": "nn", "pretrained": False})
    models = scan(NAMERS, root=tmp_path)
    assert sorted(m.ref for m in models) == ["pku-mmtnn+pre+bigram-s1@cpu", "pku-mmtnn+pre@cpu",
                                             "pku-mmtnn+pre@smoke", "pku-nn@cpu"]
    assert resolve("pku-mmtnn+pre", models).path == cpu.parent      # cpu first
    assert resolve("pku-mmtnn+pre@smoke", models).path == smoke
    # a bare name is the cpu run's, never another profile's: the error says which exist and how to train it
    with pytest.raises(HanzilmError, match=r"no model 'pku-mmtnn\+pre' at profile cpu; there are: "
                                           r"pku-mmtnn\+pre@smoke .*make paper PROFILE=cpu ONLY='mmtnn/'"):
        resolve("pku-mmtnn+pre", [m for m in models if m.profile != "cpu"])
    with pytest.raises(HanzilmError, match="no model 'pku-crf' at profile cpu; there are: .*pku-nn@cpu"):
        resolve("pku-crf", models)
    newer = _run(tmp_path, "cpu", "e", {**base, "epochs": 3})  # a newer run under the same name takes it
    os.utime(newer / "done.json", (cpu.stat().st_mtime + 10,) * 2)
    models = scan(NAMERS, root=tmp_path)
    assert resolve("pku-mmtnn+pre", models).path == newer
    assert resolve("pku-mmtnn+pre~a@cpu", models).path == cpu.parent  # the older one keeps a name of its own
    # runs of a learning-rate grid: one name per rate (the CRF has none)
    assert NAMERS["SegmentationConfig"][1]({**base, "lr": 0.1, "seed": 1}) == "pku-mmtnn+pre-lr0.1-s1"
    assert NAMERS["SegmentationConfig"][1]({**base, "model": "crf", "pretrained": False, "lr": 0.05}) == "pku-crf"


def test_a_name_without_its_rate_is_the_rate_the_dev_set_chose(tmp_path):
    """As the chapter chooses (experiment.lr_grid): the best dev F1 at the preferred profile, a tie to the smaller
    rate; an exact name, another profile, and a family with no run."""
    runs = {"a": (0.05, 93.1), "b": (0.1, 93.3), "c": (0.2, 93.3), "d": (0.4, 80.0)}
    paths = {key: _run(tmp_path, "cpu", key, {**BASE, "lr": lr}, {"dev_f1": f1}) for key, (lr, f1) in runs.items()}
    smoke = _run(tmp_path, "smoke", "e", {**BASE, "lr": 0.2}, {"dev_f1": 99.0})
    _run(tmp_path, "cpu", "f", {**BASE, "lr": 0.3, "seed": 1}, {"dev_f1": 99.0})        # another seed: not a rate
    _run(tmp_path, "cpu", "g", {**BASE, "lr": 0.5, "pretrained": False}, {"dev_f1": 99.0})  # another model
    models = scan(NAMERS, root=tmp_path)
    assert resolve_segmenter("pku-mmtnn+pre", models).path == paths["b"]      # 93.3 at 0.1 and 0.2: 0.1
    assert resolve_segmenter("pku-mmtnn+pre@cpu", models).path == paths["b"]
    assert resolve_segmenter("pku-mmtnn+pre@smoke", models).path == smoke
    assert resolve_segmenter("pku-mmtnn+pre-lr0.4", models).path == paths["d"]
    assert resolve_segmenter("pku-mmtnn", models).path.name.endswith("-g")
    with pytest.raises(HanzilmError, match="no model 'pku-mmtnn\\+pre\\+bigram' at profile cpu"):
        resolve_segmenter("pku-mmtnn+pre+bigram", models)


def _cli(root: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    env = {**os.environ, "HANZILM_ROOT": str(root)}
    return subprocess.run([sys.executable, *args], input=stdin, capture_output=True, env=env, timeout=60)


def test_the_book_model_by_name_before_and_after_the_book_trains_it(tmp_path):
    """Before: the name of the book's segmenter says in one line how to train it (the default model, shipped,
    needs nothing: tests/test_shipped.py); a smoke run answers to NAME@smoke only; `hanzilm models` lists nothing.
    After cpu runs of the book's config are stored, the name is the run of the dev-chosen rate."""
    root = tmp_path / "clone"
    (root / "results").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    text = "我爱北京天安门\n".encode()
    before = _cli(root, "-m", "hanzilm.cli", "segment", "--model", "pku-mmtnn+pre", stdin=text)
    err = before.stderr.decode()
    assert before.returncode == 2 and err.count("\n") == 1 and "make paper PROFILE=cpu ONLY='mmtnn/'" in err, err
    listed = _cli(root, "-m", "hanzilm.cli", "models")
    assert listed.returncode == 0 and "no trained models" in listed.stdout.decode()

    torch.manual_seed(0)
    enc = Encoder.build(["我爱北京天安门", "北京是首都"], min_freq=1)
    model = WindowTagger(TaggerSpec(dim=8, hidden=16, factors=4), len(enc.vocab), enc.n_bigrams)
    smoke = _run(root / "results", "smoke", "s", {**BASE, "lr": 0.05})
    Segmenter(model, enc).save(smoke / "segmenter")
    elsewhere = _cli(root, "-m", "hanzilm.cli", "segment", "--model", "pku-mmtnn+pre", stdin=text)  # not smoke's
    assert elsewhere.returncode == 2 and "pku-mmtnn+pre-lr0.05@smoke" in elsewhere.stderr.decode()
    named = _cli(root, "-m", "hanzilm.cli", "segment", "--model", "pku-mmtnn+pre@smoke", stdin=text)  # but this is
    assert named.returncode == 0 and named.stdout.decode().replace("  ", "") == "我爱北京天安门\n"
    for key, lr, f1 in (("a", 0.05, 91.0), ("b", 0.1, 90.0)):
        run = _run(root / "results", "cpu", key, {**BASE, "lr": lr}, {"dev_f1": f1})
        Segmenter(model, enc).save(run / "segmenter")
    (root / "results" / "cpu" / "checkpoints" / "SegmentationConfig-b" / "segmenter" / "config.json").write_text("")
    after = _cli(root, "-m", "hanzilm.cli", "segment", "--model", "pku-mmtnn+pre", stdin=text)  # lr 0.05 (b: broken)
    assert after.returncode == 0, after.stderr.decode()
    assert after.stdout.decode().replace("  ", "") == "我爱北京天安门\n"
    api = _cli(root, "-c", "from hanzilm.papers.mmtnn import load; "
                           "print(''.join(load('pku-mmtnn+pre').cut('我爱北京天安门')))")
    assert api.returncode == 0 and api.stdout.decode() == "我爱北京天安门\n", api.stderr.decode()
    listed = _cli(root, "-m", "hanzilm.cli", "models")
    assert "pku-mmtnn+pre-lr0.05@cpu" in listed.stdout.decode() and "pku-mmtnn+pre-lr0.1@cpu" in listed.stdout.decode()
    wrong = _cli(root, "-m", "hanzilm.cli", "segment", "--model", "nonesuch", stdin=b"x\n")
    assert wrong.returncode == 2 and wrong.stderr.decode().count("\n") == 1 and "no segmenter " in wrong.stderr.decode()


def test_every_name_and_path_hanzilm_models_prints_is_a_model(tmp_path, monkeypatch, capsys):
    """`segment --model` takes the stored run's directory `hanzilm models` prints (its segmenter/ is loaded), as
    well as the segmenter directory itself and the name; a run without a neural segmenter (the CRF) says so."""
    from hanzilm.cli import main

    run = _run(tmp_path, "cpu", "a", BASE)
    torch.manual_seed(0)
    enc = Encoder.build(["我们在北京工作。"], min_freq=1)
    Segmenter(WindowTagger(TaggerSpec(dim=4, hidden=8, factors=2), len(enc.vocab), 0), enc).save(run / "segmenter")
    crf = _run(tmp_path, "cpu", "b", {**BASE, "model": "crf", "pretrained": False})
    monkeypatch.setattr(mmtnn_commands, "scan", lambda namers: scan(namers, root=tmp_path))
    text = tmp_path / "in.txt"
    text.write_text("我们在北京工作。\n", encoding="utf-8")
    outputs = []
    for ref in (str(run), str(run / "segmenter"), "pku-mmtnn+pre"):
        assert main(["segment", "--model", ref, str(text)]) == 0, ref
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] == outputs[2] and "".join(outputs[0].split()) == "我们在北京工作。"
    assert main(["segment", "--model", str(crf), str(text)]) == 2
    assert "has no saved neural segmenter" in capsys.readouterr().err


def test_senses_does_not_fall_back_to_another_profiles_backpack(tmp_path, monkeypatch, capsys):
    """`hanzilm senses` (default: the cpu Backpack) with only a smoke Backpack stored says so and how to train
    the cpu one, instead of answering from the smoke model."""
    import functools

    from hanzilm import models as models_module
    from hanzilm.cli import main

    d = tmp_path / "smoke" / "checkpoints" / "LMConfig-a"
    d.mkdir(parents=True)
    (d / "done.json").write_text(json.dumps({"config_class": "LMConfig", "config": {"model": "backpack"},
                                             "best_metrics": {}}))
    monkeypatch.setattr(models_module, "scan", functools.partial(scan, root=tmp_path))
    assert main(["senses", "天"]) == 2
    err = capsys.readouterr().err
    assert "no model 'backpack' at profile cpu; there are: backpack@smoke" in err
    assert "make paper PROFILE=cpu ONLY='backpack/'" in err
