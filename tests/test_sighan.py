"""The SIGHAN bakeoff scorer: hand-computed cases in both modes, the script's reading rule, the exact alignment
against a table-based reference, the diff-calling path, the report layout, bad input.
(`test_sighan_official.py` checks the default mode against the official perl script itself.)"""

from __future__ import annotations

import os
import random
import tempfile
import tracemalloc

import pytest

from hanzilm.cli import main
from hanzilm.errors import DataError, HanzilmError
from hanzilm.eval import sighan
from hanzilm.eval.sighan import (format_report, lcs_pairs, offset_counts, offset_line, read_dictionary, read_words,
                                 score, score_files, score_line, split_line)

MODES = pytest.mark.parametrize("mode", ["official", "exact"])


def hand_counts(c):
    return c.correct, c.substitutions, c.insertions, c.deletions


@MODES
def test_perfect_line(mode):
    c = score_line(["我", "爱", "北京"], ["我", "爱", "北京"], mode=mode)
    assert hand_counts(c) == (3, 0, 0, 0)
    assert c.recall == c.precision == c.f1 == 1.0


@MODES
def test_split_is_a_substitution_and_an_insertion(mode):
    c = score_line(["中国人"], ["中国", "人"], mode=mode)
    assert hand_counts(c) == (0, 1, 1, 0)
    assert c.recall == 0.0 and c.precision == 0.0 and c.f1 == 0.0


@MODES
def test_merge_is_a_substitution_and_a_deletion(mode):
    assert hand_counts(score_line(["中国", "人"], ["中国人"], mode=mode)) == (0, 1, 0, 1)


@pytest.mark.parametrize("line_counts", [lambda g, t, d: score_line(g, t, d, mode="official"),
                                         lambda g, t, d: score_line(g, t, d, mode="exact"), offset_line])
def test_mixed_line_by_hand(line_counts):
    gold = ["我", "爱", "北京", "天安门"]
    test = ["我爱", "北京", "天", "安门"]
    c = line_counts(gold, test, {"我", "爱"})
    # 我爱: 2 gold vs 1 test -> 1 sub + 1 del; 北京 correct; 天安门: 1 vs 2 -> 1 sub + 1 ins
    assert hand_counts(c) == (1, 2, 1, 1)
    assert c.recall == pytest.approx((4 - 1 - 2) / 4)
    assert c.precision == pytest.approx((4 - 1 - 2) / 4)
    assert c.f1 == pytest.approx(0.25)
    # OOV = gold words not in the training list: 北京, 天安门; only 北京 is right
    assert (c.oov, c.oov_correct, c.iv) == (2, 1, 2)
    assert c.oov_rate == 0.5 and c.oov_recall == 0.5 and c.iv_recall == 0.0


@MODES
def test_totals_over_lines_and_blank_gold_lines(mode):
    gold = [["a", "bc"], [], ["d"], [], []]
    test = [["a", "b", "c"], [], ["d"]]          # trailing blank lines are ignored on both sides
    r = score(["a"], gold, test, mode=mode)
    t = r.total
    assert [line.number for line in r.lines] == [1, 3]  # the script skips a gold line without words
    assert (t.true_words, t.test_words, t.correct) == (3, 4, 2)
    assert t.recall == pytest.approx(2 / 3) and t.precision == pytest.approx(2 / 4)
    assert t.f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert (t.oov, t.oov_correct) == (2, 1)


def test_a_blank_gold_line_skips_its_test_words_as_the_script_does():
    r = score([], [["a"], [], ["b"]], [["a"], ["x"], ["b"]], allow_mismatch=True)
    assert r.mismatched == [2]
    assert (r.total.true_words, r.total.test_words, r.total.correct) == (2, 2, 2)


def test_characters_differing_from_gold_name_file_and_line():
    with pytest.raises(DataError, match=r"out\.txt, line 2: .*differ.*character 2"):
        score([], [["ab"], ["cd"]], [["ab"], ["c", "x"]], gold_name="gold.txt", test_name="out.txt")


def test_line_count_mismatch():
    with pytest.raises(DataError, match=r"out\.txt: has 1 .* gold file g has 2"):
        score([], [["a"], ["b"]], [["a"]], gold_name="g", test_name="out.txt")


def test_unknown_mode():
    with pytest.raises(HanzilmError, match="unknown scoring mode 'lcs'"):
        score([], [["a"]], [["a"]], mode="lcs")


@pytest.mark.parametrize("word", ["a b", "a\tb", "中\u3000国", "x\n"])
def test_a_word_the_script_would_split_is_an_error(word):
    with pytest.raises(DataError, match=r"out, line 1: a word contains .* the official script splits"):
        score([], [["ab"]], [[word]], test_name="out", allow_mismatch=True)


