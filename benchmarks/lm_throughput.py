"""Training and evaluation speed of the GPT-2 and Backpack character LMs at the same contextual size.

    .venv/bin/python benchmarks/lm_throughput.py [--layers 4 --heads 4 --embd 128 --block 256 --batch 16
                                                  --vocab 5260 --senses 16 --steps 20 --threads 2
                                                  [--zipf | --corpus]]

Training: forward + backward + clip + AdamW step on random token blocks, the models interleaved round by
round in one process (so machine load hits both alike), median step time each. The Backpack has one
contextualisation block fewer than the GPT (the paper's pairing). Evaluation: no-grad forward tokens/s.
Prints tokens/s, the Backpack/GPT step-time ratio (target <= 1.3, acceptance <= 1.6) and the ratio of the
floating-point work of one training step (torch's FlopCounterMode: matmuls and attention): a step-time ratio
below the work ratio means the Backpack computes faster per FLOP than the GPT.
The reference anchor (nanoGPT train.py, 4/4/128, block 256, batch 16, vocab ~3.7k) is ~10.0k tokens/s.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from hanzilm.papers.backpack.backpack import Backpack, BackpackConfig
from hanzilm.papers.backpack.gpt import GPT, GPTConfig
from hanzilm.train import TrainConfig, make_optimizer


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
    a = ap.parse_args()
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

    times: dict[str, list[float]] = {name: [] for name in models}
    for rnd in range(a.steps + 3):
        x = batch()
        for name, m in models.items():
            m.train()
            t0 = time.perf_counter()
            loss = m.loss(x)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opts[name].step()
            opts[name].zero_grad(set_to_none=True)
            if rnd >= 3:
                times[name].append(time.perf_counter() - t0)

    from torch.utils.flop_counter import FlopCounterMode

    flops: dict[str, int] = {}
    x = batch()
    for name, m in models.items():
        counter_mode = FlopCounterMode(display=False)
        with counter_mode:
            m.loss(x).backward()
        m.zero_grad(set_to_none=True)
        flops[name] = counter_mode.get_total_flops()

    eval_tps: dict[str, float] = {}
    x = batch()[:, :-1]
    for name, m in models.items():
        m.eval()
        with torch.inference_mode():
            m(x)
            t0 = time.perf_counter()
            for _ in range(5):
                m(x)
        eval_tps[name] = 5 * x.numel() / (time.perf_counter() - t0)

    tokens = a.batch * a.block
    print(f"{a.layers}/{a.heads}/{a.embd}, block {a.block}, batch {a.batch}, vocab {a.vocab}, "
          f"{a.senses} senses, {a.threads} threads, "
          f"{'corpus' if a.corpus else 'zipf' if a.zipf else 'uniform'} tokens")
    step = {name: statistics.median(t) for name, t in times.items()}
    for name, m in models.items():
        n = sum(p.numel() for p in m.parameters())
        print(f"  {name:9s} {n / 1e6:6.2f} M params   train {tokens / step[name]:8.0f} tok/s  "
              f"step {step[name] * 1e3:7.1f} ms   eval {eval_tps[name]:8.0f} tok/s   "
              f"{flops[name] / 1e9:6.1f} GFLOP/step")
    work = flops["backpack"] / flops["gpt"]
    print(f"  step-time ratio backpack/gpt: {step['backpack'] / step['gpt']:.2f}   work ratio: {work:.2f} "
          f"(so the Backpack runs at {work / (step['backpack'] / step['gpt']):.0%} of the GPT's FLOP rate)")


if __name__ == "__main__":
    main()
