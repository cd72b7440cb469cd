"""`hanzilm paper run`: execute the book's notebooks with papermill, in `book/_toc.yml` order.

Each notebook's reviewed source is its jupytext `.py`; the runner builds the notebook from it and executes it
with `profile` and `seed` injected. Each executed notebook has one home: for the `cpu` profile (the reference
run) the paired `book/**/*.ipynb`, which the book shows; for any other profile `results/<profile>/notebooks/`
(for `smoke`, nbval's reference).
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import yaml

from .errors import HanzilmError
from .io import atomic_write_text
from .paths import BOOK, RESULTS
from .profiles import DEFAULT_PROFILE, PROFILES, get_profile

KERNEL = "python3"


def toc_notebooks(book: Path = BOOK) -> list[Path]:
    """The jupytext sources (`.py`) of the notebooks listed in the table of contents, in order."""
    toc = yaml.safe_load((book / "_toc.yml").read_text(encoding="utf-8"))
    files: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key in ("root", "file"):
                if isinstance(node.get(key), str):
                    files.append(node[key])
            for value in node.values():
                if isinstance(value, (list, dict)):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return [book / f"{f}.py" for f in files if (book / f"{f}.py").is_file()]


def build_notebook(source: Path):
    """The notebook of a jupytext source, ready for papermill (kernel set, outputs empty)."""
    import jupytext

    nb = jupytext.read(source)
    nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3", "language": "python"}
    return nb


def execute(source: Path, profile: str, seed: int, out: Path) -> None:
    import nbformat
    import papermill

    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(build_notebook(source), out)
    env_progress = os.environ.get("HANZILM_PROGRESS")
    if profile == "smoke":
        os.environ["HANZILM_PROGRESS"] = "0"  # progress bars would make the nbval reference nondeterministic
    try:
        papermill.execute_notebook(
            str(out), str(out), parameters={"profile": profile, "seed": seed}, kernel_name=KERNEL,
            cwd=str(source.parent), progress_bar=False, log_output=False,
        )
        nb = nbformat.read(out, as_version=4)
        _stable_ids(nb)
        atomic_write_text(out, nbformat.writes(nb) + "\n")
    finally:
        if env_progress is None:
            os.environ.pop("HANZILM_PROGRESS", None)
        else:
            os.environ["HANZILM_PROGRESS"] = env_progress


def _stable_ids(nb) -> None:
    """Cell ids from position and source: nbformat and papermill draw random ones, so every re-run would
    rewrite every id of the committed notebooks."""
    for i, cell in enumerate(nb.cells):
        cell.id = hashlib.sha1(f"{i}\0{cell.source}".encode()).hexdigest()[:12]


def refresh_book_copy(executed: Path, source: Path) -> None:
    """Write the executed notebook beside its source, minus papermill's injected-parameters cell: the cpu
    run uses the notebook's own defaults, and the paired `.py` must not grow an injected cell."""
    import jupytext
    import nbformat

    nb = nbformat.read(executed, as_version=4)
    nb.cells = [c for c in nb.cells if "injected-parameters" not in c.metadata.get("tags", [])]
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
    nb.metadata["jupytext"] = jupytext.read(source).metadata.get("jupytext", {})
    _stable_ids(nb)
    atomic_write_text(source.with_suffix(".ipynb"), nbformat.writes(nb) + "\n")


@dataclass
class Outcome:
    name: str
    ok: bool
    seconds: float
    error: str = ""


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def run(profile: str = DEFAULT_PROFILE, only: str | None = None, seed: int | None = None,
        book: Path = BOOK, stream=sys.stdout) -> list[Outcome]:
    prof = get_profile(profile)
    seed = prof.seeds[0] if seed is None else seed
    sources = toc_notebooks(book)
    names = [str(s.relative_to(book).with_suffix("")) for s in sources]
    if only:
        picked = [(s, n) for s, n in zip(sources, names) if fnmatch.fnmatch(n, only) or only in n]
        if not picked:
            raise HanzilmError(f"--only {only!r} matches no notebook; notebooks: {', '.join(names)}")
        sources, names = map(list, zip(*picked))
    timings_path = RESULTS / profile / "timings.json"
    last = json.loads(timings_path.read_text()) if timings_path.is_file() else {}
    outcomes: list[Outcome] = []
    t0 = time.time()
    for i, (source, name) in enumerate(zip(sources, names), 1):
        remaining = [last.get(n) for n in names[i - 1:]]
        eta = None if None in remaining else sum(remaining)
        print(f"[{i}/{len(sources)}] {name}  (elapsed {_fmt(time.time() - t0)}, ETA {_fmt(eta)})",
              file=stream, flush=True)
        start = time.time()
        try:
            if profile == DEFAULT_PROFILE:
                with tempfile.TemporaryDirectory(prefix=".executing-", dir=_mkdir(RESULTS / profile)) as tmp:
                    out = Path(tmp) / source.with_suffix(".ipynb").name
                    execute(source, profile, seed, out)
                    refresh_book_copy(out, source)
            else:
                execute(source, profile, seed, RESULTS / profile / "notebooks" / f"{name}.ipynb")
            outcome = Outcome(name, True, time.time() - start)
        except Exception as e:  # one failing notebook must not stop the batch
            detail = str(e).strip().splitlines()
            outcome = Outcome(name, False, time.time() - start, detail[-1] if detail else type(e).__name__)
            traceback.print_exc(limit=1, file=sys.stderr)
        outcomes.append(outcome)
        if outcome.ok:
            last[name] = round(outcome.seconds, 1)
            atomic_write_text(timings_path, json.dumps(last, indent=2, sort_keys=True) + "\n")
        print(f"    {'ok' if outcome.ok else 'FAILED'} in {_fmt(outcome.seconds)}"
              + (f": {outcome.error}" if outcome.error else ""), file=stream, flush=True)
    _summary(outcomes, profile, time.time() - t0, stream)
    return outcomes


def _summary(outcomes: list[Outcome], profile: str, total: float, stream) -> None:
    width = max([len(o.name) for o in outcomes] + [8])
    print(f"\nprofile {profile}: {sum(o.ok for o in outcomes)}/{len(outcomes)} notebooks ok in {_fmt(total)}",
          file=stream)
    print(f"{'notebook':<{width}}  status  time", file=stream)
    for o in outcomes:
        print(f"{o.name:<{width}}  {'ok' if o.ok else 'FAILED':<6}  {_fmt(o.seconds)}"
              + (f"  {o.error[:100]}" if o.error else ""), file=stream)
    home = BOOK if profile == DEFAULT_PROFILE else RESULTS / profile / "notebooks"
    print(f"executed notebooks: {home}", file=stream)


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def register(sub: argparse._SubParsersAction) -> None:
    paper = sub.add_parser("paper", help="execute the book's notebooks (the whole paper companion)")
    paper_sub = paper.add_subparsers(dest="paper_command", required=True)
    p = paper_sub.add_parser("run", help="run every notebook in book/_toc.yml order with papermill")
    p.add_argument("--profile", default=DEFAULT_PROFILE, choices=list(PROFILES))
    p.add_argument("--only", help="run only notebooks whose name (e.g. data/corpus_statistics) matches")
    p.add_argument("--seed", type=int, help="seed passed to every notebook (default: the profile's first)")
    p.set_defaults(func=lambda a: 0 if all(o.ok for o in run(a.profile, a.only, a.seed)) else 1)
    ls = paper_sub.add_parser("list", help="list the notebooks in run order")
    ls.set_defaults(func=lambda a: print("\n".join(str(s.relative_to(BOOK).with_suffix(""))
                                                   for s in toc_notebooks())))
