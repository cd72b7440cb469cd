"""The project's exceptions: every message names the file, the line and the problem."""

from __future__ import annotations

from pathlib import Path


class HanzilmError(Exception):
    """Base class for errors a user can act on (bad input, missing data)."""


class DataError(HanzilmError):
    """A data file is missing, corrupt or malformed."""

    def __init__(self, problem: str, path: str | Path | None = None, line: int | None = None):
        self.problem, self.path, self.line = problem, path, line
        where = ""
        if path is not None:
            where = f"{path}" + (f", line {line}" if line is not None else "") + ": "
        super().__init__(where + problem)
