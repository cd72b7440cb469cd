"""The three run profiles, defined here and nowhere else.

Experiment configs are dataclasses whose defaults are the papers' own hyperparameters (so `paper` needs
no overrides). A profile is a set of overrides on those dataclasses, keyed by the config's `profile_key`:

    cfg = get_profile("cpu").configure(LMSplitConfig())

Notebooks receive `profile` (and `seed`) as papermill parameters and read every size and step count
through `configure`, so one code path serves the CI smoke run, the laptop run and the GPU run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .errors import HanzilmError

C = TypeVar("C")


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    expected_wall_time: str
    seeds: tuple[int, ...] = (0,)
    torch_threads: int | None = None
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)

    def configure(self, config: C) -> C:
        """Return `config` with this profile's overrides for `type(config).profile_key` applied.

        Override keys may be dotted ("optim.lr") to reach nested dataclasses."""
        key = getattr(type(config), "profile_key", None)
        if key is None:
            raise HanzilmError(f"{type(config).__name__} has no `profile_key`; profiles cannot configure it")
        return _apply(config, self.overrides.get(key, {}), f"profile {self.name!r}, {key}")


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


PROFILES: dict[str, Profile] = {
    "smoke": Profile(
        name="smoke",
        description="CI: every notebook end to end on tiny models and data slices; deterministic",
        expected_wall_time="under 5 minutes",
        seeds=(0,),
        torch_threads=1,
        overrides={},
    ),
    "cpu": Profile(
        name="cpu",
        description="the default: real results on a 2-core laptop, scaled-down models; what results/ holds",
        expected_wall_time="a few hours on 2 cores",
        seeds=(0,),
        torch_threads=2,
        overrides={},
    ),
    "paper": Profile(
        name="paper",
        description="the papers' exact hyperparameters; needs a GPU",
        expected_wall_time="days on one GPU",
        seeds=(0,),
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
