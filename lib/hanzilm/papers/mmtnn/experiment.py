"""The MMTNN chapter's experiments: one config per trained segmenter, trained once (`train_or_load`) and shared by
every notebook that asks for it (Table 5 reuses Table 3's models).

    cfg = configure("cpu", dataset="pku", model="mmtnn", pretrained=True)
    seg = train_segmenter(cfg, "cpu")                 # a Segmenter; saved under <run_dir>/segmenter
    counts, output = test_scores(seg, "pku", "cpu")   # the bakeoff metrics on the official test set

Training follows the paper: the first 90 % of the training sentences train, the last 10 % are the dev set; max-margin
loss with kappa per wrong tag, loss-augmented Viterbi, diagonal AdaGrad (lr 0.2), minibatches of 20 sentences, L2
1e-4 (the trainer's weight decay, on matrices and embeddings); the epoch with the best dev F1 is kept.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Sequence

import numpy as np
import torch

from ...data.manifest import load_manifest
from ...data.readers import read_lines, read_segmented, read_word_list
from ...data.resolve import checksums, resolve
from .pretrain import Word2VecConfig, char_vectors, init_table
from ...errors import HanzilmError
from ...eval.sighan import Counts, score
from ...io import atomic_write_text
from .crf import CRFSegmenter, CRFSpec, train_crf
from .tagger import TaggerSpec, WindowTagger
from ...profiles import Profile, get_profile
from ...store import is_complete, load_history, run_dir_for, train_or_load
from ...train import TrainConfig
from .encoding import PAD_END, PAD_START, Encoder
from .segmenter import Segmenter
from .tags import words_to_tags

CODE_VERSION = "mmtnn/1"
# Training runs on one thread: its matrices (20 sentences x 125 inputs) gain little from a second one, and on a
# shared 2-core machine a second OpenMP thread spins and halves throughput (measured: 292 steps in 17 s with one
# thread, over 45 s with two, while another job ran). Decoding uses the profile's threads.
TRAIN_THREADS = 1
MODELS = ("crf", "nn", "nn_tag", "mmtnn")
LABELS = {"crf": "CRF (unigram features)", "nn": "NN (Zheng-style; transition scores)",
          "nn_tag": "NN + tag embedding", "mmtnn": "MMTNN"}

DATASETS = {
    "pku": {"train": "pku_training_pd199801", "test": "pku_test.utf8", "gold": "pku_test_gold.utf8",
            "words": "pku_training_words.utf8", "label": "PKU"},
    "msr": {"train": "msr_training_sample", "test": "msr_test.utf8", "gold": "msr_test_gold.utf8",
            "words": "msr_training_words.utf8", "label": "MSR"},
}


@dataclass(frozen=True)
class SegmentationConfig:
    """One trained segmenter. Defaults are the paper's values (Table 2 and the text); `epochs` is not stated."""

    profile_key: ClassVar[str] = "mmtnn"

    dataset: str = "pku"
    model: str = "mmtnn"           # crf | nn | nn_tag | mmtnn
    pretrained: bool = False       # word2vec character embeddings (our LM corpus in place of Gigaword)
    bigram: bool = False           # window bigram embeddings, initialised as the mean of the two characters
    window: int = 5
    dim: int = 25
    hidden: int = 50
    factors: int = 10
    kappa: float = 0.2
    lr: float = 0.2
    l2: float = 1e-4
    batch_size: int = 20
    epochs: int = 20
    min_steps: int = 0                   # small data sets: at least this many updates (in whole epochs)
    dev_fraction: float = 0.1
    train_sentences: int | None = None   # use only the first n training sentences (before the 90/10 split)
    char_min_freq: int = 2               # rarer training characters are <unk>, so <unk> gets trained
    bigram_min_freq: int = 2
    crf_c2: float = 0.5
    crf_max_iterations: int = 200
    seed: int = 0

    def __post_init__(self):
        if self.dataset not in DATASETS or self.model not in MODELS:
            raise HanzilmError(f"dataset must be one of {list(DATASETS)} and model one of {MODELS}")


