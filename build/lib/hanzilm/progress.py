"""Progress bars (tqdm, with an ETA) for long work, one policy everywhere.

HANZILM_PROGRESS=0: never (smoke runs and CI, whose printed output nbval compares); =1: also off a terminal
(Jupyter, papermill logs); unset: only on a terminal.

The side channel. `hanzilm paper run` executes each notebook in a kernel whose output goes into the notebook, not
to the terminal, so a bar drawn there is either hidden or recorded in the notebook. Instead the runner names a
file in HANZILM_PROGRESS_FILE, which the kernel and the processes it starts inherit; every enabled bar then also
appends its state to that file, one JSON object a line ({"id", "desc", "unit", "n", "initial", "total",
"elapsed", "postfix", "done"}), whatever the policy above says about drawing it. The runner reads the file
(`Channel`) and draws the runs in its own terminal (`Renderer`). Nothing of this enters a notebook's outputs.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import threading
import time
from typing import Any, TextIO

from tqdm import tqdm

CHANNEL_ENV = "HANZILM_PROGRESS_FILE"
REPORT_EVERY = 0.5  # seconds between two reports of a bar (its first and last state are always reported)
_ids = itertools.count()
NO_ETA = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}, {rate_fmt}{postfix}]"  # tqdm's bar without the time left


def progress(total: int, desc: str, unit: str = "it", initial: int = 0, enabled: bool = True,
             eta: bool = True) -> tqdm:
    """A bar for `total` units of work. eta=False: no time left is shown, for a count that says little of the
    time (a pool whose runs differ tenfold in length and whose total grows as runs join)."""
    env, tty = os.environ.get("HANZILM_PROGRESS", ""), sys.stderr.isatty()
    show = enabled and env != "0" and (tty or env == "1")
    # Off a terminal every refresh is kept in the output: refresh rarely there.
    kw = dict(total=total, initial=initial, desc=desc, unit=unit, disable=not show,
              mininterval=1.0 if tty else 5.0, dynamic_ncols=True, file=sys.stderr)
    if not eta:
        kw["bar_format"] = NO_ETA
    channel = os.environ.get(CHANNEL_ENV)
    if enabled and channel:
        return _Reported(channel, eta=eta, **kw)
    return tqdm(**kw)


class _Reported(tqdm):
    """A tqdm bar that also reports its state to the side channel, drawn or not. A disabled tqdm counts
    nothing, so the count is kept here."""

    def __init__(self, channel: str, eta: bool = True, **kw: Any):
        self._channel: str | None = channel
        self._what = {"id": f"{os.getpid()}-{next(_ids)}", "desc": kw.get("desc") or "",
                      "unit": kw.get("unit", "it"), "initial": kw.get("initial", 0), "eta": eta}
        self._count = self._what["initial"]
        self._ended = False
        self._t0 = self._sent = time.monotonic()
        super().__init__(**kw)
        self._send(done=False)

    def update(self, n: float = 1) -> bool | None:
        shown = super().update(n)
        self._count += n
        if time.monotonic() - self._sent >= REPORT_EVERY:
            self._send(done=False)
        return shown

    def close(self) -> None:
        if not getattr(self, "_ended", True):  # once, though close runs again from __exit__ and __del__
            self._ended = True
            self._send(done=True)
        super().close()

    def _send(self, done: bool) -> None:
        if self._channel is None:
            return
        self._sent = time.monotonic()
        # the total as it is now: a pool's grows as runs that waited on others join (`parallel.run_all`)
        record = {**self._what, "total": self.total, "n": self._count,
                  "elapsed": round(self._sent - self._t0, 3),
                  "postfix": getattr(self, "postfix", None) or "", "done": done}
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        try:
            # No O_CREAT: once the runner has removed its file nobody reads it. O_APPEND and one write per line:
            # the kernel and its worker processes append to the same file without mixing their lines.
            fd = os.open(self._channel, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
        except OSError:
            self._channel = None  # a progress report must never stop the work it reports on


class Channel:
    """The reading end of the side channel: the records appended to `path` since the last `read`."""

    def __init__(self, path: str | os.PathLike):
        self.path = path
        self._offset = 0
        self._partial = b""

    def read(self) -> list[dict[str, Any]]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            return []
        self._offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")  # a line still being written waits
        records = []
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # not a bar's line: whoever wrote it, it is no progress report
            if isinstance(record, dict) and {"id", "n"} <= record.keys():
                records.append(record)
        return records


def fmt_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _measured(record: dict[str, Any]) -> tuple[str, str, float, float]:
    """(count as "n/total" or "n", unit, seconds, rate per second) of a run's record."""
    n, total, secs = record["n"], record.get("total"), record.get("elapsed", 0.0)
    rate = (n - record.get("initial", 0)) / secs if secs > 0 else 0.0
    return (f"{n:g}/{total:g}" if total else f"{n:g}"), record.get("unit", "it"), secs, rate


