"""The MMTNN chapter's experiments: one config per trained segmenter, trained once through the chapter's model
store and shared by every notebook that asks for it (Table 5 reuses Table 3's models).

    ch = train_chapter("cpu")        # once, at the top of a notebook: trains what the store lacks, rates chosen
    cfg = ch.model(dataset="pku", model="mmtnn", pretrained=True)
    seg = get_segmenter(ch, cfg)                    # a Segmenter; saved under segmenter_path(ch, cfg)
    counts, output = test_scores(ch, seg, "pku")    # the bakeoff metrics on the official test set

Training follows the paper: the first 90 % of the training sentences train, the last 10 % are the dev set; max-margin
loss with kappa per wrong tag, loss-augmented Viterbi, diagonal AdaGrad (lr 0.2), minibatches of 20 sentences, L2
1e-4 (the trainer's weight decay, on matrices and embeddings); the epoch with the best dev F1 is kept.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from ...data.readers import read_lines, read_segmented, read_word_list
from ...data.resolve import checksums, resolve
from ...errors import HanzilmError
from ...eval import sighan
from ...eval.sighan import EXACT, Counts, ScoreResult, score
from ...io import atomic_path
from ... import versions
from ...keys import key_fields
from ...profiles import Profile, get_profile
from ...parallel import run_all
from ...store import Store, is_complete, load_history, load_summary, required
from ...train import TrainConfig
from ...word2vec import vectors_stored
from .crf import CRFSegmenter, CRFSpec, train_crf
from .encoding import Encoder
from .pretrain import Word2VecConfig, char_vectors, corpus_checksums, init_table
from .segmenter import Segmenter
from .tagger import TaggerSpec, WindowTagger
from .tags import words_to_tags

# Training runs on one thread: its matrices (20 sentences x 125 inputs) gain little from a second one, and on a
# shared 2-core machine a second OpenMP thread spins and halves throughput (measured: 292 steps in 17 s with one
# thread, over 45 s with two, while another job ran). Decoding uses the profile's threads.
TRAIN_THREADS = 1
MODELS = ("crf", "nn", "nn_tag", "mmtnn")

DATASETS = {
    "pku": {"train": "pku_training_pd199801", "test": "pku_test.utf8", "gold": "pku_test_gold.utf8",
            "words": "pku_training_words.utf8", "label": "PKU"},
    "msr": {"train": "msr_training_sample", "test": "msr_test.utf8", "gold": "msr_test_gold.utf8",
            "words": "msr_training_words.utf8", "label": "MSR"},
}


@dataclass(frozen=True)
class SegmentationConfig:
    """One trained segmenter. Defaults are the paper's values (Table 2 and the text); `epochs` is not stated."""

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
    patience: int = 0                    # stop after this many epochs without a better dev F1
    dev_fraction: float = 0.1
    train_sentences: int | None = None   # use only the first n training sentences (before the 90/10 split)
    char_min_freq: int = 2               # rarer training characters are <unk>, so <unk> gets trained
    bigram_min_freq: int = 2
    crf_c2: float = 0.5
    crf_max_iterations: int = 200
    precision: str = "fp32"              # "bf16": the neural taggers' training forward under autocast
    seed: int = 0

    def __post_init__(self):
        if self.dataset not in DATASETS or self.model not in MODELS:
            raise HanzilmError(f"dataset must be one of {list(DATASETS)} and model one of {MODELS}")


