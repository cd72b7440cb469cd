"""What every notebook does first: `run = start(profile, seed)`.

It pins the things that make a notebook's printed output reproducible (seeds, torch threads, pandas
float precision, a non-interactive matplotlib style) and returns the provenance context that
`write_results` records."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd

from .profiles import Profile, get_profile
from .results import Provenance

FLOAT_PRECISION = 4


def start(profile: str, seed: int = 0) -> tuple[Profile, Provenance]:
    import matplotlib
    import torch

    prof = get_profile(profile)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if prof.torch_threads:
        torch.set_num_threads(prof.torch_threads)
    pd.set_option("display.precision", FLOAT_PRECISION)
    pd.set_option("display.float_format", lambda x: f"{x:,.{FLOAT_PRECISION}f}".rstrip("0").rstrip("."))
    pd.set_option("display.max_rows", 200)
    pd.set_option("display.width", 160)
    matplotlib.rcParams.update({"figure.dpi": 100, "figure.figsize": (7, 3.5), "axes.spines.top": False,
                                "axes.spines.right": False})
    return prof, Provenance(profile=prof.name, seed=seed)
