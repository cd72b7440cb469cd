"""The one training loop every model of the three papers plugs into (plain PyTorch, read like nanoGPT).

Model contract: an `nn.Module` with `loss(batch) -> scalar tensor`, the mean over the batch's units, and
optionally `batch_size_units(batch) -> int`, those units (tokens, characters; default: the batch's examples).
The global loss of a step is the units-weighted mean over processes and gradient-accumulation micro-batches,
so shards of unequal size (a batch of sentences cut into equal numbers of sentences, not characters) give the
same loss and gradient as one process on the whole batch.

Data contract: `train_batches(step) -> batch` maps a 0-based global step to that step's *global* batch,
deterministically. The trainer owns the position, so resuming replays no data, and under torchrun each
rank takes its equal slice (dim 0) of the same global batch, so N processes see what 1 process sees. A
source that can build only its own shard may take keyword arguments instead: `train_batches(step, *, rank,
world_size)`. A batch is a tensor, a list of examples (sliced), or a dict/tuple of those.

Run directory (written by rank 0 only, every file atomically):
    last.json                       pointer to the newest complete resume point, written after its files:
    last-<step>.safetensors / .pt   model weights / optimiser, step, RNG states, best, history (torch.save)
    best.safetensors, best.json     weights with the best `metric` so far, and its step and metrics
    best-<m>.safetensors, .json     the same for each extra selection (m, mode) of `keep_best` (e.g. a model
                                    selected by dev loss and another by a dev task metric in one run)
    snapshot-<step>.safetensors     the weights after each step of `cfg.snapshots` (findings along training)
    history.json                    [{step, loss, lr, grad_norm, tokens_per_s, time, <eval metrics>}, ...]
The LR is a pure function of the step, so the step is the whole scheduler position.

Precision and devices: `TrainConfig.precision="bf16"` runs the forward under `torch.autocast` in bfloat16
(master weights, optimiser state and the loss's reduction stay fp32; models keep their own fp32 islands, such as
the segmental lattice); `grad_accum` splits each process's share of a step into that many micro-batches, to
reach a paper's batch on fewer or smaller devices. Both change the arithmetic, so both are part of a run's key
(when not at their defaults: `hanzilm.keys`). How a run uses its device is not, since it leaves the numbers
alone up to the device's own rounding: `Runtime` (TF32 matmuls, fused AdamW and pinned host memory on CUDA, an optional `torch.compile`),
with defaults chosen from the device. Under torchrun each process takes cuda:LOCAL_RANK (NCCL), or the CPU
(gloo): `hanzilm.ddp`; several nodes need only torchrun's rendezvous flags (README).

Reproducibility on CPU: the same config, seed and torch thread count give the same bits, resumed or not and
however loaded the machine is. Training runs with `torch.use_deterministic_algorithms(True)` (on CPU that
makes the backward of indexing, `index_put_(accumulate=True)`, add in a fixed order instead of with atomic
adds from every thread), and at the thread count the run started with, which the checkpoint records: a
resumed run takes that count back for the rest of the run, since reductions split by thread round differently
at another count. Both are restored when `train` returns.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import json
import math
import random
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np
import torch
from safetensors.torch import load_model, save_model

from .errors import HanzilmError
from .io import atomic_path, atomic_write_text
from . import ddp
from .ddp import Dist, map_batch, setup, shard  # noqa: F401 (setup, shard: part of the trainer's face)
from .keys import key_fields
from .machine import cpu_has_bf16
from .progress import progress

Batch = Any
Evaluate = Callable[[torch.nn.Module], Mapping[str, float]]
OPTIMIZERS = ("adamw", "adam", "adagrad", "sgd")  # sgd: the DDP equivalence test (tests/_ddp_chapters.py)
SCHEDULES = ("linear", "constant")
# history keys of the training side; evaluation metrics must be named otherwise (e.g. "dev_loss")
TRAIN_KEYS = ("step", "loss", "lr", "grad_norm", "tokens_per_s", "time", "nonfinite")
PRECISIONS = ("fp32", "bf16")


@dataclass(frozen=True)
class Runtime:
    """How a run uses its device, none of it part of the run's key. None: the device's default (on for CUDA,
    off on the CPU, where TF32, fused AdamW and pinned memory do not exist)."""

    tf32: bool | None = None         # TF32 matmuls and convolutions (Ampere and later)
    fused_adam: bool | None = None   # the fused CUDA AdamW/Adam kernels
    pin_memory: bool | None = None   # page-locked host batches, copied to the device asynchronously
    compile: str | None = None       # a torch.compile backend for model.loss ("inductor"; "eager" to test)

    def resolved(self, device: torch.device) -> Runtime:
        cuda = device.type == "cuda"
        pick = lambda v: cuda if v is None else (v and cuda)  # noqa: E731
        return Runtime(tf32=pick(self.tf32), fused_adam=pick(self.fused_adam), pin_memory=pick(self.pin_memory),
                       compile=self.compile)


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 1000
    lr: float = 3e-4                 # peak learning rate
    optimizer: str = "adamw"         # adamw: decoupled decay; adam/adagrad/sgd: torch's L2 `weight_decay`
    betas: tuple[float, float] = (0.9, 0.999)
    weight_decay: float = 0.0        # on >= 2-D parameters only (matrices, embeddings; not biases or gains)
    warmup_steps: int = 0
    schedule: str = "constant"       # after warmup: linear decay to min_lr at `steps`, or constant
    min_lr: float = 0.0
    grad_clip: float | None = None   # max global L2 norm
    eval_every: int = 500            # 0: evaluate only after the last step (always done too)
    metric: str = "dev_loss"         # eval metric selecting best.safetensors
    metric_mode: str = "min"
    checkpoint_every: int = 500      # 0: only after the last step (always done too)
    log_every: int = 10
    seed: int = 0
    max_nonfinite: int = 10          # non-finite steps skipped before giving up
    precision: str = "fp32"          # "fp32" | "bf16" (autocast)
    grad_accum: int = 1              # micro-batches per step and process
    patience: int = 0                # end after this many evaluations in a row without a better `metric` (0: never)
    snapshots: tuple[int, ...] = ()  # steps after which the weights are kept too (snapshot-<step>.safetensors)

    def __post_init__(self):
        problems = [
            f"optimizer must be one of {OPTIMIZERS}" * (self.optimizer not in OPTIMIZERS),
            f"schedule must be one of {SCHEDULES}" * (self.schedule not in SCHEDULES),
            "metric_mode must be 'min' or 'max'" * (self.metric_mode not in ("min", "max")),
            "steps must be >= 1" * (self.steps < 1),
            "log_every must be >= 1" * (self.log_every < 1),
            "warmup_steps, eval_every, checkpoint_every, max_nonfinite, patience must be >= 0"
            * (min(self.warmup_steps, self.eval_every, self.checkpoint_every, self.max_nonfinite,
                   self.patience) < 0),
            "grad_clip must be None or > 0" * (self.grad_clip is not None and self.grad_clip <= 0),
            f"precision must be one of {PRECISIONS}" * (self.precision not in PRECISIONS),
            "grad_accum must be >= 1" * (self.grad_accum < 1),
            f"snapshots must be steps in 1..{self.steps}"
            * any(not isinstance(x, int) or not 1 <= x <= self.steps for x in self.snapshots),
        ]
        if any(problems):
            raise HanzilmError("TrainConfig: " + "; ".join(p for p in problems if p))


@dataclass
class TrainResult:
    history: list[dict[str, Any]]
    best_metrics: dict[str, float]
    best_step: int | None
    wall_time: float                 # training seconds over all sessions (to the last checkpoint)
    steps: int
    nonfinite: int
    run_dir: Path
    extra_best: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)  # keep_best: step, metrics


def lr_at(step: int, cfg: TrainConfig) -> float:
    """LR of the update at 0-based `step`: linear warmup reaching cfg.lr at step warmup_steps-1, then decay
    from cfg.lr (at step warmup_steps) towards min_lr (reached at step `steps`, one past the last)."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    if cfg.schedule == "constant":
        return cfg.lr
    progress = (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps)
    return cfg.lr + (cfg.min_lr - cfg.lr) * progress


