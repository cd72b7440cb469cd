"""Extract the segmental-LM authors' published training logs into lib/hanzilm/targets/mslm_training_logs.csv.

Downey et al. publish each run's dev statistics in their repository (github.com/cmdowney88/SegmentalLMs, MIT
licence), Output/ExperimentsB/<corpus>/*.csv: the final version of the paper. Kept here: the runs at the
learning rate our `cpu` profile trains with (PKU 1e-3, PTB 3e-3) and at the rate the paper selected for each
model's unsupervised row, every seed the authors ran. Their `dev_loss` is dev bits per character (the mean
over dev batches of per-batch bpc), `mcc` and `f1` are boundary MCC and boundary F1 on the dev split. The
`source` column is the file under the repository's Output/ (commit in targets/README.md).

    python tools/authors_logs.py /path/to/SegmentalLMs.git   # a clone (bare or not) of the authors' repository
"""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "lib" / "hanzilm" / "targets" / "mslm_training_logs.csv"
REPO = "cmdowney88/SegmentalLMs"
BATCH_CHARS = 8192  # the authors' batch_size_tokens (targets/mslm_hyperparameters.csv)
KEEP = {("pku", "rslm"): {"1e-3", "9e-4"}, ("pku", "mslm"): {"1e-3", "2e-3"}, ("pku", "dmslm"): {"1e-3", "2e-3"},
        ("ptb", "rslm"): {"3e-3"}, ("ptb", "mslm"): {"3e-3", "6e-4"}, ("ptb", "dmslm"): {"3e-3", "8e-4"}}
NAME = re.compile(r"(pku|ptb)_(rslm|mslm|dmslm)(?:_d15)?_lr([0-9.e-]+)(?:_lwu)?_s(\d+)\.csv$")


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={repo}", *args], check=True, capture_output=True, text=True).stdout


def main(repo: str) -> None:
    commit = git(repo, "rev-parse", "HEAD").strip()
    rows = []
    for path in git(repo, "ls-tree", "-r", "--name-only", commit, "Output/ExperimentsB").split():
        m = NAME.search(path)
        if not m or m.group(3) not in KEEP.get((m.group(1), m.group(2)), ()):
            continue
        corpus, model, lr, seed = m.groups()
        text = git(repo, "show", f"{commit}:{path}")
        for r in csv.DictReader(io.StringIO(text), skipinitialspace=True):
            rows.append({"dataset": corpus.upper(), "model": model.upper(), "lr": lr,
                         "seed": int(seed), "step": int(r["step"]), "chars": int(r["step"]) * BATCH_CHARS,
                         "dev_bpc": r["dev_loss"], "dev_mcc": r["mcc"], "dev_boundary_f1": r["f1"],
                         "source": path.removeprefix("Output/")})
    rows.sort(key=lambda r: (r["dataset"], r["model"], float(r["lr"]), r["seed"], r["step"]))
    with OUT.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"{OUT}: {len(rows)} rows from {len({r['source'] for r in rows})} runs of {REPO}@{commit}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else sys.exit(__doc__))