@dataclass(frozen=True)
class MMTNNChapter:
    """The chapter: the segmenter settings every model shares, the pre-training, and how much of the official
    test sets is scored. `model(...)` picks one trained segmenter out of it."""

    profile_key: ClassVar[str] = "mmtnn"

    segmenter: SegmentationConfig = field(default_factory=SegmentationConfig)
    word2vec: Word2VecConfig = field(default_factory=Word2VecConfig)
    test_lines: int | None = None        # score only the first n test lines (smoke)
    # further seeds of the models behind the paper's gains: with the first, three per gain (`tables.gain_spread`)
    spread_seeds: tuple[int, ...] = (1, 2)
    # learning rates tried per model on the PKU dev set ({"nn": (0.05, 0.1)}); each model then trains at its
    # best one, with pre-trained vectors too: `select_learning_rates` fills `lrs`
    lr_grid: dict[str, tuple[float, ...]] = field(default_factory=dict)
    lrs: dict[str, float] = field(default_factory=dict)   # family -> lr; "+pre" falls back to its twin's
    workers: int = 1                     # segmenters trained at once (one thread each)
    store: Store | None = field(default=None, compare=False)

    def model(self, *, dataset: str, model: str, pretrained: bool = False, bigram: bool = False,
              seed: int | None = None, lr: float | None = None) -> SegmentationConfig:
        """The config of one segmenter: the shared settings with its variant fields set last; the learning
        rate is the one chosen for its family (on PKU, for both datasets and with bigrams too) unless given; a
        pre-trained model without a rate of its own takes its randomly initialised twin's."""
        if lr is None:
            lr = self.lrs.get(family(model, pretrained), self.lrs.get(model, self.segmenter.lr))
        return dataclasses.replace(self.segmenter, dataset=dataset, model=model, pretrained=pretrained,
                                   bigram=bigram, seed=self.segmenter.seed if seed is None else seed, lr=lr)

    def reseeded(self, offset: int) -> MMTNNChapter:
        """Every segmenter (the grid's, the spread's further seeds) at seed + offset; the word2vec vectors stay
        (see `hanzilm.profiles`)."""
        segmenter = dataclasses.replace(self.segmenter, seed=self.segmenter.seed + offset)
        return dataclasses.replace(self, segmenter=segmenter, spread_seeds=tuple(s + offset for s in self.spread_seeds))


def family(model: str, pretrained: bool) -> str:
    """The key of a learning rate in `MMTNNChapter.lrs`: "nn", "nn+pre", "mmtnn+pre" (a "+pre" key is only set by
    hand; the grid chooses per model, and the pre-trained twin falls back to it)."""
    return model + "+pre" * pretrained


def configure(profile: str | Profile) -> MMTNNChapter:
    """The chapter at `profile`, learning rates not yet chosen (nothing trains): for plans and configs."""
    return get_profile(profile).configure(MMTNNChapter())


def train_chapter(profile: str | Profile) -> MMTNNChapter:
    """The chapter's training step: every segmenter of its pages and the pre-trained vectors that the store lacks
    (`train_all`: the learning-rate grid and the runs at its chosen rates, in one pool), then the chapter with
    the chosen rates (`chapter`). Every notebook of the chapter calls it first, in a cell of its own."""
    ch = configure(profile)
    train_all(ch)
    return select_learning_rates(ch)


def chapter(profile: str | Profile) -> MMTNNChapter:
    """The chapter at `profile` with its learning rates chosen on the PKU dev set (`select_learning_rates`),
    from the stored grid: nothing trains (`train_chapter` does)."""
    return select_learning_rates(configure(profile))



# ---- data ----

def split_sentences(cfg: SegmentationConfig) -> tuple[list[list[str]], list[list[str]]]:
    sentences = read_segmented(resolve(DATASETS[cfg.dataset]["train"]))
    if cfg.train_sentences is not None:
        sentences = sentences[:cfg.train_sentences]
    cut = int(round(len(sentences) * (1 - cfg.dev_fraction)))
    return sentences[:cut], sentences[cut:]


def _data_key(ch: MMTNNChapter, cfg: SegmentationConfig) -> dict[str, str]:
    data = checksums([DATASETS[cfg.dataset]["train"]])
    if cfg.pretrained:
        data["word2vec"] = json.dumps(key_fields(ch.word2vec), sort_keys=True)
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
                       log_every=max(1, min(50, per_epoch)), seed=cfg.seed, patience=cfg.patience,
                       precision=cfg.precision)


