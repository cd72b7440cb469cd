"""Parity with the official bakeoff scorer: the real perl script (icwb2-data `scripts/score`, from the data
mirror) run with the OS perl and GNU diff, on system outputs of very different quality for the first lines of
the PKU test gold, and on a small file of the reading rule's corner cases. Every byte the script prints, its
per-line blocks (with diff's output) and its summary, must be ours."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from hanzilm.data.resolve import MIRROR_ENV, shared_data_dir
from hanzilm.eval import sighan
from hanzilm.eval.sighan import format_report, read_dictionary, read_words, score_files

LINES = 250  # of the PKU test gold's 1945 (about 13,000 words): the script spends ~2.5 ms a line


@pytest.fixture(scope="module")
def official(tmp_path_factory):
    """run(words, gold, test) -> the official script's stdout, and the PKU files."""
    root = Path(os.environ[MIRROR_ENV]) if os.environ.get(MIRROR_ENV) else shared_data_dir()
    bakeoff = root / "seg" / "sighan2005" if root else None
    if bakeoff is None or not bakeoff.is_dir():
        pytest.skip(f"the data mirror is not present (looked at {root})")
    script = bakeoff / "scripts" / "score"
    assert script.is_file(), f"the official scorer is missing from the mirror: {script}"
    perl = shutil.which("perl")
    assert perl, "perl is needed to run the official scorer (Debian: perl-base, always installed)"
    exe, _ = sighan.diff_program()
    assert os.path.samefile(exe, "/usr/bin/diff"), "the script runs /usr/bin/diff; ours must be the same program"

    def run(words: Path, gold: Path, test: Path) -> str:
        env = {**os.environ, "LC_ALL": sighan.DIFF_LOCALE}  # the locale our diff calls use
        r = subprocess.run([perl, str(script), str(words), str(gold), str(test)], capture_output=True, env=env,
                           check=True)
        return r.stdout.decode("utf-8", "surrogateescape")

    return run, bakeoff / "gold" / "pku_training_words.utf8", bakeoff / "gold" / "pku_test_gold.utf8"


def forward_maximum_matching(text: str, words: set[str], longest: int) -> list[str]:
    out, i = [], 0
    while i < len(text):
        k = next(k for k in range(min(longest, len(text) - i), 0, -1) if k == 1 or text[i:i + k] in words)
        out.append(text[i:i + k])
        i += k
    return out


def noisy(gold: list[str], rng: random.Random) -> list[str]:
    """A mediocre model: each gold word split in two or merged with the next one now and then."""
    out: list[str] = []
    for w in gold:
        if len(w) > 1 and rng.random() < 0.1:
            k = rng.randrange(1, len(w))
            out += [w[:k], w[k:]]
        elif out and rng.random() < 0.1:
            out[-1] += w
        else:
            out.append(w)
    return out


def outputs(gold: list[list[str]], dictionary: set[str]) -> dict[str, list[list[str]]]:
    import jieba

    jieba.setLogLevel(60)
    longest = max(map(len, dictionary))
    rng = random.Random(0)
    text = ["".join(g) for g in gold]
    return {
        "gold": gold,
        "one_character_per_word": [list(t) for t in text],
        "forward_maximum_matching": [forward_maximum_matching(t, dictionary, longest) for t in text],
        "jieba": [[w for w in jieba.cut(t) if w.strip()] for t in text],
        "noisy": [noisy(g, rng) for g in gold],
        "three_words_merged": [["".join(g[k:k + 3]) for k in range(0, len(g), 3)] for g in gold],
        "one_word_per_line": [[t] if t else [] for t in text],  # words far wider than diff's column
    }


def summary(report: str) -> str:
    return report[report.index("=== SUMMARY:"):]