@dataclass(frozen=True)
class SegmentationEval:
    profile_key: ClassVar[str] = "mmtnn_eval"

    test_lines: int | None = None        # score only the first n test lines (smoke)


def configure(profile: str | Profile, **fields) -> SegmentationConfig:
    """The profile's config for one model; the variant fields (dataset, model, pretrained, bigram) are set last."""
    return dataclasses.replace(get_profile(profile).configure(SegmentationConfig()), **fields)


def data_label(dataset: str, split: str = "train") -> str:
    """The `data` column: the stand-in note of the training data."""
    note = load_manifest().get(DATASETS[dataset]["train"]).stand_in_note
    return f"stand-in: {note}" if note else "official"


# ---- data ----

def split_sentences(cfg: SegmentationConfig) -> tuple[list[list[str]], list[list[str]]]:
    sentences = read_segmented(resolve(DATASETS[cfg.dataset]["train"]))
    if cfg.train_sentences is not None:
        sentences = sentences[:cfg.train_sentences]
    cut = int(round(len(sentences) * (1 - cfg.dev_fraction)))
    return sentences[:cut], sentences[cut:]


def _data_key(cfg: SegmentationConfig, profile: str | Profile) -> dict[str, str]:
    data = checksums([DATASETS[cfg.dataset]["train"]])
    if cfg.pretrained:
        w2v = get_profile(profile).configure(Word2VecConfig())
        data["word2vec"] = json.dumps(dataclasses.asdict(w2v), sort_keys=True)
    return data


def spec_of(cfg: SegmentationConfig) -> TaggerSpec:
    flags = {"nn": dict(transitions=True, tag_embedding=False, tensor=False),
             "nn_tag": dict(transitions=False, tag_embedding=True, tensor=False),
             "mmtnn": dict(transitions=False, tag_embedding=True, tensor=True)}[cfg.model]
    return TaggerSpec(window=cfg.window, dim=cfg.dim, hidden=cfg.hidden, factors=cfg.factors, bigram=cfg.bigram,
                      kappa=cfg.kappa, **flags)


def train_config(cfg: SegmentationConfig, n_train: int) -> TrainConfig:
    per_epoch = math.ceil(n_train / cfg.batch_size)
    epochs = max(cfg.epochs, math.ceil(cfg.min_steps / per_epoch))
    return TrainConfig(steps=epochs * per_epoch, lr=cfg.lr, optimizer="adagrad", weight_decay=cfg.l2,
                       eval_every=per_epoch, checkpoint_every=per_epoch, metric="dev_f1", metric_mode="max",
                       log_every=max(1, min(50, per_epoch)), seed=cfg.seed)


def run_dir(cfg: SegmentationConfig, profile: str | Profile) -> Path:
    return run_dir_for(cfg, profile=profile, data=_data_key(cfg, profile), code_version=CODE_VERSION)


# ---- neural models ----

def build_model(cfg: SegmentationConfig, encoder: Encoder, profile: str | Profile) -> WindowTagger:
    model = WindowTagger(spec_of(cfg), len(encoder.vocab), encoder.n_bigrams)
    std = float(model.char.weight.detach().std())
    if cfg.pretrained:
        vectors = char_vectors(get_profile(profile).configure(Word2VecConfig()), profile)
        init_table(encoder.vocab.itos, vectors, model.char.weight.data, std)
    if cfg.bigram:  # each bigram starts as the mean of its two characters' embeddings
        ids = {"\x02": encoder.start, "\x03": encoder.end}
        table = model.char.weight.data
        for j, bg in enumerate(encoder.bigrams or []):
            if j == 0:
                continue  # <unk> keeps its random start
            a, b = (ids.get(c, encoder.vocab.stoi.get(c, encoder.vocab.unk_id)) for c in bg)
            model.bigram.weight.data[j] = (table[a] + table[b]) / 2
    return model