def make_optimizer(model: torch.nn.Module, cfg: TrainConfig, fused: bool = False) -> torch.optim.Optimizer:
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": cfg.weight_decay},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    groups = [g for g in groups if g["params"]]
    extra = {"fused": True} if fused else {}  # the one-kernel update on CUDA (not on the CPU: same numbers)
    if cfg.optimizer == "adamw":
        return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas, **extra)
    if cfg.optimizer == "adam":
        return torch.optim.Adam(groups, lr=cfg.lr, betas=cfg.betas, **extra)
    if cfg.optimizer == "adagrad":
        return torch.optim.Adagrad(groups, lr=cfg.lr)
    return torch.optim.SGD(groups, lr=cfg.lr)


def _seed(seed: int) -> None:
    torch.manual_seed(seed)
    np.random.seed(seed % 2**32)
    random.seed(seed)


def _rng_state() -> dict[str, Any]:
    # numpy's key array becomes a list: torch.load(weights_only=True) refuses numpy objects
    name, key, pos, has_gauss, gauss = np.random.get_state()
    return {"torch": torch.get_rng_state(), "python": random.getstate(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
            "numpy": [name, key.tolist(), pos, has_gauss, gauss]}


def _set_rng_state(s: dict[str, Any]) -> None:
    torch.set_rng_state(s["torch"])
    random.setstate(s["python"])
    if s["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(s["cuda"])
    name, key, *rest = s["numpy"]
    np.random.set_state((name, np.array(key, dtype=np.uint32), *rest))


def _to(batch: Batch, device: torch.device, pin: bool = False) -> Batch:
    def move(t: torch.Tensor) -> torch.Tensor:
        return (t.pin_memory() if pin else t).to(device, non_blocking=True)
    return map_batch(batch, move, lambda x: isinstance(x, torch.Tensor))


def _units(model: torch.nn.Module, batch: Batch) -> int:
    if hasattr(model, "batch_size_units"):
        return int(model.batch_size_units(batch))
    found: list[int] = []
    map_batch(batch, lambda x: found.append(len(x)), lambda x: isinstance(x, (torch.Tensor, list)))
    return found[0] if found else 0


def _evaluate(model: torch.nn.Module, evaluate: Evaluate, metrics_needed: list[str], d: Dist) -> dict[str, float]:
    metrics = None
    if d.main:
        rng = _rng_state()  # evaluation must not move the training RNGs: eval_every never changes the run
        model.eval()
        try:
            with torch.no_grad():
                metrics = {k: float(v) for k, v in evaluate(model).items()}
        finally:
            model.train()
            _set_rng_state(rng)
        clash = set(metrics) & set(TRAIN_KEYS)
        if clash:
            raise HanzilmError(f"evaluate() returned {sorted(clash)}: names the history uses for training; "
                               "rename them (e.g. 'dev_loss')")
        missing = [m for m in metrics_needed if m not in metrics]
        if missing:
            raise HanzilmError(f"evaluate() returned {sorted(metrics)}, not the selection metric "
                               + ", ".join(map(repr, missing)))
    return ddp.broadcast(metrics, d)


def _better(value: float, best: dict | None, mode: str) -> bool:
    if not math.isfinite(value):
        return False
    return best is None or (value < best["value"] if mode == "min" else value > best["value"])


def _save_weights(model: torch.nn.Module, path: Path, meta: dict[str, Any]) -> None:
    with atomic_path(path) as tmp:
        save_model(model, str(tmp), metadata={k: json.dumps(v) for k, v in meta.items()})


@dataclass
class Window:
    """The steps since the last log row: their summed losses, gradient norms and units, count and seconds."""
    loss: float = 0.0
    grad_norm: float = 0.0
    n: int = 0
    units: int = 0
    secs: float = 0.0


@dataclass
class LoopState:
    """What a run carries from step to step and across sessions: saved whole with each resume point (as plain
    containers, which `torch.load(weights_only=True)` accepts) and restored from it."""
    config: dict[str, Any]                # the TrainConfig it started with: a resume under another is refused
    threads: int                          # torch threads it started with (a CPU run resumes on as many)
    step: int = 0
    history: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    best: dict[str, Any] | None = None    # {"step", "value", "metrics"} of the best cfg.metric so far
    extra_best: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)  # per keep_best metric
    nonfinite: int = 0                    # updates skipped for a non-finite loss or gradient
    wall_time: float = 0.0                # training seconds of earlier sessions (at the last resume point)
    window: Window = dataclasses.field(default_factory=Window)
    stale: int = 0                        # evaluations in a row without a better cfg.metric
    stopped_early: bool = False           # cfg.patience ended the run

    def saved(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def loaded(cls, saved: dict[str, Any]) -> LoopState:
        return cls(**{**saved, "window": Window(**saved["window"])})


def write_history(run_dir: Path, history: list[dict[str, Any]]) -> None:
    atomic_write_text(run_dir / "history.json", json.dumps(history, indent=0))


def _save_last(run_dir: Path, model: torch.nn.Module, opt: torch.optim.Optimizer, state: dict) -> None:
    step = state["step"]
    weights, blob = f"last-{step:08d}.safetensors", f"last-{step:08d}.pt"
    _save_weights(model, run_dir / weights, {"step": step})
    with atomic_path(run_dir / blob) as tmp:
        torch.save({**state, "optimizer": opt.state_dict()}, tmp)
    # The pointer is replaced last: a crash anywhere above leaves the previous resume point whole.
    atomic_write_text(run_dir / "last.json", json.dumps({"step": step, "weights": weights, "state": blob}))
    for old in run_dir.glob("last-*"):
        if old.name not in (weights, blob):
            old.unlink(missing_ok=True)


def _load_last(run_dir: Path, model: torch.nn.Module, opt: torch.optim.Optimizer, d: Dist) -> dict | None:
    pointer = run_dir / "last.json"
    if not pointer.is_file():
        return None
    p = json.loads(pointer.read_text())
    load_model(model, run_dir / p["weights"], device=str(d.device))
    # weights_only: tensors and plain containers only, no arbitrary pickled objects
    state = torch.load(run_dir / p["state"], map_location="cpu", weights_only=True)
    opt.load_state_dict(state.pop("optimizer"))
    return state


@contextlib.contextmanager
def _reproducible(device: torch.device, threads: int | None, name: str) -> Iterator[None]:
    """Deterministic kernels and `threads` torch threads (None: as they are) for a CPU run, restored after."""
    if device.type != "cpu":
        yield
        return
    before = torch.get_num_threads()
    mode = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    if threads and threads != before:
        warnings.warn(f"{name}: resumed on {threads} torch threads, the count the run started with (this "
                      f"process has {before}); at another count its results would not be the same",
                      RuntimeWarning)
        torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(mode[0], warn_only=mode[1])
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


def _config_dict(cfg: TrainConfig) -> dict[str, Any]:
    return json.loads(json.dumps(key_fields(cfg)))


def _step(model: torch.nn.Module, loss_fn: Callable[[Batch], torch.Tensor], opt: torch.optim.Optimizer,
          batch: Batch, lr: float, cfg: TrainConfig, d: Dist, pin: bool) -> tuple[float, int, float, str | None]:
    """One update. Returns the global mean loss, global units, gradient norm, and why the update was skipped
    (None if it was not). Every rank sees the same reduced loss and gradients, so all take the same branch.

    Each micro-batch's mean loss is weighted by its share of the step's global units (times the world size,
    since the gradient all-reduce averages over ranks): with one process and one micro-batch the weight is
    exactly 1 and the step is the plain loss.backward()."""
    micro = [batch] if cfg.grad_accum == 1 else [shard(batch, i, cfg.grad_accum) for i in range(cfg.grad_accum)]
    units = [_units(model, m) for m in micro]
    total = int(ddp.total(sum(units), d))
    weighted = 0.0
    for m, u in zip(micro, units):
        with torch.autocast(d.device.type, dtype=torch.bfloat16, enabled=cfg.precision == "bf16"):
            loss = loss_fn(_to(m, d.device, pin)).float()
        w = u * d.world / total if len(micro) > 1 or d.world > 1 else 1.0
        weighted += loss.item() * w / d.world
        # backward at once, so only one micro-batch's graph is alive; a non-finite step is undone below
        (loss * w if w != 1.0 else loss).backward()
    loss_value = ddp.total(weighted, d)  # the global mean: each rank's share is units-weighted
    grad_norm, bad = math.nan, None
    if not math.isfinite(loss_value):
        bad = f"loss={loss_value}"
    else:
        params = [p for g in opt.param_groups for p in g["params"]]
        if d.world > 1:
            ddp.allreduce_grads(params, d.world)
        # max_norm=inf still returns the norm and scales by exactly 1.0 (a bitwise no-op)
        grad_norm = float(torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip or math.inf))
        if not math.isfinite(grad_norm):
            bad = f"grad_norm={grad_norm}"
        else:
            for group in opt.param_groups:
                group["lr"] = lr
            opt.step()
    opt.zero_grad(set_to_none=True)  # a skipped update leaves weights and optimiser state untouched
    return loss_value, total, grad_norm, bad


def train(model: torch.nn.Module, cfg: TrainConfig, train_batches: Callable[..., Batch],
          evaluate: Evaluate | None, run_dir: str | Path, *, device: str | torch.device | None = None,
          keep_best: Sequence[tuple[str, str]] = (), runtime: Runtime = Runtime()) -> TrainResult:
    """Train `model` for cfg.steps in `run_dir`, resuming exactly from its last checkpoint if one is there.

    The model ends in its last state; best.safetensors holds the best by cfg.metric (the last weights when
    `evaluate` is None). keep_best: extra (metric, "min"|"max") selections, each kept as
    best-<metric>.safetensors / .json (needs `evaluate`). runtime: how the device is used (`Runtime`; its
    defaults suit the device). Call again with the same run_dir after a crash: same losses, same weights."""
    keep_best = _check_keep_best(keep_best, cfg, evaluate)
    run_dir, d = Path(run_dir), ddp.setup(device)
    run_dir.mkdir(parents=True, exist_ok=True)
    rt = _prepare(model, cfg, runtime, run_dir, d)
    opt = make_optimizer(model, cfg, fused=bool(rt.fused_adam))
    loss_fn = torch.compile(model.loss, backend=rt.compile) if rt.compile else model.loss
    batch_at = _batch_source(train_batches, d)
    state = _resume(run_dir, model, opt, cfg, d)
    clock = (state.wall_time, time.perf_counter())  # training seconds of earlier sessions, this one's start
    with _reproducible(d.device, state.threads, run_dir.name), \
            progress(cfg.steps, run_dir.name, "step", state.step, d.main) as bar:  # closed on any exception too
        for step in range(state.step, state.step if state.stopped_early else cfg.steps):
            t_step, lr = time.perf_counter(), lr_at(step, cfg)
            outcome = _step(model, loss_fn, opt, batch_at(step), lr, cfg, d, bool(rt.pin_memory))
            state.step = done = step + 1
            row = _account(state, outcome, run_dir, cfg, d)
            state.window.secs += time.perf_counter() - t_step  # step time only: no eval, no checkpoints
            last = done == cfg.steps
            if done % cfg.log_every == 0 or last:
                row.update(_log_row(state, lr, _elapsed(clock), bar))
            if evaluate is not None and ((cfg.eval_every and done % cfg.eval_every == 0) or last):
                last = _evaluate_and_select(model, evaluate, state, row, cfg, keep_best, run_dir, d) or last
            elif evaluate is None and last:
                _select_last(model, state, cfg, run_dir, d)
            if row:
                state.history.append({"step": done, **row})
            if done in cfg.snapshots and d.main:
                _save_weights(model, run_dir / snapshot_name(done), {"step": done})
            if (cfg.checkpoint_every and done % cfg.checkpoint_every == 0) or last:
                _checkpoint(run_dir, model, opt, state, _elapsed(clock), d)
            bar.update(1)
            if state.stopped_early:
                break
    ddp.barrier(d)  # nobody reads best/last before rank 0 has written them
    return _result(state, run_dir)


def _prepare(model: torch.nn.Module, cfg: TrainConfig, runtime: Runtime, run_dir: Path, d: Dist) -> Runtime:
    """The model on its device in training mode, and the runtime resolved for that device."""
    model.to(d.device).train()
    rt = runtime.resolved(d.device)
    if d.device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = bool(rt.tf32)
    if cfg.precision == "bf16" and d.device.type == "cpu" and d.main and not cpu_has_bf16():
        warnings.warn(f"{run_dir.name}: bf16 autocast on a CPU without AVX512_BF16 or AMX is emulated, usually "
                      "slower than fp32", RuntimeWarning)
    return rt


def _batch_source(train_batches: Callable[..., Batch], d: Dist) -> Callable[[int], Batch]:
    """step -> this rank's batch: the source's own shard if it takes (rank, world_size), else a slice."""
    try:
        per_rank = {"rank", "world_size"} <= set(inspect.signature(train_batches).parameters)
    except (TypeError, ValueError):
        per_rank = False
    if per_rank:
        return lambda step: train_batches(step, rank=d.rank, world_size=d.world)
    return lambda step: shard(train_batches(step), d.rank, d.world)


def _resume(run_dir: Path, model: torch.nn.Module, opt: torch.optim.Optimizer, cfg: TrainConfig,
            d: Dist) -> LoopState:
    """The training state: the last checkpoint's (weights, optimiser and RNGs restored), or a fresh one."""
    state = _load_last(run_dir, model, opt, d)
    if state is None:
        _seed(cfg.seed + d.rank)  # rank-specific so dropout masks differ between shards
        ddp.same_start(model, d)
        return LoopState(config=_config_dict(cfg), threads=torch.get_num_threads())
    diff = [k for k in state["config"].keys() | _config_dict(cfg).keys()
            if state["config"].get(k) != _config_dict(cfg).get(k)]
    if diff:
        raise HanzilmError(f"{run_dir} holds a run with another TrainConfig ({', '.join(sorted(diff))} differ); "
                           "use a new run_dir or delete this one")
    rngs = state.pop("rng")
    if d.rank < len(rngs):
        _set_rng_state(rngs[d.rank])
    else:  # resumed on more processes than saved: the new ranks start fresh streams
        _seed(cfg.seed + d.rank)
    return LoopState.loaded(state)


def _elapsed(clock: tuple[float, float]) -> float:
    return clock[0] + time.perf_counter() - clock[1]


def _account(state: LoopState, outcome: tuple[float, int, float, str | None], run_dir: Path,
             cfg: TrainConfig, d: Dist) -> dict[str, Any]:
    """A step's outcome added to the logging window, or, for a skipped non-finite step, counted against
    cfg.max_nonfinite (training stops past it, the last checkpoint kept). Returns the step's history row."""
    loss, units, grad_norm, bad = outcome
    if not bad:
        win = state.window
        win.loss, win.grad_norm, win.n, win.units = win.loss + loss, win.grad_norm + grad_norm, win.n + 1, \
            win.units + units
        return {}
    done = state.step
    state.nonfinite += 1
    if d.main:
        warnings.warn(f"{run_dir.name}: step {done} (train_batches({done - 1})): non-finite {bad}, update "
                      f"skipped ({state.nonfinite}/{cfg.max_nonfinite} allowed)", RuntimeWarning)
    if state.nonfinite > cfg.max_nonfinite:
        state.history.append({"step": done, "nonfinite": bad})
        if d.main:
            write_history(run_dir, state.history)
        raise HanzilmError(f"{run_dir}: {state.nonfinite} non-finite steps, more than max_nonfinite="
                           f"{cfg.max_nonfinite} (last: step {done}, {bad}); lower the lr or set grad_clip, or "
                           "inspect that batch; training stopped, last checkpoint kept")
    return {"nonfinite": bad}


def _log_row(state: LoopState, lr: float, elapsed: float, bar: Any) -> dict[str, float]:
    """The logging window's means (nothing if every step in it was skipped), shown on the bar; the window
    starts again."""
    win = state.window
    if not win.n:
        return {}
    row = {"loss": win.loss / win.n, "lr": lr, "grad_norm": win.grad_norm / win.n,
           "tokens_per_s": win.units / max(win.secs, 1e-9), "time": elapsed}
    bar.set_postfix(loss=f"{row['loss']:.4f}", lr=f"{lr:.2e}", tok_s=f"{row['tokens_per_s']:.0f}", refresh=False)
    state.window = Window()
    return row


def _evaluate_and_select(model: torch.nn.Module, evaluate: Evaluate, state: LoopState, row: dict[str, Any],
                         cfg: TrainConfig, keep_best: list[tuple[str, str]], run_dir: Path, d: Dist) -> bool:
    """Evaluate; keep the weights that are best by cfg.metric and by each keep_best metric. Returns whether
    training stops early (cfg.patience evaluations in a row without a better cfg.metric)."""
    metrics = _evaluate(model, evaluate, [cfg.metric, *(m for m, _ in keep_best)], d)
    row.update(metrics)
    stop = False
    if _better(metrics[cfg.metric], state.best, cfg.metric_mode):
        state.best = {"step": state.step, "value": metrics[cfg.metric], "metrics": metrics}
        state.stale = 0
        if d.main:
            _save_best(run_dir, model, state.best, cfg)
    else:
        state.stale += 1
        if cfg.patience and state.stale >= cfg.patience and state.step != cfg.steps:
            state.stopped_early = row["stopped_early"] = stop = True
    for m, mode in keep_best:
        if _better(metrics[m], state.extra_best.get(m), mode):
            state.extra_best[m] = {"step": state.step, "value": metrics[m], "metrics": metrics}
            if d.main:
                _save_best(run_dir, model, state.extra_best[m], cfg, metric=m, mode=mode)
    return stop


def _select_last(model: torch.nn.Module, state: LoopState, cfg: TrainConfig, run_dir: Path, d: Dist) -> None:
    """Without an evaluation, the last weights are the run's best."""
    state.best = {"step": state.step, "value": math.nan, "metrics": {}}
    if d.main:
        _save_best(run_dir, model, state.best, cfg)


def _checkpoint(run_dir: Path, model: torch.nn.Module, opt: torch.optim.Optimizer, state: LoopState,
                elapsed: float, d: Dist) -> None:
    """A resume point: weights, optimiser, every rank's RNGs (so dropout resumes exactly on each), history."""
    state.wall_time = elapsed
    rngs = ddp.gather(_rng_state(), d)
    if d.main:
        _save_last(run_dir, model, opt, {**state.saved(), "rng": rngs})
        write_history(run_dir, state.history)


def _result(state: LoopState, run_dir: Path) -> TrainResult:
    best = state.best or {}
    extra = {m: {"step": b["step"], "metrics": b["metrics"]} for m, b in state.extra_best.items()}
    return TrainResult(history=state.history, best_metrics=best.get("metrics", {}), best_step=best.get("step"),
                       wall_time=state.wall_time, steps=state.step, nonfinite=state.nonfinite,
                       run_dir=run_dir, extra_best=extra)


def best_name(metric: str | None = None) -> str:
    """File stem of a selection's weights: "best" for cfg.metric, "best-<metric>" for a keep_best one."""
    return "best" if metric is None else f"best-{metric}"


def snapshot_name(step: int) -> str:
    return f"snapshot-{step:08d}.safetensors"


def snapshot_steps(steps: int, n: int) -> tuple[int, ...]:
    """`n` steps spaced evenly in log steps (so in log tokens), each twice the one before, ending at `steps`:
    6 over 1,500 steps are 47, 94, 188, 375, 750, 1500."""
    return tuple(sorted({max(1, round(steps / 2 ** k)) for k in range(n)})) if n > 0 else ()


def _check_keep_best(keep_best: Sequence[tuple[str, str]], cfg: TrainConfig, evaluate: Evaluate | None
                     ) -> list[tuple[str, str]]:
    out = [(str(m), str(mode)) for m, mode in keep_best]
    problems = [f"keep_best mode for {m!r} must be 'min' or 'max', not {mode!r}" for m, mode in out
                if mode not in ("min", "max")]
    problems += [f"keep_best metric {m!r} is not a plain file-name part" for m, _ in out
                 if not m or "/" in m or m.startswith(".")]
    if out and evaluate is None:
        problems.append("keep_best needs an evaluate function")
    if len({m for m, _ in out}) != len(out):
        problems.append("keep_best names a metric twice")
    if problems:
        raise HanzilmError("; ".join(problems))
    return out


def _save_best(run_dir: Path, model: torch.nn.Module, best: dict, cfg: TrainConfig, *,
               metric: str | None = None, mode: str | None = None) -> None:
    info = {"step": best["step"], "metric": metric or cfg.metric, "mode": mode or cfg.metric_mode,
            "metrics": best["metrics"]}
    stem = best_name(metric)
    _save_weights(model, run_dir / f"{stem}.safetensors", info)  # the metadata makes the file self-describing
    atomic_write_text(run_dir / f"{stem}.json", json.dumps(info, indent=1))
