"""Copy the book's cpu PKU segmenter (Table 5's MMTNN + pre-training) into the package, where `hanzilm segment`
and `hanzilm.papers.mmtnn.load()` find it without any training.

    .venv/bin/python tools/ship_segmenter.py      # after `hanzilm paper run --profile cpu --only mmtnn/`

It copies the saved segmenter of the cpu store's run (the files its manifest checksums) and writes shipped.json:
the run, its config and the Table 5 F1 it scores (results/cpu/mmtnn/table5.csv).
`tests/test_models.py::test_the_shipped_segmenter_is_the_books_model` checks that all of it still holds.
"""

from __future__ import annotations

import json
import shutil

import pandas as pd

from hanzilm.io import atomic_write_text
from hanzilm.paths import RESULTS
from hanzilm.papers.mmtnn import experiment
from hanzilm.papers.mmtnn.commands import SHIPPED

NAME = "pku-mmtnn+pre"


def main() -> None:
    ch = experiment.chapter("cpu")
    cfg = ch.model(dataset="pku", model="mmtnn", pretrained=True)
    source = experiment.segmenter_path(ch, cfg)
    manifest = json.loads((source / "manifest.json").read_text(encoding="utf-8"))
    target = SHIPPED / NAME
    target.mkdir(parents=True, exist_ok=True)
    for name in [*manifest["sha256"], "manifest.json"]:
        shutil.copyfile(source / name, target / name)
    table5 = pd.read_csv(RESULTS / "cpu" / "mmtnn" / "table5.csv")
    f1 = table5[(table5.dataset == "PKU") & (table5.model == "MMTNN + pre-training") & (table5.metric == "f1")]
    done = json.loads((experiment.run_dir(ch, cfg) / "done.json").read_text(encoding="utf-8"))
    record = {"name": NAME, "store_run": f"cpu/{experiment.run_dir(ch, cfg).name}", "config": done["config"],
              "metrics": {"pku_test_f1": float(f1.ours.item())},
              "about": "the book's cpu PKU model (Table 5, MMTNN + pre-training), trained on the People's Daily "
                       "1998-01 stand-in"}
    atomic_write_text(target / "shipped.json", json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print(f"{target}: {record['store_run']}, PKU test F1 {record['metrics']['pku_test_f1']}")


if __name__ == "__main__":
    main()
