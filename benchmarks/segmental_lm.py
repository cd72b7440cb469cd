"""Segmental LM speed: training characters/second and lattice forward+backward time per character.

    .venv/bin/python benchmarks/segmental_lm.py [--steps 6] [--threads 2] [--dim 256] [--profile pku/mslm]

Workloads (the anchor's: PKU, k = 5, dim 256, 2,048-character batches; and PTB, k = 10):
  * training: SLM loss + backward + Adam step on real SNLM batches (CharBatches), per encoder, on `--steps`
    batches spread evenly over the first epoch (the first few batches are a lottery: one seam batch of
    161 sentences padded to 551 characters costs as much as 40 ordinary ones); batches packed as the stored
    runs were (across length-sorted pools) and within pools (`SLMExperiment.pack_within_pools`), side by side;
  * lattice: `log_marginal` forward + backward alone on the same batch shapes, for k = 5 and 10;
  * `--profile CELL`: where a training step of the cpu profile's run of that cell goes (torch.profiler,
    operators' own time, within pools), grouped into the step's parts, with the matmuls' achieved GFLOP/s beside
    the baseline's: matmuls near the baseline's rate leave little to gain but fewer or cheaper FLOPs (bfloat16);
    its last line bounds what removing everything else could give (2026-12-05, AVX2 EPYC, fp32: the matmuls and
    LSTMs, at 76-80 % of the baseline, are 75 % of the PKU MSLM's step, so at most 1.33x faster in fp32).
Baseline in the same process: fp32 2048x2048 torch.mm GFLOP/s (anchors.md: ~172 GFLOP/s on an idle machine,
where the authors' code trains at ~1.17 k characters/s). Each throughput is also printed scaled to that
matmul speed ("@anchor"), which removes most of the noise of a busy machine.

2026-12-04, AVX512_BF16 EPYC, `--cells pku/mslm --bf16 --steps 20`: the PKU MSLM under bf16 autocast within pools
trains at 2,283 chars/s = 2,909 @anchor = 2.49x the authors' code (2.20x our fp32) with the output layer and its
log-softmax computed a block of rows at a time (`hanzilm.softmax.linear_selected_log_probs`); 1,843 = 1.94x that
morning with the whole (rows x vocabulary) logits built, shifted and exponentiated in separate passes.
"""

from __future__ import annotations

import argparse
import time

import torch

from hanzilm.memory import keep_freed_memory
from hanzilm.papers.mslm.model import SLMConfig, SegmentalLM
from hanzilm.papers.mslm.lattice import log_marginal
from hanzilm.papers.mslm.data import CharBatches
from hanzilm.papers.mslm.experiment import MAX_SEG_LEN, load_data
from step_parts import matmul_gflops, print_parts, profile_parts

ANCHOR_GFLOPS, ANCHOR_AUTHORS_CHARS_S = 172.0, 1170.0


def spread_over_epoch(batches: CharBatches, n: int) -> list[int]:
    """n step indices spread evenly over the first epoch (its first batches alone are a lottery)."""
    per_epoch = len(batches._epoch(0))
    return [i * per_epoch // n for i in range(n)]


def train_speed(corpus: str, encoder: str, steps: int, dim: int = 256, batch_chars: int = 2048,
                bf16_output: bool = False, within_pools: bool = False, bf16: bool = False) -> float:
    data = load_data(corpus)
    batches = CharBatches(data.encode(data.train), batch_chars, seed=0, within_pools=within_pools)
    sample = spread_over_epoch(batches, steps + 2)
    torch.manual_seed(0)
    ff = {} if dim == 256 else {"feedforward_dim": 2 * dim - 2}      # 509 at 256 (the authors'), as profiles do
    cfg = SLMConfig(encoder=encoder, dim=dim, max_seg_len=MAX_SEG_LEN[corpus], bf16_output=bf16_output, **ff)
    model = SegmentalLM(cfg, len(data.vocab))
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    chars, secs = 0, 0.0
    for step, index in enumerate(sample):
        b = batches(index)
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):  # as the trainer's precision="bf16"
            loss = model.loss(b)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step >= 2:  # warm-up steps excluded
            secs += time.perf_counter() - t0
            chars += int(b["lengths"].sum())
    return chars / secs


