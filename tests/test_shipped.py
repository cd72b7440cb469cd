"""The segmenter shipped in the package (lib/hanzilm/papers/mmtnn/shipped/) is the book's: Table 5's PKU MMTNN
with pre-training, trained under the MMTNN chapter's current version, scoring the committed F1; and `hanzilm
segment` uses it on a fresh install, with no model store."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd

from hanzilm import paths, versions
from hanzilm.papers.mmtnn import experiment as ex
from hanzilm.papers.mmtnn.commands import SHIPPED
from hanzilm.papers.mmtnn.segmenter import Segmenter


def test_the_shipped_segmenter_was_trained_by_the_current_chapter_version():
    record = json.loads((SHIPPED / "provenance.json").read_text(encoding="utf-8"))
    assert record["code_version"] == versions.key("mmtnn"), \
        "re-ship the book's segmenter after the chapter's re-run: .venv/bin/python tools/ship_segmenter.py"
    assert record["config"]["dataset"] == "pku" and record["config"]["model"] == "mmtnn"
    assert record["config"]["pretrained"] and not record["config"]["bigram"] and record["config"]["seed"] == 0
    assert sum(f.stat().st_size for f in SHIPPED.iterdir()) < 5e6


def test_the_shipped_segmenter_scores_the_books_table5_f1(real_mirror):
    """Decoded as the book decodes (plain Viterbi), on the whole PKU test set: the F1 of results/cpu Table 5."""
    seg = Segmenter.load(SHIPPED, **ex.PAPER_DECODING)  # checks every file against its manifest
    counts, _ = ex.test_scores(ex.configure("cpu"), seg, "pku")
    table5 = pd.read_csv(paths.RESULTS / "cpu" / "mmtnn" / "table5.csv")
    book = table5[(table5.dataset == "PKU") & (table5.model == "MMTNN + pre-training") & (table5.metric == "f1")]
    assert round(counts.metrics(percent=True)["f1"], 4) == book.ours.item()


def test_segment_works_without_a_model_store(tmp_path):
    """A fresh clone, before `make paper`: the default model is the shipped one."""
    root = tmp_path / "clone"
    (root / "results").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    env = {**os.environ, "HANZILM_ROOT": str(root)}
    out = subprocess.run([sys.executable, "-m", "hanzilm.cli", "segment"], input="我爱北京天安门\n".encode(),
                         capture_output=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr.decode()
    words = out.stdout.decode().split()
    assert "".join(words) == "我爱北京天安门" and "天安门" in words
    api = subprocess.run([sys.executable, "-c", "from hanzilm.papers.mmtnn import load; print(load().cut('北京'))"],
                         capture_output=True, env=env, timeout=120, text=True)
    assert api.returncode == 0 and api.stdout.strip() == "['北京']", api.stderr


def test_traditional_text_is_read_through_openccs_table_and_printed_as_written(tmp_path):
    run = lambda *args: subprocess.run([sys.executable, "-m", "hanzilm.cli", "segment", *args],  # noqa: E731
                                       input="我愛北京天安門\n".encode(), capture_output=True, cwd=tmp_path, timeout=120)
    assert run().stdout.decode() == "我  愛  北京  天安門\n"
    assert run("--no-traditional").stdout.decode() != "我  愛  北京  天安門\n"  # as written it reads worse


def test_only_characters_the_model_does_not_know_are_looked_up():
    from hanzilm.papers.mmtnn.traditional import SimplifiedLookup, opencc_characters

    assert opencc_characters()["愛"] == "爱" and opencc_characters()["乾"] == "干"
    lookup = SimplifiedLookup.for_vocab({"爱", "干", "乾", "隆"})
    assert lookup("我愛乾隆") == "我爱乾隆"   # 乾 is known (乾隆): kept; 我 is not traditional: kept
    segmenter = Segmenter.load(SHIPPED)  # the same cuts as the simplified text, in the reader's characters
    assert [len(w) for w in segmenter.segment("我愛北京天安門")] == [len(w) for w in segmenter.segment("我爱北京天安门")]
    assert "".join(segmenter.segment("我愛北京天安門")) == "我愛北京天安門"
