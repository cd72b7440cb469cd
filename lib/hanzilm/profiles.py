"""The run profiles, defined here and nowhere else.

Each paper package has one chapter config, a dataclass composed of sub-configs (model, data, training) whose
defaults are the papers' own hyperparameters (so `paper` needs no overrides). A profile is a set of overrides on
those dataclasses, keyed by the chapter's `profile_key`, the chapter's name ("backpack", "mmtnn", "mslm");
dotted keys reach sub-configs ("lm.train.steps"):

    ch = get_profile("cpu").configure(BackpackChapter())     # overrides applied, ch.store = Store.of("cpu")

Notebooks receive `profile` (and `seed`) as papermill parameters and configure their chapter once, so one code
path serves the CI smoke run, the laptop run and the GPU run. The seed is the profile's too: `start(profile, seed)`
returns `get_profile(profile).seeded(seed)`, and configuring a chapter with it adds the seed to every training seed
the chapter's config holds (`reseeded`): seed 1 re-trains every model at another initialisation and data order,
a replicate of the whole chapter (its runs have store keys of their own). What stays: the evaluation samples
(cloze cases, drawn words and contexts) and the pre-trained character vectors, which are the chapter's inputs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .errors import HanzilmError
from .machine import cpu_has_bf16

C = TypeVar("C")
CHAPTERS = ("backpack", "mmtnn", "mslm")


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    expected_wall_time: str
    torch_threads: int | None = None
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    seed: int = 0    # added to the chapters' training seeds; 0: the seeds their configs (and overrides) define

    def seeded(self, seed: int) -> Profile:
        return dataclasses.replace(self, seed=seed)

    def configure(self, config: C) -> C:
        """`config` with this profile's overrides for `type(config).profile_key` applied, its training seeds
        moved by the profile's seed (`config.reseeded(seed)`) and, if it has a `store` field, that field set to
        this profile's model store."""
        key = getattr(type(config), "profile_key", None)
        if key is None:
            raise HanzilmError(f"{type(config).__name__} has no `profile_key`; profiles cannot configure it")
        config = _apply(config, self.overrides.get(key, {}), f"profile {self.name!r}, {key}")
        if self.seed:
            if not hasattr(config, "reseeded"):
                raise HanzilmError(f"{type(config).__name__} has no `reseeded`; profile {self.name!r} at seed "
                                   f"{self.seed} cannot configure it")
            config = config.reseeded(self.seed)
        if "store" in {f.name for f in dataclasses.fields(config)}:
            from .store import Store

            config = dataclasses.replace(config, store=Store.of(self.name))
        return config


def _apply(config: C, overrides: dict[str, Any], where: str) -> C:
    direct: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    names = {f.name for f in dataclasses.fields(config)}
    for k, v in overrides.items():
        head, _, rest = k.partition(".")
        if head not in names:
            raise HanzilmError(f"{where}: {type(config).__name__} has no field {head!r}")
        if rest:
            nested.setdefault(head, {})[rest] = v
        else:
            direct[head] = v
    for head, sub in nested.items():
        direct[head] = _apply(getattr(config, head), sub, where)
    return dataclasses.replace(config, **direct)


def _native_bf16(overrides: dict[str, Any]) -> dict[str, Any]:
    """`overrides` (bfloat16 settings) where the CPU multiplies bfloat16 natively, else none: emulated, bf16
    matmuls ran 40x slower than fp32 on an AVX2-only EPYC. The cpu results in results/ say which they had
    (provenance: machine.cpu_bf16), and a model trained in either precision has its own store key."""
    return overrides if cpu_has_bf16() else {}


def _each(prefixes: tuple[str, ...], overrides: dict[str, Any]) -> dict[str, Any]:
    """The same overrides under every prefix: {"pku.dim": .., "ptb.dim": ..}."""
    return {f"{p}.{k}": v for p in prefixes for k, v in overrides.items()}


