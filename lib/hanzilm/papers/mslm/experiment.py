"""The segmental-LM chapter: its config, one run (data, model, training through the model store, evaluation)
and the grid of runs behind Table 2.

    ch = configure("cpu")                          # MSLMChapter: per-corpus run templates, seeds, rates, store
    exp = slm_experiment(ch, "pku", "mslm", seed=0)
    run = train_slm(ch.store, exp)                 # trained once, loaded afterwards
    evaluate_corpus(run.models["unsupervised"], run.data, run.data.test)  # bits, segmentations, metrics
    train_all(ch)                                  # every (corpus, encoder, seed) run, `workers` processes at once
    runs = evaluate_all(ch)                        # one row per run x selection: word F1, boundary P/R/F1/MCC, bpc

One training run keeps two selections: best dev bpc (`best.safetensors`, the unsupervised setting) and best
dev boundary MCC (`best-dev_mcc.safetensors`, light supervision), as the paper's two model selections.

The paper tunes the learning rate per cell and per selection (six rates, one seed) and then runs the chosen
rate on four more seeds. The `paper` profile runs the authors' chosen rates (targets/mslm_table2.csv), so the
unsupervised and lightly supervised cells of one model may be different runs; smaller profiles set one rate per
model (`lr`) and read both selections off the same run.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Sequence

import numpy as np
import pandas as pd
import torch

from ...data.resolve import checksums
from ...data.snlm import load_snlm, snlm_form
from ...data.vocab import CharVocab
from ...errors import HanzilmError
from ...eval.sighan import DEFAULT_MODE, EXACT
from ...io import atomic_write_text
from ... import versions
from ...parallel import run_all
from ...profiles import Profile, get_profile
from ...results import TARGETS
from ...store import Store, is_complete, load_history, load_summary, note_read, required
from ...train import TrainConfig
from ...word2vec import word2vec_vectors
from .data import CharBatches, build_vocab, eval_batches
from .lattice import split
from .metrics import SEGMENTATION_FIELDS, score_segmentations
from .model import ENCODERS, FORMS, SLMConfig, SegmentalLM

CORPORA = ("pku", "ptb")
MAX_SEG_LEN = {"pku": 5, "ptb": 10}                 # k (paper text)
WARMUP_FRACTION = {"pku": 1024 / 8192, "ptb": 0.0}  # the authors' warmup steps over 8192 steps
DATASETS = {"pku": ["snlm_pku", "pku_training_pd199801"], "ptb": ["snlm_ptb"]}
SELECTIONS = {"unsupervised": None, "lightly supervised": "dev_mcc"}   # -> trainer selection (None: metric)
AUTHORS_SEEDS = (2, 3, 5, 8, 13)
F1_SPLITS = ("corpus", "heldout", "test")


def _paper_train() -> TrainConfig:
    return TrainConfig(steps=8192, lr=1e-3, optimizer="adam", warmup_steps=1024, schedule="linear", min_lr=0.0,
                       grad_clip=1.0, eval_every=256, checkpoint_every=512, log_every=32,
                       metric="dev_bpc", metric_mode="min")


@dataclass(frozen=True)
class SLMExperiment:
    """One SLM training run (its fields key the run in the store). Defaults: the paper / the authors' configs."""

    corpus: str = "pku"
    model: SLMConfig = field(default_factory=SLMConfig)
    batch_chars: int = 8192               # characters per training batch (the authors' "tokens")
    train_sentences: int | None = None    # use only the first n training sentences (profiles)
    dev_sentences: int | None = None      # dev sentences scored for model selection during training
    eval_batch_chars: int = 16384
    w2v_epochs: int = 32                  # word2vec on the training text initialises the character embeddings
    w2v_window: int = 5
    train: TrainConfig = field(default_factory=_paper_train)
    pack_within_pools: bool = False       # batches packed within each length-sorted pool (data.CharBatches)


# ---- the chapter ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AtScale:
    """Longer runs of some unsupervised cells of Table 2 (`cells`: "pku/rslm", ...), each at the cell's seeds:
    the paper's headline asked past the characters where the authors' own logs show the models settled.
    `steps` of `batch_chars` characters (None: the corpus's batch) at `lr` (None: the rate the paper chose for
    the cell), the dev set scored every `eval_every` steps (the authors' logged characters among them).
    `warmup_steps` None warms up over the authors' fraction of `steps`; the authors' own 1,024 (longer than
    the run) trains the first `steps` of their schedule, so our runs and their logs see the same rates."""
    cells: tuple[str, ...] = ()
    steps: int = 0
    lr: float | None = None
    eval_every: int = 0
    batch_chars: int | None = None
    warmup_steps: int | None = None
    grad_accum: int = 1           # micro-batches per step (a batch's memory over this many)
    form: str = "ours"            # the models' form where the paper is silent (model.FORMS): "released" makes
                                  # the choices of the authors' released code
    w2v_epochs: int | None = None  # epochs of the word2vec initialisation (None: the corpus template's)


