"""The one results writer: every reported number goes through `write_results`.

A results table is *long*: key columns (dataset, model, ...), a `metric` column and our value in `ours`.
The writer stores it as `results/<profile>/<chapter>/<name>.csv` with a `<name>.json` provenance record,
both atomically, and, given the paper's values (`paper_values`), puts them beside ours with the difference.
"""

from __future__ import annotations

import io
import json
import os
import platform
import socket
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from . import versions
from .errors import HanzilmError
from .io import atomic_write_text
from .machine import cpu_has_bf16, cpu_model
from .paths import REPLICATE_ENV, REPLICATES, RESULTS, STAGING_ENV, git_state

TARGETS = Path(__file__).parent / "targets"
PAPER_COLUMNS = ["paper", "diff", "paper_source"]
# every library the numbers depend on (word2vec, the CRF, jieba's cloze boundaries, the weights' format, the
# grapheme rules), not only the framework
_VERSIONED = ("torch", "numpy", "pandas", "matplotlib", "papermill", "hanzilm", "gensim", "python-crfsuite", "jieba",
              "safetensors", "regex")


def paper_values(
    target: str,
    *,
    keys: dict[str, str],
    metrics: dict[str, str],
    where: dict[str, object] | None = None,
    scale: float = 1.0,
) -> pd.DataFrame:
    """Read a targets CSV (a copy of ../shared/papers/targets kept in the package) into the long form.

    keys:    target column -> our key column name
    metrics: target column -> our metric name
    where:   keep only rows whose target columns equal these values
    scale:   multiply paper values (e.g. 100 for fractions reported as percentages by us)
    """
    path = TARGETS / target
    if not path.is_file():
        raise HanzilmError(f"{path}: no such targets file")
    df = pd.read_csv(path)
    for col, val in (where or {}).items():
        df = df[df[col] == val]
    long = df.melt(id_vars=list(keys) + ["source"], value_vars=list(metrics), var_name="metric", value_name="paper")
    long = long.dropna(subset=["paper"]).rename(columns={**keys, "source": "paper_source"})
    long["metric"] = long["metric"].map(metrics)
    long["paper"] = pd.to_numeric(long["paper"]) * scale
    long["paper_source"] = f"{target}: " + long["paper_source"].astype(str)
    return long.reset_index(drop=True)


@dataclass
class Provenance:
    profile: str
    seed: int
    started: float = field(default_factory=time.time)

    def record(self, datasets: Iterable[str], extra: dict | None = None) -> dict:
        from .data.manifest import load_manifest
        from .data.resolve import checksums  # the data layer imports pandas-free modules only

        manifest = load_manifest()
        datasets = [d for d in sorted(set(datasets)) if not manifest.get(d).missing]  # a missing one has no files
        commit, dirty = git_state()
        return {
            "git_commit": commit,
            "git_dirty": dirty,
            "profile": self.profile,
            "seed": self.seed,
            "data_sha256": checksums(datasets),
            "versions": {"python": platform.python_version(), **{p: _version(p) for p in _VERSIONED}},
            "wall_time_s": round(time.time() - self.started, 3),
            # the training runs this notebook trained, loaded or read a record of before writing the table
            "training_runs": _training_runs(),
            "written_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "machine": {
                "host": socket.gethostname(),
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
                "cpu": cpu_model(),
                "cpu_bf16": cpu_has_bf16(),
                "torch_threads": _torch_threads(),
            },
            **(extra or {}),
        }


