"""Named models: every trained model of the model stores (`results/<profile>/checkpoints/`), listed by
`hanzilm models` and taken by `--model NAME` (`segment`, `senses`).

A name says what a model is in the paper's terms: `pku-mmtnn+pre` (MMTNN with pre-trained embeddings on PKU),
`backpack`, `pku-mslm-s1`; where a profile's store holds older runs under the same name (older code or settings),
the newest has the name and the others are `NAME~<key>`. `NAME@PROFILE` picks the store (`pku-mmtnn+pre-lr0.05@cpu`,
`@smoke`); a bare name prefers the cpu run, then any other profile. Each paper names its own configs (its
`commands.MODEL_NAMES`); this module only scans and resolves, so it imports no paper and no torch.

No trained model is tracked by git or shipped with the package: the stores are the code's cache (git-ignored),
filled by `make paper`, and a model is the run of the committed code that made it."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from .errors import HanzilmError
from .paths import RESULTS
from .profiles import PROFILES

# config class -> (paper, function from the stored config to a name)
Namers = Mapping[str, tuple[str, Callable[[dict[str, Any]], str]]]
BARE = "cpu"  # the profile a name without @PROFILE means: the book's (never another one's, silently)


@dataclass(frozen=True)
class Model:
    name: str
    paper: str
    profile: str
    path: Path                      # the run directory
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.profile}"


def scan(namers: Namers, root: Path = RESULTS) -> list[Model]:
    """Every complete stored run whose config class a paper names."""
    found, stored = [], []
    for done in sorted(root.glob("*/checkpoints/*/done.json")):
        try:
            record = json.loads(done.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # an unreadable record is not a model; `data verify`-style checks report it elsewhere
        named = namers.get(record.get("config_class", ""))
        if named is None:
            continue
        paper, namer = named
        metrics = {k: v for k, v in (record.get("best_metrics") or {}).items() if isinstance(v, (int, float))}
        stored.append((done.stat().st_mtime, Model(namer(record.get("config", {})), paper, done.parents[2].name,
                                                   done.parent, metrics)))
    # runs of older code or settings keep their directory but give the name to the newest run of that profile:
    # they are listed as NAME~<key> (e.g. backpack~<12-hex key>@smoke)
    taken: set[tuple[str, str]] = set()
    for _, m in sorted(stored, key=lambda t: -t[0]):
        if (m.name, m.profile) in taken:
            m = dataclasses.replace(m, name=f"{m.name}~{m.path.name.rsplit('-', 1)[-1]}")
        taken.add((m.name, m.profile))
        found.append(m)
    return found


def split_ref(ref: str) -> tuple[str, str]:
    """(name, profile) of `NAME` or `NAME@PROFILE`; a bare name is the book's profile, BARE."""
    name, _, profile = ref.partition("@")
    return name, profile or BARE


def resolve(ref: str, models: Iterable[Model], paper: str | None = None, missing: str | None = None) -> Model:
    """The model `NAME` or `NAME@PROFILE` names (of `paper`, if given; a bare name is the cpu profile's);
    `missing`: the error's text when none does (default: which exist and how to train the one asked for)."""
    name, profile = split_ref(ref)
    models = [m for m in models if paper is None or m.paper == paper]  # a list: not_found reads it again
    candidates = [m for m in models if m.name == name and m.profile == profile]
    if not candidates:
        raise HanzilmError(missing or not_found(ref, models, paper))
    if len(candidates) > 1:
        raise HanzilmError(f"{ref!r} names {len(candidates)} runs at profile {profile} "
                           f"({', '.join(str(m.path) for m in candidates)}): give the path")
    return candidates[0]


def not_found(ref: str, models: Sequence[Model], paper: str | None = None) -> str:
    """Which models exist (the same name at other profiles first) and how to train the one `ref` names."""
    name, profile = split_ref(ref)
    elsewhere = sorted(m.ref for m in models if m.name == name)
    known = elsewhere or sorted({m.ref for m in models})
    hint = ", ".join(known[:12]) + (" ..." if len(known) > 12 else "") if known else "none"
    papers = [paper] if paper else sorted({m.paper for m in models if m.name == name}) or ["<chapter>"]
    return (f"no model {name!r} at profile {profile}; there are: {hint} (`hanzilm models` lists them). Train it "
            f"with its chapter: make paper PROFILE={profile} ONLY='{papers[0]}/'")


def register(sub, namers: Namers) -> None:
    p = sub.add_parser("models", help="list the trained models (by name, for --model NAME)",
                       description="Every trained model in results/<profile>/checkpoints: name, paper, profile, "
                                   "its selection metrics and where it is.")
    p.add_argument("--profile", choices=list(PROFILES), help="only this profile's models")
    p.set_defaults(func=lambda args: _list(args, namers))


def _list(args, namers: Namers) -> int:
    models = [m for m in scan(namers) if args.profile in (None, m.profile)]
    if not models:
        print("no trained models" + (f" at profile {args.profile}" if args.profile else "") + "; `make paper` trains them")
        return 0
    rows = [(m.ref, m.paper, ", ".join(f"{k} {v:.4g}" for k, v in sorted(m.metrics.items())[:3]), str(m.path))
            for m in sorted(models, key=lambda m: (m.paper, m.profile, m.name))]
    widths = [max(len(r[i]) for r in rows + [("model", "paper", "metrics", "path")]) for i in range(3)]
    print(f"{'model':<{widths[0]}}  {'paper':<{widths[1]}}  {'metrics':<{widths[2]}}  path")
    for r in rows:
        print(f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}")
    return 0
