"""The chapter's training plan at a profile (`hanzilm paper run --profile gpu --plan`): every segmenter its tables
train, grouped by dataset and architecture (see `hanzilm.plan`).

The window taggers train on the CPU in every profile (`experiment.TRAIN_THREADS`, one thread): their
loss-augmented Viterbi is NumPy, and their matrices (20 sentences x 125 inputs) would leave a GPU idle. The
rates are measured, not assumed.
"""

from __future__ import annotations

import math

from ...data.corpus import LMSplitConfig, load_lm_corpus, split_documents
from ...plan import ChapterPlan, Extra, ModelPlan, Rate
from ...profiles import Profile
from . import experiment as ex
from .experiment import MMTNNChapter, SegmentationConfig, runs
from .tagger import WindowTagger

# Characters per second of wall time (training and each epoch's dev evaluation), one thread: the median over the
# cpu profile's runs of each architecture (results/cpu/checkpoints, 2-core laptop; PKU and MSR)
CHARS_PER_S = {"nn": 160e3, "nn_tag": 137e3, "mmtnn": 29e3, "mmtnn+bigram": 19e3}
CRF_SECONDS_PER_ITERATION = 0.51     # PKU, L-BFGS: 80 iterations in 41 s on the cpu profile
WORD2VEC_CHARS_PER_S = 0.34e6        # gensim skip-gram, d = 25, one worker: measured on PKU on the cpu machine


def architecture(cfg: SegmentationConfig) -> str:
    return cfg.model + ("+bigram" if cfg.bigram else "")


def plan(profile: Profile) -> ChapterPlan:
    ch = ex.configure(profile)
    groups: dict[tuple[str, str], list[SegmentationConfig]] = {}
    for cfg in runs(ch):
        groups.setdefault((cfg.dataset, architecture(cfg)), []).append(cfg)
    models, extras = [], []
    for (dataset, arch), cfgs in groups.items():
        cfg = cfgs[0]
        train, _ = ex.split_sentences(cfg)
        chars = sum(len("".join(s)) for s in train)
        if cfg.model == "crf":
            extras.append(Extra(f"{dataset} CRF ({cfg.crf_max_iterations} L-BFGS iterations)",
                                cfg.crf_max_iterations * CRF_SECONDS_PER_ITERATION / 3600, on="cpu"))
            continue
        encoder = ex.build_encoder(cfg, train)
        net = WindowTagger(ex.spec_of(cfg), len(encoder.vocab), encoder.n_bigrams)
        steps = ex.train_config(cfg, len(train)).steps
        epochs = steps / math.ceil(len(train) / cfg.batch_size)
        variants = [("pre-trained, " if c.pretrained else "") + f"seed {c.seed}" for c in cfgs]
        models.append(ModelPlan(
            name=f"{dataset}/{arch}", runs=len(cfgs), params=sum(p.numel() for p in net.parameters()),
            steps=steps, tokens=round(epochs * chars), flops_per_token=None, eval_tokens=0,
            rate=Rate(tokens_per_s=CHARS_PER_S[arch], on="cpu",
                      basis="measured characters/s of wall time (training + per-epoch dev F1), one thread"),
            note=f"{len(train):,} sentences, {epochs:.0f} epochs, lr {cfg.lr:g}; runs: {'; '.join(variants)}"))
    if any(c.pretrained for c in runs(ch)):
        w2v = ch.word2vec
        extras.append(Extra(f"word2vec pre-training (dim {w2v.dim}, {w2v.epochs} epochs, skip-gram, one worker)",
                            w2v.epochs * _pretraining_chars(w2v.max_chars) / WORD2VEC_CHARS_PER_S / 3600,
                            on="cpu"))
    return ChapterPlan(chapter="mmtnn", title="Pei, Ge & Chang 2014, MMTNN and its baselines on PKU and MSR",
                       models=models, extras=extras,
                       notes=["the taggers train on the CPU, one run after another; the GPU is not used",
                              f"test scoring: the official test sets ({'all' if ch.test_lines is None else ch.test_lines}"
                              " lines), seconds per model"])


def _pretraining_chars(max_chars: int | None) -> int:
    split = LMSplitConfig()
    docs = split_documents(load_lm_corpus(), test_fraction=split.test_fraction, dev_fraction=split.dev_fraction)
    total = sum(len(d.text) for d in docs["train"])
    return total if max_chars is None else min(total, max_chars)
