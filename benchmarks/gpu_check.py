"""The GPU path, measured: each chapter's training for a few steps on a CUDA device (tokens/s, model FLOP
utilisation against the device's dense bf16 peak, peak memory) and a short run of each chapter's evaluation,
beside what `hanzilm paper run --plan` assumed.

    .venv/bin/python benchmarks/gpu_check.py                       # the gpu profile's models, 30 steps each
    .venv/bin/python benchmarks/gpu_check.py --only backpack --steps 50 --compile
    .venv/bin/python benchmarks/gpu_check.py --device cpu --profile smoke --steps 2   # the code paths on CPU

Without a CUDA device (and without --device) it prints one line saying so and exits 0.

Training goes through the one trainer (`hanzilm.train.train`) in a temporary run directory, as a notebook run
trains: the profile's precision (bf16 autocast at `gpu`; --no-bf16 for fp32/TF32), the trainer's CUDA
defaults (TF32, fused AdamW, pinned host batches) and with --compile `torch.compile` of the transformer LMs'
loss (the segmental LMs' lattice is a Python loop over positions that compilation would unroll per length).
When the profile's batch does not fit, the step is split into 2, 4, ... micro-batches (`TrainConfig.grad_accum`)
until it does, and the split is printed. The first `--warmup` steps (compilation, allocator, autotuning) are not
counted. MMTNN trains on the CPU in every profile and is measured there.
Exit status: 0 when every model was measured, 1 when one failed (each failure is one line).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import math
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from hanzilm.machine import cpu_has_bf16
from hanzilm.plan import PLAN_DEVICE, bf16_peak
from hanzilm.profiles import CHAPTERS, PROFILES, get_profile
from hanzilm.train import Runtime, TrainConfig, train


@dataclass
class Result:
    name: str
    micro: int = 0                  # sequences (LMs), characters (SLMs) or sentences (MMTNN) per step
    full: int = 0                   # the profile's batch in the same unit
    tokens_per_s: float = math.nan
    flops_per_token: float | None = None
    planned: str = ""               # what the plan assumed, in words
    peak_gb: float | None = None
    evaluation: list[str] = dataclasses.field(default_factory=list)
    error: str = ""


# ---- one measured training run ----------------------------------------------------------------------------------

def timed_training(build: Callable[[], torch.nn.Module], tcfg: TrainConfig, batches: Callable, args,
                   device: torch.device, bf16: bool, compile_ok: bool, accum: int = 1
                   ) -> tuple[float, float | None, torch.nn.Module]:
    """(tokens/s after the warm-up steps, peak memory in GB or None, the model) of `args.steps` steps, each step
    in `accum` micro-batches."""
    release(device)
    torch.manual_seed(0)
    model = build()
    cfg = dataclasses.replace(tcfg, steps=args.warmup + args.steps, eval_every=0, checkpoint_every=0, log_every=1,
                              precision="bf16" if bf16 else "fp32", grad_accum=accum)
    runtime = Runtime(compile=args.compile_backend if (args.compile and compile_ok) else None)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        result = train(model, cfg, batches, None, Path(tmp), device=device, runtime=runtime)
    rates = [r["tokens_per_s"] for r in result.history if "tokens_per_s" in r and r["step"] > args.warmup]
    peak = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None
    return statistics.median(rates), peak, model


def fitting(run: Callable[[int], tuple], full: int, device: torch.device) -> tuple[int, tuple]:
    """(micro-batch size, run(accum)): the profile's batch `full` in `accum` micro-batches, doubled after each
    out-of-memory error."""
    accum = 1
    while True:
        try:
            return math.ceil(full / accum), run(accum)
        except torch.cuda.OutOfMemoryError:
            if device.type != "cuda" or accum >= full:
                raise
        release(device)   # after the except block: its traceback, and the tensors its frames held, are gone
        accum *= 2


def release(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def timed(fn: Callable[[], object], device: torch.device) -> float:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    t0 = time.perf_counter()
    fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - t0


# ---- the chapters ---------------------------------------------------------------------------------------------

def check_backpack(prof, args, device: torch.device, peak: float | None) -> list[Result]:
    from hanzilm.papers.backpack import experiment as ex
    from hanzilm.papers.backpack import plan as bp
    from hanzilm.papers.backpack.cloze import evaluate_cloze
    from hanzilm.papers.backpack.data import BlockBatches
    from hanzilm.papers.backpack.perplexity import perplexity

    ch = ex.configure(prof)
    corpus = ex.load_corpus(ch)
    cases = ex.cloze_cases(ch, corpus)
    out = []
    for name, cfg in ch.lm.pair().items():
        res = Result(f"backpack/{name}", full=cfg.batch_size)
        try:
            mc = ex.model_config(cfg, len(corpus.vocab))
            rate = bp.GPT_RATE if name == "gpt" else bp.BACKPACK_RATE
            res.planned = f"MFU {rate.mfu:.0%}"
            batches = BlockBatches(corpus.splits["train"], cfg.batch_size, cfg.block_size, seed=cfg.train.seed)
            res.micro, (res.tokens_per_s, res.peak_gb, model) = fitting(lambda accum: timed_training(
                lambda: ex.build(cfg, len(corpus.vocab)), cfg.train, batches, args, device,
                bf16=not args.no_bf16, compile_ok=True, accum=accum), cfg.batch_size, device)
            res.flops_per_token = bp.train_flops_per_token(mc, cfg.block_size, res.micro * cfg.block_size)
            model.eval()
            dev = corpus.splits["dev"]
            n = min(dev.size, args.eval_blocks * cfg.block_size)
            secs = timed(lambda: perplexity(model, dev, cfg.block_size, cfg.eval_batch_size, n), device)
            res.evaluation.append(f"dev perplexity {n / secs:,.0f} tokens/s")
            few = cases[:args.eval_cases]
            secs = timed(lambda: evaluate_cloze(model, few, corpus.vocab, beam=ch.cloze.beam,
                                                block_size=cfg.block_size), device)
            res.evaluation.append(f"cloze {secs / max(1, len(few)):.3f} s/case ({len(cases):,} cases: "
                                  f"{secs / max(1, len(few)) * len(cases) / 60:.1f} min)")
        except Exception as e:  # one line per failure; the other models are still measured
            res.error = f"{type(e).__name__}: {e}"
        model = None   # freed before the next model's peak memory is measured
        out.append(res)
    return out


def check_mslm(prof, args, device: torch.device, peak: float | None) -> list[Result]:
    from hanzilm.papers.mslm import experiment as ex
    from hanzilm.papers.mslm import plan as mp
    from hanzilm.papers.mslm.data import CharBatches
    from hanzilm.papers.mslm.model import SegmentalLM

    ch = ex.configure(prof)
    seen, out = set(), []
    for exp in ex.unique_runs(ch):
        if (exp.corpus, exp.model.encoder) in seen:
            continue
        seen.add((exp.corpus, exp.model.encoder))
        res = Result(f"mslm/{exp.corpus}/{exp.model.encoder}", full=exp.batch_chars)
        try:
            data = ex.load_data(exp.corpus, exp.train_sentences)
            rows = data.encode(data.train)
            mean = sum(map(len, rows)) / len(rows)
            res.flops_per_token = mp.train_flops_per_char(exp.model, len(data.vocab), mean)
            if peak and exp.corpus in mp.OPS_PER_STEP:
                res.planned = f"{mp.chars_per_second(exp.corpus, exp.batch_chars, res.flops_per_token, peak):,.0f}/s"
            # word2vec initialisation is left out: it sets the embeddings' values, not the step's cost
            batches = CharBatches(rows, exp.batch_chars, seed=exp.train.seed, within_pools=exp.pack_within_pools)
            # oneDNN has no bfloat16 LSTM on a CPU without native bf16; CUDA and such CPUs take the bf16 path
            bf16 = not args.no_bf16 and (device.type != "cpu" or cpu_has_bf16())
            if bf16 != (not args.no_bf16):
                res.evaluation.append("trained in fp32: this CPU has no native bfloat16, so no bf16 LSTM")
            res.micro, (res.tokens_per_s, res.peak_gb, model) = fitting(lambda accum: timed_training(
                lambda: SegmentalLM(exp.model, len(data.vocab)), exp.train, batches, args, device,
                bf16=bf16, compile_ok=False, accum=accum), exp.batch_chars, device)
            dev = data.dev[:args.eval_sentences]
            chars = sum(sum(map(len, s)) for s in dev)
            secs = timed(lambda: ex.evaluate_corpus(model, data, dev, exp.eval_batch_chars), device)
            res.evaluation.append(f"dev bpc + Viterbi + scoring {chars / secs:,.0f} characters/s")
        except Exception as e:
            res.error = f"{type(e).__name__}: {e}"
        model = None
        out.append(res)
    return out


def check_mmtnn(prof, args, device: torch.device, peak: float | None) -> list[Result]:
    from hanzilm.papers.mmtnn import experiment as ex
    from hanzilm.papers.mmtnn import plan as tp
    from hanzilm.papers.mmtnn.segmenter import Segmenter

    ch = ex.configure(prof)
    cpu = torch.device("cpu")   # the taggers train on the CPU in every profile (see papers/mmtnn/plan.py)
    lines, _ = ex.test_set("pku", args.eval_sentences)
    out = []
    for model_name, bigram in (("nn", False), ("nn_tag", False), ("mmtnn", False), ("mmtnn", True)):
        cfg = ch.model(dataset="pku", model=model_name, bigram=bigram)
        res = Result(f"mmtnn/pku/{tp.architecture(cfg)} (CPU)", micro=cfg.batch_size, full=cfg.batch_size,
                     planned=f"{tp.CHARS_PER_S[tp.architecture(cfg)]:,.0f}/s")
        threads = torch.get_num_threads()
        torch.set_num_threads(ex.TRAIN_THREADS)
        try:
            train_s, _ = ex.split_sentences(cfg)
            encoder = ex.build_encoder(cfg, train_s)
            res.tokens_per_s, _, model = timed_training(
                lambda: ex.build_model(cfg, encoder), ex.train_config(cfg, len(train_s)),
                ex._batches(cfg, encoder, train_s), args, cpu, bf16=False, compile_ok=False)
            secs = timed(lambda: Segmenter(model.eval(), encoder).segment_lines(lines), cpu)
            res.evaluation.append(f"segment the test set {sum(map(len, lines)) / secs:,.0f} characters/s")
        except Exception as e:
            res.error = f"{type(e).__name__}: {e}"
        finally:
            torch.set_num_threads(threads)
        out.append(res)
    return out


CHECKS = {"backpack": check_backpack, "mslm": check_mslm, "mmtnn": check_mmtnn}


def report(results: list[Result], peak: float | None) -> None:
    for r in results:
        if r.error:
            print(f"  {r.name}: FAILED: {' '.join(r.error.split())[:300]}")
            continue
        batch = f"batch {r.full:,}" + (f" in {math.ceil(r.full / r.micro)} micro-batches of {r.micro:,}"
                                       if r.micro < r.full else "")
        mfu = (f"MFU {r.tokens_per_s * r.flops_per_token / peak:.1%}" if peak and r.flops_per_token else "MFU n/a")
        memory = f", peak {r.peak_gb:.1f} GB" if r.peak_gb is not None else ""
        planned = f" (plan: {r.planned})" if r.planned else ""
        print(f"  {r.name}: {batch}, {r.tokens_per_s:,.0f} tokens/s, {mfu}{planned}{memory}")
        for e in r.evaluation:
            print(f"    eval: {e}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="gpu", choices=list(PROFILES))
    ap.add_argument("--only", choices=CHAPTERS, action="append", help="a chapter (repeatable; default: all)")
    ap.add_argument("--steps", type=int, default=30, help="measured training steps per model")
    ap.add_argument("--warmup", type=int, default=5, help="steps run first and not measured")
    ap.add_argument("--device", help="cuda, cuda:1, cpu (default: cuda if there is one, else exit 0)")
    ap.add_argument("--no-bf16", action="store_true", help="fp32 (TF32 on CUDA) instead of bf16 autocast")
    ap.add_argument("--compile", action="store_true", help="torch.compile the transformer LMs' loss")
    ap.add_argument("--compile-backend", default="inductor")
    ap.add_argument("--peak-tflops", type=float, help="the device's dense bf16 peak, if it is not in the table")
    ap.add_argument("--eval-blocks", type=int, default=32, help="dev blocks of the perplexity run")
    ap.add_argument("--eval-cases", type=int, default=20, help="cloze cases of the timed beam search")
    ap.add_argument("--eval-sentences", type=int, default=200, help="sentences (lines) of the SLM/MMTNN evaluation")
    args = ap.parse_args(argv)

    if args.device is None and not torch.cuda.is_available():
        print(f"gpu_check: no CUDA device here (torch {torch.__version__}, CUDA build: {torch.version.cuda}); "
              "nothing to measure")
        return 0
    device = torch.device(args.device or "cuda")
    if device.type == "cuda" and device.index is None:   # the trainer's setup needs an index (cuda:N)
        device = torch.device("cuda", torch.cuda.current_device())
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
    else:
        threads = torch.get_num_threads()
        name = f"CPU ({threads} thread{'s' * (threads != 1)})"
    peak = args.peak_tflops * 1e12 if args.peak_tflops else (bf16_peak(name) if device.type == "cuda" else None)
    prof = get_profile(args.profile)
    print(f"gpu_check: {name}, dense bf16 peak {f'{peak / 1e12:.0f} TFLOP/s' if peak else 'unknown (--peak-tflops)'}; "
          f"profile {prof.name}; {args.steps} steps after {args.warmup}; "
          f"{'fp32/TF32' if args.no_bf16 else 'bf16 autocast'}{', torch.compile' if args.compile else ''}; "
          f"the plan assumes a {PLAN_DEVICE}")
    failed = False
    for chapter in args.only or CHAPTERS:
        print(chapter)
        results = CHECKS[chapter](prof, args, device, peak)
        report(results, peak)
        failed |= any(r.error for r in results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
