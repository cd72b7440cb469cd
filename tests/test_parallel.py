"""hanzilm.parallel.run_all: every run done, each in a process of its own, its result returned in order."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hanzilm.parallel import run_all


def _write_pid(job: tuple[Path, int]) -> None:
    out, i = job
    (out / f"{i}.pid").write_text(str(os.getpid()))


def _fail(job: int) -> None:
    if job == 2:
        raise RuntimeError("run 2 broke")


def test_each_run_gets_a_fresh_process(tmp_path, monkeypatch):
    monkeypatch.setenv("HANZILM_PROGRESS", "0")
    run_all(_write_pid, [(tmp_path, i) for i in range(4)], workers=2, threads=1)
    pids = {p.read_text() for p in tmp_path.glob("*.pid")}
    assert len(list(tmp_path.glob("*.pid"))) == 4 and len(pids) == 4 and str(os.getpid()) not in pids


def test_a_failing_run_is_raised(monkeypatch):
    monkeypatch.setenv("HANZILM_PROGRESS", "0")
    with pytest.raises(RuntimeError, match="run 2 broke"):
        run_all(_fail, [1, 2, 3], workers=2, threads=1)


def _square(job: int) -> int:
    return job * job


@pytest.mark.parametrize("workers", [1, 2])
def test_what_the_runs_return_comes_back_in_run_order(workers, monkeypatch):
    monkeypatch.setenv("HANZILM_PROGRESS", "0")
    assert run_all(_square, [3, 1, 2, 5], workers=workers, threads=1) == [9, 1, 4, 25]
    assert run_all(_square, [], workers=workers) == []


def _follow(run: int, result: int) -> list[int]:
    return [10 * run + 1, 10 * run + 2] if run < 10 else []     # 1 -> 11, 12; 11 -> 111, 112; ...


def _log_run(job: tuple[Path, int]) -> int:
    out, run = job
    with open(out / "order", "a") as f:
        f.write(f"{run}\n")
    return run * run


@pytest.mark.parametrize("workers", [1, 2])
def test_runs_that_wait_on_others_join_the_pool_as_they_can(workers, tmp_path, monkeypatch):
    monkeypatch.setenv("HANZILM_PROGRESS", "0")
    runs = [(tmp_path, 3), (tmp_path, 1), (tmp_path, 20)]
    then = lambda job, result: [(tmp_path, r) for r in _follow(job[1], result)]   # noqa: E731 (runs in this process)
    out = run_all(_log_run, runs, workers=workers, threads=1, then=then, rank=lambda job: job[1] >= 20)
    # the given runs' results first, then those added, in the order they were added
    assert out[:3] == [9, 1, 400] and sorted(out[3:]) == sorted(r * r for r in (31, 32, 11, 12))
    order = [int(line) for line in (tmp_path / "order").read_text().split()]
    assert sorted(order) == [1, 3, 11, 12, 20, 31, 32]
    if workers == 1:   # a run ranked later waits for those its peers added, though given before them
        assert order == [3, 1, 11, 12, 20, 31, 32] and out[3:] == [31 * 31, 32 * 32, 11 * 11, 12 * 12]


def test_torch_threads_restores_the_count_even_on_error():
    import torch

    from hanzilm.parallel import torch_threads

    before = torch.get_num_threads()
    with pytest.raises(RuntimeError):
        with torch_threads(1):
            assert torch.get_num_threads() == 1
            raise RuntimeError("inside")
    assert torch.get_num_threads() == before


def _malloc_kept(job: int) -> int:
    from hanzilm.memory import keep_freed_memory
    return keep_freed_memory.cache_info().currsize


def test_a_worker_keeps_freed_memory_like_its_notebook(monkeypatch):
    # spawned workers start with glibc's defaults: page faults on every freed logits tensor again
    monkeypatch.setenv("HANZILM_PROGRESS", "0")
    assert run_all(_malloc_kept, [0, 1], workers=2, threads=1) == [1, 1]


def _workers_of(pid: int) -> list[int]:
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == pid and b"spawn_main" in cmdline and b"resource_tracker" not in cmdline:
            kids.append(int(stat.parent.name))
    return kids


def _running(pid: int) -> bool:
    try:  # a zombie (state Z) has ended; only its exit status is left to collect
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_workers_end_when_their_parent_is_killed():
    code = "import time; from hanzilm.parallel import run_all; run_all(time.sleep, [600, 600], workers=2, threads=1)"
    parent = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "HANZILM_PROGRESS": "0"})
    try:
        deadline = time.monotonic() + 120
        while len(workers := _workers_of(parent.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(workers) == 2, "the two workers never started"
        time.sleep(1)  # both inside their runs
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 30
    while any(map(_running, workers)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(map(_running, workers)), "a worker outlived its killed parent"
