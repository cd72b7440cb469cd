"""The run-to-run spread of claims, measured over trainings of the same configuration committed at several commits.

    .venv/bin/python tools/claim_spread.py f0bd433 29f4862 17c4b8d c96fe29 [--profile cpu] [--write]

The commits may hold trainings at other seeds (`hanzilm paper run --seed 1` committed): the registry then names
each commit's seed.

Takes the claims of `lib/hanzilm/targets/claims.csv` whose fixed noise was measured on the first commit's run
(their `noise_source` names it), computes each one's quantity on `results/<profile>/` as committed at every
commit (read from git, the working tree untouched) and prints the values and their range. `--write` puts the
range in the registry's `noise` and names the runs in `noise_source`. Claims whose noise is an expression (seed
standard deviations) are left alone.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pandas as pd

from hanzilm.claims import CLAIMS, load_claims, quantity_of
from hanzilm.results import read_results

REPO = Path(__file__).resolve().parents[1]


def results_at(commit: str, profile: str) -> tuple[dict[str, pd.DataFrame], dict[str, int]]:
    """Every results table of `profile` as committed at `commit` (read_results on the commit's results/), and
    the seed each table's provenance record names."""
    archive = subprocess.run(["git", "archive", commit, f"results/{profile}"], cwd=REPO, check=True,
                             capture_output=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        base = Path(tmp) / "results"
        seeds = {f"{p.parent.name}/{p.stem}": json.loads(p.read_text())["seed"]
                 for p in (base / profile).glob("*/*.json")}
        return read_results(profile, root=base), seeds


def describe(commits: list[str], seeds: list[set[int]], profile: str) -> str:
    """Which trainings a range is over: the commits grouped by the seed their tables were trained at."""
    by_seed: dict[str, list[str]] = {}
    for commit, s in zip(commits, seeds):
        by_seed.setdefault(" and ".join(map(str, sorted(s))), []).append(commit)
    parts = [f"seed {seed} at {', '.join(cs)}" + (" (their code rounds differently)" if len(cs) > 1 else "")
             for seed, cs in by_seed.items()]
    return (f"the range over {len(commits)} {profile} trainings of the same configuration, the committed runs "
            f"of {'; '.join(parts)}: this quantity")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("commits", nargs="+", help="commits whose results are trainings of the same configuration")
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--write", action="store_true", help="write the ranges into the claims registry")
    a = ap.parse_args()
    runs, seeds = zip(*(results_at(c, a.profile) for c in a.commits))
    spreads = {}
    for claim in load_claims():
        if a.commits[0] not in claim.noise_source or "{" in claim.noise:
            continue
        values = [quantity_of(claim, tables) for tables in runs]
        if any(math.isnan(v) for v in values):
            print(f"{claim.id}: not computed at every commit ({values}), left alone")
            continue
        spread = max(values) - min(values)
        shown = " / ".join(f"{v:.4g}" for v in values)
        tables = {ref.table for ref in claim.refs()}
        source = describe(a.commits, [{s[t] for t in tables if t in s} for s in seeds], a.profile)
        spreads[claim.id] = (f"{spread:.2g}", f"{source} {shown}")
        print(f"{claim.id:48s} {claim.noise:>8s} -> {spread:.2g}   ({shown})")
    if a.write:
        with open(CLAIMS, encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            fields, rows = reader.fieldnames, list(reader)
        for row in rows:
            if row["id"] in spreads:
                row["noise"], row["noise_source"] = spreads[row["id"]]
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        tmp = CLAIMS.with_suffix(".tmp")
        tmp.write_text(out.getvalue(), encoding="utf-8")
        tmp.replace(CLAIMS)
        print(f"{len(spreads)} claims' noise written to {CLAIMS}")


if __name__ == "__main__":
    main()
