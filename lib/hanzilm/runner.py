"""`hanzilm paper run`: execute the book's notebooks with papermill, in `book/_toc.yml` order.

Each notebook's reviewed source is its jupytext `.py`; the runner builds the notebook from it and executes it
with `profile` and `seed` injected. Each executed notebook has one home: for the `cpu` profile (the reference
run) the paired `book/**/*.ipynb`, which the book shows; for any other profile `results/<profile>/notebooks/`
(for `smoke`, nbval's reference).

Nothing is lost: a notebook executes into a scratch file under `results/<profile>/failed/` (git-ignored) and
replaces its home, in one rename, only when every cell ran. A failed notebook leaves its home as it was and its
executed copy at `results/<profile>/failed/<name>.ipynb`, named in one line with the failing cell and the
exception. A home holds no timestamps or durations, so a re-run with the same outputs rewrites the same bytes.

`--plan` runs nothing: it prints per chapter the models the profile trains, their parameter counts, tokens and
the hours they should take on one GPU (`hanzilm.plan`).

While a notebook runs, the models it trains report to the runner through `hanzilm.progress`'s side channel: on a
terminal a live bar per run under the book's ETA, elsewhere one line per finished run (HANZILM_PROGRESS=0: none).
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, TextIO

import yaml

from .cliutil import seed_int
from .errors import HanzilmError
from .io import atomic_write_text
from .machine import portable_float_env
from . import paths
from .paths import BOOK, REPLICATE_ENV, REPLICATES, RESULTS, STAGING_ENV
from .profiles import CHAPTERS, DEFAULT_PROFILE, PROFILES, Profile, get_profile
from .progress import CHANNEL_ENV, Channel, Renderer, fmt_seconds

KERNEL = "python3"
# papermill's records that change on every run without the outputs changing
VOLATILE_PAPERMILL = ("start_time", "end_time", "duration", "input_path", "output_path")
MAX_ERROR = 300  # characters of an exception's message in the failure line


def toc_notebooks(book: Path = BOOK) -> list[Path]:
    """The jupytext sources (`.py`) of the notebooks listed in the table of contents, in order."""
    return [book / f"{f}.py" for f in toc_files(book) if (book / f"{f}.py").is_file()]


def toc_files(book: Path = BOOK) -> list[str]:
    """Every page the table of contents lists (the root first), as paths relative to `book` without suffix."""
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
    return files


def build_notebook(source: Path):
    """The notebook of a jupytext source, ready for papermill (kernel set, outputs empty)."""
    import jupytext

    nb = jupytext.read(source)
    nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3", "language": "python"}
    return nb


def kernel_config():
    """The kernel manager's configuration. A kernel on loopback TCP without CurveZMQ keys logs a warning about
    plain-text transport as it starts (ipykernel 7); jupyter_client provisions the keys when asked
    (`transport_encryption`) and the kernelspec declares support, as ipykernel's does. Without libsodium in
    pyzmq or with an older jupyter_client nothing is set: the kernel runs as before and warns."""
    import zmq
    from jupyter_client.manager import KernelManager
    from traitlets.config import Config

    config = Config()
    if zmq.has("curve") and "transport_encryption" in KernelManager.class_trait_names():
        config.KernelManager.transport_encryption = "auto"
    return config


@contextlib.contextmanager
def _environ(changes: dict[str, str | None]) -> Iterator[None]:
    """os.environ with `changes` (None: unset) while the kernel is started, which inherits it."""
    def apply(values: dict[str, str | None]) -> None:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    saved = {k: os.environ.get(k) for k in changes}
    try:
        apply(changes)
        yield
    finally:
        apply(saved)


def execute(source: Path, profile: str, seed: int, out: Path, env: dict[str, str | None] | None = None) -> None:
    """Execute `source` into `out`, which papermill rewrites after every cell, and leaves there on failure too
    (with the error) before it raises."""
    import nbformat
    import papermill

    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(build_notebook(source), out)
    env = dict(env or {})
    if profile == "smoke":
        env["HANZILM_PROGRESS"] = "0"  # a bar in the outputs would make the nbval reference nondeterministic
        env.update(portable_float_env())  # and the same digits on every x86-64 CPU with AVX2
    with _environ(env):
        papermill.execute_notebook(
            str(out), str(out), parameters={"profile": profile, "seed": seed}, kernel_name=KERNEL,
            cwd=str(source.parent), progress_bar=False, log_output=False, config=kernel_config(),
        )


def finished_notebook(executed: Path, source: Path, profile: str) -> str:
    """The text of an executed notebook's home: without the per-run records (timings, paths) and with stable
    cell ids. The cpu run's book copy also drops papermill's injected-parameters cell: the cpu run uses the
    notebook's own defaults, and the paired `.py` must not grow an injected cell."""
    import jupytext
    import nbformat

    nb = nbformat.read(executed, as_version=4)
    if profile == DEFAULT_PROFILE:
        nb.cells = [c for c in nb.cells if "injected-parameters" not in c.metadata.get("tags", [])]
        nb.metadata.pop("papermill", None)
    else:
        for key in VOLATILE_PAPERMILL:
            nb.metadata.get("papermill", {}).pop(key, None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)  # per-cell start, end, duration
        cell.metadata.pop("execution", None)  # the kernel's message timestamps
    nb.metadata["jupytext"] = jupytext.read(source).metadata.get("jupytext", {})
    _stable_ids(nb)
    return nbformat.writes(nb) + "\n"


