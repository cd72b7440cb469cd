"""Progress bars (tqdm, with an ETA) for long work, one policy everywhere.

HANZILM_PROGRESS=0: never (smoke runs and CI, whose printed output nbval compares); =1: also off a terminal
(Jupyter, papermill logs); unset: only on a terminal."""

from __future__ import annotations

import os
import sys

from tqdm import tqdm


def progress(total: int, desc: str, unit: str = "it", initial: int = 0, enabled: bool = True) -> tqdm:
    env, tty = os.environ.get("HANZILM_PROGRESS", ""), sys.stderr.isatty()
    show = enabled and env != "0" and (tty or env == "1")
    # Off a terminal every refresh is kept in the output: refresh rarely there.
    return tqdm(total=total, initial=initial, desc=desc, unit=unit, disable=not show,
                mininterval=1.0 if tty else 5.0, dynamic_ncols=True, file=sys.stderr)
