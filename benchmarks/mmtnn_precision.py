"""MMTNN training steps in fp32 and under bf16 autocast (`SegmentationConfig.precision`), in one process.

    .venv/bin/python benchmarks/mmtnn_precision.py [--steps 150] [--rounds 2]

Each tagger of the cpu profile's PKU grid (nn, nn_tag, mmtnn, mmtnn + bigrams) takes the same first `--steps`
batches from the same initialisation in both precisions, one thread, the two timed in turn round after round; the
fastest round of each is kept. Prints seconds per precision and the bf16 speed ratio (above 1: bf16 faster).
Numbers differ between precisions, so the ratio says what a re-run in bf16 would cost, not what it would give.

2026-12-05, AVX512_BF16 EPYC, idle, one thread: bf16 x1.13 (nn), x1.21 (nn_tag), x1.36 (mmtnn and mmtnn +
bigrams). The whole cpu chapter cold in bf16 (an empty store, two workers) took 1:17:03 against fp32's 1:17:04
(user time 8,416 s against 8,886 s; PKU test F within 0.16): beside a second worker the whole runs gained less
than the steps do here, and early stopping ended runs at other epochs, so the gain did not reach the chapter's
time, and the cpu profile trains in fp32.
"""

from __future__ import annotations

import argparse
import time

import torch

from hanzilm.papers.mmtnn import experiment as ex
from hanzilm.papers.mmtnn.encoding import Encoder

TAGGERS = (("nn", False), ("nn_tag", False), ("mmtnn", False), ("mmtnn", True))


def seconds(cfg, encoder: Encoder, batches: list, precision: str) -> float:
    torch.manual_seed(0)
    model = ex.build_model(cfg, encoder)
    opt = torch.optim.Adagrad(model.parameters(), lr=cfg.lr)
    start = time.perf_counter()
    for batch in batches:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
            loss = model.loss(batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)
    ch = ex.chapter("cpu")
    for model, bigram in TAGGERS:
        cfg = ch.model(dataset="pku", model=model, pretrained=bigram, bigram=bigram)
        train, _ = ex.split_sentences(cfg)
        encoder = ex.build_encoder(cfg, train)
        batch = ex._batches(cfg, encoder, train)
        batches = [batch(i) for i in range(args.steps)]
        times: dict[str, list[float]] = {"fp32": [], "bf16": []}
        for _ in range(args.rounds):
            for precision, runs in times.items():
                runs.append(seconds(cfg, encoder, batches, precision))
        best = {precision: min(runs) for precision, runs in times.items()}
        print(f"{model + '+bigram' * bigram:13s} {args.steps} steps: fp32 {best['fp32']:.2f} s, "
              f"bf16 {best['bf16']:.2f} s, bf16 x{best['fp32'] / best['bf16']:.2f}", flush=True)


if __name__ == "__main__":
    main()
