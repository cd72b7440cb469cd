"""Where the project keeps things. Everything is relative to the project root, not to the working
directory, so notebooks give the same results whether papermill, nbval or JupyterLab runs them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def _find_root() -> Path:
    env = os.environ.get("HANZILM_ROOT")
    if env:
        return Path(env).resolve()
    # src layout: <root>/lib/hanzilm/paths.py (editable install, the supported set-up)
    here = Path(__file__).resolve().parents[2]
    if (here / "pyproject.toml").is_file():
        return here
    cwd = Path.cwd().resolve()
    for p in (cwd, *cwd.parents):
        if (p / "pyproject.toml").is_file() and (p / "lib" / "hanzilm").is_dir():
            return p
    return cwd


ROOT = _find_root()
BOOK = ROOT / "book"
DATA = ROOT / "data"
RESULTS = ROOT / "results"
# set by `hanzilm paper run` for each notebook: its results are written there and moved into results/ only when
# every cell of the notebook ran, so a failed or killed notebook rewrites no committed number
STAGING_ENV = "HANZILM_RESULTS_STAGING"
# a replicate's results (the same chapter from other seeds, or other arithmetic) live apart from the book's, under
# results/<profile>/replicates/<name>/; set by the runner for a replicate's notebooks, which read them first
REPLICATES = "replicates"
REPLICATE_ENV = "HANZILM_REPLICATE"
# another root for the model stores (<root>/<profile>/checkpoints/): `make test` trains the smoke models afresh there, so a stored
# model of older code hides no change and the user's results/smoke/checkpoints stays as it was
STORE_ENV = "HANZILM_STORE"


def results_dir(profile: str) -> Path:
    return RESULTS / profile


def cache_dir() -> Path:
    """The code's own cache (downloads, encoded corpora); git-ignored."""
    return Path(os.environ.get("HANZILM_CACHE", DATA / "cache"))


def git_state() -> tuple[str | None, bool | None]:
    """The project's commit and whether its code differs from it (None, None outside a git checkout). Results
    and executed notebooks change during a run, so only code and sources make a run "dirty"."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout

    try:
        commit = git("rev-parse", "HEAD").strip()
        status = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!results", ":!book/**/*.ipynb")
        return commit, bool(status.strip())
    except (OSError, subprocess.CalledProcessError):
        return None, None

