"""Test helpers: a tiny classifier on synthetic deterministic data, fast enough for many short runs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import load_file

from hanzilm.train import TrainConfig

D_IN, D_HID, N_CLASS = 8, 16, 4
_TRUE = torch.Generator().manual_seed(1234)
W_TRUE = torch.randn(D_IN, N_CLASS, generator=_TRUE)


class TinyMLP(nn.Module):
    def __init__(self, dropout: float = 0.0):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(D_IN, D_HID), nn.Linear(D_HID, N_CLASS)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.drop(torch.tanh(self.fc1(x))))

    def loss(self, batch) -> torch.Tensor:
        x, y = batch
        return F.cross_entropy(self(x), y)


def batch_at(step: int, batch_size: int = 16, seed: int = 0, nan_steps: tuple[int, ...] = ()):
    """The global batch of `step`: a pure function of (seed, step), so resume needs no data replay."""
    g = torch.Generator().manual_seed(seed * 1_000_003 + step)
    x = torch.randn(batch_size, D_IN, generator=g)
    y = (x @ W_TRUE).argmax(-1)
    if step in nan_steps:
        x = x * math.nan
    return x, y


def batches(batch_size: int = 16, seed: int = 0, nan_steps: tuple[int, ...] = ()):
    return lambda step: batch_at(step, batch_size, seed, nan_steps)


_DEV = batch_at(10**6, batch_size=64, seed=99)


def evaluate(model: TinyMLP) -> dict[str, float]:
    x, y = _DEV
    logits = model(x)
    return {"dev_loss": F.cross_entropy(logits, y).item(),
            "dev_acc": (logits.argmax(-1) == y).float().mean().item()}


def build(seed: int = 0, dropout: float = 0.0) -> TinyMLP:
    torch.manual_seed(seed)
    return TinyMLP(dropout)


def cfg(**kw) -> TrainConfig:
    base = dict(steps=30, lr=1e-2, optimizer="adamw", weight_decay=0.1, warmup_steps=3, schedule="linear",
                min_lr=1e-3, grad_clip=1.0, eval_every=10, checkpoint_every=10, log_every=5, seed=0)
    return TrainConfig(**{**base, **kw})


def last_weights(run_dir) -> dict[str, torch.Tensor]:
    import json
    from pathlib import Path
    pointer = json.loads((Path(run_dir) / "last.json").read_text())
    return load_file(str(Path(run_dir) / pointer["weights"]))


@dataclass(frozen=True)
class TinyModelConfig:
    hidden: int = D_HID
    dropout: float = 0.0


@dataclass(frozen=True)
class TinyExperiment:
    """What a notebook config looks like: model hyperparameters plus an embedded TrainConfig."""
    model: TinyModelConfig = field(default_factory=TinyModelConfig)
    train: TrainConfig = field(default_factory=cfg)
