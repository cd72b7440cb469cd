"""Copy the book's PKU segmenter (Table 5's MMTNN + pre-training at cpu) from the model store into the package,
with a record of the run it is, so `hanzilm segment` works on a fresh install.

    .venv/bin/python tools/ship_segmenter.py          # after `make paper ONLY='mmtnn/'`

`tests/test_shipped.py` holds the copy to the book: the chapter version it was trained under is the current one,
and it scores the committed Table 5 F1 on the PKU test set.
"""

from __future__ import annotations

import json
import shutil
import sys

from hanzilm import versions
from hanzilm.io import atomic_write_text
from hanzilm.models import scan
from hanzilm.papers.mmtnn.commands import MODEL_NAMES, SHIPPED, resolve_segmenter, segmenter_dir
from hanzilm.store import load_summary

BOOK_MODEL = "pku-mmtnn+pre@cpu"


def main() -> int:
    model = resolve_segmenter(BOOK_MODEL, scan(MODEL_NAMES))
    run = load_summary(model.path)
    if run["code_version"] != versions.key("mmtnn"):
        print(f"{model.path}: trained under {run['code_version']}, not {versions.key('mmtnn')}", file=sys.stderr)
        return 1
    source = segmenter_dir(BOOK_MODEL)
    if SHIPPED.exists():
        shutil.rmtree(SHIPPED)
    shutil.copytree(source, SHIPPED)
    record = {"name": model.ref, "run": model.path.name, "code_version": run["code_version"],
              "commit": run.get("commit"), "config": run["config"], "best_metrics": run["best_metrics"]}
    atomic_write_text(SHIPPED / "provenance.json", json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    size = sum(f.stat().st_size for f in SHIPPED.iterdir())
    print(f"shipped {model.ref} ({model.path.name}, {run['code_version']}) to {SHIPPED}: {size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
