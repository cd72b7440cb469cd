"""A profile's training plan without training: per chapter the models it trains, their parameter counts, the
tokens they see and the hours that should take, from throughput assumptions the plan prints.

    hanzilm paper run --profile gpu --plan          # or --profile paper; --only 'mslm/*' for one chapter

The hours are arithmetic, not measurements. A run's tokens/s is the device's dense bf16 peak times an assumed
model FLOP utilisation (MFU) over its training FLOPs per token, or, where FLOPs do not set the speed (a
launch-bound Python loop, a model that trains on the CPU), a rate stated with its basis. `benchmarks/gpu_check.py`
measures tokens/s and MFU on a real device with the same FLOPs-per-token functions; where it disagrees, the
chapters' assumptions (`hanzilm.papers.<chapter>.plan`) are what to change.

Each chapter's `plan` module builds its part from the chapter config at the profile. This shared module imports
no paper: the command line, above the papers, hands their `plan` functions in (`hanzilm.cli.chapter_plans`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence, TextIO

from .profiles import CHAPTERS, Profile, get_profile

# Dense (no sparsity) bf16 tensor-core peaks in FLOP/s, from NVIDIA's datasheets. Most specific name first:
# "h100 pcie" before "h100", "l40s" before "l4".
BF16_PEAKS: tuple[tuple[str, float], ...] = (
    ("gh200", 989e12), ("h200", 989e12), ("h100 nvl", 835e12), ("h100 pcie", 756e12), ("h100", 989e12),
    ("a100", 312e12), ("l40s", 362e12), ("l4", 121e12),
)
PLAN_DEVICE = "H100 SXM"
# forward-only evaluation costs a third of a training step's forward + backward per token
EVAL_SPEEDUP = 3.0
FLOPS_CONVENTION = ("training FLOPs per token = 6 x the multiply-adds of every matmul a token passes through, "
                    "attention at its full length (the PaLM/nanoGPT convention 6N + 12LTd; causal masking not "
                    "discounted); evaluation tokens cost a third (forward only)")


def bf16_peak(device_name: str) -> float | None:
    """The dense bf16 peak (FLOP/s) of a device named like torch.cuda.get_device_name(); None if unknown."""
    name = device_name.lower().replace("-", " ")
    return next((peak for key, peak in BF16_PEAKS if key in name), None)


@dataclass(frozen=True)
class Rate:
    """How fast one model trains: at `mfu` of the device's bf16 peak (tokens/s = peak x mfu / FLOPs per token),
    or at a stated `tokens_per_s`. `on`: "gpu", or "cpu" for models this project trains on the CPU."""

    basis: str
    mfu: float | None = None
    tokens_per_s: float | None = None
    on: str = "gpu"

    def __post_init__(self):
        if (self.mfu is None) == (self.tokens_per_s is None):
            raise ValueError("a Rate has an mfu or a tokens_per_s, not both")


@dataclass(frozen=True)
class ModelPlan:
    """`runs` training runs of one architecture (seeds, learning rates), each `steps` steps over `tokens`
    tokens (characters, for the character models) plus `eval_tokens` evaluated on the way and at the end."""

    name: str
    runs: int
    params: int
    steps: int
    tokens: int
    flops_per_token: float | None
    eval_tokens: int
    rate: Rate
    note: str = ""

    def tokens_per_s(self, peak: float) -> float:
        if self.rate.tokens_per_s is not None:
            return self.rate.tokens_per_s
        if not self.flops_per_token:
            raise ValueError(f"{self.name}: an MFU rate needs flops_per_token")
        return peak * self.rate.mfu / self.flops_per_token

    def hours(self, peak: float) -> float:
        per_run = (self.tokens + self.eval_tokens / EVAL_SPEEDUP) / self.tokens_per_s(peak)
        return self.runs * per_run / 3600


@dataclass(frozen=True)
class Extra:
    """Time that is not a gradient run: word2vec, a CRF, an allowance for analyses."""

    what: str
    hours: float
    on: str = "gpu"


@dataclass(frozen=True)
class ChapterPlan:
    chapter: str
    title: str
    models: list[ModelPlan]
    extras: list[Extra] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def hours(self, peak: float, on: str | None = None) -> float:
        runs = sum(m.hours(peak) for m in self.models if on in (None, m.rate.on))
        return runs + sum(e.hours for e in self.extras if on in (None, e.on))


PlanOf = Callable[[Profile], ChapterPlan]   # a chapter's `plan(profile)`


def _si(x: float) -> str:
    for scale, unit in ((1e12, " T"), (1e9, " B"), (1e6, " M"), (1e3, " k")):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{unit}"
    return f"{x:.3g}"


def _hours(h: float) -> str:
    return f"{h:.2f} h" if h >= 0.01 else f"{h * 3600:.0f} s"


def _rate_label(rate: Rate) -> str:
    label = f"MFU {rate.mfu:.0%}" if rate.mfu is not None else "rate"
    return label + ("" if rate.on == "gpu" else f", {rate.on.upper()}")


def _table(rows: list[list[str]], right: Sequence[int]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
            .rstrip() for r in rows]


def format_plan(profile: str | Profile, plans: Mapping[str, PlanOf], chapters: Sequence[str] = CHAPTERS,
                peak: float | None = None, device: str = PLAN_DEVICE) -> str:
    prof = get_profile(profile)
    peak = peak or bf16_peak(device)
    out = [f"plan for profile {prof.name!r}: {prof.description}",
           f"device: one {device}, dense bf16 peak {peak / 1e12:.0f} TFLOP/s; tokens/s = peak x MFU / training "
           "FLOPs per token, or a stated rate",
           FLOPS_CONVENTION, ""]
    totals = {"gpu": 0.0, "cpu": 0.0}
    for chapter in chapters:
        cp = plans[chapter](prof)
        out.append(f"{chapter}: {cp.title}")
        rows = [["model", "runs", "params", "steps", "tokens/run", "eval tok/run", "FLOPs/token", "rate",
                 "tokens/s", "hours"]]
        for m in cp.models:
            rows.append([m.name, str(m.runs), _si(m.params), f"{m.steps:,}", _si(m.tokens), _si(m.eval_tokens),
                         _si(m.flops_per_token) if m.flops_per_token else "-", _rate_label(m.rate),
                         _si(m.tokens_per_s(peak)), _hours(m.hours(peak))])
        out += _table(rows, right=(1, 2, 3, 4, 5, 6, 8, 9))
        for e in cp.extras:
            out.append(f"  + {e.what}{'' if e.on == 'gpu' else f' ({e.on.upper()})'}: {_hours(e.hours)}")
        bases: dict[str, list[str]] = {}
        for m in cp.models:
            bases.setdefault(m.rate.basis, []).append(m.name)
        out += [f"  - {', '.join(names)}: {basis}" for basis, names in bases.items()]
        out += [f"  - {m.name}: {m.note}" for m in cp.models if m.note] + [f"  - {n}" for n in cp.notes]
        gpu, cpu = cp.hours(peak, "gpu"), cp.hours(peak, "cpu")
        totals["gpu"] += gpu
        totals["cpu"] += cpu
        out += [f"  chapter: {_hours(gpu)} GPU" + (f" + {_hours(cpu)} CPU" if cpu else ""), ""]
    out.append(f"total: {_hours(totals['gpu'])} on one {device}" +
               (f" + {_hours(totals['cpu'])} on its host's CPU (one thread per run)" if totals["cpu"] else ""))
    out.append("on N GPUs (torchrun, the same global batch split N ways) the GPU hours divide by about N")
    return "\n".join(out)


def print_plan(profile: str | Profile, plans: Mapping[str, PlanOf], chapters: Sequence[str] = CHAPTERS,
               stream: TextIO | None = None) -> None:
    print(format_plan(profile, plans, chapters), file=stream or sys.stdout)
