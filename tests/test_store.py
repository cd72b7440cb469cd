"""The model store: train once, load afterwards; the key follows config, data and code version."""

from __future__ import annotations

import dataclasses
import json
import time

import pytest
import torch
from safetensors.torch import load_file

import _tiny
from hanzilm import paths, store
from hanzilm import train as train_mod
from hanzilm.errors import HanzilmError
from hanzilm.store import Store, config_key, is_complete, load_history, load_summary

DATA = {"train.txt": "sha256:aaaa", "dev.txt": "sha256:bbbb"}


@pytest.fixture(autouse=True)
def _results_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RESULTS", tmp_path / "results")
    monkeypatch.setenv("HANZILM_PROGRESS", "0")


def _get(cfg, batches=None, profile="smoke", data=DATA):
    return Store.of(profile).train_or_load(cfg, build=lambda: _tiny.TinyMLP(cfg.model.dropout),
                                           batches=batches or _tiny.batches(), evaluate=_tiny.evaluate, data=data)


def test_first_call_trains_second_loads(tmp_path, monkeypatch):
    cfg = _tiny.TinyExperiment()
    model = _get(cfg)
    run = Store.of("smoke").run_dir(cfg, DATA)
    assert run.parent == tmp_path / "results" / "smoke" / "checkpoints"
    assert run.name == f"TinyExperiment-{config_key(cfg, DATA)[:12]}"
    assert is_complete(run) and not model.training
    best = load_file(str(run / "best.safetensors"))
    assert all(torch.equal(best[k], v) for k, v in model.state_dict().items())
    summary = load_summary(run)
    assert summary["best_step"] == json.loads((run / "best.json").read_text())["step"]
    assert summary["data"] == DATA and summary["config"]["train"]["steps"] == cfg.train.steps

    def no_training(*a, **kw):
        raise AssertionError("the trainer ran for a complete run")
    monkeypatch.setattr(train_mod, "train", no_training)
    t0 = time.perf_counter()
    again = _get(cfg, batches=lambda step: pytest.fail("batches used for a complete run"))
    assert time.perf_counter() - t0 < 0.5
    assert all(torch.equal(again.state_dict()[k], v) for k, v in model.state_dict().items())


def test_history_for_plots():
    cfg = _tiny.TinyExperiment()
    _get(cfg)
    history = load_history(Store.of("smoke").run_dir(cfg, DATA))
    assert [r["step"] for r in history if "loss" in r] == list(range(5, 31, 5))
    assert [r["step"] for r in history if "dev_loss" in r] == [10, 20, 30]


def test_key_follows_config_data_and_code_version():
    cfg = _tiny.TinyExperiment()
    keys = {
        config_key(cfg, DATA),
        config_key(dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, lr=2e-2)), DATA),
        config_key(dataclasses.replace(cfg, model=_tiny.TinyModelConfig(hidden=32)), DATA),
        config_key(cfg, {**DATA, "dev.txt": "sha256:cccc"}),
        config_key(cfg, DATA, code_version="v2"),
        config_key(cfg.train, DATA),  # another config class with the same fields is another model
    }
    assert len(keys) == 6
    assert config_key(cfg, dict(reversed(DATA.items()))) == config_key(cfg, DATA)  # canonical: order-free
    assert config_key(_tiny.TinyExperiment(), DATA) == config_key(cfg, DATA)     # and stable
    assert Store.of("smoke").run_dir(cfg, DATA) != Store.of("cpu").run_dir(cfg, DATA)


def test_partial_run_resumes_to_the_same_model(tmp_path):
    cfg = _tiny.TinyExperiment(model=_tiny.TinyModelConfig(dropout=0.1))

    def crash_at_15(step):
        if step == 15:
            raise KeyboardInterrupt
        return _tiny.batch_at(step)
    with pytest.raises(KeyboardInterrupt):
        _get(cfg, batches=crash_at_15)
    run = Store.of("smoke").run_dir(cfg, DATA)
    assert not is_complete(run) and json.loads((run / "last.json").read_text())["step"] == 10
    resumed = _get(cfg)
    straight = _get(cfg, profile="cpu")  # same key, another profile directory: trained without a break
    assert all(torch.equal(resumed.state_dict()[k], v) for k, v in straight.state_dict().items())
    strip = lambda h: [{k: v for k, v in r.items() if k not in ("time", "tokens_per_s")} for r in h]  # noqa
    assert strip(load_history(run)) == strip(load_history(Store.of("cpu").run_dir(cfg, DATA)))


def test_train_config_is_found_or_must_be_given():
    assert store.find_train_config(_tiny.TinyExperiment()) == _tiny.cfg()
    assert store.find_train_config(_tiny.cfg(lr=0.5)).lr == 0.5
    with pytest.raises(HanzilmError, match="0 TrainConfig fields"):
        store.find_train_config(_tiny.TinyModelConfig())


