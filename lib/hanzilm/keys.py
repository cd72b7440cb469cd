"""What of a config is part of a stored run's key.

A config dataclass keys its run by every field, except that a field declared with `metadata=KEY_IF_SET` is
left out while it holds its default. New options get that metadata, so adding one keeps the key of every run
stored before it existed (a run with the option set is another run, as it should be)."""

from __future__ import annotations

import dataclasses
import textwrap
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


_VERSIONS: dict[tuple, str] = {}


def source_version(name: str, *objects: Any) -> str:
    """`name/<12 hex>`: a hash of the source of `objects` (modules, classes, functions: the code that trains
    an artefact), for a store key. Parsed and dumped without docstrings, so a comment or docstring edit keeps
    every key and any change to what runs makes every artefact built by it another one.

    The source is read from the files, so the first hash of the same objects is kept for the process, and the
    modules that key models compute theirs when they are imported: a long run whose files are edited meanwhile
    keeps the keys of the code it runs (reading the edited file later would hash other lines)."""
    import ast
    import hashlib
    import inspect

    memo = (name, *objects)  # the objects themselves (hashable by identity), kept alive by the memo
    if memo in _VERSIONS:
        return _VERSIONS[memo]
    h = hashlib.sha256()
    for obj in objects:
        text = textwrap.dedent(inspect.getsource(obj))
        tree = ast.parse(text)
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                    and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
        h.update(ast.dump(tree, annotate_fields=False).encode())
    _VERSIONS[memo] = f"{name}/{h.hexdigest()[:12]}"
    return _VERSIONS[memo]