def _batches(cfg: SegmentationConfig, encoder: Encoder, train: list[list[str]]):
    texts = ["".join(s) for s in train]
    tags = [words_to_tags(s) for s in train]
    per_epoch = math.ceil(len(train) / cfg.batch_size)
    perms: dict[int, list[np.ndarray]] = {}

    lengths = np.array([len(t) for t in texts])

    def order(epoch: int) -> list[np.ndarray]:
        # a random permutation per epoch; within each chunk of 50 batches the sentences are sorted by length
        # (little padding), and the chunk's batches are shuffled again
        rng = np.random.default_rng([cfg.seed, epoch])
        perm = rng.permutation(len(train))
        size = cfg.batch_size * 50
        out: list[np.ndarray] = []
        for k in range(0, len(perm), size):
            chunk = perm[k:k + size]
            chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
            parts = [chunk[j:j + cfg.batch_size] for j in range(0, len(chunk), cfg.batch_size)]
            out += [parts[i] for i in rng.permutation(len(parts))]
        return out

    def batch(step: int) -> dict[str, torch.Tensor]:
        epoch, j = divmod(step, per_epoch)
        if epoch not in perms:
            perms.clear()
            perms[epoch] = order(epoch)
        idx = perms[epoch][j]
        return encoder.batch([texts[i] for i in idx], [tags[i] for i in idx])

    return batch


def dev_metrics(segmenter, dev: Sequence[Sequence[str]]) -> dict[str, float]:
    output = segmenter.segment_lines(["".join(s) for s in dev])
    c = score([], dev, output).total
    return {"dev_f1": 100 * c.f1, "dev_precision": 100 * c.precision, "dev_recall": 100 * c.recall}


def train_segmenter(cfg: SegmentationConfig, profile: str | Profile) -> Segmenter:
    """The trained neural segmenter of `cfg` (best dev-F1 epoch): trained once, loaded afterwards."""
    if cfg.model == "crf":
        raise HanzilmError("the CRF is trained with train_crf_segmenter")
    train, dev = split_sentences(cfg)
    encoder = Encoder.build(["".join(s) for s in train], min_freq=cfg.char_min_freq, bigrams=cfg.bigram,
                            bigram_min_freq=cfg.bigram_min_freq)
    threads = torch.get_num_threads()
    torch.set_num_threads(TRAIN_THREADS)
    try:
        model = train_or_load(
            cfg, build=lambda: build_model(cfg, encoder, profile), batches=_batches(cfg, encoder, train),
            evaluate=lambda m: dev_metrics(Segmenter(m, encoder), dev), profile=profile,
            data=_data_key(cfg, profile), code_version=CODE_VERSION, train_config=train_config(cfg, len(train)),
            device="cpu")
    finally:
        torch.set_num_threads(threads)
    segmenter = Segmenter(model, encoder)
    saved = run_dir(cfg, profile) / "segmenter"
    if not (saved / "config.json").is_file():
        segmenter.save(saved)
    return segmenter


def segmenter_path(cfg: SegmentationConfig, profile: str | Profile) -> Path:
    """The saved segmenter directory (`hanzilm segment --model <this>`)."""
    return run_dir(cfg, profile) / "segmenter"


