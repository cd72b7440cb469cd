"""What every notebook does first: `run = start(profile, seed)`.

It pins the things that make a notebook's printed output reproducible (seeds, torch threads, pandas
float precision, a non-interactive matplotlib style with a font for Chinese) and returns the provenance
context that `write_results` records."""

from __future__ import annotations

import random
from typing import Mapping

import numpy as np
import pandas as pd

from .memory import keep_freed_memory
from .plots import use_cjk_font
from .profiles import Profile, get_profile
from .results import Provenance

FLOAT_PRECISION = 4


def start(profile: str, seed: int = 0) -> tuple[Profile, Provenance]:
    import matplotlib
    import torch

    prof = get_profile(profile).seeded(seed)   # the chapters' training seeds move by `seed`
    keep_freed_memory()
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if prof.torch_threads:
        torch.set_num_threads(prof.torch_threads)
    pd.set_option("display.precision", FLOAT_PRECISION)
    pd.set_option("display.float_format", _format_float)
    pd.set_option("display.max_colwidth", None)
    pd.set_option("display.max_rows", 200)
    pd.set_option("display.width", 160)
    matplotlib.rcParams.update({"figure.dpi": 100, "figure.figsize": (7, 3.5), "axes.spines.top": False,
                                "axes.spines.right": False})
    use_cjk_font()
    return prof, Provenance(profile=prof.name, seed=seed)


def _format_float(x: float) -> str:
    """Fixed precision, so re-executed notebooks print identically (nbval), without trailing zeros."""
    text = f"{x:.{FLOAT_PRECISION}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def show(table: pd.DataFrame, footnote_columns: tuple[str, ...] = ("data", "paper_source"),
         inline_width: int = 24) -> None:
    """Display a results table with long notes (stand-in labels, paper sources) as numbered footnotes."""
    from IPython.display import Markdown, display

    notes: dict[str, int] = {}
    shown = table.copy()
    for col in footnote_columns:
        if col not in shown:
            continue

        def mark(value: object) -> str:
            if pd.isna(value):
                return ""
            text = str(value)
            if len(text) <= inline_width:
                return text
            return f"[{notes.setdefault(text, len(notes) + 1)}]"

        shown[col] = shown[col].map(mark)
    display(shown)
    if notes:
        display(Markdown("\n".join(f"[{n}] {text}  " for text, n in notes.items())))


def glue_values(values: Mapping[str, object]) -> None:
    """Glue each value under its name (myst-nb), for the notebook's markdown to paste: {glue:text}`name:.1f`.
    A number in the prose is then the run's, not typed by hand (tests/test_prose_numbers.py checks that none is).

    Nothing is displayed in the notebook. numpy scalars become plain Python numbers (myst-nb formats their text
    with the role's format spec) and floats keep 6 significant digits, so a re-executed smoke notebook stores
    the same text (nbval compares it)."""
    from myst_nb import glue

    for name, value in values.items():
        glue(name, _plain(value), display=False)


def _plain(value: object) -> object:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(f"{float(value):.6g}")
    return str(value)
