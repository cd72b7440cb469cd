from dataclasses import dataclass, field
from typing import ClassVar

import pytest

from hanzilm.errors import HanzilmError
from hanzilm.profiles import PROFILES, Profile, get_profile


@dataclass(frozen=True)
class Optim:
    lr: float = 6e-4
    steps: int = 500_000


@dataclass(frozen=True)
class ExampleConfig:
    profile_key: ClassVar[str] = "example"
    n_layer: int = 6
    optim: Optim = field(default_factory=Optim)


def test_the_three_profiles():
    assert set(PROFILES) == {"smoke", "cpu", "paper"}
    assert get_profile().name == "cpu"
    with pytest.raises(HanzilmError, match="unknown profile 'gpu'"):
        get_profile("gpu")


def test_configure_applies_overrides_including_nested():
    prof = Profile("t", "", "", overrides={"example": {"n_layer": 2, "optim.steps": 100}})
    cfg = prof.configure(ExampleConfig())
    assert cfg == ExampleConfig(n_layer=2, optim=Optim(lr=6e-4, steps=100))
    assert Profile("p", "", "").configure(ExampleConfig()) == ExampleConfig()  # defaults are the paper's


def test_variant_overrides_apply_on_top():
    prof = Profile("t", "", "", overrides={"example": {"n_layer": 2, "optim.steps": 100},
                                            "example/big": {"n_layer": 4}})
    assert prof.configure(ExampleConfig(), variant="big") == ExampleConfig(n_layer=4, optim=Optim(steps=100))
    assert prof.configure(ExampleConfig(), variant="other") == prof.configure(ExampleConfig())
    with pytest.raises(HanzilmError, match="example/bad: ExampleConfig has no field 'layers'"):
        Profile("t", "", "", overrides={"example/bad": {"layers": 1}}).configure(ExampleConfig(), variant="bad")


def test_configure_rejects_unknown_fields():
    prof = Profile("t", "", "", overrides={"example": {"n_layers": 2}})
    with pytest.raises(HanzilmError, match="has no field 'n_layers'"):
        prof.configure(ExampleConfig())
    with pytest.raises(HanzilmError, match="profile_key"):
        prof.configure(Optim())
