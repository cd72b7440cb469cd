"""Independent runs side by side (training runs, evaluations): `workers` spawned processes, each with its share of
the threads.

    run_all(train_one, runs, workers=2, desc="segmenters")   # train_one(run) in a worker, runs in the given order
    parts = run_all(evaluate, shares, workers=2)              # [evaluate(share) for share in shares]
    run_all(train_one, grid, workers=2, then=follow_ups, rank=cost)   # runs that wait on others join as they can

Each run is trained through the model store, so a run another process holds waits on its lock and a finished one
loads: the workers need no coordination beyond the pool.
"""

from __future__ import annotations

import concurrent.futures as futures
import contextlib
import ctypes
import multiprocessing
import os
from typing import Any, Callable, Iterator, Sequence, TypeVar

import torch

from .memory import keep_freed_memory
from .progress import progress

T = TypeVar("T")
R = TypeVar("R")


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """`n` torch threads inside the block, the count before restored after."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _end_with_parent() -> None:
    """Ask Linux to end this worker when the process that started it dies: a `hanzilm paper run` killed by its
    pid (not by a Ctrl-C to the whole process group) left its workers training on, orphaned, for as long as their
    runs took. A killed run is not lost: the store resumes it from its last checkpoint."""
    import signal
    import sys

    if sys.platform.startswith("linux"):
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        parent = multiprocessing.parent_process()
        if parent is not None and os.getppid() != parent.pid:  # it died before the request: no signal will come
            os._exit(1)


def _call(fn: Callable[[T], R], run: T, threads: int) -> R:
    # a spawned worker starts with glibc's malloc defaults; give it the setting its notebook runs with
    keep_freed_memory()
    torch.set_num_threads(threads)
    return fn(run)


def run_all(fn: Callable[[T], R], runs: Sequence[T], *, workers: int = 1, desc: str = "runs",
            threads: int | None = None, unit: str = "run", then: Callable[[T, R], Sequence[T]] | None = None,
            rank: Callable[[T], Any] | None = None) -> list[R]:
    """`[fn(run) for run in runs]`, `workers` at a time; `fn` must be a module-level function (it is pickled),
    and what it returns too. threads: per worker; default this process's torch threads shared among the
    workers.

    then(run, result): the runs that `run`'s end makes possible (a cell's further seeds once its learning-rate
    grid is stored): they join the waiting runs, and their results follow the given runs' in the order they
    were added. rank: of the waiting runs, a free worker takes the one of the smallest rank (ties: the first
    added); default the order added. With both, work that waited on a grid starts beside the rest of the grid
    instead of after it, alone on one core."""
    if not runs:
        return []
    added: list[T] = []
    waiting: list[int] = []
    results: dict[int, R] = {}
    # with `then` the count grows as runs join, and an ETA from it would be a guess (the runs' own bars have theirs)
    bar = progress(total=len(runs), desc=desc, unit=unit, eta=then is None)

    def add(more: Sequence[T]) -> None:
        if added and more:
            bar.total += len(more)
            bar.refresh()
        waiting.extend(range(len(added), len(added) + len(more)))
        added.extend(more)

    def take() -> int:
        i = min(waiting, key=lambda i: (rank(added[i]), i)) if rank else waiting[0]
        waiting.remove(i)
        return i

    def done(i: int, result: R) -> None:
        results[i] = result
        if then is not None:
            add(then(added[i], result))
        bar.update()

    add(runs)
    try:
        if workers <= 1:
            while waiting:
                i = take()
                done(i, fn(added[i]))
            return [results[i] for i in range(len(added))]
        threads = threads or max(1, torch.get_num_threads() // workers)
        # spawn: a fresh interpreter per worker, no forked torch thread pools; one run per process: a worker
        # that had trained three PKU segmental LMs held 7.7 GB (the allocator keeps what a run freed), and a
        # run's memory should not depend on which runs its process did before
        ctx = multiprocessing.get_context("spawn")
        size = workers if then is not None else min(workers, len(runs))
        with futures.ProcessPoolExecutor(size, mp_context=ctx, max_tasks_per_child=1,
                                         initializer=_end_with_parent) as pool:
            # runs go to the pool one per free worker, so that `rank` chooses among all that wait, those added
            # by `then` too
            running: dict[futures.Future, int] = {}
            while waiting or running:
                while waiting and len(running) < size:
                    i = take()
                    running[pool.submit(_call, fn, added[i], threads)] = i
                finished, _ = futures.wait(running, return_when=futures.FIRST_COMPLETED)
                for job in finished:
                    done(running.pop(job), job.result())
        return [results[i] for i in range(len(added))]
    finally:
        bar.close()
