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


def _checklists() -> str:
    text = (paths.ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    return text.split("## Checklists", 1)[1].split("\n## ", 1)[0]


def test_every_file_a_checklist_names_exists():
    named = {m for m in re.findall(r"`([\w./-]+\.(?:py|csv|md|yml))`", _checklists()) if "<" not in m}
    assert named, "no files found in the checklists"
    missing = sorted(f for f in named if not (paths.ROOT / f).exists() and not (LIB / f).exists())
    assert not missing, missing


def test_every_command_a_checklist_names_exists():
    import argparse

    from hanzilm import runner

    sub = argparse.ArgumentParser().add_subparsers()
    runner.register(sub, dict)
    run = sub.choices["paper"]._subparsers._group_actions[0].choices["run"]
    text = " ".join(_checklists().split())
    flags = set(re.findall(r"hanzilm paper run ((?:--[\w-]+ ?\S* ?)+)", text))
    known = {a for action in run._actions for a in action.option_strings}
    used = {f for group in flags for f in re.findall(r"--[\w-]+", group)}
    assert used and used <= known, used - known
    targets = set(re.findall(r"`make (\w+)", text))
    makefile = (paths.ROOT / "Makefile").read_text(encoding="utf-8")
    assert targets and all(re.search(rf"^{t}:", makefile, re.M) for t in targets), targets