def write_results(
    table: pd.DataFrame,
    *,
    chapter: str,
    name: str,
    run: Provenance,
    datasets: Sequence[str] | Mapping[Any, Sequence[str]] = (),
    by: str | Sequence[str] | None = None,
    paper: pd.DataFrame | None = None,
    notes: str = "",
) -> pd.DataFrame:
    """Write `table` (long form: keys..., metric, ours) with provenance; return it with the paper beside it.

    datasets: the manifest datasets the numbers were computed from, for the whole table, or per row: a mapping
    from the value of column `by` (a tuple of values for several columns) to that row's datasets. The writer puts the `data` column before `metric`
    from the manifest (`Manifest.label`: each stand-in's note, else "official"); tables do not write it.
    Rows the paper has no value for keep `paper` empty; paper rows we did not compute are dropped (the claims
    registry, `hanzilm.claims`, says which of the papers' findings are not tested and why)."""
    if "metric" not in table or "ours" not in table:
        raise HanzilmError(f"results table {chapter}/{name} needs columns 'metric' and 'ours'; got {list(table)}")
    if "data" in table:
        raise HanzilmError(f"results table {chapter}/{name} has a 'data' column: the writer labels the data "
                           "from the manifest (pass datasets=)")
    out = with_paper(_label(table, datasets, by, f"{chapter}/{name}"), paper, f"{chapter}/{name}")
    target = _written(run.profile) / chapter / f"{name}.csv"
    buf = io.StringIO()
    out.to_csv(buf, index=False, float_format="%.10g", lineterminator="\n")
    atomic_write_text(target, buf.getvalue())
    used = sorted({d for ds in (datasets.values() if isinstance(datasets, Mapping) else [datasets]) for d in ds})
    record = run.record(used, {"table": f"{chapter}/{name}", "rows": len(out), "notes": notes,
                               "chapter_versions": versions.recorded(chapter, name)})
    atomic_write_text(target.with_suffix(".json"), json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return out


def with_paper(table: pd.DataFrame, paper: pd.DataFrame | None, where: str = "results table") -> pd.DataFrame:
    """`table` with the paper's value beside ours (`paper`, `diff`, `paper_source`), matched on the key
    columns `paper` has; rows the paper has no value for keep `paper` empty."""
    if paper is None:
        return table
    keys = [c for c in table.columns if c not in ("metric", "ours", *PAPER_COLUMNS)]
    on = [c for c in paper.columns if c not in ("paper", "paper_source")]
    missing = [c for c in on if c not in table.columns]
    if missing:
        raise HanzilmError(f"{where}: paper values keyed on {missing}, which it lacks")
    dup = paper.duplicated(subset=on)
    if dup.any():
        raise HanzilmError(f"paper values for {where} have duplicate keys: {paper[dup][on].values.tolist()}")
    out = table.merge(paper, on=on, how="left", validate="many_to_one")
    out["diff"] = out["ours"] - out["paper"]
    return out[keys + ["metric", "ours", "paper", "diff", "paper_source"]]


def _label(table: pd.DataFrame, datasets: Sequence[str] | Mapping[Any, Sequence[str]],
           by: str | Sequence[str] | None, where: str) -> pd.DataFrame:
    from .data.manifest import load_manifest

    if isinstance(datasets, str):
        raise HanzilmError(f"results table {where}: datasets must be a list of names, not the string {datasets!r}")
    if not datasets:
        return table.copy()
    manifest = load_manifest()
    if isinstance(datasets, Mapping):
        columns = [by] if isinstance(by, str) else list(by or [])
        if not columns or any(c not in table for c in columns):
            raise HanzilmError(f"results table {where}: per-row datasets need by= naming its column(s), not {by!r}")
        values = table[columns].astype(str).apply(tuple, axis=1)
        keys = {(k,) if isinstance(k, str) else tuple(map(str, k)): v for k, v in datasets.items()}
        unknown = sorted(set(values) - set(keys))
        if unknown:
            raise HanzilmError(f"results table {where}: no datasets given for {by} = {unknown}")
        labels = {k: manifest.label(v) for k, v in keys.items()}
        column = values.map(labels)
    else:
        column = manifest.label(datasets)
    out = table.copy()
    out.insert(list(out.columns).index("metric"), "data", column)
    return out


def read_results(profile: str, chapter: str | None = None, root: Path | None = None) -> dict[str, pd.DataFrame]:
    """All results tables of a profile (optionally one chapter), keyed by 'chapter/name'; from `root` (a results
    directory, e.g. one extracted from an earlier commit) instead of the project's when given."""
    pattern = f"{chapter}/*.csv" if chapter else "*/*.csv"
    replicate = os.environ.get(REPLICATE_ENV) if root is None else None
    # a replicate's own tables over the book's, the staged ones over both
    bases = [(root or RESULTS) / profile] + ([RESULTS / profile / REPLICATES / replicate] if replicate else [])
    if root is None and _written(profile) != RESULTS / profile:
        bases.append(_written(profile))
    found = {f"{p.parent.name}/{p.stem}": p for base in bases for p in sorted(base.glob(pattern))
             if p.parent.name != "notebooks"}
    return {key: pd.read_csv(path) for key, path in sorted(found.items())}


def _written(profile: str) -> Path:
    """Where this process writes a profile's results: the runner's staging directory, else results/."""
    staged = os.environ.get(STAGING_ENV)
    return Path(staged) / profile if staged else RESULTS / profile


def glance(profile: str) -> pd.DataFrame:
    """Every number of `profile` that has a paper value beside it, one row each: the 'at a glance' table."""
    rows = []
    for table, df in read_results(profile).items():
        if "paper" not in df:
            continue
        keys = [c for c in df.columns if c not in ("metric", "ours", *PAPER_COLUMNS)]
        for _, r in df[df["paper"].notna()].iterrows():
            what = ", ".join(str(r[k]) for k in keys if pd.notna(r[k]))
            rows.append({"table": table, "row": what, "metric": r["metric"], "ours": r["ours"],
                         "paper": r["paper"], "diff": r["diff"], "paper_source": r["paper_source"]})
    return pd.DataFrame(rows, columns=["table", "row", "metric", "ours", "paper", "diff", "paper_source"])


def _training_runs() -> list[dict]:
    store = sys.modules.get("hanzilm.store")  # loaded only by notebooks that train or load models
    return sorted(store.LOADED.values(), key=lambda r: r["run"]) if store is not None else []


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _torch_threads() -> int | None:
    torch = sys.modules.get("torch")
    return torch.get_num_threads() if torch is not None else None