@dataclass(frozen=True)
class MSLMChapter:
    """The runs behind Table 2. Defaults: the paper (5 seeds everywhere, the authors' rate per selection, word
    F1 over the whole corpus as Kawakami et al. 2019 and the paper report it). `pku` and `ptb` are each
    corpus's run template: every run on it is the template with its encoder, seed and rate set."""
    profile_key: ClassVar[str] = "mslm"

    pku: SLMExperiment = field(default_factory=lambda: SLMExperiment(
        corpus="pku", model=SLMConfig(max_seg_len=MAX_SEG_LEN["pku"])))
    ptb: SLMExperiment = field(default_factory=lambda: SLMExperiment(
        corpus="ptb", model=SLMConfig(max_seg_len=MAX_SEG_LEN["ptb"])))
    # "pku/mslm/lightly supervised", "pku/mslm" or "*": the most specific key names the seeds of a selection
    seeds: dict[str, tuple[int, ...]] = field(default_factory=lambda: {"*": AUTHORS_SEEDS})
    lr: dict[str, float] = field(default_factory=dict)  # "pku/mslm" -> one rate for both selections
    # rates tried per cell at its first seed ("pku/mslm": (5e-4, 1e-3, 2e-3)): each selection then takes the rate
    # its own criterion prefers, dev bpc (unsupervised) or dev boundary MCC on the labelled dev sentences
    # (lightly supervised), and every seed trains at it; `select_learning_rates` fills `chosen_lr`
    lr_grid: dict[str, tuple[float, ...]] = field(default_factory=dict)
    chosen_lr: dict[str, float] = field(default_factory=dict)  # "pku/mslm/lightly supervised" -> rate
    f1_split: str = "corpus"     # "corpus": train + dev + test; "heldout": dev + test; "test" (cheapest)
    eval_sentences: int | None = None  # score only the first n sentences of each split (smoke runs)
    workers: int = 1             # training processes at once (each with torch's threads // workers threads)
    at_scale: AtScale = field(default_factory=AtScale)
    store: Store | None = field(default=None, compare=False)

    def __post_init__(self):
        if self.f1_split not in F1_SPLITS:
            raise ValueError(f"f1_split must be one of {F1_SPLITS}, not {self.f1_split!r}")
        if self.at_scale.form not in FORMS:
            raise ValueError(f"at_scale.form must be one of {tuple(FORMS)}, not {self.at_scale.form!r}")
        for corpus in CORPORA:
            if self.template(corpus).corpus != corpus:
                raise ValueError(f"the {corpus} template is for corpus {self.template(corpus).corpus!r}")

    def template(self, corpus: str) -> SLMExperiment:
        if corpus not in CORPORA:
            raise ValueError(f"corpus must be one of {CORPORA}, not {corpus!r}")
        return getattr(self, corpus)

    def seeds_for(self, corpus: str, encoder: str, selection: str | None = None) -> tuple[int, ...]:
        """The seeds of a cell's `selection`; without one, every seed either selection trains (first seed
        first: the grid's)."""
        cell = f"{corpus}/{encoder}"
        if selection is None:
            return tuple(dict.fromkeys(s for sel in SELECTIONS for s in self.seeds_for(corpus, encoder, sel)))
        return tuple(self.seeds.get(f"{cell}/{selection}", self.seeds.get(cell, self.seeds["*"])))

    def reseeded(self, offset: int) -> MSLMChapter:
        """Every run at seed + offset (the grids' too); the word2vec initialisation stays (see `hanzilm.profiles`)."""
        return dataclasses.replace(self, seeds={cell: tuple(s + offset for s in seeds)
                                                for cell, seeds in self.seeds.items()})

    def lr_for(self, corpus: str, encoder: str, selection: str) -> float:
        cell = f"{corpus}/{encoder}"
        if cell in self.lr_grid and f"{cell}/{selection}" not in self.chosen_lr:
            raise ValueError(f"{cell}: its rate is chosen on the dev set; use chapter(profile) or "
                             "select_learning_rates(ch) first")
        return self.chosen_lr.get(f"{cell}/{selection}", self.lr.get(cell, paper_lr(corpus, encoder, selection)))


