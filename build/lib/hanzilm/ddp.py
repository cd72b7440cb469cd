"""The trainer's process-group plumbing: which process this is, and the few collectives a step needs.

Under torchrun each process takes cuda:LOCAL_RANK (NCCL) or the CPU (gloo). Models are driven through `.loss()`,
not `forward()`, so gradients are all-reduced by hand (`allreduce_grads`) rather than by DDP, whose reducer is
armed only in `forward()`. With one process every function here is the identity."""

from __future__ import annotations

import atexit
import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import torch
import torch.distributed as dist

from .errors import HanzilmError
from .memory import keep_freed_memory


@dataclass(frozen=True)
class Dist:
    rank: int
    world: int
    device: torch.device

    @property
    def main(self) -> bool:
        return self.rank == 0


def setup(device: str | torch.device | None = None) -> Dist:
    """Rank, world size and device from torchrun's environment; joins the process group if WORLD_SIZE > 1."""
    world, rank = int(os.environ.get("WORLD_SIZE", "1")), int(os.environ.get("RANK", "0"))
    keep_freed_memory()
    if device is None:
        device = f"cuda:{os.environ.get('LOCAL_RANK', '0')}" if torch.cuda.is_available() else "cpu"
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
        atexit.register(lambda: dist.is_initialized() and dist.destroy_process_group())
    return Dist(rank, world, device)


def map_batch(batch: Any, fn: Callable[[Any], Any], leaf: Callable[[Any], bool]) -> Any:
    """`fn` applied to every leaf of a batch (a leaf, or dicts, tuples and lists of batches)."""
    if leaf(batch):
        return fn(batch)
    if isinstance(batch, Mapping):
        return {k: map_batch(v, fn, leaf) for k, v in batch.items()}
    if isinstance(batch, tuple):
        items = [map_batch(b, fn, leaf) for b in batch]
        return type(batch)(*items) if hasattr(batch, "_fields") else tuple(items)
    if isinstance(batch, list):
        return [map_batch(b, fn, leaf) for b in batch]
    return batch


def shard(batch: Any, rank: int, world: int) -> Any:
    """Part `rank` of `world` near-equal parts of a batch: tensors along dim 0, lists as lists of examples
    (the first len % world parts one example longer). The trainer weights each part by its units."""
    def cut(x):
        n = len(x)
        if n < world:
            raise HanzilmError(f"a batch of {n} examples cannot be cut into {world} non-empty parts")
        k, extra = divmod(n, world)
        start = rank * k + min(rank, extra)
        return x[start:start + k + (rank < extra)]
    return map_batch(batch, cut, lambda x: isinstance(x, (torch.Tensor, list))) if world > 1 else batch


def total(value: float, d: Dist) -> float:
    """The sum of `value` over processes (float64), the same on every rank."""
    if d.world == 1:
        return value
    t = torch.tensor([float(value)], dtype=torch.float64, device=d.device)
    dist.all_reduce(t)
    return t.item()


def allreduce_grads(params: list[torch.Tensor], world: int) -> None:
    """The mean gradient over ranks, through one flat buffer and one collective. A parameter without a gradient
    on some rank contributes zeros. Each rank's loss is already scaled by world x its share of the units, so the
    mean is the global per-unit mean."""
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat /= world
    offset = 0
    for p, g in zip(params, grads):
        p.grad = flat[offset:offset + g.numel()].view_as(p).to(p.dtype)
        offset += g.numel()


def broadcast(obj: Any, d: Dist) -> Any:
    """Rank 0's `obj` on every rank."""
    if d.world == 1:
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def gather(obj: Any, d: Dist) -> list[Any]:
    """Every rank's `obj`, in rank order, on every rank."""
    if d.world == 1:
        return [obj]
    out: list[Any] = [None] * d.world
    dist.all_gather_object(out, obj)
    return out


def same_start(model: torch.nn.Module, d: Dist) -> None:
    """Every rank starts from rank 0's initialisation."""
    for t in [*model.parameters(), *model.buffers()] if d.world > 1 else []:
        dist.broadcast(t.data, src=0)


def barrier(d: Dist) -> None:
    if d.world > 1:
        dist.barrier()
