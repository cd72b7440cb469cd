"""Training and evaluation speed of the GPT-2 and Backpack character LMs at the same contextual size.

    .venv/bin/python benchmarks/lm_throughput.py [--layers 4 --heads 4 --embd 128 --block 256 --batch 16
                                                  --vocab 5260 --senses 16 --steps 20 --threads 2
                                                  [--zipf | --corpus] [--bf16] [--compile] [--torch-ce]
                                                  [--nanogpt /path/to/nanoGPT/model.py ...] [--profile]]

Training: forward + backward + clip + AdamW step on random token blocks, the models interleaved round by
round in one process (so machine load hits both alike; every other round in reverse order, so neither always
runs right after the round's matmul baseline), median step time each. The Backpack has one
contextualisation block fewer than the GPT (the paper's pairing). Evaluation: no-grad forward tokens/s.
Prints tokens/s, the Backpack/GPT step-time ratio (target <= 1.3, acceptance <= 1.6; as the ratio of the median
steps and as the median, with quartiles, of the two models' ratio within each round, which cancels the machine's
drift from round to round) and the ratio of the
floating-point work of one training step (torch's FlopCounterMode: matmuls and attention): a step-time ratio
below the work ratio means the Backpack computes faster per FLOP than the GPT.

The anchor: nanoGPT's train.py reaches ~10.0k tokens/s at 4/4/128, block 256, batch 16, vocab ~3.7k, when a
2048^2 fp32 matmul runs at ~172 GFLOP/s (../shared/anchors.md). A 2048^2 matmul is timed in every round, so each
model's tokens/s is also printed scaled to 170 GFLOP/s; the target for our GPT is >= 11k scaled.
`--nanogpt PATH/model.py` times nanoGPT's own GPT (a checkout outside this repository, e.g. from
github.com/karpathy/nanoGPT; fp32, as its train.py runs on a CPU) on the same batches in the same rounds, and
prints our GPT's speed relative to it, also for a twin of ours with nanoGPT's exact (erf) GELU in place of
GPT-2's tanh approximation (the main difference between the two models at this size). Repeat `--nanogpt` to time
several revisions side by side (named by their order: nanogpt, nanogpt-2, ...): the Chinese Backpack authors' code
imports `new_gelu` from a nanoGPT of before its commit 594068e7 (May 2023), whose MLP writes GPT-2's tanh GELU
out in tensor operations; `git show 594068e7^:model.py` in a nanoGPT clone is that revision.
Allocator: by default the process runs with `hanzilm.memory.keep_freed_memory`'s malloc setting, as the trainer
does (a quarter of a step on a 2-core EPYC otherwise goes to page faults on the freed logits); nanoGPT's
train.py runs with glibc's defaults, which `--glibc-default` keeps for the whole process. A process's allocator
state cannot be reset, so comparing a tool that runs with glibc's defaults takes two runs, compared by their
tokens/s scaled to 170 GFLOP/s (each run has its own matmul baseline). `--bf16` adds each of our models under bfloat16 autocast (the trainer's
precision="bf16": fp32 weights and optimizer, the loss in fp32). `--compile` adds each of our models with its loss
under `torch.compile` (inductor: the trainer's `Runtime(compile="inductor")`; needs a C++ compiler on the CPU).
`--torch-ce` adds each of our models with `F.cross_entropy` in place of `hanzilm.softmax.cross_entropy`, the
loss the models train with (2026-12-03, AVX2 EPYC, corpus tokens: the GPT's step 3 % shorter with ours).
`--profile` times nothing: it profiles `--steps` training steps of each model and prints where a step's time goes
(matmuls, attention and the sense mix, GELU, the log-softmax, layer norms, the optimizer), the matmuls' GFLOP/s
beside the baseline's, and how much faster a step could be if everything but its matmuls and attention were free.
2026-12-05, AVX2 EPYC, `--corpus --steps 10 --profile`: GPT-2's matmuls at 72-78 % of the baseline and its
attention are 73-76 % of its step (at most 1.32-1.38x faster with the rest free); the Backpack's 66-75 %.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import statistics
import time
import types
from pathlib import Path

import torch
import torch.nn.functional as F

from hanzilm.memory import keep_freed_memory
from hanzilm.papers.backpack.backpack import Backpack, BackpackConfig
from hanzilm.papers.backpack.gpt import GPT, MLP, GPTConfig
from hanzilm.train import TrainConfig, make_optimizer
from step_parts import matmul_gflops, print_parts, profile_parts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--embd", type=int, default=128)
    ap.add_argument("--block", type=int, default=256)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--vocab", type=int, default=5260)
    ap.add_argument("--senses", type=int, default=16)
    ap.add_argument("--steps", type=int, default=20, help="timed rounds (after 3 warm-up rounds)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--zipf", action="store_true", help="Zipf-distributed tokens (closer to text than uniform)")
    ap.add_argument("--corpus", action="store_true", help="real training windows of the encoded LM corpus "
                    "(its vocabulary replaces --vocab)")
    ap.add_argument("--bf16", action="store_true", help="also our models under bfloat16 autocast")
    ap.add_argument("--compile", action="store_true", help="also our models with torch.compile (inductor)")
    ap.add_argument("--torch-ce", action="store_true", help="also our models with torch's F.cross_entropy")
    ap.add_argument("--nanogpt", type=Path, action="append", default=[],
                    help="nanoGPT's model.py (outside this repository): time its GPT too (repeatable)")
    ap.add_argument("--profile", action="store_true", help="only profile --steps training steps of each model: "
                    "where a step's time goes, part by part (benchmarks/step_parts.py)")
    ap.add_argument("--glibc-default", action="store_true", help="leave malloc at glibc's defaults (as nanoGPT "
                    "runs) instead of the trainer's keep_freed_memory")
    a = ap.parse_args()
    if not a.glibc_default:
        keep_freed_memory()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    real = None
    if a.corpus:
        from hanzilm.papers.backpack.data import BlockBatches
        from hanzilm.papers.backpack.experiment import BackpackChapter, load_corpus
        corpus = load_corpus(BackpackChapter())   # the chapter's corpus: its split and vocabulary cut-off
        a.vocab = len(corpus.vocab)
        real = BlockBatches(corpus.splits["train"], a.batch, a.block, seed=0)

    gcfg = GPTConfig(vocab_size=a.vocab, block_size=a.block, n_layer=a.layers, n_head=a.heads, n_embd=a.embd)
    models = {"gpt": GPT(gcfg), "backpack": Backpack(BackpackConfig.matching(gcfg, a.senses))}
    losses = {name: m.loss for name, m in models.items()}
    autocast = {name: False for name in models}
    if a.bf16:
        for name in ("gpt", "backpack"):
            twin = type(models[name])(models[name].config)
            twin.load_state_dict(models[name].state_dict())
            models[f"{name}-bf16"], losses[f"{name}-bf16"], autocast[f"{name}-bf16"] = twin, twin.loss, True
    if a.compile:
        for name in ("gpt", "backpack"):
            twin = type(models[name])(models[name].config)
            twin.load_state_dict(models[name].state_dict())
            models[f"{name}-compiled"], autocast[f"{name}-compiled"] = twin, False
            losses[f"{name}-compiled"] = torch.compile(twin.loss, backend="inductor")
    if a.torch_ce:
        for name in ("gpt", "backpack"):
            twin = type(models[name])(models[name].config)
            twin.load_state_dict(models[name].state_dict())
            models[f"{name}-torch-ce"], autocast[f"{name}-torch-ce"] = twin, False
            losses[f"{name}-torch-ce"] = lambda x, m=twin: F.cross_entropy(
                m(x[:, :-1]).flatten(0, 1), x[:, 1:].flatten())
    if a.nanogpt:
        # nanoGPT's MLP uses the exact (erf) GELU where GPT-2, and so ours, uses the tanh approximation, whose
        # tanh costs about three times erf's GELU on a CPU: a twin with erf's GELU separates that from the rest
        twin = GPT(gcfg)
        twin.load_state_dict(models["gpt"].state_dict())
        for mlp in (mod for mod in twin.modules() if isinstance(mod, MLP)):
            mlp.forward = types.MethodType(_erf_gelu_forward, mlp)
        models["gpt-erf-gelu"], losses["gpt-erf-gelu"], autocast["gpt-erf-gelu"] = twin, twin.loss, False
        for i, path in enumerate(a.nanogpt):
            name = "nanogpt" if i == 0 else f"nanogpt-{i + 1}"
            nano = _nanogpt(path, a, name)
            models[name], autocast[name] = nano, False
            losses[name] = lambda xy, m=nano: m(*xy)[1]
    tcfg = TrainConfig(lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1, grad_clip=1.0)
    opts = {name: make_optimizer(m, tcfg) for name, m in models.items()}

    counter = iter(range(10**9))

    def batch() -> torch.Tensor:
        if real is not None:
            return real(next(counter))
        if a.zipf:  # p(rank r) ~ 1/r: a text-like number of distinct tokens per batch
            p = 1.0 / torch.arange(1, a.vocab + 1, dtype=torch.float64)
            return torch.multinomial(p / p.sum(), a.batch * (a.block + 1), replacement=True).view(a.batch, -1)
        return torch.randint(0, a.vocab, (a.batch, a.block + 1))

    def inputs(name: str, x: torch.Tensor):
        """What model `name` trains on, made outside the timing: the block batch x (B, T+1), or for nanoGPT the
        contiguous (x, y) its train.py hands the model from its loader."""
        return (x[:, :-1].contiguous(), x[:, 1:].contiguous()) if name.startswith("nanogpt") else x

    def train_step(name: str, data) -> None:
        m = models[name]
        m.train()
        with (torch.autocast("cpu", dtype=torch.bfloat16) if autocast[name] else contextlib.nullcontext()):
            loss = losses[name](data)
        loss.float().backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opts[name].step()
        opts[name].zero_grad(set_to_none=True)

    if a.profile:
        profile_steps(models, train_step, lambda name: inputs(name, batch()), a.steps)
        return

    times: dict[str, list[float]] = {name: [] for name in models}
    gflops: list[float] = []
    mm = torch.randn(2048, 2048)
    for rnd in range(a.steps + 3):
        x = batch()
        t0 = time.perf_counter()
        mm @ mm
        gflops.append(2 * 2048**3 / (time.perf_counter() - t0) / 1e9)
        for name in (models if rnd % 2 == 0 else reversed(models)):
            batch_of_model = inputs(name, x)
            t0 = time.perf_counter()
            train_step(name, batch_of_model)
            if rnd >= 3:
                times[name].append(time.perf_counter() - t0)

    from torch.utils.flop_counter import FlopCounterMode

    flops: dict[str, int] = {}
    x = batch()
    for name in ("gpt", "backpack"):
        m = models[name]
        counter_mode = FlopCounterMode(display=False)
        with counter_mode:
            m.loss(x).backward()
        m.zero_grad(set_to_none=True)
        flops[name] = counter_mode.get_total_flops()

    eval_tps: dict[str, float] = {}
    x = batch()[:, :-1]
    for name in ("gpt", "backpack"):
        m = models[name]
        m.eval()
        with torch.inference_mode():
            m(x)
            t0 = time.perf_counter()
            for _ in range(5):
                m(x)
        eval_tps[name] = 5 * x.numel() / (time.perf_counter() - t0)

    tokens = a.batch * a.block
    matmul = statistics.median(gflops)
    print(f"{a.layers}/{a.heads}/{a.embd}, block {a.block}, batch {a.batch}, vocab {a.vocab}, "
          f"{a.senses} senses, {a.threads} threads, "
          f"malloc {'glibc defaults' if a.glibc_default else 'as the trainer (keep_freed_memory)'}, "
          f"{'corpus' if a.corpus else 'zipf' if a.zipf else 'uniform'} tokens; "
          f"2048^2 fp32 matmul {matmul:.0f} GFLOP/s in the same rounds")
    step = {name: statistics.median(t) for name, t in times.items()}
    for name, m in models.items():
        n = sum(p.numel() for p in m.parameters())
        extra = (f"   eval {eval_tps[name]:8.0f} tok/s   {flops[name] / 1e9:6.1f} GFLOP/step"
                 if name in flops else "")
        print(f"  {name:13s} {n / 1e6:6.2f} M params   train {tokens / step[name]:8.0f} tok/s "
              f"({tokens / step[name] * 170 / matmul:6.0f} at 170 GFLOP/s)  step {step[name] * 1e3:7.1f} ms"
              + extra)
    work = flops["backpack"] / flops["gpt"]
    paired = statistics.quantiles([b / g for b, g in zip(times["backpack"], times["gpt"])], n=4)
    print(f"  step-time ratio backpack/gpt: {step['backpack'] / step['gpt']:.2f} (within rounds: median "
          f"{paired[1]:.2f}, quartiles {paired[0]:.2f}-{paired[2]:.2f})   work ratio: {work:.2f} "
          f"(so the Backpack runs at {work / (step['backpack'] / step['gpt']):.0%} of the GPT's FLOP rate)")
    if a.bf16:
        print(f"  bf16 autocast: gpt {step['gpt'] / step['gpt-bf16']:.2f}x, backpack "
              f"{step['backpack'] / step['backpack-bf16']:.2f}x fp32; step-time ratio backpack/gpt in bf16: "
              f"{step['backpack-bf16'] / step['gpt-bf16']:.2f}")
    if a.compile:
        print(f"  torch.compile: gpt {step['gpt'] / step['gpt-compiled']:.2f}x, backpack "
              f"{step['backpack'] / step['backpack-compiled']:.2f}x eager; step-time ratio backpack/gpt compiled: "
              f"{step['backpack-compiled'] / step['gpt-compiled']:.2f}")
    if a.torch_ce:
        print(f"  our cross-entropy against torch's: gpt {step['gpt-torch-ce'] / step['gpt']:.2f}x, backpack "
              f"{step['backpack-torch-ce'] / step['backpack']:.2f}x")
    for i, path in enumerate(a.nanogpt):
        nano = "nanogpt" if i == 0 else f"nanogpt-{i + 1}"
        print(f"  {nano}: {path}")
        for name in [n for n in ("gpt", "gpt-erf-gelu", "gpt-bf16", "gpt-compiled") if n in step]:
            print(f"    our {name} / {nano} (fp32, same batches): {step[nano] / step[name]:.2f}x")


# torch operators (by their own time) -> the part of a GPT-2 or Backpack training step they belong to
STEP_PARTS = (
    ("matmuls: linear layers, the tied output layer", ("aten::mm", "aten::addmm")),
    ("attention (SDPA), the Backpack's sense mix", ("aten::_scaled_dot_product", "aten::bmm", "aten::baddbmm",
                                                    "aten::_softmax")),
    ("GELU", ("aten::gelu",)),
    ("log-softmax over the vocabulary", ("aten::sub", "aten::exp", "aten::amax", "aten::gather",
                                         "aten::scatter_add", "aten::_log_softmax", "aten::nll_loss")),
    ("layer norms", ("aten::native_layer_norm",)),
    ("optimizer (AdamW), gradient clipping", ("Optimizer.", "aten::_foreach", "aten::lerp", "aten::addcdiv",
                                              "aten::addcmul", "aten::sqrt", "aten::linalg_vector_norm")),
)


def profile_steps(models: dict, train_step, batch, steps: int) -> None:
    """Where the time of `steps` training steps of each model goes (see STEP_PARTS and step_parts.py);
    `batch(name)` makes a batch for model `name`."""
    gflops = matmul_gflops()
    print(f"baseline: fp32 2048^2 matmul {gflops:.0f} GFLOP/s")
    bound = [name for name, _ in STEP_PARTS[:2]]
    for name in models:
        train_step(name, batch(name))  # warm-up
        batches = [batch(name) for _ in range(steps)]
        seconds, flops = profile_parts([lambda x=x, name=name: train_step(name, x) for x in batches], STEP_PARTS)
        print(f"\n{name}: {steps} steps, {sum(seconds.values()) / steps * 1e3:.0f} ms a step under the profiler")
        print_parts(seconds, flops, STEP_PARTS, gflops, bound_by=bound)


def _erf_gelu_forward(self: MLP, x: torch.Tensor) -> torch.Tensor:
    return self.drop(self.c_proj(F.gelu(self.c_fc(x))))


def _nanogpt(path: Path, a: argparse.Namespace, name: str) -> torch.nn.Module:
    """nanoGPT's GPT from its model.py, at our size and vocabulary (its defaults otherwise: bias, no dropout)."""
    spec = importlib.util.spec_from_file_location(f"{name.replace('-', '_')}_model", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: not a Python file")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cfg = mod.GPTConfig(block_size=a.block, vocab_size=a.vocab, n_layer=a.layers, n_head=a.heads,
                        n_embd=a.embd, dropout=0.0, bias=True)
    return mod.GPT(cfg)


if __name__ == "__main__":
    main()