def configure(profile: str | Profile) -> MSLMChapter:
    """The chapter at a profile (its "mslm" overrides applied, its store set), rates not yet chosen on the dev
    set (nothing trains): for plans and configs."""
    return get_profile(profile).configure(MSLMChapter())


def chapter(profile: str | Profile) -> MSLMChapter:
    """The chapter at a profile with the rates of its grid chosen (`select_learning_rates`: on first use the
    chapter trains, the grid and every run after it, in one pool): what every notebook of the chapter starts
    from."""
    return select_learning_rates(configure(profile))


def paper_lr(corpus: str, encoder: str, selection: str = "unsupervised") -> float:
    """The learning rate the authors selected for this cell (targets/mslm_table2.csv)."""
    t = pd.read_csv(TARGETS / "mslm_table2.csv")
    t = t[(t.dataset == corpus.upper()) & (t.model == encoder.upper()) & t.selection.str.startswith(
        "unsupervised" if selection == "unsupervised" else "light")]
    return float(t.lr.iloc[0])


def slm_experiment(ch: MSLMChapter, corpus: str, encoder: str, *, seed: int = 0,
                   lr: float | None = None) -> SLMExperiment:
    """The run of `encoder` on `corpus`: the corpus's template with that encoder (the RSLM without encoder
    dropout, as the authors), the train seed, the authors' warmup fraction of the steps and `lr` (default:
    the chapter's rate for the unsupervised selection)."""
    base = ch.template(corpus)
    model = dataclasses.replace(base.model, encoder=encoder, encoder_dropout=0.0 if encoder == "rslm" else 0.15)
    train = dataclasses.replace(base.train, seed=seed,
                                lr=ch.lr_for(corpus, encoder, "unsupervised") if lr is None else lr,
                                warmup_steps=round(base.train.steps * WARMUP_FRACTION[corpus]))
    return dataclasses.replace(base, model=model, train=train)


def scale_runs(ch: MSLMChapter) -> list[SLMExperiment]:
    """The runs `ch.at_scale` asks for: each of its cells at every seed of the cell's unsupervised selection,
    `at_scale.steps` of its batches long."""
    s = ch.at_scale
    runs = []
    for cell in s.cells:
        corpus, encoder = cell.split("/")
        base = ch.template(corpus)
        longer = dataclasses.replace(base.train, steps=s.steps, eval_every=s.eval_every,
                                     checkpoint_every=s.eval_every, grad_accum=s.grad_accum)
        at = dataclasses.replace(ch, **{corpus: dataclasses.replace(
            base, train=longer, batch_chars=s.batch_chars or base.batch_chars,
            model=dataclasses.replace(base.model, **FORMS[s.form]),
            w2v_epochs=base.w2v_epochs if s.w2v_epochs is None else s.w2v_epochs)})
        lr = paper_lr(corpus, encoder) if s.lr is None else s.lr
        for seed in ch.seeds_for(corpus, encoder, "unsupervised"):
            exp = slm_experiment(at, corpus, encoder, seed=seed, lr=lr)
            if s.warmup_steps is not None:
                exp = dataclasses.replace(exp, train=dataclasses.replace(exp.train, warmup_steps=s.warmup_steps))
            runs.append(exp)
    return runs


# ---- data ------------------------------------------------------------------------------------------------

@dataclass
class SLMData:
    corpus: str
    train: list[list[str]]
    dev: list[list[str]]
    test: list[list[str]]
    vocab: CharVocab
    checksums: dict[str, str]

    def encode(self, sentences: Sequence[Sequence[str]]) -> list[list[int]]:
        return [self.vocab.encode("".join(s)) for s in sentences]


@functools.lru_cache(maxsize=4)
def load_data(corpus: str, train_sentences: int | None = None) -> SLMData:
    splits = load_snlm(corpus)
    train = splits["train"][:train_sentences] if train_sentences else splits["train"]
    vocab = build_vocab(["".join(s) for s in train])
    return SLMData(corpus, train, splits["dev"], splits["test"], vocab,
                   {**checksums(DATASETS[corpus]), **snlm_form(corpus)})


def run_dir(store: Store, exp: SLMExperiment) -> Path:
    """Where the run `exp` is (or will be) stored: keyed by the experiment and its data's checksums."""
    return required(store).run_dir(exp, data=load_data(exp.corpus, exp.train_sentences).checksums,
                                   version=versions.key("mslm"))



