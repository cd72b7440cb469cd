"""The runner under faults: a failing cell, a dying kernel and a killed `paper run` leave the reference notebook
as it was and keep the failed copy; re-runs rewrite the same bytes; `--only` without a match is an error; the
progress side channel from a notebook's trainer to the runner's terminal."""

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from hanzilm import cli, progress, runner
from hanzilm.io import atomic_path, atomic_write_text

HEADER = '# %% tags=["parameters"]\nprofile = "cpu"\nseed = 0\n\n'



@pytest.fixture(autouse=True)
def _committed(monkeypatch):
    """These runs stand for runs of committed code (the runner refuses others); the tests of that rule say so."""
    monkeypatch.setattr(runner.paths, "git_state", lambda: ("0123456789abcdef", False))

def _book(tmp_path: Path, **notebooks: str) -> Path:
    """A scratch book: one notebook per keyword (name=body of its second cell)."""
    book = tmp_path / "book"
    book.mkdir(exist_ok=True)
    chapters = "".join(f"- file: {name}\n" for name in notebooks)
    (book / "_toc.yml").write_text(f"format: jb-book\nroot: intro\nchapters:\n{chapters}")
    for name, body in notebooks.items():
        (book / f"{name}.py").write_text(HEADER + "# %%\n" + body + "\n")
    return book


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "RESULTS", tmp_path / "results")
    return tmp_path


def _failed_line(text: str) -> str:
    lines = [line for line in text.splitlines() if "FAILED in" in line]
    assert len(lines) == 1, text
    return lines[0]


