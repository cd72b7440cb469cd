"""The model store: train once, load afterwards; the key follows config, data and chapter version."""

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


V = "test/v1"


def _get(cfg, batches=None, profile="smoke", data=DATA):
    return Store.of(profile).train_or_load(cfg, version=V, build=lambda: _tiny.TinyMLP(cfg.model.dropout),
                                           batches=batches or _tiny.batches(), evaluate=_tiny.evaluate, data=data)


def test_first_call_trains_second_loads(tmp_path, monkeypatch):
    cfg = _tiny.TinyExperiment()
    model = _get(cfg)
    run = Store.of("smoke").run_dir(cfg, DATA, V)
    assert run.parent == tmp_path / "results" / "smoke" / "checkpoints"
    assert run.name == f"TinyExperiment-{config_key(cfg, DATA, V)[:12]}"
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
    history = load_history(Store.of("smoke").run_dir(cfg, DATA, V))
    assert [r["step"] for r in history if "loss" in r] == list(range(5, 31, 5))
    assert [r["step"] for r in history if "dev_loss" in r] == [10, 20, 30]


def test_key_follows_config_data_and_chapter_version():
    cfg = _tiny.TinyExperiment()
    keys = {
        config_key(cfg, DATA),
        config_key(dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, lr=2e-2)), DATA),
        config_key(dataclasses.replace(cfg, model=_tiny.TinyModelConfig(hidden=32)), DATA),
        config_key(cfg, {**DATA, "dev.txt": "sha256:cccc"}),
        config_key(cfg, DATA, version="test/v2"),
        config_key(cfg.train, DATA),  # another config class with the same fields is another model
    }
    assert len(keys) == 6
    assert config_key(cfg, dict(reversed(DATA.items()))) == config_key(cfg, DATA)  # canonical: order-free
    assert config_key(_tiny.TinyExperiment(), DATA) == config_key(cfg, DATA)     # and stable
    assert Store.of("smoke").run_dir(cfg, DATA, V) != Store.of("cpu").run_dir(cfg, DATA, V)


def test_partial_run_resumes_to_the_same_model(tmp_path):
    cfg = _tiny.TinyExperiment(model=_tiny.TinyModelConfig(dropout=0.1))

    def crash_at_15(step):
        if step == 15:
            raise KeyboardInterrupt
        return _tiny.batch_at(step)
    with pytest.raises(KeyboardInterrupt):
        _get(cfg, batches=crash_at_15)
    run = Store.of("smoke").run_dir(cfg, DATA, V)
    assert not is_complete(run) and json.loads((run / "last.json").read_text())["step"] == 10
    resumed = _get(cfg)
    straight = _get(cfg, profile="cpu")  # same key, another profile directory: trained without a break
    assert all(torch.equal(resumed.state_dict()[k], v) for k, v in straight.state_dict().items())
    strip = lambda h: [{k: v for k, v in r.items() if k not in ("time", "tokens_per_s")} for r in h]  # noqa
    assert strip(load_history(run)) == strip(load_history(Store.of("cpu").run_dir(cfg, DATA, V)))


def test_train_config_is_found_or_must_be_given():
    assert store.find_train_config(_tiny.TinyExperiment()) == _tiny.cfg()
    assert store.find_train_config(_tiny.cfg(lr=0.5)).lr == 0.5
    with pytest.raises(HanzilmError, match="0 TrainConfig fields"):
        store.find_train_config(_tiny.TinyModelConfig())


def test_explicit_train_config():
    cfg = _tiny.TinyModelConfig()
    model = Store.of("smoke").train_or_load(cfg, version=V, build=_tiny.TinyMLP, batches=_tiny.batches(),
                                            train_config=_tiny.cfg(steps=5))
    assert is_complete(Store.of("smoke").run_dir(cfg, version=V)) and isinstance(model, _tiny.TinyMLP)


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
        st.make_or_load(cfg, broken, data=DATA, version=V)
    assert not is_complete(st.run_dir(cfg, DATA, V))
    run_dir = st.make_or_load(cfg, make, data=DATA, version=V)
    assert run_dir == st.run_dir(cfg, DATA, V) and run_dir.parent == tmp_path / "store"
    done = load_summary(run_dir)
    run = json.loads((run_dir / "run.json").read_text())
    assert {k: done[k] for k in run} == run and run["key"] == config_key(cfg, DATA, V)
    assert done["best_metrics"] == {"dev_f1": 90.0} and done["wall_time"] >= 0
    assert st.make_or_load(cfg, make, data=DATA, version=V) == run_dir and len(calls) == 1