# ---- word2vec initialisation -----------------------------------------------------------------------------

@dataclass(frozen=True)
class SLMWord2Vec:
    corpus: str
    train_sentences: int | None
    dim: int
    epochs: int
    window: int
    seed: int = 0


def word2vec_config(exp: SLMExperiment) -> SLMWord2Vec:
    return SLMWord2Vec(exp.corpus, exp.train_sentences, exp.model.dim, exp.w2v_epochs, exp.w2v_window)


def char_vectors(store: Store, w2v: SLMWord2Vec, data: SLMData) -> dict[str, np.ndarray]:
    """word2vec (gensim CBOW) over the training sentences as character sequences."""
    return word2vec_vectors(store, w2v, lambda: [list("".join(s)) for s in data.train], data=data.checksums,
                            version=versions.key("mslm"), vector_size=w2v.dim, window=w2v.window, min_count=1, epochs=w2v.epochs, seed=w2v.seed)


def build_model(store: Store, exp: SLMExperiment, data: SLMData) -> SegmentalLM:
    model = SegmentalLM(exp.model, len(data.vocab))
    if exp.w2v_epochs > 0:
        vecs = char_vectors(store, word2vec_config(exp), data)
        rows = [(i, vecs[c]) for i, c in enumerate(data.vocab.itos) if c in vecs]
        with torch.no_grad():
            model.embedding.weight[[i for i, _ in rows]] = torch.from_numpy(np.stack([v for _, v in rows]))
    return model


# ---- evaluation ------------------------------------------------------------------------------------------

# each scored sentence's share of every metric's totals: its segmentation counts, its bits and characters
SENTENCE_FIELDS = (*SEGMENTATION_FIELDS, "bits", "chars")


@dataclass
class CorpusEval:
    bits: float                      # -log2 p(x) summed over sentences
    chars: int
    sentence_bpc: list[float]        # per sentence, for the authors' per-sentence averaging
    segmentations: list[list[str]]   # Viterbi, as word lists
    metrics: dict[str, float]        # score_segmentations' metrics + bpc + bpc_sentence_mean
    items: np.ndarray                # (sentences, SENTENCE_FIELDS): what a bootstrap over sentences resamples

    @property
    def bpc(self) -> float:
        return self.bits / self.chars


@torch.no_grad()
def evaluate_corpus(model: SegmentalLM, data: SLMData, sentences: Sequence[Sequence[str]],
                    batch_chars: int = 16384, scoring: str = DEFAULT_MODE, precision: str = "fp32",
                    dropout: bool = False) -> CorpusEval:
    """Bits per character (total bits / total characters) and the Viterbi segmentation scored against the
    gold words of `sentences` (the SIGHAN scorer in mode `scoring`). precision "bf16": the model's products
    under bf16 autocast, as it trained (the lattice stays fp32). dropout: scored with dropout active (the
    caller seeds it), as the authors' dev passes were: their training loop never leaves training mode."""
    was_training = model.training
    model.train(dropout)
    texts = ["".join(s) for s in sentences]
    rows = data.encode(sentences)
    logp = [0.0] * len(rows)
    segs: list[list[str]] = [[] for _ in rows]
    device = next(model.parameters()).device
    for idx, batch in eval_batches(rows, batch_chars):
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16"):
            ll, lengths = model.analyse({k: v.to(device) for k, v in batch.items()})
        for j, i in enumerate(idx):
            logp[i] = float(ll[j])
            segs[i] = split(texts[i], lengths[j])
    model.train(was_training)
    bits = [-lp / math.log(2) for lp in logp]
    chars = sum(map(len, texts))
    scored = score_segmentations(sentences, segs, scoring)
    metrics = {**scored.metrics, "bpc": sum(bits) / chars,
               "bpc_sentence_mean": float(np.mean([b / len(t) for b, t in zip(bits, texts)]))}
    items = np.column_stack([scored.items, bits, [len(t) for t in texts]])
    return CorpusEval(sum(bits), chars, [b / len(t) for b, t in zip(bits, texts)], segs, metrics, items)