def test_nbsp_is_part_of_a_word():
    assert score_line(["a\u00a0b"], ["a\u00a0b"]).correct == 1


# ---- the script's reading rule ----

def test_split_line_follows_the_perl_script():
    assert split_line("  我  爱\t北京 \r\n") == ["我", "爱", "北京"]
    assert split_line("a\u00a0b c") == ["a\u00a0b", "c"]          # NBSP does not split (perl's \s on bytes)
    assert split_line("中国\u3000人民") == ["中国", "人民"]         # U+3000 does
    assert split_line("\u3000首先 开头") == ["", "首先", "开头"]   # stripped before the U+3000 replacement
    assert split_line("a\rb c") == ["ab", "c"]                    # a CR inside the line is deleted
    assert split_line("甲\x0b乙\x0c丙") == ["甲", "乙", "丙"]     # VT and FF are perl whitespace
    assert split_line("両@x") == ["\udce4\udcb8", "x"]           # the Big5 pair A1 40 (両's last byte, @)
    assert split_line(" \t ") == []


def test_read_words_and_dictionary_as_the_script(tmp_path):
    gold = tmp_path / "gold.utf8"
    gold.write_bytes("\ufeff我  爱\r\n\r\n北京\u00a0人\n".encode())
    assert read_words(gold) == [["\ufeff我", "爱"], [], ["北京\u00a0人"]]  # the BOM stays in the first word
    words = tmp_path / "words.utf8"
    words.write_bytes("北京 \n\n人民\n天安门".encode())
    # perl's chop: the last line has no LF, so it loses its last byte
    assert read_dictionary(words) == {"北京", "", "人民", "天安\udce9\udc97"}


def test_bom_on_one_side_is_named(tmp_path):
    with pytest.raises(DataError, match="character 1 .*byte-order mark"):
        score([], [["\ufeff我"]], [["我"]])


# ---- the exact alignment ----