def test_explicit_train_config():
    cfg = _tiny.TinyModelConfig()
    model = Store.of("smoke").train_or_load(cfg, build=_tiny.TinyMLP, batches=_tiny.batches(),
                                            train_config=_tiny.cfg(steps=5))
    assert is_complete(Store.of("smoke").run_dir(cfg)) and isinstance(model, _tiny.TinyMLP)


def test_make_or_load_writes_the_same_records_and_makes_once(tmp_path):
    """The door for non-gradient artefacts: run.json first, done.json last with what `make` returned; a
    complete artefact is not made again; a failed make leaves no done.json, so the next call redoes it."""
    st = Store(tmp_path / "store")
    cfg = _tiny.TinyModelConfig()
    calls = []

    def make(run_dir):
        calls.append(run_dir)
        (run_dir / "table.txt").write_text("made")
        return {"best_metrics": {"dev_f1": 90.0}}

    def broken(run_dir):
        raise RuntimeError("crashed half-way")

    with pytest.raises(RuntimeError):
        st.make_or_load(cfg, broken, data=DATA)
    assert not is_complete(st.run_dir(cfg, DATA))
    run_dir = st.make_or_load(cfg, make, data=DATA)
    assert run_dir == st.run_dir(cfg, DATA) and run_dir.parent == tmp_path / "store"
    done = load_summary(run_dir)
    run = json.loads((run_dir / "run.json").read_text())
    assert {k: done[k] for k in run} == run and run["key"] == config_key(cfg, DATA)
    assert done["best_metrics"] == {"dev_f1": 90.0} and done["wall_time"] >= 0
    assert st.make_or_load(cfg, make, data=DATA) == run_dir and len(calls) == 1


def test_trained_and_made_runs_share_the_record_schema(tmp_path):
    st = Store(tmp_path / "store")
    trained = st.run_dir(_tiny.TinyExperiment(), DATA)
    st.train_or_load(_tiny.TinyExperiment(), build=_tiny.TinyMLP, batches=_tiny.batches(), data=DATA)
    made = st.make_or_load(_tiny.TinyModelConfig(), lambda d: {}, data=DATA)
    shared = {"key", "config_class", "config", "data", "code_version", "wall_time"}
    assert shared <= set(load_summary(trained)) and shared <= set(load_summary(made))


def test_unkeyable_config_is_reported():
    @dataclasses.dataclass(frozen=True)
    class Odd:
        f: object = dataclasses.field(default_factory=object)
    with pytest.raises(HanzilmError, match="cannot key Odd"):
        config_key(Odd())


def test_load_model_checks_file(tmp_path):
    with pytest.raises(HanzilmError, match="no such checkpoint"):
        store.load_model(_tiny.TinyMLP(), tmp_path / "missing.safetensors")


def test_a_stored_model_is_verified_on_load(tmp_path):
    """Issue 13, item 2: done.json records the commit and the sha256 of the weights; a changed, truncated or
    NaN-holding checkpoint is one error naming the file (runs from before checksums: value checks only)."""
    from safetensors.torch import save_file

    cfg = _tiny.TinyExperiment()
    _get(cfg)
    run = Store.of("smoke").run_dir(cfg, DATA)
    done = load_summary(run)
    assert set(done["files"]) >= {"best.safetensors"} and not any(f.startswith("last-") for f in done["files"])
    assert "commit" in done and done["steps_per_s"] > 0
    best = run / "best.safetensors"
    weights = load_file(str(best))
    poisoned = {k: torch.full_like(v, float("nan")) for k, v in weights.items()}
    save_file(poisoned, str(best))
    with pytest.raises(HanzilmError, match=rf"{best}: its sha256 differs"):
        _get(cfg)
    (run / "done.json").write_text(json.dumps({k: v for k, v in done.items() if k != "files"}))
    with pytest.raises(HanzilmError, match=rf"{best}: the weights hold NaN"):
        _get(cfg)
    best.write_bytes(best.read_bytes()[:40])
    with pytest.raises(HanzilmError, match=rf"{best}: cannot load the weights"):
        _get(cfg)


def test_a_made_artefact_is_verified(tmp_path):
    st = Store(tmp_path / "store")
    cfg = _tiny.TinyModelConfig()
    run_dir = st.make_or_load(cfg, lambda d: (d / "table.txt").write_text("made") and {}, data=DATA)
    assert "table.txt" in load_summary(run_dir)["files"]
    (run_dir / "table.txt").write_text("swapped")
    with pytest.raises(HanzilmError, match="table.txt: its sha256 differs"):
        st.make_or_load(cfg, lambda d: {}, data=DATA)