def dev_evaluator(exp: SLMExperiment, data: SLMData):
    """evaluate(model) for the trainer: dev bpc (selection: unsupervised), dev boundary MCC (light supervision),
    dev word F1 and boundary F1 (for the learning curves)."""
    dev = data.dev[:exp.dev_sentences] if exp.dev_sentences else data.dev

    def evaluate(model: SegmentalLM) -> dict[str, float]:
        # during training: the exact alignment and fp32, as the stored runs' curves and checkpoints were chosen
        m = evaluate_corpus(model, data, dev, exp.eval_batch_chars, scoring=EXACT).metrics
        return {"dev_bpc": m["bpc"], "dev_mcc": m["boundary_mcc"], "dev_f1": m["word_f1"],
                "dev_boundary_f1": m["boundary_f1"]}
    return evaluate


# ---- training one run ------------------------------------------------------------------------------------

@dataclass
class SLMRun:
    exp: SLMExperiment
    data: SLMData
    models: dict[str, SegmentalLM]          # selection -> model (eval mode)
    history: list[dict[str, Any]]
    summary: dict[str, Any]

    def evaluate(self, selection: str, sentences: Sequence[Sequence[str]],
                 scoring: str = DEFAULT_MODE) -> CorpusEval:
        """`evaluate_corpus` of one selection's model, in the precision it trained in."""
        return evaluate_corpus(self.models[selection], self.data, sentences, self.exp.eval_batch_chars, scoring,
                               self.exp.train.precision)


def train_slm(store: Store, exp: SLMExperiment) -> SLMRun:
    """Train (or load) one SLM and return both selections."""
    data = load_data(exp.corpus, exp.train_sentences)
    rows = data.encode(data.train)
    kw = dict(build=lambda: build_model(store, exp, data), batches=CharBatches(rows, exp.batch_chars,
              seed=exp.train.seed, within_pools=exp.pack_within_pools), evaluate=dev_evaluator(exp, data), data=data.checksums,
              version=versions.key("mslm"), keep_best=[("dev_mcc", "max")])
    models = {name: required(store).train_or_load(exp, **kw, select=sel) for name, sel in SELECTIONS.items()}
    where = run_dir(store, exp)
    return SLMRun(exp, data, models, load_history(where), load_summary(where))


# ---- the grid ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Cell:
    corpus: str
    encoder: str
    seed: int
    selection: str
    exp: SLMExperiment


def cells(ch: MSLMChapter) -> list[Cell]:
    """One entry per (corpus, encoder, seed, selection) of Table 2, with the run that provides it."""
    return [c for corpus in CORPORA for encoder in ENCODERS for c in _cells_of(ch, corpus, encoder)]


def _cells_of(ch: MSLMChapter, corpus: str, encoder: str) -> list[Cell]:
    return [Cell(corpus, encoder, seed, selection,
                 slm_experiment(ch, corpus, encoder, seed=seed, lr=ch.lr_for(corpus, encoder, selection)))
            for seed in ch.seeds_for(corpus, encoder) for selection in SELECTIONS
            if seed in ch.seeds_for(corpus, encoder, selection)]


def unique_runs(ch: MSLMChapter) -> list[SLMExperiment]:
    """Every run the chapter trains: the learning-rate grid's, those of Table 2's cells and the runs at scale.
    Before the grid's rates are chosen (a plan), a grid cell's further seeds count twice, at its first two rates:
    the most they can take (each selection its own rate)."""
    if ch.lr_grid and not ch.chosen_lr:
        guess = {f"{cell}/{sel}": rates[min(i, len(rates) - 1)] for cell, rates in ch.lr_grid.items()
                 for i, sel in enumerate(SELECTIONS)}
        ch = dataclasses.replace(ch, chosen_lr=guess)
    return list(dict.fromkeys([*grid_runs(ch), *(c.exp for c in cells(ch)), *scale_runs(ch)]))


def scored_splits(ch: MSLMChapter, data: SLMData) -> dict[str, list[list[str]]]:
    """The splits word F1 is computed over (test last: its bpc is read off the same pass)."""
    names = {"corpus": ("train", "dev", "test"), "heldout": ("dev", "test"), "test": ("test",)}[ch.f1_split]
    return {n: getattr(data, n)[:ch.eval_sentences] for n in names}