PROFILES: dict[str, Profile] = {
    "smoke": Profile(
        name="smoke",
        description="CI: every notebook end to end on tiny models and data slices; deterministic",
        expected_wall_time="about 10 minutes on 2 cores",
        torch_threads=1,
        overrides={
            # Backpack: a 2/2/32 pair, 40 steps; a handful of cloze cases, words, contexts and characters each;
            # the trend page's snapshots in two processes, as at cpu (so nbval checks they change no number)
            "backpack": {"workers": 2, "lm.n_layer": 2, "lm.n_head": 2, "lm.n_embd": 32, "lm.n_senses": 4, "lm.block_size": 64,
                         "lm.batch_size": 8, "lm.dev_tokens": 2048, "lm.test_tokens": 4096, "lm.train.steps": 40,
                         "lm.train.lr": 3e-3, "lm.train.min_lr": 3e-4, "lm.train.warmup_steps": 5,
                         "lm.train.eval_every": 20, "lm.train.checkpoint_every": 20, "lm.train.log_every": 5,
                         "cloze.max_cases": 6,
                         "senses.frequent_chars": 40, "senses.words_per_type": 6, "senses.corpus_contexts": 2,
                         "senses.professions": 6, "senses.generate_chars": 8, "senses.idioms": 3},
            # MMTNN: 300 PKU/MSR sentences, 1 epoch, the first 100 test lines, word2vec on 100 k characters
            "mmtnn": {"segmenter.train_sentences": 300, "segmenter.epochs": 1, "segmenter.lr": 0.05,
                      "lr_grid": {"mmtnn": (0.05, 0.1)},
                      "segmenter.crf_max_iterations": 5, "word2vec.max_chars": 100_000, "word2vec.epochs": 1,
                      "test_lines": 100, "spread_seeds": (1,)},
            # segmental LMs: a 32-dim SLM on 300 training sentences, 30 steps of 512 characters
            "mslm": {**_each(("pku", "ptb"), {
                         "model.dim": 32, "model.num_heads": 2, "model.feedforward_dim": 48, "batch_chars": 512,
                         "train_sentences": 300, "dev_sentences": 40, "eval_batch_chars": 4096, "w2v_epochs": 1,
                         "train.steps": 30, "train.eval_every": 10, "train.checkpoint_every": 10,
                         "train.log_every": 5}),
                     "seeds": {"*": (0,), "pku/mslm": (0, 1)}, "f1_split": "heldout", "eval_sentences": 60,
                     "lr_grid": {"pku/mslm": (3e-3, 6e-3)},
                     "lr": {f"{c}/{e}": 3e-3 for c in ("pku", "ptb") for e in ("rslm", "mslm", "dmslm")},
                     "at_scale.cells": ("pku/rslm", "pku/mslm"), "at_scale.steps": 40, "at_scale.eval_every": 10,
                     "at_scale.lr": 3e-3},
        },
    ),
    "cpu": Profile(
        name="cpu",
        description="the default: real results on a 2-core laptop, scaled-down models; what results/ holds",
        expected_wall_time="a few hours on 2 cores",
        torch_threads=2,
        overrides={
            # Backpack: a 4/4/128 GPT-2 (1.5 M parameters) and its Backpack (2.6 M), 1,500 steps of 16 x 256
            # characters (6.1 M tokens) each; each model in the precision that leaves its perplexity as fp32's:
            # GPT-2 in bf16 where the CPU has it natively, the Backpack in fp32 (bf16 raised its perplexity)
            "backpack": {"workers": 2,
                         "lm.n_layer": 4, "lm.n_head": 4, "lm.n_embd": 128, "lm.block_size": 256, "lm.batch_size": 16,
                         "lm.dev_tokens": 32768, "lm.train.steps": 1500, "lm.train.lr": 1.5e-3,
                         "lm.train.min_lr": 1.5e-4, "lm.train.warmup_steps": 50, "lm.train.eval_every": 200,
                         "lm.train.checkpoint_every": 100, "lm.train.log_every": 25,
                         **_native_bf16({"lm.bf16_models": ("gpt",)})},
            # MMTNN: full stand-in training data, each model until 3 epochs bring no better dev F1 (30 at most),
            # at the AdaGrad rate its PKU dev F1 chooses from a grid that brackets each model's choice (a baseline
            # at its grid's edge could be under-tuned and inflate the tensor gain); the pre-trained models at
            # their twin's rate; word2vec until the top-500 characters' neighbours stay 90 % the same
            "mmtnn": {"segmenter.epochs": 30, "segmenter.patience": 3,
                      "segmenter.lr": 0.05, "segmenter.crf_max_iterations": 80, "workers": 2,
                      "lr_grid": {"nn": (0.1, 0.2, 0.4), "nn_tag": (0.1, 0.2, 0.4), "mmtnn": (0.05, 0.1)},
                      "word2vec.epochs": 10, "word2vec.until_stable": 0.9},
            "mslm": {
                # both corpora: selection on 300 dev sentences
                **_each(("pku", "ptb"), {"dev_sentences": 300, "w2v_epochs": 5, "train.log_every": 25}),
                # PKU: the paper's dim 256 in 2,048-character batches (the authors' regime, scaled): 400 steps =
                # 0.8 M characters, where dev boundary MCC passes 60 as in the authors' logs (smaller batches or
                # dim 128 plateau below it)
                **_each(("pku",), {"model.dim": 256, "model.feedforward_dim": 509, "batch_chars": 2048,
                                   "train.steps": 400, "train.eval_every": 50, "train.checkpoint_every": 50,
                                   "eval_batch_chars": 2048}),
                # PTB: dim 128 (feed-forward 254 keeps the LSTM encoder's parameter count, as the authors' 509 at
                # 256), 512-character batches, 3,000 steps = 1.5 M characters (0.38 epochs)
                **_each(("ptb",), {"model.dim": 128, "model.feedforward_dim": 254, "batch_chars": 512,
                                   "train.steps": 3000, "train.eval_every": 300, "train.checkpoint_every": 150,
                                   "train.log_every": 50, "eval_batch_chars": 4096}),
                # both corpora: batches packed within each length-sorted pool (mixed pools peaked at 11 GB), so
                # two one-thread workers fit; with native bfloat16, the forward and output layer in bf16 (the
                # lattice in fp32)
                **_each(("pku", "ptb"), {"pack_within_pools": True}),
                **_native_bf16(_each(("pku", "ptb"), {"train.precision": "bf16", "model.bf16_output": True})),
                # The paper's protocol, scaled: each cell's first seed at two learning rates (the unsupervised
                # rows at the lower dev bpc, the lightly supervised at the higher dev boundary MCC), three seeds
                # for the unsupervised rows (the medians the paper's claims compare), one for the lightly
                # supervised (their further seeds train at another rate); the grids sit above the authors'
                # rates because our runs are 1 % of theirs (lower grids chose their top rate in every cell)
                "seeds": {"*": (0, 1, 2), **{f"{cell}/lightly supervised": (0,) for cell in (
                    f"{c}/{e}" for c in ("pku", "ptb") for e in ("rslm", "mslm", "dmslm"))}},
                "f1_split": "test",
                "workers": 2,
                "lr_grid": {**{f"pku/{e}": (4e-3, 8e-3) for e in ("rslm", "mslm", "dmslm")},
                            **{f"ptb/{e}": (6e-3, 1.2e-2) for e in ("rslm", "mslm", "dmslm")}},
                # the headline, MSLM vs RSLM on PKU unsupervised, in the authors' regime to their logged step 512
                # (4.19 M characters, where their RSLM has learned to segment): their 8,192-character batches,
                # the rate the paper chose for each cell and the first 512 steps of their schedule (warmup over
                # 1,024 steps), so our dev curves and their logs see the same rates at the same characters;
                # the dev set every 64 steps, every second on one of the authors' logged points
                "at_scale.cells": ("pku/rslm", "pku/mslm"), "at_scale.steps": 512, "at_scale.batch_chars": 8192,
                "at_scale.warmup_steps": 1024, "at_scale.eval_every": 64},
        },
    ),
    "gpu": Profile(
        name="gpu",
        description="the papers' architectures at about one GPU-hour per chapter on one H100/H200-class GPU",
        expected_wall_time="about 6.2 hours on one H100 machine: 3.75 GPU-hours (Backpack 2.8 with the findings "
                           "on six training snapshots and the alpha-scaling ablation's second Backpack, segmental "
                           "LMs 1.0) and 2.5 CPU-hours (MMTNN); `hanzilm paper run --profile gpu --plan`",
        overrides={
            # Backpack: the paper's micro pair (6/6/384 GPT-2, 5-block contextualiser, 16 senses), batches of
            # 180 x 1,024 characters and optimiser; 12,000 steps (2.2 B tokens each, 75 epochs of our corpus)
            # instead of 500,000: what an hour holds for both at the plan's throughput. Everything else
            # (warmup 2,000, linear decay to 0, dev every 1,000 steps keeping the best) is the paper's.
            "backpack": {"lm.train.steps": 12_000, "lm.train.precision": "bf16"},
            # MMTNN: the paper's (it trains on the CPU; the plan shows its hours)
            "mmtnn": {},
            # segmental LMs: the paper's sizes, batches and 8,192 steps at the authors' rate for each cell of
            # Table 2 (unsupervised and lightly supervised), one of the authors' seeds instead of five, two for
            # the PKU RSLM and MSLM (the headline comparison): 16 runs
            "mslm": {"seeds": {"*": (2,), "pku/rslm": (2, 3), "pku/mslm": (2, 3)},
                     **_each(("pku", "ptb"), {"train.precision": "bf16"})},
        },
    ),
    "paper": Profile(
        name="paper",
        description="the papers' exact hyperparameters; needs a GPU",
        expected_wall_time="days on one GPU",
        overrides={},
    ),
}

DEFAULT_PROFILE = "cpu"


def get_profile(name: str | Profile = DEFAULT_PROFILE) -> Profile:
    if isinstance(name, Profile):
        return name
    try:
        return PROFILES[name]
    except KeyError:
        raise HanzilmError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}") from None