def reference_lcs_pairs(a, b):
    """The former table-based implementation (a full (n+1) x (m+1) table): the walk lcs_pairs must reproduce."""
    n, m = len(a), len(b)
    lo = 0
    while lo < n and lo < m and a[lo] == b[lo]:
        lo += 1
    hi = 0
    while hi < n - lo and hi < m - lo and a[n - 1 - hi] == b[m - 1 - hi]:
        hi += 1
    pairs = [(k, k) for k in range(lo)]
    mid_a, mid_b = a[lo:n - hi], b[lo:m - hi]
    p, q = len(mid_a), len(mid_b)
    table = [[0] * (q + 1) for _ in range(p + 1)]
    for i in range(p - 1, -1, -1):
        for j in range(q - 1, -1, -1):
            table[i][j] = (table[i + 1][j + 1] + 1 if mid_a[i] == mid_b[j]
                           else max(table[i + 1][j], table[i][j + 1]))
    i = j = 0
    while i < p and j < q:
        if mid_a[i] == mid_b[j]:
            pairs.append((lo + i, lo + j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs + [(n - hi + k, m - hi + k) for k in range(hi)]


def test_lcs_pairs_equal_the_table_walk():
    rng = random.Random(0)
    for _ in range(1500):
        k = rng.randint(1, 6)
        a = [rng.randrange(k) for _ in range(rng.randrange(0, 40))]
        b = [rng.randrange(k) for _ in range(rng.randrange(0, 70))]  # several checkpoint blocks, odd sizes
        assert lcs_pairs(a, b) == reference_lcs_pairs(a, b), (a, b)


def test_exact_mode_memory_is_not_quadratic():
    # a table for this line would hold 4000 x 6700 entries (over 200 MB); the bit rows need a few MB
    rng = random.Random(1)
    gold = ["".join(chr(0x4E00 + rng.randrange(300)) for _ in range(rng.choice((1, 1, 2, 3)))) for _ in range(4000)]
    test = list("".join(gold))
    tracemalloc.start()
    try:
        c = score_line(gold, test, mode="exact")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert c.correct >= sum(len(w) == 1 for w in gold)  # those words, in order, are a common subsequence
    assert peak < 30e6


def test_word_diff_equals_the_offset_alignment_on_ordinary_lines():
    rng = random.Random(0)
    dictionary = set()
    gold, test = [], []
    for _ in range(200):
        text = "".join(chr(0x4E00 + rng.randrange(3000)) for _ in range(rng.randrange(0, 30)))

        def cut(s):
            words, i = [], 0
            while i < len(s):
                k = rng.randint(1, 4)
                words.append(s[i:i + k])
                i += k
            return words

        g, t = cut(text), cut(text)
        dictionary.update(g[::2])
        gold.append(g)
        test.append(t)
    theirs = offset_counts(dictionary, gold, test)
    for mode in ("exact", "official"):  # no repeated words here: GNU diff finds the minimal diff too
        ours = score(dictionary, gold, test, mode=mode).total
        for name in ("correct", "insertions", "deletions", "substitutions", "oov", "oov_correct"):
            assert getattr(ours, name) == getattr(theirs, name), (mode, name)


def test_repeated_words_a_word_diff_pairs_them_as_the_script_does():
    # the script's diff pairs equal words even at different offsets; the offset alignment never does
    gold, test = [["a", "a", "aa"]], [["aa", "a", "a"]]
    assert score([], gold, test).total.correct == score([], gold, test, mode="exact").total.correct == 2
    assert offset_counts([], gold, test).correct == 0


def test_gnu_diff_finds_fewer_common_words_than_the_exact_alignment_on_weak_output():
    # the word-equality pattern of a PKU test sentence (each character renamed), one character per word:
    # diff sets aside words found in only one list and, among them, repeated ones; not a minimal diff
    gold = "AB BC D EF G HI EF G JK G JLK G MN O P Q RS M T G UN G VW XY Za bc Xd efg hi j kl AB m".split()
    test = list("".join(gold))
    assert score_line(gold, test).correct == 12
    assert score_line(gold, test, mode="exact").correct == 14


@MODES
def test_lines_whose_characters_differ_can_be_scored_like_the_script(mode):
    # the official MSR test input lacks the gold's final quotation mark on line 442: the diff re-synchronises
    gold, test = [["他", "说", "：", "“"], ["好"]], [["他", "说", "："], ["好"]]
    with pytest.raises(DataError, match="line 1"):
        score([], gold, test, mode=mode)
    r = score([], gold, test, allow_mismatch=True, mode=mode)
    assert r.mismatched == [1]
    assert (r.total.correct, r.total.deletions, r.total.insertions) == (4, 1, 0)
    c = offset_line(["ab", "c", "d"], ["ab", "x", "d"], set())  # same offsets, other string: not correct
    assert (c.correct, c.substitutions) == (2, 1)


def test_both_alignments_count_hunks_between_correct_words():
    gold, test = ["我", "爱", "北京", "天安门", "广场"], ["我爱", "北", "京天", "安门", "广场"]
    for c in (score_line(gold, test), score_line(gold, test, mode="exact"), offset_line(gold, test, set())):
        # one hunk of 4 gold / 4 test words before the correct 广场: 4 substitutions
        assert hand_counts(c) == (1, 4, 0, 0)


# ---- the diff-calling path ----

def test_identical_lines_scored_without_diff_equal_diff_itself():
    long_word = "中华人民共和国" * 6  # wider than diff's 61-column half: printed cut, looked up cut
    lines = [["我", "爱", "北京"], ["|", "<", ">", "a|b"], [long_word, "了"], ["x" * 41, "y" * 40],
             ["", "首先"], ["a\x08b", "c"]]
    dictionary = {"我", "|", "<", long_word, "x" * 41, "y" * 40, "a\x08b"}
    fast = score(dictionary, lines, lines)
    slow = score(dictionary, lines, lines, keep_diff=True)  # keep_diff runs diff on every line
    assert fast.total == slow.total
    assert all(line.diff for line in slow.lines) and not any(line.diff for line in fast.lines)
    assert slow.total.substitutions == 1  # a common "|" line matches the script's ` | ` pattern
    assert (slow.lines[2].counts.oov, slow.lines[2].counts.iv) == (2, 0)  # the long word is looked up cut
    assert slow.lines[4].counts.oov + slow.lines[4].counts.iv == 1  # an empty word starts diff's line blank


def test_no_diff_is_a_clear_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(sighan.shutil, "which", lambda name: None)
    with pytest.raises(HanzilmError, match=r"no `diff` is on PATH.*diffutils.*--mode exact"):
        score([], [["a"]], [["a"]])
    assert score([], [["a"]], [["a"]], mode="exact").total.correct == 1
    gold = tmp_path / "g.utf8"
    gold.write_text("a\n", encoding="utf-8")
    assert main(["score", "-", str(gold), str(gold)]) == 2
    assert "no `diff` is on PATH" in capsys.readouterr().err


def test_a_failing_diff_is_a_clear_error_and_leaves_no_files(monkeypatch, tmp_path):
    fake = tmp_path / "bin" / "diff"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'diff: something broke' >&2\nexit 2\n")
    fake.chmod(0o755)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(sighan.shutil, "which", lambda name: str(fake))
    with pytest.raises(HanzilmError, match=r"`diff -y` failed \(exit status 2\): diff: something broke"):
        score([], [["ab"]], [["a", "b"]])
    assert os.listdir(scratch) == []


def test_scoring_leaves_no_temporary_files(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    lines = [["中国", "人"], ["我", "爱"]] * 20
    score([], lines, [["中", "国人"], ["我爱"]] * 20)
    assert os.listdir(tmp_path) == []


def test_a_file_name_is_an_argument_not_shell_text(tmp_path):
    odd = tmp_path / "a b; touch pwned $(x)"
    odd.mkdir()
    gold, out = odd / "gold.utf8", odd / "out.utf8"
    gold.write_text("中国 人\n", encoding="utf-8")
    out.write_text("中 国人\n", encoding="utf-8")
    assert score_files(None, gold, out).total.substitutions == 2
    assert not (tmp_path / "pwned").exists() and not os.path.exists("pwned")


# ---- the report and the command ----

def test_report_layout_and_cli(tmp_path, capsys):
    words = tmp_path / "words.utf8"
    words.write_text("我\n爱\n", encoding="utf-8")
    gold = tmp_path / "gold.utf8"
    gold.write_bytes("我  爱  北京  天安门  \r\n\r\n".encode("utf-8"))  # CRLF, trailing blank line
    out = tmp_path / "out.utf8"
    out.write_text("我爱 北京 天 安门\n", encoding="utf-8")
    report = format_report(score_files(words, gold, out, keep_diff=True), per_line=True)
    assert report.startswith("--gold.utf8-------out.utf8----1\n")  # an absolute path loses its directory
    assert "\nNTRUTH:\t4\n" in report and "\nTRUE WORDS RECALL:\t0.250\n" in report
    assert "北京\t\t\t\t\t\t\t\t北京\n" in report  # diff's side-by-side line, as the script prints it
    assert "=== TOTAL TRUE WORD COUNT:\t4\n" in report
    assert "=== F MEASURE:\t0.250\n" in report
    assert "=== OOV Recall Rate:\t0.500\n" in report
    assert report.endswith("###\tout.utf8\t1\t1\t2\t4\t4\t4\t0.250\t0.250\t0.250\t0.500\t0.500\t0.000\n")
    for mode in ("official", "exact"):
        assert main(["score", "--mode", mode, str(words), str(gold), str(out)]) == 0
        printed = capsys.readouterr().out
        assert "=== TOTAL INSERTIONS:\t1" in printed and "=== TOTAL DELETIONS:\t1" in printed
        assert "TRUE WORDS RECALL:\t0.250" in printed and "\nINSERTIONS" not in printed
    assert main(["score", "--per-line", str(words), str(gold), str(out)]) == 0
    assert capsys.readouterr().out == report


def test_bad_encoding_is_a_clear_error(tmp_path, capsys):
    gold = tmp_path / "gold.utf8"
    gold.write_text("我  爱\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    out.write_bytes("我 爱\n".encode("gbk"))
    with pytest.raises(DataError, match=r"out\.txt, line 1: not valid UTF-8"):
        score_files(None, gold, out)
    assert main(["score", "-", str(gold), str(out)]) == 2
    assert "not valid UTF-8" in capsys.readouterr().err


def test_line_counts_sum_to_the_totals_and_their_measures_are_the_scorer_s():
    """A bootstrap over lines resamples `line_counts`; `measure_of_totals` of their sum is what `Counts` gives."""
    import numpy as np

    gold = [["ab", "c", "def"], ["xy", "z"], ["q"]]
    test = [["a", "bc", "def"], ["xy", "z"], ["q"]]
    result = sighan.score(["ab", "xy"], gold, test, mode=sighan.EXACT)
    lines = sighan.line_counts(result)
    assert lines.shape == (3, len(sighan.LINE_FIELDS))
    total = result.total
    assert list(lines.sum(axis=0)) == [getattr(total, f) for f in sighan.LINE_FIELDS]
    assert sighan.measure_of_totals(lines.sum(axis=0)) == pytest.approx(100 * total.f1)
    assert sighan.measure_of_totals(lines.sum(axis=0), "oov_recall") == pytest.approx(100 * total.oov_recall)
    assert sighan.measure_of_totals(np.stack([lines.sum(axis=0)] * 4)).shape == (4,)
    none_right = np.array([10, 10, 8, 8, 0, 0], dtype=float)
    assert sighan.measure_of_totals(none_right) == 0 == sighan.Counts(true_words=10, true_missed=10, test_words=8,
                                                                      test_missed=8).f1
    with pytest.raises(ValueError, match="unknown measure"):
        sighan.measure_of_totals(lines.sum(axis=0), "speed")