def _stable_ids(nb) -> None:
    """Cell ids from position and source: nbformat and papermill draw random ones, so every re-run would
    rewrite every id of the committed notebooks."""
    for i, cell in enumerate(nb.cells):
        cell.id = hashlib.sha1(f"{i}\0{cell.source}".encode()).hexdigest()[:12]


def home_of(source: Path, name: str, profile: str, replicate: str | None = None) -> Path:
    """Where the executed notebook is kept (see the module's docstring); a replicate's beside its results."""
    if replicate:
        return results_home(profile, replicate) / "notebooks" / f"{name}.ipynb"
    if profile == DEFAULT_PROFILE:
        return source.with_suffix(".ipynb")
    return RESULTS / profile / "notebooks" / f"{name}.ipynb"


def results_home(profile: str, replicate: str | None = None) -> Path:
    """Where a run's results go: results/<profile>/, or a replicate's folder under it (never the book's)."""
    return RESULTS / profile / REPLICATES / replicate if replicate else RESULTS / profile


def failed_dir(profile: str) -> Path:
    """results/<profile>/failed/: failed copies and the scratch files of running notebooks, never committed."""
    path = RESULTS / profile / "failed"
    path.mkdir(parents=True, exist_ok=True)
    ignore = path / ".gitignore"
    if not ignore.is_file():
        atomic_write_text(ignore, "# written by `hanzilm paper run`: failed notebooks, kept for reading\n*\n")
    return path


@dataclass
class Outcome:
    name: str
    ok: bool
    seconds: float
    error: str = ""
    failed_copy: Path | None = None


def execute_to_home(source: Path, name: str, profile: str, seed: int,
                    env: dict[str, str | None] | None = None, replicate: str | None = None) -> Outcome:
    """Execute one notebook; its home is replaced only if every cell ran, else the failed copy is kept."""
    home, start = home_of(source, name, profile, replicate), time.time()
    failed = failed_dir(profile) / f"{name}.ipynb"
    with tempfile.TemporaryDirectory(prefix=f".running-{os.getpid()}-", dir=failed_dir(profile)) as tmp:
        work, staged = Path(tmp) / home.name, Path(tmp) / "results"
        try:
            execute(source, profile, seed, work, {**(env or {}), STAGING_ENV: str(staged), REPLICATE_ENV: replicate})
        except BaseException as e:
            kept = None
            if work.is_file():
                failed.parent.mkdir(parents=True, exist_ok=True)
                os.replace(work, failed)
                kept = failed
            if not isinstance(e, Exception):  # Ctrl-C: the copy is kept, the batch stops
                raise
            return Outcome(name, False, time.time() - start, describe_failure(e, kept), kept)
        finished = finished_notebook(work, source, profile)
        publish(staged, results_home(profile, replicate), profile)
        atomic_write_text(home, finished)
    failed.unlink(missing_ok=True)  # an old failure of this notebook is no longer the news
    return Outcome(name, True, time.time() - start)


