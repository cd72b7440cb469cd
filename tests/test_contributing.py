"""CONTRIBUTING.md's map from book page to notebook to package functions is true: every page of the toc with a
notebook has a row, every notebook and module it names exists, and every function it names is defined there."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from hanzilm import paths
from hanzilm.runner import toc_notebooks

LIB = paths.ROOT / "lib" / "hanzilm"
FILE = re.compile(r"`([\w/.{},]+\.py)`(?:\s*\(([^)]*)\))?")


def _rows() -> list[list[str]]:
    text = (paths.ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.split("## Where is the code of Table N", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()
            if line.startswith("|") and not line.startswith("|---") and "notebook" not in line]


def _toc_notebooks() -> set[str]:
    return {str(p.relative_to(paths.ROOT)) for p in toc_notebooks()}


def _expand(name: str) -> list[str]:
    """`papers/backpack/{gpt,backpack}.py` -> both files."""
    m = re.fullmatch(r"(.*)\{([^}]*)\}(.*)", name)
    return [f"{m[1]}{part}{m[3]}" for part in m[2].split(",")] if m else [name]


def _defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))}
    return names | {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}


def test_every_notebook_of_the_toc_has_one_row():
    named = [r[1].strip("`") for r in _rows()]
    assert sorted(named) == sorted(_toc_notebooks())


def test_every_module_and_function_named_exists():
    problems = []
    for row in _rows():
        folder = Path(".")
        for name, funcs in FILE.findall(row[2]):
            for file in _expand(name):
                path = LIB / file if "/" in file else LIB / folder / file
                folder = path.parent.relative_to(LIB)
                if not path.is_file():
                    problems.append(f"{row[0]}: no {path.relative_to(LIB)}")
                    continue
                missing = set(re.findall(r"`(\w+)`", funcs)) - _defined(path)
                problems += [f"{row[0]}: {path.relative_to(LIB)} has no {m}" for m in sorted(missing)]
    assert not problems, problems