def test_pku_outputs_score_exactly_as_the_official_script(official, tmp_path):
    run, words_file, gold_file = official
    raw = gold_file.read_bytes().split(b"\n")[:LINES]
    gold_path = tmp_path / "pku_test_gold.utf8"
    gold_path.write_bytes(b"\n".join(raw) + b"\n")  # the real lines, CRLF and all
    gold = read_words(gold_path)
    dictionary = read_dictionary(words_file)
    f1 = {}
    for name, lines in outputs(gold, dictionary).items():
        test_path = tmp_path / f"{name}.txt"
        test_path.write_text("".join(" ".join(ws) + "\n" for ws in lines), encoding="utf-8")
        theirs = run(words_file, gold_path, test_path)
        ours = score_files(words_file, gold_path, test_path, keep_diff=True)
        assert format_report(ours, per_line=True) == theirs, name
        assert summary(format_report(score_files(words_file, gold_path, test_path))) == summary(theirs), name
        f1[name] = ours.total.f1
    # the outputs span the range the parity is meant to cover
    assert f1["gold"] == 1.0 and f1["one_word_per_line"] < 0.05 and f1["one_character_per_word"] < 0.4
    assert 0.8 < f1["jieba"] < 0.9 and 0.8 < f1["forward_maximum_matching"] < 0.95


def test_the_reading_rule_scores_exactly_as_the_official_script(official, tmp_path):
    run, _, _ = official
    words = tmp_path / "words.utf8"
    words.write_bytes("中国\n人民 \n\n|\n北京\n天安门".encode())  # no final LF: chop eats 门's last byte
    long_word = "中华人民共和国" * 6
    gold_lines = ["\ufeff我  爱  北京  天安门\r", "中国\u3000人民  |  <  >  a|b", "\u3000首先  开头",
                  "", "a\rb  c", "北京\u00a0人  其他", f"{long_word}  了  {'x' * 80}", "甲\x0b乙  丙\x0c丁",
                  "両@  x", "的  的  的  是  的  的"]
    test_lines = ["\ufeff我爱 北京 天安 门", "中国 人民 | < >a|b", "\u3000首 先开头", "", "ab c",
                  "北京\u00a0人其他", f"{long_word[:20]} {long_word[20:]}了 {'x' * 80}", "甲乙 丙丁",
                  "両@x", "的的 的 是 的的"]
    gold, test = tmp_path / "gold.utf8", tmp_path / "test.utf8"
    gold.write_bytes("\n".join(gold_lines).encode() + b"\n")
    test.write_bytes("\n".join(test_lines).encode() + b"\n")
    theirs = run(words, gold, test)
    assert format_report(score_files(words, gold, test, keep_diff=True), per_line=True) == theirs
    assert summary(format_report(score_files(words, gold, test))) == summary(theirs)


def test_run_official_script_and_report_totals(official, tmp_path):
    words, gold, test = tmp_path / "w.utf8", tmp_path / "g.utf8", tmp_path / "t.utf8"
    words.write_text("中国\n", encoding="utf-8")
    gold.write_text("中国 人民\n的 的 是\n", encoding="utf-8")
    test.write_text("中国人 民\n的 的是\n", encoding="utf-8")
    theirs = sighan.report_totals(sighan.run_official_script(words, gold, test))
    assert len(theirs) == 12 and "F MEASURE" in theirs
    assert theirs == sighan.report_totals(format_report(score_files(words, gold, test)))
    assert theirs["TOTAL TRUE WORD COUNT"] == "5" and theirs["OOV Rate"] == "0.800"


def test_a_changed_official_script_is_refused(tmp_path, monkeypatch):
    fake = tmp_path / sighan.OFFICIAL_SCRIPT
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/usr/bin/perl\nprint 1;\n")
    monkeypatch.setenv(MIRROR_ENV, str(tmp_path))
    with pytest.raises(sighan.DataError, match="not the official scorer"):
        sighan.official_script()


def test_parity_view_flags_a_differing_total():
    import pandas as pd

    from hanzilm.papers.mmtnn import tables

    rows = [{"system": s, "alignment": a, "metric": m, "ours": v}
            for s, script_f, ours_f in (("good", 0.9, 0.9), ("bad", 0.5, 0.6))
            for a, v_f in ((tables.SCRIPT, script_f), (tables.ALIGNMENTS["official"], ours_f),
                           (tables.ALIGNMENTS["exact"], ours_f))
            for m, v in (("F MEASURE", v_f), ("TOTAL INSERTIONS", 3.0))]
    view = tables.parity_view(pd.DataFrame(rows))
    assert view.same_as_script.tolist() == [True, True, False, True]
