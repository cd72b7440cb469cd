"""The trainer's extra selections (keep_best): each kept as best-<metric>.safetensors, resumable, and loadable
through Store.train_or_load(select=...)."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

import _tiny
from hanzilm import paths
from hanzilm.errors import HanzilmError
from hanzilm.store import Store
from hanzilm.train import train


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    monkeypatch.setenv("HANZILM_PROGRESS", "0")


def test_extra_selection_is_kept_beside_the_main_one(tmp_path):
    cfg = _tiny.cfg(steps=40, eval_every=5, metric="dev_loss", metric_mode="min")
    res = train(_tiny.build(), cfg, _tiny.batches(), _tiny.evaluate, tmp_path, keep_best=[("dev_acc", "max")])
    evals = [r for r in res.history if "dev_acc" in r]
    best_acc = max(evals, key=lambda r: r["dev_acc"])          # the first of ties, as the trainer keeps
    best_loss = min(evals, key=lambda r: r["dev_loss"])
    info = json.loads((tmp_path / "best-dev_acc.json").read_text())
    assert info["step"] == best_acc["step"] and info["metric"] == "dev_acc" and info["mode"] == "max"
    assert json.loads((tmp_path / "best.json").read_text())["step"] == best_loss["step"]
    assert res.extra_best["dev_acc"]["step"] == best_acc["step"]
    # the weights are those of that step: evaluating them reproduces the recorded metrics
    model = _tiny.build()
    model.load_state_dict(load_file(str(tmp_path / "best-dev_acc.safetensors")))
    with torch.no_grad():
        assert _tiny.evaluate(model)["dev_acc"] == pytest.approx(best_acc["dev_acc"])


def test_extra_selection_survives_resume(tmp_path):
    cfg = _tiny.cfg(steps=40, eval_every=5, checkpoint_every=10)
    keep = [("dev_acc", "max"), ("dev_loss", "max")]           # a deliberately odd second one
    whole = train(_tiny.build(), cfg, _tiny.batches(), _tiny.evaluate, tmp_path / "a", keep_best=keep)

    def crash(step):
        if step == 23:
            raise RuntimeError("killed")
        return _tiny.batch_at(step)
    with pytest.raises(RuntimeError):
        train(_tiny.build(), cfg, crash, _tiny.evaluate, tmp_path / "b", keep_best=keep)
    resumed = train(_tiny.build(), cfg, _tiny.batches(), _tiny.evaluate, tmp_path / "b", keep_best=keep)
    assert resumed.extra_best == whole.extra_best
    for m, _ in keep:
        a = load_file(str(tmp_path / "a" / f"best-{m}.safetensors"))
        b = load_file(str(tmp_path / "b" / f"best-{m}.safetensors"))
        assert all(torch.equal(a[k], b[k]) for k in a)


def test_bad_keep_best_is_refused(tmp_path):
    cfg = _tiny.cfg(steps=5)
    for keep, ev in [([("dev_acc", "up")], _tiny.evaluate), ([("dev_acc", "max")], None),
                     ([("nope", "max")], _tiny.evaluate)]:
        with pytest.raises(HanzilmError):
            train(_tiny.build(), cfg, _tiny.batches(), ev, tmp_path / str(len(str(keep)) + bool(ev)),
                  keep_best=keep)


def test_train_or_load_selects(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RESULTS", tmp_path / "results")
    exp = _tiny.TinyExperiment(train=_tiny.cfg(steps=30, eval_every=5))
    store = Store.of("smoke")
    kw = dict(version="test/v1", build=_tiny.build, batches=_tiny.batches(), evaluate=_tiny.evaluate, keep_best=[("dev_acc", "max")])
    by_loss = store.train_or_load(exp, **kw)
    by_acc = store.train_or_load(exp, **kw, select="dev_acc")         # loaded, not retrained
    run_dir = store.run_dir(exp, version="test/v1")
    done = json.loads((run_dir / "done.json").read_text())
    assert done["extra_best"]["dev_acc"]["step"] == json.loads((run_dir / "best-dev_acc.json").read_text())["step"]
    acc = _tiny.evaluate(by_acc)["dev_acc"]
    assert acc == pytest.approx(done["extra_best"]["dev_acc"]["metrics"]["dev_acc"])
    assert acc >= _tiny.evaluate(by_loss)["dev_acc"]