def publish(staged: Path, home: Path, profile: str) -> None:
    """Move a notebook's staged results (written under `staged` as under results/) into the run's results home
    (`results_home`), each file in one rename, once the notebook has run to its end."""
    for path in sorted(p for p in (staged / profile).rglob("*") if p.is_file()):
        target = home / path.relative_to(staged / profile)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)


def clean_debris(profile: str, stale_after: float = 600.0) -> list[Path]:
    """Remove what killed runs left behind: the scratch directories of notebooks whose runner is gone, their
    progress side channels, and atomic-write temporaries under results/<profile> older than `stale_after` seconds.
    Returns what was removed."""
    gone: list[Path] = []
    for scratch in failed_dir(profile).glob(".running-*"):
        if _dead(scratch.name.split("-")[1]):
            shutil.rmtree(scratch, ignore_errors=True)
            gone.append(scratch)
    for channel in Path(tempfile.gettempdir()).glob("hanzilm-progress-*.jsonl"):
        if _dead(channel.name.split("-")[2]):
            channel.unlink(missing_ok=True)
            gone.append(channel)
    now, temporaries = time.time(), []
    with contextlib.suppress(FileNotFoundError):  # a directory removed while it is walked (a live run's scratch)
        temporaries = list((RESULTS / profile).rglob(".*.tmp"))
    for tmp in temporaries:
        with contextlib.suppress(FileNotFoundError):  # renamed into place meanwhile by a live writer
            if now - tmp.stat().st_mtime > stale_after:
                tmp.unlink()
                gone.append(tmp)
    return gone


def _dead(pid: str) -> bool:
    """Whether the process a debris name carries is gone (a name without a pid is not judged: kept)."""
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def describe_failure(error: Exception, failed_copy: Path | None) -> str:
    """One line: which cell (its execution count and first line), the exception (type and message)."""
    cell = None
    if getattr(error, "cell_index", None) is not None:  # papermill: an exception raised in a cell
        cell = (error.exec_count, error.source)
        what = f"{error.ename}: {error.evalue}"
    else:  # the kernel died, a timeout, a kernel that would not start: papermill names no cell
        detail = str(error).strip().splitlines()
        what = f"{type(error).__name__}: {detail[0] if detail else ''}".rstrip(": ")
        cell = _started_last(failed_copy) if failed_copy is not None else None
    where = ""
    if cell is not None:
        count, src = cell
        first = next((line.strip() for line in src.splitlines() if line.strip()), "")
        first = first if len(first) <= 50 else first[:47] + "..."
        where = f"cell In [{count if count is not None else ' '}] `{first}`: "
    what = " ".join(what.split())  # one line, however many the message has; the failed copy has them all
    return where + (what if len(what) <= MAX_ERROR else what[:MAX_ERROR - 3] + "...")


def _started_last(path: Path) -> tuple[int | None, str] | None:
    """The last cell papermill started in an executed notebook: the running one when it stopped."""
    import nbformat

    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:
        return None
    started = [c for c in nb.cells if c.cell_type == "code" and c.metadata.get("papermill", {}).get("start_time")]
    return (started[-1].get("execution_count"), started[-1].source) if started else None