def evaluate_run(ch: MSLMChapter, exp: SLMExperiment,
                 selections: Sequence[str] = tuple(SELECTIONS)) -> dict[str, dict[str, float]]:
    """`selections` of one run (default both): segmentation metrics over `ch.f1_split`, bits per character on
    the test split (total bits / total characters, and the authors' mean of per-sentence bpc), and the step
    each selection was taken at. Trains the run first if needed; cached beside the run's checkpoints, each
    selection scored on first request (a grid run serves one selection; the other's test pass is not made)."""
    out = _stored_eval(ch, exp)
    if all(s in out for s in selections):
        note_read(run_dir(ch.store, exp))  # scored by a worker: the table still names the run
        return out
    run = train_slm(ch.store, exp)
    extra = run.summary.get("extra_best") or {}
    splits = scored_splits(ch, run.data)
    sentences = [s for split in splits.values() for s in split]
    n_test = len(splits["test"])
    test_chars = [sum(map(len, s)) for s in sentences[-n_test:]]
    for selection in selections:
        if selection in out:
            continue
        step = run.summary["best_step"] if SELECTIONS[selection] is None else extra.get("dev_mcc", {}).get("step")
        same = [m for m in out.values() if m["selected_step"] == step]
        if same:  # both selections took the same checkpoint: the same weights, the same numbers
            out[selection] = dict(same[0])
            continue
        ev = run.evaluate(selection, sentences)
        test_bpc = ev.sentence_bpc[-n_test:]
        out[selection] = {**{k: v for k, v in ev.metrics.items() if not k.startswith("bpc")},
                          "bpc": sum(b * n for b, n in zip(test_bpc, test_chars)) / sum(test_chars),
                          "bpc_sentence_mean": float(np.mean(test_bpc)), "selected_step": step,
                          "n_test": n_test, "items": ev.items.tolist()}
    atomic_write_text(_eval_path(ch, exp), json.dumps(out, indent=1))
    return out


def sentence_items(ch: MSLMChapter, exp: SLMExperiment, selection: str) -> tuple[np.ndarray, int]:
    """The scored sentences of one selection of a run, (sentences, SENTENCE_FIELDS), and how many of them (the
    last) are test sentences, over which bpc is computed: a bootstrap's items."""
    m = evaluate_run(ch, exp, (selection,))[selection]
    return np.asarray(m["items"], dtype=float).reshape(-1, len(SENTENCE_FIELDS)), int(m["n_test"])


def _eval_path(ch: MSLMChapter, exp: SLMExperiment) -> Path:
    """The cached evaluation, named by the scoring mode and a bf16 pass too: a record made with another
    alignment (the files `eval-<split>.json`, from the exact alignment) or in fp32 is not read back for them."""
    limit = "" if ch.eval_sentences is None else f"-{ch.eval_sentences}"
    bf16 = "-bf16" if exp.train.precision == "bf16" else ""
    return run_dir(ch.store, exp) / f"eval-{ch.f1_split}{limit}-{DEFAULT_MODE}{bf16}.json"


Job = tuple[MSLMChapter, SLMExperiment, tuple[str, ...]]   # a run and the selections to score (none: train only)


def _train_one(job: Job) -> None:
    ch, exp, selections = job
    if selections:
        evaluate_run(ch, exp, selections)
    else:
        train_slm(ch.store, exp)


def _needed_selections(ch: MSLMChapter, corpus: str | None = None,
                       encoder: str | None = None) -> dict[SLMExperiment, tuple[str, ...]]:
    """Every run the chapter (or one cell: corpus and encoder) trains -> the selections Table 2 reads off it
    (none for a grid run no selection chose)."""
    keys = [(corpus, encoder)] if corpus else [(c, e) for c in CORPORA for e in ENCODERS]
    needed: dict[SLMExperiment, tuple[str, ...]] = {e: () for key in keys for e in grid_runs(ch, *key)}
    for key in keys:
        for c in _cells_of(ch, *key):
            needed[c.exp] = (*needed.get(c.exp, ()), c.selection)
    return needed


def _stored_eval(ch: MSLMChapter, exp: SLMExperiment) -> dict[str, dict[str, Any]]:
    """The selections of `exp` scored so far (selection -> metrics and sentence items); a selection recorded
    without its sentence items (an earlier evaluation) counts as not scored."""
    path = _eval_path(ch, exp)
    stored = json.loads(path.read_text()) if path.is_file() else {}
    return {s: m for s, m in stored.items() if "items" in m}


def _evaluated(ch: MSLMChapter, exp: SLMExperiment, selections: Sequence[str]) -> bool:
    if not selections:
        return is_complete(run_dir(ch.store, exp))
    return all(s in _stored_eval(ch, exp) for s in selections)