def dev_history(cfg: SegmentationConfig, profile: str | Profile) -> list[dict]:
    """(epoch, dev_f1) of every evaluated epoch."""
    hist = [h for h in load_history(run_dir(cfg, profile)) if "dev_f1" in h]
    train, _ = split_sentences(cfg)
    per_epoch = math.ceil(len(train) / cfg.batch_size)
    return [{"epoch": h["step"] // per_epoch, "dev_f1": h["dev_f1"]} for h in hist]


def training_summary(cfg: SegmentationConfig, profile: str | Profile) -> dict:
    from ...store import load_summary

    return load_summary(run_dir(cfg, profile))


# ---- the CRF ----

def train_crf_segmenter(cfg: SegmentationConfig, profile: str | Profile) -> CRFSegmenter:
    directory = run_dir(cfg, profile)
    path = directory / "crf.crfsuite"
    if not is_complete(directory):
        train, dev = split_sentences(cfg)
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / "crf.crfsuite.tmp"
        t0 = time.perf_counter()
        train_crf(train, CRFSpec(c2=cfg.crf_c2, max_iterations=cfg.crf_max_iterations), tmp)
        tmp.replace(path)
        seconds = time.perf_counter() - t0
        metrics = dev_metrics(CRFSegmenter(path), dev)
        atomic_write_text(directory / "done.json", json.dumps(
            {"config": dataclasses.asdict(cfg), "best_metrics": metrics, "wall_time": seconds}, indent=1))
    return CRFSegmenter(path)


def get_segmenter(cfg: SegmentationConfig, profile: str | Profile):
    return train_crf_segmenter(cfg, profile) if cfg.model == "crf" else train_segmenter(cfg, profile)


# ---- the official test sets ----

def test_scores(segmenter, dataset: str, profile: str | Profile) -> tuple[Counts, list[list[str]], float]:
    """Bakeoff metrics of `segmenter` on the official test input, against the official gold and training word
    list; also returns the output (word lists per line) and the decoding seconds."""
    ev = get_profile(profile).configure(SegmentationEval())
    d = DATASETS[dataset]
    lines = read_lines(resolve("sighan2005", d["test"]), keep_empty=True)
    gold = [line.split() for line in read_lines(resolve("sighan2005", d["gold"]), keep_empty=True)]
    if ev.test_lines is not None:
        lines, gold = lines[:ev.test_lines], gold[:ev.test_lines]
    t0 = time.perf_counter()
    output = segmenter.segment_lines(lines)
    seconds = time.perf_counter() - t0
    words = read_word_list(resolve("sighan2005", d["words"]), comment=None, skip_lines=0)
    # the official MSR test input differs from its gold on 16 lines: scored as the official script does
    result = score(words, gold, output, gold_name=d["gold"], test_name=f"{dataset} output", allow_mismatch=True)
    return result.total, output, seconds


def training_words(dataset: str) -> list[str]:
    return read_word_list(resolve("sighan2005", DATASETS[dataset]["words"]), comment=None, skip_lines=0)


def gold_words(dataset: str, profile: str | Profile) -> list[list[str]]:
    ev = get_profile(profile).configure(SegmentationEval())
    gold = [line.split() for line in read_lines(resolve("sighan2005", DATASETS[dataset]["gold"]), keep_empty=True)]
    return gold[:ev.test_lines] if ev.test_lines is not None else gold


__all__ = ["DATASETS", "LABELS", "MODELS", "SegmentationConfig", "SegmentationEval", "configure", "data_label",
           "dev_history", "get_segmenter", "gold_words", "segmenter_path", "test_scores", "train_segmenter",
           "training_words", "PAD_START", "PAD_END"]


# ---- results tables ----

METRICS = ("precision", "recall", "f1", "oov_recall")


def metric_rows(counts: Counts, metrics: Sequence[str] = METRICS, **keys) -> list[dict]:
    """Long-form rows (keys..., metric, ours) of bakeoff metrics in percent, the paper's unit."""
    values = counts.metrics(percent=True)
    return [{**keys, "metric": m, "ours": round(values[m], 4)} for m in metrics]


def evaluate(cfg: SegmentationConfig, profile: str | Profile) -> tuple[Counts, float]:
    """Train (or load) the model of `cfg` and score it on its dataset's official test set: counts and chars/s."""
    segmenter = get_segmenter(cfg, profile)
    counts, output, seconds = test_scores(segmenter, cfg.dataset, profile)
    chars = sum(len(w) for line in output for w in line)
    return counts, chars / max(seconds, 1e-9)
