"""What every `hanzilm` command shares: `--threads`, and behaving like a command-line tool under faults.

* A closed pipe (`hanzilm segment ... | head -1`) ends the command quietly with status 141, as the shell reports a
  program killed by SIGPIPE; any other failed write names the output: `<stdout>: cannot write: No space left on
  device`, status 2. Writes are told apart from reads because only writes to stdout go through `GuardedStream`.
* Ctrl-C prints one line and exits 130; a `HanzilmError` (bad path, unreadable file, bad model) prints one line and
  exits 2. Neither prints a traceback.
* `--threads N` sets how many threads the numeric libraries (and the scorer's `diff` processes) use. The
  environment variables are set before numpy or torch is first imported, which the commands do lazily.

This module imports only the standard library: it runs before every command, including `--help`.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from typing import Any, Callable

from .errors import HanzilmError

EXIT_ERROR = 2
EXIT_PIPE = 128 + 13     # SIGPIPE
EXIT_INTERRUPT = 128 + 2  # SIGINT
# read by OpenBLAS, OpenMP (torch, numpy's BLAS) and MKL when they start
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
# Every command's default. On 2 cores, a second thread (segment) or diff process (score) is 1.3x faster while the
# other core is idle, and 1.2-1.4x slower as soon as another process holds it (the threads wait for each other):
# one never oversubscribes a machine shared with other work; --threads asks for more.
DEFAULT_THREADS = 1


class OutputError(HanzilmError):
    """A write to the command's output failed; `closed` when the reader went away (EPIPE)."""

    def __init__(self, name: str, error: OSError):
        self.closed = isinstance(error, BrokenPipeError) or error.errno == errno.EPIPE
        super().__init__(f"{name}: cannot write: {error.strerror or error}")


class GuardedStream:
    """A text or binary output stream whose failed writes raise OutputError naming the output."""

    def __init__(self, stream: Any, name: str = "<stdout>"):
        self._stream, self._name = stream, name

    def write(self, data: Any) -> int:
        try:
            return self._stream.write(data)
        except OSError as e:
            raise OutputError(self._name, e) from None

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as e:
            raise OutputError(self._name, e) from None

    @property
    def buffer(self) -> GuardedStream:
        return GuardedStream(self._stream.buffer, self._name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {n}")
    return n


MAX_SEED = 2**31 - 1  # added to the chapters' own seeds; every RNG the runs seed (numpy's too) takes it


def seed_int(text: str) -> int:
    """A seed for `paper run --seed`: a whole number from 0 to MAX_SEED."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 0 <= n <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"a seed is a whole number from 0 to {MAX_SEED:,}, not {n}")
    return n


def add_threads(parser: argparse.ArgumentParser, what: str = "threads to compute with") -> None:
    parser.add_argument("--threads", type=positive_int, default=DEFAULT_THREADS, metavar="N",
                        help=f"{what} (default: {DEFAULT_THREADS})")


def set_threads(n: int) -> None:
    """Ask the numeric libraries for n threads. They read the environment once, when loaded, so it is set only
    while none is (a process that has them already, such as a test calling `main`, keeps its environment);
    torch's pool is set directly once torch is loaded (call again after importing it)."""
    if not any(lib in sys.modules for lib in ("numpy", "torch")):
        for var in THREAD_ENV:
            os.environ[var] = str(n)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)


def run(func: Callable[[], int]) -> int:
    """Call func with stdout guarded; map faults to one line on stderr and the exit status."""
    stdout = sys.stdout
    sys.stdout = GuardedStream(stdout)
    try:
        try:
            status = func()
        except SystemExit as e:  # argparse's --help and usage errors: their status, after the output is flushed
            status = _status(e.code)
        sys.stdout.flush()
        return int(status or 0)
    except OutputError as e:
        _discard_output(stdout)
        if e.closed:
            return EXIT_PIPE
        _say(f"error: {e}")
        return EXIT_ERROR
    except HanzilmError as e:
        _say(f"error: {e}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        _say("interrupted")
        return EXIT_INTERRUPT
    finally:
        sys.stdout = stdout


def _status(code: object) -> int:
    if code is None or isinstance(code, int):
        return code or 0
    _say(str(code))
    return 1


def _say(message: str) -> None:
    try:
        print(f"hanzilm: {message}", file=sys.stderr, flush=True)
    except OSError:
        pass  # stderr is gone too: the exit status still tells


def _discard_output(stream: Any) -> None:
    """After a failed write the stream still holds unwritten bytes, which Python would try (and fail, with a
    traceback-like warning) to flush at exit: point the file descriptor at /dev/null first."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (a test's capture): nothing is flushed at exit
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
