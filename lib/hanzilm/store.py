"""The one store of trained artefacts: train once, load afterwards, keyed by what determines them.

    store = Store.of("cpu")                          # results/cpu/checkpoints/, chosen once per chapter
    model = store.train_or_load(cfg, version=versions.key("backpack"), build=lambda: GPT(cfg.model),
                                batches=train_batches, evaluate=evaluate, data=checksums)
    vectors_dir = store.make_or_load(w2v_cfg, make=train_vectors, data=checksums, version=...)  # non-gradient
    history = load_history(store.run_dir(cfg, data=checksums, version=...))

An artefact lives in <store root>/<ConfigName>-<key[:12]>/, where key is the sha256 of canonical JSON of
(config class name, its fields that differ from their defaults, data checksums, the chapter version:
`hanzilm.keys`, `hanzilm.versions`). Both doors write the same records: `run.json`
(what the run is) first, `done.json` (the same, plus what came out of it) last, atomically; without done.json
the directory is a partial run that the next call resumes (models) or redoes (other artefacts). A lock makes a
second process asking for the same artefact wait, then load.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import torch
import torch.distributed as dist
from safetensors.torch import load_model as _load_model

from . import paths
from . import train as trainer
from .data.resolve import file_sha256
from .errors import HanzilmError
from .io import atomic_write_text
from .keys import disagreements, key_fields
from .train import TrainConfig

try:
    import fcntl
except ImportError:  # not POSIX: no cross-process lock
    fcntl = None


def _json_default(x: Any) -> Any:
    if isinstance(x, Path):
        return str(x)
    if isinstance(x, enum.Enum):
        return x.value
    if isinstance(x, (set, frozenset)):
        return sorted(x)
    raise TypeError(f"{type(x).__name__} is not JSON-serialisable")


def config_key(config: Any, data: Mapping[str, str] | None = None, version: str = "") -> str:
    """sha256 (hex) of canonical JSON of the config class name and non-default fields, the data checksums and
    the chapter version: any change to them is another run."""
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        raise HanzilmError(f"train_or_load needs a dataclass config instance, not {type(config).__name__}")
    payload = {"config": type(config).__name__, "fields": key_fields(config),
               "data": dict(data or {}), "code": version}
    try:
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                          allow_nan=False, default=_json_default)
    except (TypeError, ValueError) as e:
        raise HanzilmError(f"cannot key {type(config).__name__}: {e}") from None
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def is_complete(run_dir: str | Path) -> bool:
    return (Path(run_dir) / "done.json").is_file()


def load_model(model: torch.nn.Module, path: str | Path, device: str | torch.device | None = None,
               sha256: str | None = None) -> torch.nn.Module:
    """Load safetensors weights into `model` (strict), on `device` (default: where the model is). A file that
    does not match `sha256` (when the run recorded it), does not parse, does not fit the model or holds NaN or
    infinite values is one error naming it."""
    from safetensors import SafetensorError

    path = Path(path)
    if not path.is_file():
        raise HanzilmError(f"{path}: no such checkpoint")
    if sha256 is not None and file_sha256(path) != sha256:
        raise HanzilmError(f"{path}: its sha256 differs from the one its run recorded (done.json): the file was "
                           "changed, truncated or replaced; delete the run directory to train it again")
    if device is None:
        device = next(model.parameters(), torch.empty(0)).device
    model.to(device)
    try:
        _load_model(model, path, strict=True, device=str(device))
    except (SafetensorError, OSError, RuntimeError) as e:
        raise HanzilmError(f"{path}: cannot load the weights: {str(e).splitlines()[0]}") from None
    # parameters only: a buffer may hold -inf on purpose (an attention mask)
    bad = [n for n, p in model.named_parameters() if not bool(p.isfinite().all())]
    if bad:
        raise HanzilmError(f"{path}: the weights hold NaN or infinite values ({', '.join(bad[:3])})")
    return model


def _kept_files(run_dir: Path) -> dict[str, str]:
    """sha256 of the files a complete run is loaded from (its weights and what `make` wrote), not its logs,
    records, locks or resume checkpoints (last-*, which the run no longer needs)."""
    skip = {"run.json", "done.json", ".lock", "history.json", "last.json"}
    return {f.name: file_sha256(f) for f in sorted(run_dir.iterdir())
            if f.is_file() and f.name not in skip and not f.name.startswith("last-")}


def load_history(run_dir: str | Path) -> list[dict[str, Any]]:
    """The run's history (one dict per logged/evaluated step), e.g. for `pandas.DataFrame(...)`."""
    path = Path(run_dir) / "history.json"
    if not path.is_file():
        raise HanzilmError(f"{path}: no history; has this run been trained?")
    if is_complete(run_dir):
        note_read(run_dir)
    return json.loads(path.read_text())