def pick(book: Path, only: str | None) -> tuple[list[Path], list[str]]:
    """The sources to run and their names: all, or those whose name matches `only` (a glob or a substring)."""
    sources = toc_notebooks(book)
    names = [str(s.relative_to(book).with_suffix("")) for s in sources]
    if only is None:
        return sources, names
    if not only.strip():
        raise HanzilmError("--only needs a pattern (a notebook's name, part of it or a glob such as 'mmtnn/*'); "
                           "without --only every notebook runs")
    picked = [(s, n) for s, n in zip(sources, names) if fnmatch.fnmatch(n, only) or only in n]
    if not picked:
        raise HanzilmError(f"--only {only!r} matches no notebook (`hanzilm paper list` lists them)")
    return [s for s, _ in picked], [n for _, n in picked]


def _eta(expected: list[float | None], elapsed: float) -> str:
    """Time left for notebooks expected to take `expected` seconds (their last run's time; None: never timed),
    the first of them `elapsed` seconds in. Untimed ones count as a "+?"."""
    known = [e for e in expected if e is not None]
    if expected and not known:
        return "?"
    left = sum(known) - (min(elapsed, expected[0]) if expected and expected[0] is not None else 0.0)
    return _fmt(max(0.0, left)) + ("+?" if len(known) < len(expected) else "")


def uncommitted_warning() -> str | None:
    """The line a run starts with when the code differs from its commit: said up front, since its records would
    name a commit that did not make them and hours of training pass before anyone reads one."""
    commit, dirty = paths.git_state()
    if not dirty:
        return None
    return (f"note: the code differs from commit {commit[:7]} (git status): every record this run writes says "
            "git_dirty: true; commit first for results that can be re-made from the repository")


def run(profile: str = DEFAULT_PROFILE, only: str | None = None, seed: int | None = None,
        book: Path = BOOK, stream: TextIO | None = None, allow_dirty: bool = False) -> list[Outcome]:
    """Execute the book's notebooks (`only` some) at `profile`, one profile's run at a time (a lock: a second
    waits for none and is refused), from committed code unless `allow_dirty`. A `seed` other than the profile's
    is a replicate: its results and notebooks go to results/<profile>/replicates/seed<N>/, never to the book."""
    stream = sys.stdout if stream is None else stream
    prof = get_profile(profile)
    seed = prof.seed if seed is None else seed
    replicate = f"seed{seed}" if seed != prof.seed else None
    sources, names = pick(book, only)
    if (warning := uncommitted_warning()) is not None and not allow_dirty:
        raise HanzilmError(warning.replace("note: ", "").split(":")[0] + ": commit first, or pass --allow-dirty "
                           "(every record the run writes then says git_dirty: true)")
    with _profile_lock(profile):
        return _run(prof, sources, names, seed, replicate, book, stream, warning)


