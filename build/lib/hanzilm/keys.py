"""What of a config is part of a stored run's key: every field that differs from its default.

A field at its default is left out, so adding an option (its default the old behaviour) keeps every stored run's
key. The store checks the other direction on load (`Store.train_or_load`): a run whose recorded config disagrees
with the current one in a field both have (a default that changed) is an error, not a silent load."""

from __future__ import annotations

import dataclasses
from typing import Any


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def key_fields(obj: Any) -> Any:
    """`dataclasses.asdict(obj)`, recursively, without the fields that hold their defaults."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: key_fields(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                if getattr(obj, f.name) != _default(f)}
    if isinstance(obj, (list, tuple)):
        return type(obj)(key_fields(x) for x in obj) if not hasattr(obj, "_fields") else obj
    if isinstance(obj, dict):
        return {k: key_fields(v) for k, v in obj.items()}
    return obj


def disagreements(recorded: Any, current: Any, path: str = "") -> list[str]:
    """Dotted names of the fields both config dicts have and give different values (`asdict` form, as JSON)."""
    if isinstance(recorded, dict) and isinstance(current, dict):
        return [d for k in recorded.keys() & current.keys()
                for d in disagreements(recorded[k], current[k], f"{path}.{k}" if path else k)]
    return [] if recorded == current else [path or "(the config)"]