def load_summary(run_dir: str | Path) -> dict[str, Any]:
    """done.json of a complete run: key, config, data, code_version, wall_time and what the run produced
    (for a trained model: best_step, best_metrics, extra_best, steps)."""
    done = _done(Path(run_dir))
    note_read(run_dir, done)
    return done


def _done(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "done.json"
    if not path.is_file():
        raise HanzilmError(f"{path}: the run is not complete")
    return json.loads(path.read_text())


def find_train_config(config: Any) -> TrainConfig:
    """The TrainConfig a model config embeds (its only TrainConfig field), or the config itself."""
    if isinstance(config, TrainConfig):
        return config
    found = [getattr(config, f.name) for f in dataclasses.fields(config)
             if isinstance(getattr(config, f.name), TrainConfig)]
    if len(found) != 1:
        raise HanzilmError(f"{type(config).__name__} has {len(found)} TrainConfig fields, not 1; "
                           "pass train_config=TrainConfig(...) to train_or_load")
    return found[0]


@contextlib.contextmanager
def _lock(run_dir: Path, enabled: bool) -> Iterator[None]:
    # Two notebooks asking for the same model: the second waits, then finds done.json and loads.
    if not enabled or fcntl is None:
        yield
        return
    run_dir.mkdir(parents=True, exist_ok=True)
    with open(run_dir / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _info(config: Any, key: str, data: Mapping[str, str] | None, version: str,
          train_config: TrainConfig | None = None) -> dict[str, Any]:
    """What run.json and done.json record of a run; a TrainConfig given apart from the config (built from it,
    so not in the key) is recorded whole, to be checked like the config (`_check_config`)."""
    extra = {"train_config": _as_json(train_config)} if train_config is not None else {}
    return {"key": key, "config_class": type(config).__name__, "config": _as_json(config), **extra,
            "data": dict(data or {}), "code_version": version}


def _settings(info: Mapping[str, Any]) -> dict[str, Any]:
    return {k: info[k] for k in ("config", "train_config") if k in info}


def _as_json(config: Any) -> dict[str, Any]:
    return json.loads(json.dumps(dataclasses.asdict(config), default=_json_default))


# every run this process has trained, loaded or read a record of, by directory: the results writer records them
# beside each table (`Provenance.record`), so a result names the training runs behind it (a table made from
# stored records, e.g. evaluations a worker process wrote, loads no weights), with their commit and wall time
LOADED: dict[str, dict[str, Any]] = {}
TRAINED_HERE: set[str] = set()   # runs this process trained (`Store.train`): their next `load` records "trained"


def _note(run_dir: Path, action: str, done: Mapping[str, Any] | None = None) -> None:
    done = _done(run_dir) if done is None else done
    LOADED[str(run_dir)] = {"run": f"{run_dir.parent.parent.name}/{run_dir.name}", "action": action,
                            "commit": done.get("commit"), "dirty": done.get("dirty"),
                            "wall_time_s": done.get("wall_time"), "code_version": done.get("code_version")}


def note_read(run_dir: str | Path, done: Mapping[str, Any] | None = None) -> None:
    """Name a complete run among those behind this process's results, as read (a run it trained or loaded
    keeps that action)."""
    if str(Path(run_dir)) not in LOADED:
        _note(Path(run_dir), "read", done)


@dataclasses.dataclass(frozen=True)
class Store:
    """A directory of trained artefacts (one per profile: `Store.of(profile)`), the one door to them."""

    root: Path

    @classmethod
    def of(cls, profile: str) -> Store:
        """results/<profile>/checkpoints/: where a profile's runs are kept; $HANZILM_STORE/<profile>/checkpoints/
        if that is set (`make test` trains its smoke models there, apart from the user's)."""
        return cls(Path(os.environ.get(paths.STORE_ENV) or paths.RESULTS) / profile / "checkpoints")

    def run_dir(self, config: Any, data: Mapping[str, str] | None = None, version: str = "") -> Path:
        key = config_key(config, data, version)
        return Path(self.root) / f"{type(config).__name__}-{key[:12]}"

    def train_or_load(self, config: Any, *, version: str, build: Callable[[], torch.nn.Module],
                      batches: Callable[..., Any], evaluate: trainer.Evaluate | None = None,
                      data: Mapping[str, str] | None = None, train_config: TrainConfig | None = None,
                      device: str | torch.device | None = None, keep_best: Sequence[tuple[str, str]] = (),
                      select: str | None = None) -> torch.nn.Module:
        """The model for `config` with its best weights, in eval mode: loaded if a complete run is stored,
        otherwise trained (resuming a partial run), then loaded (`train`, then `load`).

        version: the chapter's (`hanzilm.versions.key`). build: makes the untrained model (called after seeding
        torch with the train seed, so the initialisation is a function of the key). batches/evaluate/keep_best:
        as for `hanzilm.train.train`; train_config: by default the one `config` embeds; select: load the weights
        of a keep_best metric instead of the TrainConfig metric's. Works under torchrun: every rank calls it."""
        self.train(config, version=version, build=build, batches=batches, evaluate=evaluate, data=data,
                   train_config=train_config, device=device, keep_best=keep_best)
        return self.load(config, version=version, build=build, data=data, train_config=train_config,
                         device=device, select=select)

    def train(self, config: Any, *, version: str, build: Callable[[], torch.nn.Module],
              batches: Callable[..., Any], evaluate: trainer.Evaluate | None = None,
              data: Mapping[str, str] | None = None, train_config: TrainConfig | None = None,
              device: str | torch.device | None = None, keep_best: Sequence[tuple[str, str]] = ()) -> bool:
        """Train `config`'s run unless a complete one is stored (resuming a partial run); True if it trained
        now. Loads nothing (`load` does)."""
        run_dir = self.run_dir(config, data, version)
        d = trainer.setup(device)
        tcfg = train_config or find_train_config(config)
        info = _info(config, config_key(config, data, version), data, version, train_config)
        with _lock(run_dir, enabled=d.main):
            trains = not _agreed_complete(run_dir, d)
            if trains:
                torch.manual_seed(tcfg.seed)
                _train(run_dir, info, build(), tcfg, batches, evaluate, keep_best, d)
                TRAINED_HERE.add(str(run_dir))
        _check_config(run_dir, info)
        return trains

    def load(self, config: Any, *, version: str, build: Callable[[], torch.nn.Module],
             data: Mapping[str, str] | None = None, train_config: TrainConfig | None = None,
             device: str | torch.device | None = None, select: str | None = None) -> torch.nn.Module:
        """The stored model for `config` with its best weights (or `select`'s), in eval mode; never trains: a run
        not stored complete is an error saying so."""
        run_dir = self.run_dir(config, data, version)
        if not is_complete(run_dir):
            raise HanzilmError(f"{run_dir}: no complete run of this {type(config).__name__} in the store: train it "
                               "first (its chapter's training cell)")
        _check_config(run_dir, _info(config, config_key(config, data, version), data, version, train_config))
        d = trainer.setup(device)
        torch.manual_seed((train_config or find_train_config(config)).seed)
        model = build()
        name = f"{trainer.best_name(select)}.safetensors"
        model = load_model(model, run_dir / name, device=d.device, sha256=load_summary(run_dir)["files"].get(name))
        _note(run_dir, "trained" if str(run_dir) in TRAINED_HERE else "loaded")
        TRAINED_HERE.discard(str(run_dir))
        return model.eval()

    def snapshot_paths(self, config: Any, data: Mapping[str, str] | None = None, version: str = ""
                       ) -> dict[int, Path]:
        """{step: weights} of the snapshots a complete run kept (`TrainConfig.snapshots`)."""
        run_dir = self.run_dir(config, data, version)
        recorded = load_summary(run_dir)["files"]
        found = {int(f.name[len("snapshot-"):-len(".safetensors")]): f for f in run_dir.glob("snapshot-*.safetensors")
                 if f.name in recorded}
        return dict(sorted(found.items()))

    def make_or_load(self, config: Any, make: Callable[[Path], Mapping[str, Any]], *, version: str,
                     data: Mapping[str, str] | None = None) -> Path:
        """The run directory of a non-gradient artefact (word2vec vectors, a CRF), made first if the store has
        no complete one: `make(run_dir)` writes its files there (each atomically) and returns what done.json
        records beside the run (e.g. `best_metrics`); `wall_time` is added."""
        run_dir = self.run_dir(config, data, version)
        info = _info(config, config_key(config, data, version), data, version)
        with _lock(run_dir, enabled=True):
            made = not is_complete(run_dir)
            if made:
                _begin(run_dir, info)
                t0 = time.perf_counter()
                outcome = dict(make(run_dir))
                _finish(run_dir, info, {**outcome, "wall_time": time.perf_counter() - t0})
        _check_config(run_dir, info)
        _verify_files(run_dir)
        _note(run_dir, "trained" if made else "loaded")
        return run_dir


def _agreed_complete(run_dir: Path, d: trainer.Dist) -> bool:
    """Whether the run is complete, as rank 0 sees it: all ranks then train together or not at all."""
    complete = [is_complete(run_dir)]
    if d.world > 1:
        dist.broadcast_object_list(complete, src=0)
    return complete[0]


def _train(run_dir: Path, info: dict[str, Any], model: torch.nn.Module, tcfg: TrainConfig,
           batches: Callable[..., Any], evaluate: trainer.Evaluate | None, keep_best: Sequence[tuple[str, str]],
           d: trainer.Dist) -> None:
    if d.main:
        _begin(run_dir, info)
    t0 = time.perf_counter()
    result = trainer.train(model, tcfg, batches, evaluate, run_dir, device=d.device, keep_best=keep_best)
    if d.main:
        _finish(run_dir, info, {"best_step": result.best_step, "best_metrics": result.best_metrics,
                                "extra_best": result.extra_best, "steps": result.steps,
                                "wall_time": result.wall_time, "session_time": time.perf_counter() - t0})
    if d.world > 1:
        dist.barrier()  # nobody loads done.json before rank 0 has written it


def _check_config(run_dir: Path, info: Mapping[str, Any]) -> None:
    """A stored run's recorded config (and TrainConfig) agree with the current ones in every field both have.
    They can differ only where a default changed (the key leaves defaults out): that changes what the code
    computes, so it needs a new chapter version (`hanzilm.versions`), not a silent load."""
    differ = disagreements(_settings(load_summary(run_dir)), _settings(info))
    if differ:
        raise HanzilmError(f"{run_dir}: stored with other values of {', '.join(differ)} under the same key: a "
                           "default changed without a new chapter version; bump it in hanzilm/versions.py")


def required(store: Store | None) -> Store:
    """`store`, or an error saying how a chapter config gets one: chapters are composed by their
    `configure(profile)`, which sets the profile's store."""
    if store is None:
        raise HanzilmError("no model store: compose the chapter config with its configure(profile)")
    return store


def _begin(run_dir: Path, info: dict[str, Any]) -> None:
    _check_same_run(run_dir, info)
    atomic_write_text(run_dir / "run.json", json.dumps(info, indent=1, ensure_ascii=False))


def _finish(run_dir: Path, info: dict[str, Any], outcome: Mapping[str, Any]) -> None:
    # written last: its presence means every other file of the run is complete. It records what trained it
    # (the commit, whether the code differed from it) and the checksum of every file it is loaded from.
    commit, dirty = paths.git_state()
    made = {"commit": commit, "dirty": dirty, "files": _kept_files(run_dir)}
    if outcome.get("steps") and outcome.get("wall_time"):
        made["steps_per_s"] = outcome["steps"] / outcome["wall_time"]
    atomic_write_text(run_dir / "done.json", json.dumps({**info, **outcome, **made}, indent=1, ensure_ascii=False))


def _verify_files(run_dir: Path) -> None:
    """The files a complete run recorded, unchanged."""
    for name, digest in load_summary(run_dir)["files"].items():
        path = run_dir / name
        if not path.is_file():
            raise HanzilmError(f"{path}: missing (its run's done.json lists it)")
        if file_sha256(path) != digest:
            raise HanzilmError(f"{path}: its sha256 differs from the one its run recorded (done.json): the file "
                               "was changed, truncated or replaced; delete the run directory to make it again")


def _check_same_run(run_dir: Path, info: dict[str, Any]) -> None:
    """A partial run is resumed only if it is this run: the same key and, field by field, the same settings (a
    default changed since it started would otherwise give a model trained half under each)."""
    path = run_dir / "run.json"
    if not path.is_file():
        return
    recorded = json.loads(path.read_text())
    if recorded.get("key") != info["key"]:
        raise HanzilmError(f"{run_dir} belongs to another run (12-hex key prefix collision); move it aside")
    differ = disagreements(_settings(recorded), _settings(info))
    if differ:
        raise HanzilmError(f"{run_dir}: a partial run started with other values of {', '.join(differ)}: a default "
                           "changed without a new chapter version; bump it in hanzilm/versions.py (or delete the "
                           "directory)")