def test_failures_keep_the_reference_and_the_failed_copy(scratch, capfd):
    book = _book(scratch, nb='print("first", profile)')
    home = scratch / "results/smoke/notebooks/nb.ipynb"
    failed = scratch / "results/smoke/failed/nb.ipynb"
    assert runner.run("smoke", book=book, stream=io.StringIO())[0].ok
    reference = home.read_bytes()

    # the same outputs again: the same bytes (no timestamps, durations or temporary paths)
    assert runner.run("smoke", book=book, stream=io.StringIO())[0].ok
    assert home.read_bytes() == reference
    nb = nbformat.reads(reference.decode(), as_version=4)
    assert not any({"execution", "papermill"} & set(c.metadata) for c in nb.cells)
    assert set(nb.metadata.papermill).isdisjoint(runner.VOLATILE_PAPERMILL)
    assert oct(home.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    # the kernel is started with CurveZMQ keys: no plain-text-transport warning per notebook
    assert "without encryption" not in capfd.readouterr().err

    # an exception in a cell
    (book / "nb.py").write_text(HEADER + '# %%\nprint("second")\n\n# %%\nraise ValueError("broken on purpose")\n')
    out = io.StringIO()
    outcome, = runner.run("smoke", book=book, stream=out)
    assert not outcome.ok and outcome.failed_copy == failed
    assert home.read_bytes() == reference
    line = _failed_line(out.getvalue())
    assert "nb: FAILED in " in line
    assert ": cell In [4] `raise ValueError(\"broken on purpose\")`: ValueError: broken on purpose;" in line
    assert str(failed.name) in line
    kept = nbformat.read(failed, as_version=4)
    assert any(o.get("ename") == "ValueError" for c in kept.cells for o in c.get("outputs", []))

    # the kernel dies midway (as under the OOM killer): no cell error, papermill names no cell
    (book / "nb.py").write_text(HEADER + '# %%\nprint("third")\n\n# %%\nimport os, signal\n'
                                'os.kill(os.getpid(), signal.SIGKILL)\n')
    out = io.StringIO()
    assert not runner.run("smoke", book=book, stream=out)[0].ok
    assert home.read_bytes() == reference
    line = _failed_line(out.getvalue())
    assert "`import os, signal`: DeadKernelError" in line and failed.is_file()

    # fixed: the reference is replaced, the stale failed copy goes
    (book / "nb.py").write_text(HEADER + '# %%\nprint("fixed", profile)\n')
    assert runner.run("smoke", book=book, stream=io.StringIO())[0].ok
    assert b"fixed smoke" in home.read_bytes() and not failed.exists()
    assert not list((scratch / "results/smoke/failed").glob(".running-*"))


def test_cpu_failure_keeps_the_book_copy(scratch):
    book = _book(scratch, nb="print(profile)")
    assert runner.run("cpu", book=book, stream=io.StringIO())[0].ok
    copy = (book / "nb.ipynb").read_bytes()
    assert runner.run("cpu", book=book, stream=io.StringIO())[0].ok
    assert (book / "nb.ipynb").read_bytes() == copy  # the book's copy is as stable as smoke's references
    (book / "nb.py").write_text(HEADER + "# %%\n1 / 0\n")
    assert not runner.run("cpu", book=book, stream=io.StringIO())[0].ok
    assert (book / "nb.ipynb").read_bytes() == copy
    assert (scratch / "results/cpu/failed/nb.ipynb").is_file()
    # never committed: results/cpu/ is, except for this directory
    assert (scratch / "results/cpu/failed/.gitignore").read_text().splitlines()[-1] == "*"


def test_killed_run_leaves_the_reference(scratch):
    """SIGKILL to `hanzilm paper run` (and its kernel) while a notebook runs: the reference is untouched and the
    partial copy stays in the git-ignored scratch directory."""
    marker = scratch / "sleeping"
    book = _book(scratch, nb="print(profile)")
    assert runner.run("smoke", book=book, stream=io.StringIO())[0].ok
    home = scratch / "results/smoke/notebooks/nb.ipynb"
    reference = home.read_bytes()

    (book / "nb.py").write_text(HEADER + '# %%\nprint("before")\n\n# %%\nimport os, time\n'
                                f'open({str(marker)!r}, "w").write(str(os.getpid()))\ntime.sleep(60)\n')
    env = {**os.environ, "HANZILM_ROOT": str(scratch), "HANZILM_PROGRESS": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "hanzilm.cli", "paper", "run", "--profile", "smoke"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.time() + 30
        while not (marker.is_file() and marker.read_text()) and time.time() < deadline:
            assert proc.poll() is None, "the run ended before the notebook started sleeping"
            time.sleep(0.1)
        assert marker.is_file(), "the notebook did not start within 30 s"
        time.sleep(0.3)  # papermill has saved the cells before the sleeping one
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if marker.is_file() and marker.read_text():
            kernel = int(marker.read_text())  # the kernel runs in a session of its own
            try:
                os.kill(kernel, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert home.read_bytes() == reference
    partial, = (scratch / "results/smoke/failed").glob(".running-*/nb.ipynb")
    assert "before" in partial.read_text()


@pytest.mark.parametrize("only", ["", "  ", "no-such-notebook"])
def test_only_without_a_match_is_an_error(only, capsys):
    assert cli.main(["paper", "run", "--profile", "smoke", "--only", only]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--only" in err


def test_only_picks_globs_and_parts(tmp_path):
    book = _book(tmp_path, **{"a_one": "", "a_two": "", "b": ""})
    assert runner.pick(book, "a_*")[1] == ["a_one", "a_two"]
    assert runner.pick(book, "two")[1] == ["a_two"]
    assert runner.pick(book, None)[1] == ["a_one", "a_two", "b"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_atomic_writes_have_ordinary_permissions(tmp_path):
    """safetensors replaces the temporary file with a private (0600) one of its own; the result is still 0644."""
    import torch
    from safetensors.torch import save_file

    with atomic_path(tmp_path / "w.safetensors") as tmp:
        save_file({"w": torch.zeros(3)}, str(tmp))
    with atomic_path(tmp_path / "last.pt") as tmp:
        torch.save({"step": 1}, tmp)
    atomic_write_text(tmp_path / "done.json", "{}")
    for name in ("w.safetensors", "last.pt", "done.json"):
        assert oct((tmp_path / name).stat().st_mode & 0o777) == oct(0o666 & ~_umask()), name
    assert not list(tmp_path.glob("*.tmp"))


# --- the progress side channel ---------------------------------------------------------------------------------

def _records(path: Path) -> list[dict]:
    return progress.Channel(path).read()


def test_bars_report_to_the_channel_even_when_not_drawn(tmp_path, monkeypatch):
    path = tmp_path / "channel.jsonl"
    path.touch()
    monkeypatch.setenv(progress.CHANNEL_ENV, str(path))
    monkeypatch.setenv("HANZILM_PROGRESS", "0")  # as in a smoke notebook: nothing drawn in the outputs
    monkeypatch.setattr(progress, "REPORT_EVERY", 0.0)
    with progress.progress(5, "LMConfig-abc", "step", initial=2) as bar:
        for _ in range(3):
            bar.set_postfix(loss="1.5", refresh=False)
            bar.update(1)
    bar.close()  # a second close reports nothing more
    records = _records(path)
    assert [r["n"] for r in records] == [2, 3, 4, 5, 5]
    assert [r["done"] for r in records] == [False] * 4 + [True]
    assert records[-1]["total"] == 5 and records[-1]["unit"] == "step" and records[-1]["postfix"] == "loss=1.5"
    assert len({r["id"] for r in records}) == 1

    # reports are spaced out: a fast loop writes its first and last state, not every step
    monkeypatch.setattr(progress, "REPORT_EVERY", 60.0)
    path.write_text("")
    with progress.progress(1000, "fast") as bar:
        for _ in range(1000):
            bar.update()
    assert [r["n"] for r in _records(path)] == [0, 1000]

    # off for bars that are off (non-main ranks), and a vanished channel does not stop the work
    path.write_text("")
    with progress.progress(3, "rank 1", enabled=False) as bar:
        bar.update(3)
    assert _records(path) == []
    path.unlink()
    with progress.progress(3, "orphan") as bar:
        bar.update(3)
    assert not path.exists()


def test_channel_reads_whole_lines_only(tmp_path):
    path = tmp_path / "c.jsonl"
    channel = progress.Channel(path)
    assert channel.read() == []  # not created yet
    line = json.dumps({"id": "1-0", "n": 3}) + "\n"
    path.write_text("not json\n" + line[:7])
    assert channel.read() == []
    with open(path, "a") as f:
        f.write(line[7:] + "[1, 2]\n")
    assert channel.read() == [{"id": "1-0", "n": 3}]
    assert channel.read() == []


def _run(run_id, n, done=False, total=40, elapsed=2.0):
    return {"id": run_id, "desc": f"run-{run_id}", "unit": "step", "n": n, "initial": 0, "total": total,
            "elapsed": elapsed, "postfix": "loss=2.0", "done": done}


def test_renderer_off_a_terminal_writes_one_line_per_finished_run():
    out = io.StringIO()
    r = progress.Renderer(out, live=False)
    r.status("[1/2] ignored off a terminal")
    r.feed([_run("a", 0), _run("b", 0), _run("a", 20)])
    assert out.getvalue() == ""
    r.feed([_run("a", 40, done=True, elapsed=4.0)])
    assert out.getvalue() == "    run-a: 40/40 step in 0:04 (10 step/s)\n"
    r.finish()  # b never ended: its kernel died
    assert out.getvalue().splitlines()[-1] == "    run-b: cut off at 0/40 step after 0:02"
    r.feed([_run("c", 25, done=True, elapsed=5.0)])  # early stopping: closed short of its total
    assert out.getvalue().splitlines()[-1] == "    run-c: 25/40 step in 0:05 (5 step/s) (ended early)"
    assert "\r" not in out.getvalue()


def test_renderer_off_a_terminal_writes_a_heartbeat_with_each_active_run():
    out = io.StringIO()
    r = progress.Renderer(out, live=False)
    r.feed([_run("a", 10, elapsed=5.0)])
    r.status("[1/2] nb 0:05 | book: elapsed 0:05, ETA 1:00")
    assert out.getvalue() == ""                      # not yet a heartbeat's time since it started
    r.heartbeat = 0.0
    r.status("[1/2] nb 0:06 | book: elapsed 0:06, ETA 0:59")
    assert out.getvalue() == "[1/2] nb 0:06 | book: elapsed 0:06, ETA 0:59 | run-a 10/40 step, ETA 0:15\n"


def test_renderer_on_a_terminal_draws_live_bars():
    out = io.StringIO()
    r = progress.Renderer(out, live=True)
    r.status("[1/1] nb 0:01 | book: elapsed 0:01, ETA 0:09")
    r.feed([_run("a", 10)])
    drawn = out.getvalue()
    assert "book: elapsed 0:01, ETA 0:09" in drawn and "run-a:  25%" in drawn and "10/40" in drawn
    assert "loss=2.0" in drawn and "\r" in drawn
    r.say("    ok in 0:03")
    r.feed([_run("a", 40, done=True)])
    r.finish()
    assert "    ok in 0:03\n" in out.getvalue() and "    run-a: 40/40 step in 0:02" in out.getvalue()


def test_runner_shows_the_runs_trained_in_a_notebook(scratch, monkeypatch):
    """End to end: a trainer's bar in the kernel, the channel, the runner's line (here not a terminal)."""
    monkeypatch.delenv("HANZILM_PROGRESS", raising=False)
    monkeypatch.setattr(runner.paths, "git_state", lambda: ("0" * 40, False))  # the lines, not the checkout's state
    book = _book(scratch, nb="from hanzilm.progress import progress\n"
                             "with progress(7, 'ToyConfig-123', 'step') as bar:\n"
                             "    for _ in range(7):\n"
                             "        bar.update(1)\n"
                             "print('trained')")
    out = io.StringIO()
    assert runner.run("smoke", book=book, stream=out)[0].ok
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[1/1] nb")
    assert lines[1].startswith("    ToyConfig-123: 7/7 step in ") and lines[2].startswith("    nb: ok in")
    executed = nbformat.read(scratch / "results/smoke/notebooks/nb.ipynb", as_version=4)
    assert executed.cells[-1].outputs == [nbformat.v4.new_output("stream", name="stdout", text="trained\n")]
    assert progress.CHANNEL_ENV not in os.environ

    monkeypatch.setenv("HANZILM_PROGRESS", "0")  # CI: no side channel at all
    out = io.StringIO()
    assert runner.run("smoke", book=book, stream=out)[0].ok
    assert "ToyConfig" not in out.getvalue()


def test_a_run_leaves_every_stored_model_in_place(scratch):
    """A smoke run no longer empties the smoke store (a second run, or a user's smoke models, lost them): smoke
    models are keyed by their chapter's version like every profile's, and `make test` trains its own afresh."""
    for profile in ("smoke", "cpu"):
        (scratch / "results" / profile / "checkpoints" / "Run-1").mkdir(parents=True)
    book = _book(scratch, nb='print("ran", profile)')
    assert runner.run("smoke", book=book, stream=io.StringIO())[0].ok
    for profile in ("smoke", "cpu"):
        assert (scratch / "results" / profile / "checkpoints" / "Run-1").is_dir()


def test_book_eta_from_the_last_timings():
    assert runner._eta([10.0, 20.0], 0.0) == "0:30"
    assert runner._eta([10.0, 20.0], 15.0) == "0:20"  # the running notebook is late: its share is spent
    assert runner._eta([None, 20.0], 5.0) == "0:20+?"  # never timed: counted as unknown, not as zero
    assert runner._eta([None], 5.0) == "?"


def test_a_growing_pool_reports_no_eta_and_its_total_as_it_grows(monkeypatch):
    """`run_all(..., then=)`: runs join as others end, so its count says little of the time left; the runs'
    own bars keep their ETAs."""
    from hanzilm import parallel

    made = []
    real = parallel.progress
    monkeypatch.setattr(parallel, "progress", lambda **kw: made.append(kw) or real(**kw))
    parallel.run_all(abs, [-1, -2], then=lambda run, result: [run * 10] if run > -10 else [])
    parallel.run_all(abs, [-1, -2])
    assert [kw["eta"] for kw in made] == [False, True]
    pool = {**_run("p", 4, total=17, elapsed=60.0), "desc": "segmenters", "unit": "run", "eta": False}
    assert progress.running_line(pool) == "segmenters 4/17 run"
    assert progress.running_line(_run("a", 10)) == "run-a 10/40 step, ETA 0:06"
    out = io.StringIO()
    r = progress.Renderer(out, live=True)
    r.feed([pool])
    r.feed([{**pool, "n": 5, "total": 19}])
    assert r._bars[pool["id"]].total == 19 and "<" not in r._bars[pool["id"]].format_meter(
        **r._bars[pool["id"]].format_dict).split("|")[-1]
    r.finish()


WRITES = ('import pandas as pd\nfrom hanzilm.results import Provenance, write_results\n'
          'write_results(pd.DataFrame({{"metric": ["f1"], "ours": [{value}]}}), chapter="toy", name="t", '
          'run=Provenance(profile, seed))\n')


def test_no_result_is_rewritten_before_its_notebook_succeeds(scratch):
    """A notebook's results are staged and move into results/ only when every cell ran: one that fails after
    writing (or is killed) leaves the committed CSV and its record as they were."""
    book = _book(scratch, good=WRITES.format(value=1.5))
    assert runner.run("smoke", book=book, stream=io.StringIO())[0].ok
    csv = scratch / "results" / "smoke" / "toy" / "t.csv"
    before = csv.read_text(), csv.with_suffix(".json").read_text()
    assert "1.5" in before[0]
    book = _book(scratch, good=WRITES.format(value=2.5) + "raise RuntimeError('after writing')")
    assert not runner.run("smoke", book=book, stream=io.StringIO())[0].ok
    assert (csv.read_text(), csv.with_suffix(".json").read_text()) == before
    assert not list((scratch / "results" / "smoke" / "failed").glob(".running-*"))


def test_the_next_run_clears_what_a_killed_run_left(scratch):
    """kill -9 of a run leaves its scratch directory, its progress side channel and atomic-write temporaries: the
    next run of the profile removes those whose process is gone (a live one's are kept)."""
    import tempfile
    import time

    failed = runner.failed_dir("smoke")
    dead = failed / ".running-999999999-abc"
    (dead / "results" / "smoke" / "toy").mkdir(parents=True)
    (dead / "results" / "smoke" / "toy" / "t.csv").write_text("metric,ours\n")
    live = failed / f".running-{os.getpid()}-def"
    live.mkdir()
    channel = Path(tempfile.gettempdir()) / "hanzilm-progress-999999999-x.jsonl"
    channel.write_text("")
    temp = scratch / "results" / "smoke" / "toy" / ".t.json.abc.tmp"
    temp.parent.mkdir(parents=True, exist_ok=True)
    temp.write_text("{")
    os.utime(temp, (time.time() - 3600,) * 2)
    out = io.StringIO()
    assert runner.run("smoke", book=_book(scratch, nb='print("ran")'), stream=out)[0].ok
    assert not dead.exists() and not channel.exists() and not temp.exists() and live.is_dir()
    assert "removed 3 files or directories that killed runs left behind" in out.getvalue()