@contextlib.contextmanager
def _profile_lock(profile: str) -> Iterator[None]:
    """Hold results/<profile>/.run.lock while a run writes that profile's store and results: a second run of the
    same profile is refused at once, naming the first, and nothing of the first run's is touched."""
    import fcntl

    path = RESULTS / profile / ".run.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            raise HanzilmError(f"another `hanzilm paper run --profile {profile}` ({f.read().strip() or 'a run'}) is "
                               f"writing {_shown(RESULTS / profile)}: wait for it to end, or stop it") from None
        f.truncate(0)
        f.write(f"pid {os.getpid()}, started {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        f.flush()
        try:
            yield
        finally:
            f.truncate(0)
            fcntl.flock(f, fcntl.LOCK_UN)


def _run(prof: Profile, sources: list[Path], names: list[str], seed: int, replicate: str | None, book: Path,
         stream: TextIO, warning: str | None) -> list[Outcome]:
    profile = prof.name
    timings_path = RESULTS / profile / "timings.json"
    last = json.loads(timings_path.read_text()) if timings_path.is_file() else {}
    outcomes: list[Outcome] = []
    t0 = time.time()
    with LiveProgress(stream) as live:
        if warning is not None:
            live.say(warning)
        if removed := clean_debris(profile):
            live.say(f"removed {len(removed)} files or directories that killed runs left behind")
        if replicate:
            live.say(f"note: seed {seed}: every model trains at its seed + {seed} (a replicate, stored beside the "
                     f"seed-{prof.seed} models); its results and notebooks go to "
                     f"{_shown(results_home(profile, replicate))}, the book's are untouched")
        for i, (source, name) in enumerate(zip(sources, names), 1):
            expected = [last.get(n) for n in names[i - 1:]]
            live.say(f"[{i}/{len(sources)}] {name}  (elapsed {_fmt(time.time() - t0)}, "
                     f"ETA {_eta(expected, 0.0)})")
            start = time.time()

            def status(i=i, name=name, start=start, expected=expected) -> str:
                now = time.time()
                return (f"[{i}/{len(sources)}] {name} {_fmt(now - start)} | book: elapsed {_fmt(now - t0)}, "
                        f"ETA {_eta(expected, now - start)}")

            with live.notebook(status):
                outcome = execute_to_home(source, name, profile, seed, live.env, replicate)
            outcomes.append(outcome)
            if outcome.ok:
                if not replicate:  # the book's timings give the next run its ETA
                    last[name] = round(outcome.seconds, 1)
                    atomic_write_text(timings_path, json.dumps(last, indent=2, sort_keys=True) + "\n")
                live.say(f"    {name}: ok in {_fmt(outcome.seconds)}")
            else:
                kept = f"; failed copy: {_shown(outcome.failed_copy)}" if outcome.failed_copy else ""
                live.say(f"    {name}: FAILED in {_fmt(outcome.seconds)}: {outcome.error}{kept}")
    _summary(outcomes, profile, time.time() - t0, stream)
    return outcomes


def _shown(path: Path) -> str:
    with contextlib.suppress(ValueError):
        return str(path.relative_to(Path.cwd()))
    return str(path)


class LiveProgress:
    """The runner's end of `hanzilm.progress`'s side channel for one batch: the file the kernels report to
    (named to them in `env`) and a thread that draws what arrives while a notebook runs."""

    def __init__(self, stream: TextIO):
        self.on = os.environ.get("HANZILM_PROGRESS", "") != "0"
        self.renderer = Renderer(stream, live=self.on and _isatty(stream))
        self.env: dict[str, str | None] = {CHANNEL_ENV: None}  # off: nor a channel inherited from elsewhere
        self._lock = threading.Lock()
        self._status: Callable[[], str] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._path: str | None = None
        self._channel: Channel | None = None

    def __enter__(self) -> LiveProgress:
        if self.on:
            fd, self._path = tempfile.mkstemp(prefix=f"hanzilm-progress-{os.getpid()}-", suffix=".jsonl")
            os.close(fd)
            self._channel = Channel(self._path)
            self.env = {CHANNEL_ENV: self._path}
            self._thread = threading.Thread(target=self._loop, name="hanzilm-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._path is not None:
            Path(self._path).unlink(missing_ok=True)

    def say(self, line: str) -> None:
        self.renderer.say(line)

    @contextlib.contextmanager
    def notebook(self, status: Callable[[], str]) -> Iterator[None]:
        """While a notebook runs: its status line kept current; after it, its runs drawn to the end."""
        with self._lock:
            self._status = status
        try:
            yield
        finally:
            with self._lock:
                self._status = None
                self._poll()
                self.renderer.finish()

    def _loop(self) -> None:
        while not self._stop.wait(0.25 if self.renderer.live else 1.0):
            with self._lock:
                self._poll()

    def _poll(self) -> None:
        if self._channel is not None:
            self.renderer.feed(self._channel.read())
        if self._status is not None:
            self.renderer.status(self._status())


def _isatty(stream: TextIO) -> bool:
    """Whether live bars can be drawn on `stream`: a terminal with a width (a pseudo-terminal of 0 columns, as
    some CI runners give, would show nothing)."""
    try:
        return stream.isatty() and os.get_terminal_size(stream.fileno()).columns > 0
    except (AttributeError, ValueError, OSError):
        return False


_fmt = fmt_seconds


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
    failed = [o.failed_copy for o in outcomes if o.failed_copy]
    if failed:
        print(f"failed copies: {RESULTS / profile / 'failed'}", file=stream)


def plan_chapters(only: str | None, book: Path = BOOK) -> list[str]:
    """The chapters of the notebooks `only` picks (every chapter without it), in their usual order."""
    if only is None:
        return list(CHAPTERS)
    _, names = pick(book, only)
    return [c for c in CHAPTERS if any(n.split("/")[0] == c for n in names)]


# what `hanzilm paper` imports beyond the segmenter's light install (`pip install 'hanzilm[book]'`)
BOOK_STACK = ("torch", "pandas", "matplotlib", "papermill", "jupytext", "gensim")


def require_book(book: Path = BOOK) -> None:
    """One line naming what a book command lacks: a checkout's book/, or the book's packages."""
    import importlib.util

    if not (book / "_toc.yml").is_file():
        raise HanzilmError(f"`hanzilm paper` runs the book of a checkout of the repository, and there is no "
                           f"{_shown(book / '_toc.yml')} here: clone the repository and run `make paper` in it")
    missing = [m for m in BOOK_STACK if importlib.util.find_spec(m) is None]
    if missing:
        raise HanzilmError(f"`hanzilm paper` needs the book's packages, and {', '.join(missing)} "
                           f"{'is' if len(missing) == 1 else 'are'} not installed: `make install` in the checkout, "
                           "or pip install 'hanzilm[book]'")


def _run_command(a: argparse.Namespace) -> int:
    require_book()
    if a.plan:
        from .plan import print_plan

        chapters = plan_chapters(a.only)
        if not chapters:
            print(f"--only {a.only!r} picks no chapter that trains models", file=sys.stderr)
            return 2
        print_plan(a.profile, a.chapter_plans(), chapters)
        return 0
    return 0 if all(o.ok for o in run(a.profile, a.only, a.seed, allow_dirty=a.allow_dirty)) else 1


def _list_command(a: argparse.Namespace) -> int:
    if not (BOOK / "_toc.yml").is_file():
        require_book()
    print("\n".join(str(s.relative_to(BOOK).with_suffix("")) for s in toc_notebooks()))
    return 0


def register(sub: argparse._SubParsersAction, chapter_plans: Callable[[], Mapping[str, Any]]) -> None:
    """`paper run` and `paper list`; `chapter_plans()`: each chapter's `plan(profile)`, for --plan (the command
    line, above the papers, passes them: this module imports none)."""
    paper = sub.add_parser("paper", help="execute the book's notebooks (the whole paper companion)")
    paper_sub = paper.add_subparsers(dest="paper_command", required=True)
    p = paper_sub.add_parser("run", help="run every notebook in book/_toc.yml order with papermill")
    p.add_argument("--profile", default=DEFAULT_PROFILE, choices=list(PROFILES),
                   help=f"the sizes and step counts every notebook reads (default {DEFAULT_PROFILE}: the book's; "
                        "smoke: minutes, for CI; gpu, paper: see the README's Profiles)")
    p.add_argument("--only", help="run only the notebooks whose name (e.g. data/corpus_statistics) matches: a "
                   "glob ('mmtnn/*') or a part of the name")
    p.add_argument("--seed", type=seed_int, help="seed passed to every notebook, added to every training seed of its "
                   "chapter (default 0: the profile's own seeds)")
    p.add_argument("--allow-dirty", action="store_true", help="run although the code differs from its commit "
                   "(every record then says git_dirty: true; refused without it)")
    p.add_argument("--plan", action="store_true", help="run nothing: print per chapter the models the profile "
                   "trains, their parameters, tokens and expected hours on one GPU (with --only: its chapters)")
    p.set_defaults(func=_run_command, chapter_plans=chapter_plans)
    ls = paper_sub.add_parser("list", help="list the notebooks in run order")
    ls.set_defaults(func=_list_command)