def train_all(ch: MSLMChapter) -> None:
    """Train and evaluate every run the chapter needs that is not stored yet, `ch.workers` at a time, the
    longest waiting run first. A cell (corpus/encoder) with a learning-rate grid trains its grid first; once
    that cell's grid is stored its rates are chosen and its further runs join the pool, beside the other cells'
    grids. (Waiting for every grid left the PKU MSLM's second seed training alone on one of the two cores for
    17 of the chapter's 102 minutes on an AVX2 EPYC; README, *Time to re-run the book*.)"""
    keys = [(corpus, encoder) for corpus in CORPORA for encoder in ENCODERS]
    grids = {key: grid_runs(ch, *key) for key in keys}
    trains: dict[SLMExperiment, bool] = {}   # needs training (else only scoring): ranks the waiting runs

    def jobs(exps: dict[SLMExperiment, tuple[str, ...]], at: MSLMChapter) -> list[Job]:
        todo = [(at, e, sel) for e, sel in exps.items() if not _evaluated(at, e, sel)]
        trains.update({e: not is_complete(run_dir(at.store, e)) for _, e, _ in todo})
        return todo

    def after_grid(key: tuple[str, str]) -> list[Job]:
        """The cell's runs for Table 2 at the rates its (stored) grid chose, those of its grid among them."""
        at = _choose_rates(ch, *key)
        return jobs({e: sel for e, sel in _needed_selections(at, *key).items() if sel}, at)

    def grid_done(key: tuple[str, str]) -> bool:
        return all(is_complete(run_dir(ch.store, e)) for e in grids[key])

    first: list[Job] = []
    expanded: set[tuple[str, str]] = set()
    for key in keys:
        if grid_done(key):
            expanded.add(key)
            first += after_grid(key)
        else:
            first += jobs({e: () for e in grids[key]}, ch)

    def then(job: Job, _: None) -> list[Job]:
        key = (job[1].corpus, job[1].model.encoder)
        if key in expanded or not grid_done(key):
            return []
        expanded.add(key)
        return after_grid(key)

    def rank(job: Job) -> tuple[bool, bool, bool]:
        """Training before scoring, PKU (2-3x PTB's time) first, the (directional) MSLMs before the RSLM: the
        workers of a pool finish nearer together."""
        exp = job[1]
        return not trains[exp], exp.corpus != "pku", exp.model.encoder == "rslm"

    run_all(_train_one, first, workers=ch.workers, desc="segmental LM runs", then=then, rank=rank)


def train_at_scale(ch: MSLMChapter) -> None:
    """Train and score (the unsupervised selection) every run of `scale_runs` not stored yet, `ch.workers` at a
    time, seed by seed (a session that stops midway leaves whole comparisons)."""
    runs = sorted(scale_runs(ch), key=lambda e: e.train.seed)
    todo = [(ch, e, ("unsupervised",)) for e in runs if not _evaluated(ch, e, ("unsupervised",))]
    run_all(_train_one, todo, workers=ch.workers, desc="segmental LM runs at scale")


def grid_runs(ch: MSLMChapter, corpus: str | None = None, encoder: str | None = None) -> list[SLMExperiment]:
    """Every run of the learning-rate grid (or of one cell's): each cell's first seed at each of its rates."""
    out = []
    for cell, rates in ch.lr_grid.items():
        c, e = cell.split("/")
        if (corpus or c, encoder or e) == (c, e):
            out += [slm_experiment(ch, c, e, seed=ch.seeds_for(c, e)[0], lr=r) for r in rates]
    return out


def lr_grid(ch: MSLMChapter) -> pd.DataFrame:
    """One row per grid run: the cell, the rate, its best dev bpc and dev boundary MCC with their steps, and
    which selection chose it ("unsupervised", "lightly supervised", both or neither). A grid run missing, the
    chapter trains first (`train_all`: the grid with what waits on it)."""
    runs = grid_runs(ch)
    if not all(is_complete(run_dir(ch.store, e)) for e in runs):
        train_all(ch)
    return _grid_table(ch, runs)


def _grid_table(ch: MSLMChapter, runs: Sequence[SLMExperiment]) -> pd.DataFrame:
    rows = []
    for exp in runs:
        summary = load_summary(run_dir(ch.store, exp))
        mcc = summary["extra_best"]["dev_mcc"]
        rows.append({"cell": f"{exp.corpus}/{exp.model.encoder}", "lr": exp.train.lr,
                     "dev_bpc": summary["best_metrics"]["dev_bpc"], "bpc_step": summary["best_step"],
                     "dev_mcc": mcc["metrics"]["dev_mcc"], "mcc_step": mcc["step"]})
    out = pd.DataFrame(rows, columns=["cell", "lr", "dev_bpc", "bpc_step", "dev_mcc", "mcc_step"])
    for selection, (column, ascending) in {"unsupervised": ("dev_bpc", True),
                                           "lightly supervised": ("dev_mcc", False)}.items():
        # the best by its criterion; on a tie the smaller rate
        best = out.sort_values([column, "lr"], ascending=[ascending, True]).groupby("cell").head(1).index
        out[selection] = out.index.isin(best)
    return out


