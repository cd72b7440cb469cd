"""The SIGHAN bakeoff scorer: hand-computed cases, the official report layout, bad input."""

from __future__ import annotations

import random

import pytest

from hanzilm.cli import main
from hanzilm.errors import DataError
from hanzilm.eval.sighan import format_report, offset_counts, offset_line, score, score_files, score_line


def test_perfect_line():
    c = score_line(["我", "爱", "北京"], ["我", "爱", "北京"], set())
    assert (c.correct, c.insertions, c.deletions, c.substitutions) == (3, 0, 0, 0)
    assert c.recall == c.precision == c.f1 == 1.0


def test_split_is_a_substitution_and_an_insertion():
    c = score_line(["中国人"], ["中国", "人"], set())
    assert (c.correct, c.substitutions, c.insertions, c.deletions) == (0, 1, 1, 0)
    assert c.recall == 0.0 and c.precision == 0.0 and c.f1 == 0.0


def test_merge_is_a_substitution_and_a_deletion():
    c = score_line(["中国", "人"], ["中国人"], set())
    assert (c.correct, c.substitutions, c.insertions, c.deletions) == (0, 1, 0, 1)


@pytest.mark.parametrize("line_counts", [score_line, offset_line])
def test_mixed_line_by_hand(line_counts):
    gold = ["我", "爱", "北京", "天安门"]
    test = ["我爱", "北京", "天", "安门"]
    c = line_counts(gold, test, {"我", "爱"})
    # 我爱: 2 gold vs 1 test -> 1 sub + 1 del; 北京 correct; 天安门: 1 vs 2 -> 1 sub + 1 ins
    assert (c.correct, c.substitutions, c.deletions, c.insertions) == (1, 2, 1, 1)
    assert c.recall == pytest.approx((4 - 1 - 2) / 4)
    assert c.precision == pytest.approx((4 - 1 - 2) / 4)
    assert c.f1 == pytest.approx(0.25)
    # OOV = gold words not in the training list: 北京, 天安门; only 北京 is right
    assert (c.oov, c.oov_correct) == (2, 1)
    assert c.oov_rate == 0.5 and c.oov_recall == 0.5 and c.iv_recall == 0.0


def test_totals_over_lines_and_empty_lines():
    gold = [["a", "bc"], [], ["d"], [], []]
    test = [["a", "b", "c"], [], ["d"]]          # trailing blank lines are ignored on both sides
    r = score(["a"], gold, test)
    t = r.total
    assert len(r.lines) == 3
    assert (t.true_words, t.test_words, t.correct) == (3, 4, 2)
    assert t.recall == pytest.approx(2 / 3) and t.precision == pytest.approx(2 / 4)
    assert t.f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert (t.oov, t.oov_correct) == (2, 1)


def test_characters_differing_from_gold_name_file_and_line():
    with pytest.raises(DataError, match=r"out\.txt, line 2: .*differ.*character 2"):
        score([], [["ab"], ["cd"]], [["ab"], ["c", "x"]], gold_name="gold.txt", test_name="out.txt")


def test_line_count_mismatch():
    with pytest.raises(DataError, match=r"out\.txt: has 1 .* gold file g has 2"):
        score([], [["a"], ["b"]], [["a"]], gold_name="g", test_name="out.txt")


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
    ours = score(dictionary, gold, test).total
    theirs = offset_counts(dictionary, gold, test)
    for name in ("correct", "insertions", "deletions", "substitutions", "oov", "oov_correct"):
        assert getattr(ours, name) == getattr(theirs, name), name


def test_repeated_words_a_word_diff_pairs_them_as_the_script_does():
    # the script's diff pairs equal words even at different offsets; the offset alignment never does
    gold, test = [["a", "a", "aa"]], [["aa", "a", "a"]]
    assert score([], gold, test).total.correct == 2
    assert offset_counts([], gold, test).correct == 0


def test_lines_whose_characters_differ_can_be_scored_like_the_script():
    # the official MSR test input lacks the gold's final quotation mark on line 442: the diff re-synchronises
    gold, test = [["他", "说", "：", "“"], ["好"]], [["他", "说", "："], ["好"]]
    with pytest.raises(DataError, match="line 1"):
        score([], gold, test)
    r = score([], gold, test, allow_mismatch=True)
    assert r.mismatched == [1]
    assert (r.total.correct, r.total.deletions, r.total.insertions) == (4, 1, 0)
    c = offset_line(["ab", "c", "d"], ["ab", "x", "d"], set())  # same offsets, other string: not correct
    assert (c.correct, c.substitutions) == (2, 1)


def test_both_alignments_count_hunks_between_correct_words():
    gold, test = ["我", "爱", "北京", "天安门", "广场"], ["我爱", "北", "京天", "安门", "广场"]
    for c in (score_line(gold, test, set()), offset_line(gold, test, set())):
        # one hunk of 4 gold / 4 test words before the correct 广场: 4 substitutions
        assert (c.correct, c.substitutions, c.insertions, c.deletions) == (1, 4, 0, 0)


def test_report_layout_and_cli(tmp_path, capsys):
    words = tmp_path / "words.utf8"
    words.write_text("我\n爱\n", encoding="utf-8")
    gold = tmp_path / "gold.utf8"
    gold.write_bytes("\ufeff我  爱  北京  天安门  \r\n\r\n".encode("utf-8"))  # BOM, CRLF, trailing blank line
    out = tmp_path / "out.utf8"
    out.write_text("我爱 北京 天 安门\n", encoding="utf-8")
    report = format_report(score_files(words, gold, out), per_line=True)
    assert "--NTRUTH:\t4" in report
    assert "=== TOTAL TRUE WORD COUNT:\t4" in report
    assert "=== F MEASURE:\t0.250" in report
    assert "=== OOV Recall Rate:\t0.500" in report
    assert main(["score", str(words), str(gold), str(out)]) == 0
    printed = capsys.readouterr().out
    assert "=== TOTAL INSERTIONS:\t1" in printed and "=== TOTAL DELETIONS:\t1" in printed


def test_bad_encoding_is_a_clear_error(tmp_path, capsys):
    gold = tmp_path / "gold.utf8"
    gold.write_text("我  爱\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    out.write_bytes("我 爱\n".encode("gbk"))
    with pytest.raises(DataError, match=r"out\.txt, line 1: not valid UTF-8"):
        score_files(None, gold, out)
    assert main(["score", "-", str(gold), str(out)]) == 2
    assert "not valid UTF-8" in capsys.readouterr().err