def running_line(record: dict[str, Any]) -> str:
    """A run still going, in a few words: its count and, given a total, its ETA from its own rate (unless it
    reports none)."""
    amount, unit, _, rate = _measured(record)
    total = record.get("total")
    if not total or not record.get("eta", True):
        return f"{record.get('desc') or 'run'} {amount} {unit}"
    eta = fmt_seconds((total - record["n"]) / rate) if rate > 0 else "?"
    return f"{record.get('desc') or 'run'} {amount} {unit}, ETA {eta}"


def finished_line(record: dict[str, Any]) -> str:
    """One line for a run that ended (or was cut off: `done` false): what it did, in how long, how fast. A run
    that ended short of its total stopped by itself (early stopping on dev F1 ends most segmenter runs so)."""
    amount, unit, secs, rate = _measured(record)
    head = f"    {record.get('desc') or 'run'}: "
    if not record.get("done"):
        return head + f"cut off at {amount} {unit} after {fmt_seconds(secs)}"
    total = record.get("total")
    early = " (ended early)" if total and record["n"] < total else ""
    return head + f"{amount} {unit} in {fmt_seconds(secs)} ({rate:.3g} {unit}/s){early}"


class Renderer:
    """Draws the side channel's runs in the runner's terminal.

    live (a terminal): a tqdm bar per active run (its ETA from its own rate), under a status line that the
    runner keeps current (the book's elapsed time and ETA); lines written with `say` go above the bars. Not live
    (a log file, a pipe): no bars and no carriage returns; one line per run when it ends, and every `heartbeat`
    seconds the status line with each active run's count and ETA (a chapter's first run can take half an hour,
    and a log that says nothing for that long looks hung)."""

    heartbeat = 300.0

    def __init__(self, stream: TextIO, live: bool):
        self.stream, self.live = stream, live
        self._beat = time.monotonic()
        self._lock = threading.RLock()
        self._runs: dict[str, dict[str, Any]] = {}
        self._bars: dict[str, tqdm] = {}
        self._status: tqdm | None = None

    def say(self, line: str) -> None:
        with self._lock:
            if self.live and (self._bars or self._status is not None):
                tqdm.write(line, file=self.stream)
            else:
                print(line, file=self.stream, flush=True)

    def status(self, text: str) -> None:
        if not self.live:
            if time.monotonic() - self._beat >= self.heartbeat:
                self._beat = time.monotonic()
                self.say(" | ".join([text] + [running_line(r) for r in self._runs.values()]))
            return
        with self._lock:
            if self._status is None:
                self._status = tqdm(total=None, bar_format="{desc}", file=self.stream, leave=False,
                                    dynamic_ncols=True, mininterval=0)
            self._status.set_description_str(text, refresh=True)

    def feed(self, records: list[dict[str, Any]]) -> None:
        with self._lock:
            for r in records:
                self._runs[r["id"]] = r
                if self.live:
                    self._draw(r)
                if r.get("done"):
                    self._end(r["id"])

    def _draw(self, r: dict[str, Any]) -> None:
        bar = self._bars.get(r["id"])
        if bar is None:
            bar = self._bars[r["id"]] = tqdm(total=r.get("total"), initial=r.get("initial", 0), desc=r.get("desc"),
                                             unit=r.get("unit", "it"), file=self.stream, leave=False,
                                             dynamic_ncols=True, mininterval=0,
                                             bar_format=None if r.get("eta", True) else NO_ETA)
        bar.total, bar.n = r.get("total"), r["n"]   # a pool's total grows as runs join
        bar.set_postfix_str(r.get("postfix") or "", refresh=False)
        bar.refresh()

    def _end(self, run_id: str) -> None:
        record = self._runs.pop(run_id)
        bar = self._bars.pop(run_id, None)
        if bar is not None:
            bar.close()
        self.say(finished_line(record))

    def finish(self) -> None:
        """The notebook has ended: a run that never reported its end was cut off (its kernel died or was
        interrupted)."""
        with self._lock:
            for run_id in list(self._runs):
                self._end(run_id)
            if self._status is not None:
                self._status.close()
                self._status = None