def run_dir(ch: MMTNNChapter, cfg: SegmentationConfig) -> Path:
    return required(ch.store).run_dir(cfg, data=_data_key(ch, cfg), version=versions.key("mmtnn"))


# ---- neural models ----

def build_encoder(cfg: SegmentationConfig, train: Sequence[Sequence[str]]) -> Encoder:
    """The lookup of `cfg`'s tagger: characters (and bigrams) of its training sentences, rare ones <unk>."""
    return Encoder.build(["".join(s) for s in train], min_freq=cfg.char_min_freq, bigrams=cfg.bigram,
                         bigram_min_freq=cfg.bigram_min_freq)


def build_model(cfg: SegmentationConfig, encoder: Encoder, vectors: Mapping[str, np.ndarray] | None = None
                ) -> WindowTagger:
    """The untrained tagger of `cfg`; `vectors` (pre-trained character vectors) initialise its lookup table."""
    model = WindowTagger(spec_of(cfg), len(encoder.vocab), encoder.n_bigrams)
    std = float(model.char.weight.detach().std())
    if vectors is not None:
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


# Pei et al.'s decoding, for every number of the chapter: plain Viterbi over the model's scores of a whole chunk,
# without the command line's rules (URLs, ASCII runs, grapheme clusters kept whole) or its reading of traditional
# characters as simplified, which the CRF does not get
PAPER_DECODING = {"rules": False, "max_piece": None, "traditional": False}


def dev_metrics(segmenter, dev: Sequence[Sequence[str]]) -> dict[str, float]:
    output = segmenter.segment_lines(["".join(s) for s in dev])
    # epoch selection keeps the exact alignment the stored models were selected with (and needs no diff)
    c = score([], dev, output, mode=EXACT).total
    return {"dev_f1": 100 * c.f1, "dev_precision": 100 * c.precision, "dev_recall": 100 * c.recall}


def train_segmenter(ch: MMTNNChapter, cfg: SegmentationConfig) -> Segmenter:
    """The trained neural segmenter of `cfg` (best dev-F1 epoch): trained once, loaded afterwards."""
    if cfg.model == "crf":
        raise HanzilmError("the CRF is trained with train_crf_segmenter")
    train, dev = split_sentences(cfg)
    encoder = build_encoder(cfg, train)

    def build() -> WindowTagger:
        vectors = char_vectors(ch.word2vec, required(ch.store)) if cfg.pretrained else None
        return build_model(cfg, encoder, vectors)

    threads = torch.get_num_threads()
    torch.set_num_threads(TRAIN_THREADS)
    try:
        model = required(ch.store).train_or_load(
            cfg, build=build, batches=_batches(cfg, encoder, train),
            evaluate=lambda m: dev_metrics(Segmenter(m, encoder, **PAPER_DECODING), dev), data=_data_key(ch, cfg),
            version=versions.key("mmtnn"), train_config=train_config(cfg, len(train)), device="cpu")
    finally:
        torch.set_num_threads(threads)
    segmenter = Segmenter(model, encoder, **PAPER_DECODING)
    saved = segmenter_path(ch, cfg)
    if not (saved / "manifest.json").is_file():  # saved once (with its checksums; older ones get them now)
        segmenter.save(saved)
    return segmenter


def segmenter_path(ch: MMTNNChapter, cfg: SegmentationConfig) -> Path:
    """The saved segmenter directory (`hanzilm segment --model <this>`)."""
    return run_dir(ch, cfg) / "segmenter"