def test_results_name_the_training_runs_behind_them(tmp_path):
    from hanzilm.results import Provenance

    store.LOADED.clear()
    cfg = _tiny.TinyExperiment()
    _get(cfg)
    record = Provenance(profile="smoke", seed=0).record([])
    run = Store.of("smoke").run_dir(cfg, DATA)
    assert [r["run"] for r in record["training_runs"]] == [f"smoke/{run.name}"]
    assert record["training_runs"][0]["wall_time_s"] == load_summary(run)["wall_time"]
    assert "commit" in record["training_runs"][0]


def test_snapshots_are_kept_and_recorded():
    cfg = _tiny.TinyExperiment()
    s = Store.of("smoke")
    s.train_or_load(cfg, build=lambda: _tiny.TinyMLP(), batches=_tiny.batches(), evaluate=_tiny.evaluate,
                    data=DATA, snapshots=(8, 15, 30))
    snaps = s.snapshot_paths(cfg, DATA)
    assert list(snaps) == [8, 15, 30]
    recorded = load_summary(s.run_dir(cfg, DATA))["files"]
    assert all(p.name in recorded for p in snaps.values())
    # the last snapshot is the last step's weights; the first differs from them
    last, first = load_file(str(snaps[30])), load_file(str(snaps[8]))
    assert all(torch.equal(last[k], v) for k, v in load_file(str(s.run_dir(cfg, DATA) / "best.safetensors")).items()
               if load_summary(s.run_dir(cfg, DATA))["best_step"] == 30)
    assert not all(torch.equal(last[k], first[k]) for k in last)


def test_a_run_stored_without_snapshots_is_replayed_and_checked():
    cfg = _tiny.TinyExperiment()
    s = Store.of("smoke")
    s.train_or_load(cfg, build=lambda: _tiny.TinyMLP(), batches=_tiny.batches(), evaluate=_tiny.evaluate, data=DATA)
    run = s.run_dir(cfg, DATA)
    best = (run / "best.safetensors").read_bytes()
    assert s.snapshot_paths(cfg, DATA) == {}
    s.train_or_load(cfg, build=lambda: _tiny.TinyMLP(), batches=_tiny.batches(), evaluate=_tiny.evaluate,
                    data=DATA, snapshots=(10, 20))
    assert list(s.snapshot_paths(cfg, DATA)) == [10, 20]
    assert (run / "best.safetensors").read_bytes() == best and not (run / "replay").exists()
    done = load_summary(run)
    assert "snapshots_replayed" in done and "snapshot-00000010.safetensors" in done["files"]
    # a replay that does not end in the stored weights (here: other data) keeps no snapshot
    with pytest.raises(HanzilmError, match="did not end in its stored weights"):
        s.train_or_load(cfg, build=lambda: _tiny.TinyMLP(), batches=_tiny.batches(seed=7),
                        evaluate=_tiny.evaluate, data=DATA, snapshots=(10, 20, 25))
    assert list(s.snapshot_paths(cfg, DATA)) == [10, 20]


def test_snapshot_steps_double_towards_the_last_step():
    assert train_mod.snapshot_steps(1500, 6) == (47, 94, 188, 375, 750, 1500)
    assert train_mod.snapshot_steps(40, 6) == (1, 2, 5, 10, 20, 40)
    assert train_mod.snapshot_steps(1500, 0) == ()
    with pytest.raises(HanzilmError, match="snapshots must be steps"):
        train_mod.train(_tiny.TinyMLP(), _tiny.TinyExperiment().train, _tiny.batches(), None, "/tmp/x",
                        snapshots=(0,))


def _source_module(tmp_path, name, text):
    import importlib.util

    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_code_version_changes_with_the_code_not_with_its_comments(tmp_path):
    """A store key's code version hashes the source that trains: editing a docstring or a comment keeps every
    stored model, editing what runs makes the store train again (another key)."""
    from hanzilm.keys import source_version

    base = 'def step(x):\n    """Double."""\n    return 2 * x\n'
    versions = [source_version("m", _source_module(tmp_path, f"m{i}", text)) for i, text in enumerate([
        base, base.replace("Double.", "Twice x."), base.replace("return", "# why\n    return"),
        base.replace("2 * x", "3 * x")])]
    assert versions[0] == versions[1] == versions[2] != versions[3]
    assert versions[0].startswith("m/") and len(versions[0]) == 14
    cfg = _tiny.TinyExperiment()
    assert config_key(cfg, DATA, versions[0]) != config_key(cfg, DATA, versions[3])


def test_the_code_version_is_the_code_the_process_imported(tmp_path):
    """A long run keeps the keys of the code it runs: editing a file after the first hash (the modules that key
    models hash at import) does not change the version this process computes."""
    from hanzilm.keys import source_version

    module = _source_module(tmp_path, "edited", 'def step(x):\n    return 2 * x\n')
    first = source_version("m", module.step)
    (tmp_path / "edited.py").write_text('def other():\n    pass\n\n\ndef step(x):\n    return 3 * x\n')
    assert source_version("m", module.step) == first