# torch operators (by their own time) -> the part of an SLM training step they belong to
STEP_PARTS = (
    ("matmuls: output layer over the vocabulary, encoder, decoder input", ("aten::mm", "aten::addmm", "aten::bmm")),
    ("LSTMs (oneDNN): the segment decoder, the RSLM's encoder", ("aten::mkldnn_rnn",)),
    ("elementwise over the logits: log-softmax, fp32 <-> bf16", ("aten::sub", "aten::exp", "aten::amax",
                                                                       "aten::sum", "aten::logsumexp", "aten::copy_")),
    ("dropout masks", ("aten::bernoulli",)),
    ("optimizer (Adam)", ("Optimizer.", "aten::_foreach", "aten::lerp", "aten::addcdiv", "aten::addcmul",
                          "aten::sqrt")),
)


def profile_step(corpus: str, encoder: str, steps: int, gflops: float) -> None:
    """Print where the time of `steps` training steps of the cpu profile's run of `encoder` on `corpus` goes
    (see STEP_PARTS; "the rest": everything else, the lattice's many small operators among it)."""
    from hanzilm.papers.mslm.experiment import configure, slm_experiment

    ch = configure("cpu")
    exp = slm_experiment(ch, corpus, encoder, lr=1e-3)
    data = load_data(corpus)
    batches = CharBatches(data.encode(data.train), exp.batch_chars, seed=0, within_pools=True)
    torch.manual_seed(0)
    model = SegmentalLM(exp.model, len(data.vocab))
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    sample = [batches(i) for i in spread_over_epoch(batches, steps + 1)]

    bf16 = exp.train.precision == "bf16"     # the profile's precision on this CPU (bf16 where it is native)

    def step(b):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = model.loss(b)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step(sample[0])  # warm-up
    seconds, flops = profile_parts((lambda b=b: step(b) for b in sample[1:]), STEP_PARTS)
    chars = sum(int(b["lengths"].sum()) for b in sample[1:])
    # the profiler counts no FLOPs for oneDNN's LSTMs: 4 gates from x and h (16 D^2) per row and step, backward
    # twice the forward; the decoder has a row per character (start position) and K + 1 steps, the RSLM's
    # encoder a step per character
    dim, steps_per_char = exp.model.dim, exp.model.max_seg_len + 1 + (encoder == "rslm")
    flops[STEP_PARTS[1][0]] = 3 * chars * steps_per_char * 16 * dim * dim
    print(f"\nwhere a training step goes: the cpu profile's {corpus} {encoder} (dim {dim}, "
          f"{exp.batch_chars:,}-character batches, packed within pools, {'bf16' if bf16 else 'fp32'}), {steps} steps: "
          f"{chars / sum(seconds.values()):.0f} chars/s under the profiler")
    print_parts(seconds, flops, STEP_PARTS, gflops, bound_by=[name for name, _ in STEP_PARTS[:2]])