def dev_history(ch: MMTNNChapter, cfg: SegmentationConfig) -> list[dict]:
    """(epoch, dev_f1) of every evaluated epoch."""
    hist = [h for h in load_history(run_dir(ch, cfg)) if "dev_f1" in h]
    per_epoch = hist[0]["step"] if hist else 1  # evaluated after every epoch: the first at the first's end
    return [{"epoch": h["step"] // per_epoch, "dev_f1": h["dev_f1"]} for h in hist]


def training_summary(ch: MMTNNChapter, cfg: SegmentationConfig) -> dict:
    return load_summary(run_dir(ch, cfg))


# ---- the CRF ----

def train_crf_segmenter(ch: MMTNNChapter, cfg: SegmentationConfig) -> CRFSegmenter:
    """The CRF of `cfg`, trained once (its dev metrics recorded in done.json), loaded afterwards."""

    def make(directory: Path) -> dict:
        train, dev = split_sentences(cfg)
        with atomic_path(directory / "crf.crfsuite") as tmp:
            train_crf(train, CRFSpec(c2=cfg.crf_c2, max_iterations=cfg.crf_max_iterations), tmp)
        return {"best_metrics": dev_metrics(CRFSegmenter(directory / "crf.crfsuite"), dev)}

    directory = required(ch.store).make_or_load(cfg, make, data=_data_key(ch, cfg), version=versions.key("mmtnn"))
    return CRFSegmenter(directory / "crf.crfsuite")


def get_segmenter(ch: MMTNNChapter, cfg: SegmentationConfig):
    return train_crf_segmenter(ch, cfg) if cfg.model == "crf" else train_segmenter(ch, cfg)


# ---- training many, and the learning rates chosen on the dev set ----

# the families whose learning rate the PKU dev set chooses (the CRF has none; bigram models use their family's,
# pre-trained ones their twin's: every grid of 2026-11/12 that also tried the pre-trained models' rates chose
# the same rate for both twins, NN 0.2 and MMTNN 0.05, and their extra runs were a quarter of the chapter's time;
# so the pre-training gain is measured at one rate, the twin's)
GRID_FAMILIES = (("nn", False), ("nn_tag", False), ("mmtnn", False))


# ---- the chapter's runs ----

# Table 5's models: (model, pre-trained) -> the paper's row label
TABLE5 = {("nn", False): "Zheng et al. 2013", ("mmtnn", False): "MMTNN",
          ("nn", True): "Zheng et al. 2013 + pre-training", ("mmtnn", True): "MMTNN + pre-training"}
# label: (model, pretrained, bigram); every one trained again from each of `ch.spread_seeds`, on both datasets
# (the tag-embedding ablation on PKU only, as the paper's Table 3)
SPREAD_MODELS = {"CRF": ("crf", False, False), "NN": ("nn", False, False),
                 "NN + tag embedding": ("nn_tag", False, False), "MMTNN": ("mmtnn", False, False),
                 "NN + pre-training": ("nn", True, False), "MMTNN + pre-training": ("mmtnn", True, False),
                 "MMTNN + pre-training + bigram": ("mmtnn", True, True)}
PKU_ONLY = ("CRF", "NN + tag embedding")


def spread_configs(ch: MMTNNChapter) -> dict[tuple[str, str, int], SegmentationConfig]:
    """(dataset label, model label, seed) -> config, for every model behind a gain, at each seed."""
    return {(d["label"], label, seed): ch.model(dataset=key, model=m, pretrained=p, bigram=b, seed=seed)
            for seed in (ch.segmenter.seed, *ch.spread_seeds) for key, d in DATASETS.items()
            for label, (m, p, b) in SPREAD_MODELS.items() if key == "pku" or label not in PKU_ONLY}


def runs(ch: MMTNNChapter) -> list[SegmentationConfig]:
    """The chapter's run list: every segmenter its notebooks train, once each (`train_all` trains it, `plan`
    prices it): the learning-rate grid, Table 3 (PKU), Table 5 (both datasets, with and without pre-training),
    Table 6 (+ bigrams) and the seed spread's further seeds (those at the default rate: which grid rate they
    train at is known only after the grid)."""
    out = grid_configs(ch) + [ch.model(dataset="pku", model=m) for m in MODELS]
    out += [ch.model(dataset=d, model=m, pretrained=p) for d in DATASETS for m, p in TABLE5]
    out += [ch.model(dataset=d, model="mmtnn", pretrained=True, bigram=True) for d in DATASETS]
    out += list(spread_configs(ch).values())
    return list(dict.fromkeys(out))


def _train_one(job: tuple[MMTNNChapter, SegmentationConfig | None]) -> None:
    ch, cfg = job
    if cfg is None:
        char_vectors(ch.word2vec, required(ch.store))
    else:
        get_segmenter(ch, cfg)


def train_all(ch: MMTNNChapter) -> None:
    """Train every segmenter of the chapter's run list (`runs`) that the store lacks, and the pre-trained
    vectors, in one pool of `ch.workers` (one thread each). A model waits only for what it needs: the learning-rate
    grid of its family (the rate it trains at) and, pre-trained, the vectors; the rest train beside them, the
    vectors first (every pre-trained model waits for them), then the costliest waiting run, so that the workers
    finish together. (Training the whole grid first left a core idle at its end and started the vectors, 18 minutes,
    only after it.)"""
    grid = set(grid_configs(ch))
    waits_for_grid = set() if ch.lrs else {m for m, _ in GRID_FAMILIES if ch.lr_grid.get(m)}
    added: set[SegmentationConfig | None] = set()

    def ready() -> list[tuple[MMTNNChapter, SegmentationConfig | None]]:
        """The runs not yet in the pool that can start now: their rate is known, their vectors stored."""
        at = _rates_so_far(ch)
        pending = [c for c in runs(at) if c not in added and not is_complete(run_dir(ch, c))]
        todo: list[SegmentationConfig | None] = [
            c for c in pending if c in grid or c.model not in waits_for_grid or c.model in at.lrs]
        if any(c.pretrained for c in pending) and not vectors_stored(required(ch.store), ch.word2vec,
                                                                     corpus_checksums(), versions.key("mmtnn")):
            todo = [c for c in todo if not c.pretrained] + ([None] if None not in added else [])
        added.update(todo)
        return [(ch, c) for c in todo]

    def rank(job: tuple[MMTNNChapter, SegmentationConfig | None]) -> float:
        c = job[1]
        if c is None:
            return -math.inf
        cost = {"crf": 0, "nn": 1, "nn_tag": 2, "mmtnn": 8}[c.model]
        return -cost * (1 + 2 * c.bigram) * (1 if c.dataset == "pku" else 0.3) / c.lr

    run_all(_train_one, ready(), workers=ch.workers, threads=TRAIN_THREADS, desc="segmenters",
            then=lambda job, _: ready(), rank=rank)


def grid_configs(ch: MMTNNChapter) -> list[SegmentationConfig]:
    """Every run of the learning-rate grid: each family on PKU (first seed, no bigrams) at each rate."""
    return [ch.model(dataset="pku", model=m, pretrained=p, lr=lr)
            for m, p in GRID_FAMILIES for lr in ch.lr_grid.get(m, ())]


def select_learning_rates(ch: MMTNNChapter) -> MMTNNChapter:
    """`ch` with each family's learning rate chosen by the best dev F1 over its stored grid; `ch` itself when
    the profile sets no grid or its rates. The chosen runs are grid runs, not retrained."""
    if not ch.lr_grid or ch.lrs:
        return ch
    return dataclasses.replace(ch, lrs=_chosen(lr_grid(ch)))


def lr_grid(ch: MMTNNChapter) -> pd.DataFrame:
    """One row per grid run: family, lr, best dev F1 and its epoch, epochs trained, training seconds, and
    whether it is the family's choice (the best dev F1; on a tie the smaller rate). Every grid run must be
    stored (`train_chapter` trains them)."""
    cfgs = grid_configs(ch)
    missing = [c for c in cfgs if not is_complete(run_dir(ch, c))]
    if missing:
        raise HanzilmError(f"{len(missing)} of the {len(cfgs)} learning-rate grid runs are not stored (e.g. "
                           f"{run_dir(ch, missing[0])}): train the chapter first, train_chapter(profile)")
    return _grid_table(ch, cfgs)


def _grid_table(ch: MMTNNChapter, cfgs: Sequence[SegmentationConfig]) -> pd.DataFrame:
    rows = []
    for cfg in cfgs:
        hist = dev_history(ch, cfg)
        best = max(hist, key=lambda h: h["dev_f1"])
        rows.append({"family": family(cfg.model, cfg.pretrained), "lr": cfg.lr, "best_dev_f1": best["dev_f1"],
                     "best_epoch": best["epoch"], "epochs": max(h["epoch"] for h in hist),
                     "train_seconds": training_summary(ch, cfg)["wall_time"]})
    out = pd.DataFrame(rows)
    best = out.sort_values(["best_dev_f1", "lr"], ascending=[False, True]).groupby("family").head(1).index
    out["chosen"] = out.index.isin(best)
    return out


def _chosen(grid: pd.DataFrame) -> dict[str, float]:
    chosen = grid[grid.chosen]
    return dict(zip(chosen.family, chosen.lr))


def _rates_so_far(ch: MMTNNChapter) -> MMTNNChapter:
    """`ch` with the rates of the families whose grid is stored (each family's choice depends on its grid alone)."""
    if not ch.lr_grid or ch.lrs:
        return ch
    grid = grid_configs(ch)
    waiting = {c.model for c in grid if not is_complete(run_dir(ch, c))}
    whole = [c for c in grid if c.model not in waiting]
    return dataclasses.replace(ch, lrs=_chosen(_grid_table(ch, whole))) if whole else ch


# ---- the official test sets ----

def test_set(dataset: str, lines: int | None = None) -> tuple[list[str], list[list[str]]]:
    """The official test input (one string per line) and its gold words; only the first `lines` if given."""
    d = DATASETS[dataset]
    test = read_lines(resolve("sighan2005", d["test"]), keep_empty=True)
    gold = [line.split() for line in read_lines(resolve("sighan2005", d["gold"]), keep_empty=True)]
    return (test[:lines], gold[:lines]) if lines is not None else (test, gold)


def test_scores(ch: MMTNNChapter, segmenter, dataset: str) -> tuple[Counts, list[list[str]]]:
    """Bakeoff metrics of `segmenter` on the chapter's part of the official test input (`ch.test_lines`),
    against the official gold and training word list; also returns the output (word lists per line)."""
    result, output = _score_test(ch, segmenter, dataset)
    return result.total, output


def _score_test(ch: MMTNNChapter, segmenter, dataset: str) -> tuple[ScoreResult, list[list[str]]]:
    lines, gold = test_set(dataset, ch.test_lines)
    output = segmenter.segment_lines(lines)
    # the official MSR test input differs from its gold on 16 lines: scored as the official script does
    result = score(training_words(dataset), gold, output, gold_name=DATASETS[dataset]["gold"],
                   test_name=f"{dataset} output", allow_mismatch=True)
    return result, output


def training_words(dataset: str) -> list[str]:
    return read_word_list(resolve("sighan2005", DATASETS[dataset]["words"]), comment=None, skip_lines=0)


_SCORED: dict[tuple[str, int | None], ScoreResult] = {}  # one scoring per stored model and test slice


def scored(ch: MMTNNChapter, cfg: SegmentationConfig) -> ScoreResult:
    """The model of `cfg` (trained or loaded) scored on its dataset's official test set, line by line; scored
    once per process, since every table and the spread page read the same models."""
    key = (str(run_dir(ch, cfg)), ch.test_lines)
    if key not in _SCORED:
        _SCORED[key], _ = _score_test(ch, get_segmenter(ch, cfg), cfg.dataset)
    return _SCORED[key]


def evaluate(ch: MMTNNChapter, cfg: SegmentationConfig) -> Counts:
    """Train (or load) the model of `cfg` and score it on its dataset's official test set."""
    return scored(ch, cfg).total


def line_counts(ch: MMTNNChapter, cfg: SegmentationConfig) -> np.ndarray:
    """(test lines, sighan.LINE_FIELDS): each line's counts, which sum to `evaluate`'s (the bootstrap's items)."""
    return sighan.line_counts(scored(ch, cfg))