def test_trained_and_made_runs_share_the_record_schema(tmp_path):
    st = Store(tmp_path / "store")
    trained = st.run_dir(_tiny.TinyExperiment(), DATA, V)
    st.train_or_load(_tiny.TinyExperiment(), version=V, build=_tiny.TinyMLP, batches=_tiny.batches(), data=DATA)
    made = st.make_or_load(_tiny.TinyModelConfig(), lambda d: {}, data=DATA, version=V)
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
    NaN-holding checkpoint is one error naming the file."""
    from hanzilm.data.resolve import file_sha256
    from safetensors.torch import save_file

    cfg = _tiny.TinyExperiment()
    _get(cfg)
    run = Store.of("smoke").run_dir(cfg, DATA, V)
    done = load_summary(run)
    assert set(done["files"]) >= {"best.safetensors"} and not any(f.startswith("last-") for f in done["files"])
    assert "commit" in done and done["steps_per_s"] > 0
    best = run / "best.safetensors"
    weights = load_file(str(best))
    poisoned = {k: torch.full_like(v, float("nan")) for k, v in weights.items()}
    save_file(poisoned, str(best))
    with pytest.raises(HanzilmError, match=rf"{best}: its sha256 differs"):
        _get(cfg)
    # recorded as it is now (a run whose training diverged): the values are checked too
    (run / "done.json").write_text(json.dumps({**done, "files": {**done["files"], best.name: file_sha256(best)}}))
    with pytest.raises(HanzilmError, match=rf"{best}: the weights hold NaN"):
        _get(cfg)
    best.write_bytes(best.read_bytes()[:40])
    (run / "done.json").write_text(json.dumps({**done, "files": {**done["files"], best.name: file_sha256(best)}}))
    with pytest.raises(HanzilmError, match=rf"{best}: cannot load the weights"):
        _get(cfg)


def test_a_made_artefact_is_verified(tmp_path):
    st = Store(tmp_path / "store")
    cfg = _tiny.TinyModelConfig()
    run_dir = st.make_or_load(cfg, lambda d: (d / "table.txt").write_text("made") and {}, data=DATA, version=V)
    assert "table.txt" in load_summary(run_dir)["files"]
    (run_dir / "table.txt").write_text("swapped")
    with pytest.raises(HanzilmError, match="table.txt: its sha256 differs"):
        st.make_or_load(cfg, lambda d: {}, data=DATA, version=V)


def test_results_name_the_training_runs_behind_them(tmp_path):
    from hanzilm.results import Provenance

    store.LOADED.clear()
    cfg = _tiny.TinyExperiment()
    _get(cfg)
    record = Provenance(profile="smoke", seed=0).record([])
    run = Store.of("smoke").run_dir(cfg, DATA, V)
    assert [r["run"] for r in record["training_runs"]] == [f"smoke/{run.name}"]
    assert record["training_runs"][0]["wall_time_s"] == load_summary(run)["wall_time"]
    assert "commit" in record["training_runs"][0]


def test_a_run_whose_records_are_read_is_named_too(tmp_path):
    """A table made from a run's records (its evaluations written by a worker process) loads no weights; it
    still names the run, as read, and a run loaded afterwards says so."""
    cfg = _tiny.TinyExperiment()
    _get(cfg)
    run = Store.of("smoke").run_dir(cfg, DATA, V)
    store.LOADED.clear()
    load_history(run)
    assert [(r["run"], r["action"]) for r in store.LOADED.values()] == [(f"smoke/{run.name}", "read")]
    _get(cfg)
    load_summary(run)
    assert [r["action"] for r in store.LOADED.values()] == ["loaded"]


def test_snapshots_are_kept_and_recorded():
    cfg = _tiny.TinyExperiment(train=_tiny.cfg(snapshots=(8, 15, 30)))
    s = Store.of("smoke")
    s.train_or_load(cfg, version=V, build=lambda: _tiny.TinyMLP(), batches=_tiny.batches(), evaluate=_tiny.evaluate,
                    data=DATA)
    snaps = s.snapshot_paths(cfg, DATA, V)
    assert list(snaps) == [8, 15, 30]
    recorded = load_summary(s.run_dir(cfg, DATA, V))["files"]
    assert all(p.name in recorded for p in snaps.values())
    # the last snapshot is the last step's weights; the first differs from them
    last, first = load_file(str(snaps[30])), load_file(str(snaps[8]))
    assert all(torch.equal(last[k], v) for k, v in load_file(str(last_weights_path(s, cfg))).items())
    assert not all(torch.equal(last[k], first[k]) for k in last)


def last_weights_path(s, cfg):
    run = s.run_dir(cfg, DATA, V)
    return run / json.loads((run / "last.json").read_text())["weights"]


def test_snapshot_steps_double_towards_the_last_step():
    assert train_mod.snapshot_steps(1500, 6) == (47, 94, 188, 375, 750, 1500)
    assert train_mod.snapshot_steps(40, 6) == (1, 2, 5, 10, 20, 40)
    assert train_mod.snapshot_steps(1500, 0) == ()
    with pytest.raises(HanzilmError, match="snapshots must be steps"):
        _tiny.cfg(snapshots=(0,))


def test_a_default_changed_under_the_same_version_is_an_error(tmp_path, monkeypatch):
    """The key leaves defaults out, so a changed default keeps the key: loading the run stored under the old
    default is refused (a new chapter version is needed), not done silently."""
    cfg = _tiny.TinyExperiment()
    _get(cfg)
    run = Store.of("smoke").run_dir(cfg, DATA, V)
    done = load_summary(run)
    done["config"]["model"]["hidden"] = 99  # as if the default had been 99 when it trained
    (run / "done.json").write_text(json.dumps(done))
    with pytest.raises(HanzilmError, match="model.hidden.*bump it"):
        _get(cfg)


def test_adding_an_option_keeps_every_key():
    """A field added with its default (the old behaviour) is left out of the key: stored runs stay loadable."""
    @dataclasses.dataclass(frozen=True)
    class Before:
        lr: float = 0.1

    @dataclasses.dataclass(frozen=True)
    class After:
        lr: float = 0.1
        new_option: bool = False

    After.__name__ = "Before"
    assert config_key(Before(), DATA, V) == config_key(After(), DATA, V)
    assert config_key(Before(), DATA, V) != config_key(After(new_option=True), DATA, V)


def test_a_train_config_given_apart_is_checked_like_the_config():
    """A TrainConfig passed as train_config= (built from the model's config, so not in its key) is recorded
    whole: a changed default of it loads no stale run, it is an error."""
    cfg = _tiny.TinyModelConfig()
    st = Store.of("smoke")
    kw = dict(version=V, build=_tiny.TinyMLP, batches=_tiny.batches(), evaluate=_tiny.evaluate, data=DATA)
    st.train_or_load(cfg, train_config=_tiny.cfg(), **kw)
    run = st.run_dir(cfg, DATA, V)
    assert load_summary(run)["train_config"]["grad_clip"] == 1.0
    done = load_summary(run)
    done["train_config"]["max_nonfinite"] = 3  # as if its default had been 3 when the run trained
    (run / "done.json").write_text(json.dumps(done))
    with pytest.raises(HanzilmError, match="train_config.max_nonfinite.*bump it"):
        st.train_or_load(cfg, train_config=_tiny.cfg(), **kw)


def test_a_partial_run_of_other_settings_is_not_resumed():
    """A run killed before a default changed does not go on under the new one (a model trained half under
    each): resuming it is an error naming the field."""
    cfg = _tiny.TinyExperiment()
    run = Store.of("smoke").run_dir(cfg, DATA, V)
    run.mkdir(parents=True)
    info = store._info(cfg, config_key(cfg, DATA, V), DATA, V)
    info["config"]["train"]["max_nonfinite"] = 3
    (run / "run.json").write_text(json.dumps(info))
    with pytest.raises(HanzilmError, match="partial run started with other values of config.train.max_nonfinite"):
        _get(cfg)


def test_a_store_root_of_its_own_leaves_the_profiles_store_alone(tmp_path, monkeypatch):
    """`make test` trains its smoke models under $HANZILM_STORE: results/smoke/checkpoints is not touched, and the
    runs are recorded under the same names (profile/run) as in the profile's own store."""
    monkeypatch.setenv("HANZILM_STORE", str(tmp_path / "elsewhere"))
    assert Store.of("smoke").root == tmp_path / "elsewhere" / "smoke" / "checkpoints"
    monkeypatch.delenv("HANZILM_STORE")
    assert Store.of("smoke").root == paths.RESULTS / "smoke" / "checkpoints"
