"""What of a config is part of a stored run's key.

A config dataclass keys its run by every field, except that a field declared with `metadata=KEY_IF_SET` is
left out while it holds its default. New options get that metadata, so adding one keeps the key of every run
stored before it existed (a run with the option set is another run, as it should be)."""

from __future__ import annotations

import dataclasses
from typing import Any

KEY_IF_SET = {"key": "if-set"}


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def key_fields(obj: Any) -> Any:
    """`dataclasses.asdict(obj)`, recursively, without the KEY_IF_SET fields that hold their defaults."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: key_fields(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                if not (f.metadata.get("key") == "if-set" and getattr(obj, f.name) == _default(f))}
    if isinstance(obj, (list, tuple)):
        return type(obj)(key_fields(x) for x in obj) if not hasattr(obj, "_fields") else obj
    if isinstance(obj, dict):
        return {k: key_fields(v) for k, v in obj.items()}
    return obj