def lattice_us_per_char(corpus: str, K: int, steps: int, batch_chars: int = 2048) -> float:
    data = load_data(corpus)
    batches = CharBatches(data.encode(data.train), batch_chars, seed=0)
    chars, secs = 0, 0.0
    for step in range(steps + 1):
        lengths = batches(step)["lengths"]
        seg = torch.randn(len(lengths), int(lengths.max()), K, requires_grad=True)
        t0 = time.perf_counter()
        log_marginal(seg, lengths).sum().backward()
        if step >= 1:
            secs += time.perf_counter() - t0
            chars += int(lengths.sum())
    return secs / chars * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dim", type=int, default=256, help="256: the paper's; 128: the cpu profile's")
    ap.add_argument("--bf16-output", action="store_true", help="the output layer in bfloat16 (cpu profile)")
    ap.add_argument("--bf16", action="store_true", help="every cell also under bfloat16 autocast (the trainer's "
                    "precision='bf16'; the lattice stays fp32), within pools")
    ap.add_argument("--cells", default="pku/mslm,pku/rslm,pku/dmslm,ptb/mslm,ptb/rslm",
                    help="corpus/encoder pairs to time")
    ap.add_argument("--profile", metavar="CELL", help="only profile training steps of the cpu profile's run of "
                    "this corpus/encoder (e.g. pku/mslm) over --steps steps")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    g0 = matmul_gflops()
    print(f"baseline: fp32 2048^2 matmul {g0:.0f} GFLOP/s (anchor machine idle: {ANCHOR_GFLOPS:.0f})")
    if args.profile:
        keep_freed_memory()
        profile_step(*args.profile.split("/"), args.steps, g0)
        return
    # glibc's default malloc first (freed logits go back to the kernel), then hanzilm's setting (train.setup)
    default_cps = train_speed("pku", "mslm", args.steps, args.dim, bf16_output=args.bf16_output)
    keep_freed_memory()
    rows = []
    autocast = {}
    for corpus, encoder in (c.split("/") for c in args.cells.split(",")):
        across = train_speed(corpus, encoder, args.steps, args.dim, bf16_output=args.bf16_output)
        within = train_speed(corpus, encoder, args.steps, args.dim, bf16_output=args.bf16_output,
                             within_pools=True)
        if args.bf16:
            autocast[corpus, encoder] = train_speed(corpus, encoder, args.steps, args.dim, within_pools=True,
                                                    bf16=True)
        rows.append((corpus, encoder, across, within))
    print(f"pku mslm with glibc's default malloc thresholds: {default_cps:.0f} chars/s; with keep_freed_memory: "
          f"{rows[0][2]:.0f} chars/s = {rows[0][2] / default_cps:.2f}x")
    g1 = matmul_gflops()
    g = (g0 + g1) / 2
    print(f"baseline again: {g1:.0f} GFLOP/s; mean {g:.0f}")
    bf16 = " (bf16 output layer)" if args.bf16_output else ""
    print(f"\ntraining, dim {args.dim}{bf16}, 2,048-character batches (authors' code on the anchor machine, dim 256: "
          f"{ANCHOR_AUTHORS_CHARS_S:.0f} chars/s at PKU k=5):")
    print(f"  {'':14s} {'across pools (stored runs)':>44s}   {'within pools':>40s}")
    for corpus, encoder, across, within in rows:
        line = f"  {corpus} k={MAX_SEG_LEN[corpus]:<2} {encoder:5s}"
        for cps in (across, within):
            scaled = cps * ANCHOR_GFLOPS / g
            line += f" {cps:7.0f} chars/s @anchor {scaled:6.0f} = {scaled / ANCHOR_AUTHORS_CHARS_S:.2f}x authors'"
        print(line + f"   within/across {within / across:.2f}x")
        if (corpus, encoder) in autocast:
            cps = autocast[corpus, encoder]
            scaled = cps * ANCHOR_GFLOPS / g
            print(f"  {'':14s} bf16 autocast, within pools: {cps:7.0f} chars/s @anchor {scaled:6.0f} = "
                  f"{scaled / ANCHOR_AUTHORS_CHARS_S:.2f}x authors' ({cps / within:.2f}x fp32 within pools)")
    print("\nlattice forward+backward alone (log_marginal), same batch shapes:")
    step_us = {c: 1e6 / cps for c, e, cps, _ in rows if e == "mslm"}
    for corpus, K in [(c, K) for c in step_us for K in (5, 10)]:
        us = lattice_us_per_char(corpus, K, args.steps)
        print(f"  {corpus} k={K:<2} {us:7.1f} us/char = {us / step_us[corpus]:.1%} of an MSLM training step "
              f"({corpus}, k={MAX_SEG_LEN[corpus]})")


if __name__ == "__main__":
    main()
