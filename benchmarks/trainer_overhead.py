"""Per-step overhead of hanzilm.train over a bare PyTorch loop, on a model small enough that overhead shows.

    .venv/bin/python benchmarks/trainer_overhead.py [--steps 2000]

Both loops do the same work (AdamW, clipping, scheduled LR); the trainer adds batch handling, the
non-finite check, history, and a checkpoint at the end. Prints microseconds per step for each.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from hanzilm.train import TrainConfig, lr_at, make_optimizer, train


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 8))

    def loss(self, batch):
        x, y = batch
        return F.cross_entropy(self.net(x), y)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000)
    steps = ap.parse_args().steps
    torch.set_num_threads(1)
    os.environ.setdefault("HANZILM_PROGRESS", "0")
    data = [(torch.randn(32, 32), torch.randint(0, 8, (32,))) for _ in range(64)]
    cfg = TrainConfig(steps=steps, lr=1e-3, warmup_steps=100, schedule="linear", grad_clip=1.0, eval_every=0,
                      checkpoint_every=0, log_every=50)

    torch.manual_seed(0)
    model = MLP()
    opt = make_optimizer(model, cfg)
    t0 = time.perf_counter()
    for step in range(steps):
        loss = model.loss(data[step % len(data)])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, cfg)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % cfg.log_every == 0 and not math.isfinite(loss.item()):
            raise RuntimeError("diverged")
    bare = (time.perf_counter() - t0) / steps

    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as run_dir:
        t0 = time.perf_counter()
        train(MLP(), cfg, lambda step: data[step % len(data)], None, run_dir)
        ours = (time.perf_counter() - t0) / steps
    print(f"bare loop: {bare * 1e6:8.1f} us/step")
    print(f"trainer:   {ours * 1e6:8.1f} us/step  (+{(ours - bare) * 1e6:.1f} us/step, {ours / bare - 1:+.0%})")


if __name__ == "__main__":
    main()