def _choose_rates(ch: MSLMChapter, corpus: str, encoder: str) -> MSLMChapter:
    """`ch` with the rates of one cell's grid chosen (its runs stored); `ch` itself for a cell without one or
    whose rates are chosen already."""
    runs = grid_runs(ch, corpus, encoder)
    if not runs or all(f"{corpus}/{encoder}/{sel}" in ch.chosen_lr for sel in SELECTIONS):
        return ch
    return dataclasses.replace(ch, chosen_lr={**ch.chosen_lr, **_chosen(_grid_table(ch, runs))})


def _chosen(grid: pd.DataFrame) -> dict[str, float]:
    """"cell/selection" -> the rate that selection chose, of a grid table."""
    return {f"{r.cell}/{sel}": float(r.lr) for sel in SELECTIONS for r in grid[grid[sel]].itertuples()}


def select_learning_rates(ch: MSLMChapter) -> MSLMChapter:
    """`ch` with each grid cell's rate per selection chosen on the dev set (a grid run missing, the chapter
    trains first: `train_all`); `ch` itself without a grid."""
    if not ch.lr_grid or ch.chosen_lr:
        return ch
    return dataclasses.replace(ch, chosen_lr=_chosen(lr_grid(ch)))


def evaluate_all(ch: MSLMChapter) -> pd.DataFrame:
    """One row per (corpus, encoder, seed, selection): lr, training characters, the selected step and every
    metric."""
    ch = select_learning_rates(ch)
    train_all(ch)
    return pd.DataFrame([_run_row(ch, c.exp, c.selection) for c in cells(ch)])


def evaluate_at_scale(ch: MSLMChapter) -> pd.DataFrame:
    """`evaluate_all`'s rows for the runs at scale (`scale_runs`, the unsupervised selection): stored runs only
    (`train_at_scale` trains them)."""
    runs = scale_runs(ch)
    missing = [e for e in runs if not is_complete(run_dir(ch.store, e))]
    if missing:
        raise HanzilmError(f"{len(missing)} of the {len(runs)} segmental-LM runs at scale are not stored in "
                           f"{required(ch.store).root}: run the chapter's training cell first "
                           "(experiment.train_at_scale(ch))")
    return pd.DataFrame([_run_row(ch, e, "unsupervised") for e in runs])


def dev_as_logged(ch: MSLMChapter, exp: SLMExperiment) -> list[dict[str, Any]]:
    """The stored run's unsupervised selection (lowest dev bpc; its step) scored on the dev sentences it was
    selected on, as our curves score it (dropout off) and as the authors' logs did (dropout on, seeded): one row
    per (mode, metric), so that a comparison with their logs can say what their way of scoring moves."""
    run = train_slm(ch.store, exp)
    dev = run.data.dev[:exp.dev_sentences] if exp.dev_sentences else run.data.dev
    rows = []
    for mode, dropout in (("dropout off (ours)", False), ("dropout on (the authors' logs)", True)):
        with torch.random.fork_rng():
            torch.manual_seed(exp.train.seed)
            m = evaluate_corpus(run.models["unsupervised"], run.data, dev, exp.eval_batch_chars, scoring=EXACT,
                                dropout=dropout).metrics
        rows += [{"seed": exp.train.seed, "step": run.summary["best_step"], "mode": mode, "metric": k, "ours": m[v]}
                 for k, v in (("dev_bpc", "bpc"), ("dev_boundary_f1", "boundary_f1"), ("dev_mcc", "boundary_mcc"))]
    return rows


def _run_row(ch: MSLMChapter, exp: SLMExperiment, selection: str) -> dict[str, Any]:
    m = evaluate_run(ch, exp, (selection,))[selection]
    return {"dataset": exp.corpus.upper(), "selection": selection, "model": exp.model.encoder.upper(),
            "seed": exp.train.seed, "lr": exp.train.lr, "train_chars": exp.train.steps * exp.batch_chars,
            **{k: v for k, v in m.items() if k not in ("items", "n_test")}}
