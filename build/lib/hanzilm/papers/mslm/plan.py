"""The chapter's training plan at a profile (`hanzilm paper run --profile gpu --plan`): every run of Table 2's
grid, grouped by corpus and encoder, with its sizes, characters and the throughput assumed (see `hanzilm.plan`).

A segmental LM step is not FLOP-bound on a GPU: the lattice recursion (`lattice.log_marginal`) is a Python loop
over the batch's positions, each a handful of small kernels, forward and backward. Its time is modelled as the
operators a step launches times the cost of one eager operator, plus the matmuls at an assumed MFU.
"""

from __future__ import annotations

from collections import Counter

from ...plan import PLAN_DEVICE, ChapterPlan, Extra, ModelPlan, Rate, bf16_peak
from ...profiles import Profile
from . import experiment as ex
from .model import SegmentalLM, SLMConfig

# Operators (forward + backward) of one training step on an 8,192-character batch at the paper's sizes, counted
# with torch.profiler on CPU (top-level events; about 10 per lattice position, PTB's K = 10 adds a few)
OPS_PER_STEP = {"pku": 1500, "ptb": 1700}
OP_SECONDS = 15e-6          # one eager operator on a GPU: Python, dispatch and launch (~10-20 us)
MATMUL_MFU = 0.30           # the large matmuls (the output layer over PKU's 4.6 k characters, the LSTMs)
WORD2VEC_CHARS_PER_S = 0.94e6  # gensim CBOW, d = 256, one worker: measured on PKU (one core of the cpu machine)


def train_flops_per_char(cfg: SLMConfig, vocab_size: int, mean_length: float) -> float:
    """Training FLOPs per character (6 x matmul multiply-adds): the context encoder at every position, the
    segment decoder (an LSTM over K + 1 steps and the output layer at each) from every start position."""
    d, K = cfg.dim, cfg.max_seg_len
    if cfg.encoder == "rslm":
        encoder = cfg.encoder_layers * 8 * d * d
    else:   # q, k, v, out; the feed-forward; attention over the sentence (+ <s>, </s>); the position gate
        encoder = cfg.encoder_layers * (4 * d * d + 2 * d * cfg.feedforward_dim + 2 * (mean_length + 2) * d) + 2 * d
    decoder = 2 * d * d + (K + 1) * (8 * d * d + d * vocab_size)
    return 6.0 * (encoder + decoder)


def chars_per_second(corpus: str, batch_chars: int, flops_per_char: float, peak: float) -> float:
    step = OPS_PER_STEP[corpus] * OP_SECONDS + batch_chars * flops_per_char / (peak * MATMUL_MFU)
    return batch_chars / step


def _evaluations(steps: int, every: int) -> int:
    return steps // every + (steps % every != 0) if every else 1


def plan(profile: Profile) -> ChapterPlan:
    ch = ex.configure(profile)
    peak = bf16_peak(PLAN_DEVICE)
    runs = ex.unique_runs(ch)
    group = lambda e: (e.corpus, e.model.encoder, e.train.steps)  # noqa: E731  (the runs at scale apart)
    groups = Counter(map(group, runs))
    longest = {(c, e): max(s for c2, e2, s in groups if (c2, e2) == (c, e)) for c, e, _ in groups}
    models, w2v = [], {}
    for (corpus, encoder, steps), n in groups.items():
        exp = next(e for e in runs if group(e) == (corpus, encoder, steps))
        name = f"{corpus}/{encoder}" + (" at scale" if steps == longest[corpus, encoder] and
                                        len([g for g in groups if g[:2] == (corpus, encoder)]) > 1 else "")
        data = ex.load_data(corpus, exp.train_sentences)
        lengths = [sum(map(len, s)) for s in data.train]
        mean = sum(lengths) / len(lengths)
        flops = train_flops_per_char(exp.model, len(data.vocab), mean)
        rate = chars_per_second(corpus, exp.batch_chars, flops, peak)
        dev = data.dev[:exp.dev_sentences] if exp.dev_sentences else data.dev
        scored = sum(sum(map(len, s)) for split in ex.scored_splits(ch, data).values() for s in split)
        params = sum(p.numel() for p in SegmentalLM(exp.model, len(data.vocab)).parameters())
        seeds = sorted({e.train.seed for e in runs if group(e) == (corpus, encoder, steps)})
        rates = sorted({e.train.lr for e in runs if group(e) == (corpus, encoder, steps)})
        models.append(ModelPlan(
            name=name, runs=n, params=params, steps=exp.train.steps,
            tokens=exp.train.steps * exp.batch_chars, flops_per_token=flops,
            eval_tokens=_evaluations(exp.train.steps, exp.train.eval_every) * sum(sum(map(len, s)) for s in dev)
            + 2 * scored,
            rate=Rate(tokens_per_s=rate, basis=(
                f"launch-bound: ~{OPS_PER_STEP['pku']:,}-{OPS_PER_STEP['ptb']:,} operators per step x "
                f"{OP_SECONDS * 1e6:.0f} us + the matmuls at MFU {MATMUL_MFU:.0%} of the {PLAN_DEVICE}")),
            note=(f"dim {exp.model.dim}, K {exp.model.max_seg_len}, vocabulary {len(data.vocab):,}, batches of "
                  f"{exp.batch_chars:,} characters ({exp.train.steps * exp.batch_chars / sum(lengths):.2g} epochs); "
                  f"seeds {', '.join(map(str, seeds))}; lr {', '.join(f'{r:g}' for r in rates)}")))
        if exp.w2v_epochs > 0:
            key = ex.word2vec_config(exp)
            w2v[key] = exp.w2v_epochs * sum(lengths) / WORD2VEC_CHARS_PER_S / 3600
    extras = [Extra(f"word2vec initialisation, {k.corpus} (dim {k.dim}, {k.epochs} epochs; gensim, one worker)",
                    h, on="cpu") for k, h in w2v.items()]
    return ChapterPlan(
        chapter="mslm", title="Downey et al. 2021, RSLM / MSLM / DMSLM on PKU and PTB", models=models,
        extras=extras,
        notes=[f"evaluation: dev every eval_every steps (both selections kept), then both selections over the "
               f"{ch.f1_split!r} split(s)", f"{len(runs)} runs, {ch.workers} at a time"])

