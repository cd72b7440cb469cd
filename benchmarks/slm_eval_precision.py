"""Segmental LM scoring speed: `evaluate_corpus` in fp32 and under bf16 autocast, in turn in one process.

    .venv/bin/python benchmarks/slm_eval_precision.py [--sentences 400] [--rounds 2] [--threads 1]

The workload is the cpu profile's test pass (`SLMRun.evaluate`): the PKU and PTB MSLM at the cpu profile's sizes
and evaluation batches, over the first `--sentences` test sentences, Viterbi and bits per character with the
official scorer. The models are freshly initialised: a pass costs the same whatever the weights. bf16 is what a
run trained under bf16 autocast is scored with; without native bfloat16 (AVX512_BF16/AMX) it is emulated and the
ratio says how much slower.
"""

from __future__ import annotations

import argparse
import time

import torch

from hanzilm.papers.mslm import experiment as ex
from hanzilm.papers.mslm.model import SegmentalLM


def timed_pass(model: SegmentalLM, data: ex.SLMData, sentences, batch_chars: int, precision: str) -> tuple[float, float]:
    t = time.perf_counter()
    ev = ex.evaluate_corpus(model, data, sentences, batch_chars, precision=precision)
    return time.perf_counter() - t, ev.bpc


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sentences", type=int, default=400)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    ch = ex.configure("cpu")
    for corpus in ex.CORPORA:
        exp = ex.slm_experiment(ch, corpus, "mslm", lr=1e-3)
        data = ex.load_data(corpus)
        torch.manual_seed(0)
        model = SegmentalLM(exp.model, len(data.vocab)).eval()
        test = data.test[:a.sentences]
        chars = sum(sum(map(len, s)) for s in test)
        times: dict[str, list[float]] = {"fp32": [], "bf16": []}
        bpc = {}
        timed_pass(model, data, test[:20], exp.eval_batch_chars, "bf16")   # warm-up: oneDNN's kernels
        for _ in range(a.rounds):
            for precision in times:
                secs, bpc[precision] = timed_pass(model, data, test, exp.eval_batch_chars, precision)
                times[precision].append(secs)
        fp32, bf16 = min(times["fp32"]), min(times["bf16"])
        print(f"{corpus.upper()} MSLM (dim {exp.model.dim}, k {exp.model.max_seg_len}), {len(test)} test sentences, "
              f"{chars:,} characters: fp32 {fp32:.1f} s, bf16 {bf16:.1f} s: bf16 x{fp32 / bf16:.2f} "
              f"(bpc {bpc['fp32']:.4f} / {bpc['bf16']:.4f})")


if __name__ == "__main__":
    main()
