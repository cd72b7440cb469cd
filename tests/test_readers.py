from __future__ import annotations

from pathlib import Path

import pytest

from hanzilm.data.resolve import resolve
from hanzilm.data.readers import (
    CedictEntry,
    read_cedict,
    read_lines,
    read_segmented,
    read_tsv,
    read_word_list,
    read_wordsim,
)
from hanzilm.errors import DataError

BOM = b"\xef\xbb\xbf"


def write(tmp_path: Path, data: bytes | str, name: str = "f.utf8") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


# --- line ends, BOM and whitespace -----------------------------------------------------------------------


def test_bom_is_stripped_and_all_line_ends_are_accepted(tmp_path):
    path = write(tmp_path, BOM + "迈向  充满\r\n希望  的\r新  世纪\n".encode())
    assert read_segmented(path) == [["迈向", "充满"], ["希望", "的"], ["新", "世纪"]]


def test_words_split_on_any_whitespace_run(tmp_path):
    # AS gold separates with U+3000; PKU with two spaces and trailing spaces; tabs occur in hand-made files
    text = "中國\u3000人\u3000\u3000好\n  北京 \t 大学  \n\t共产党\t\t员  \n"
    assert read_segmented(write(tmp_path, text)) == [["中國", "人", "好"], ["北京", "大学"], ["共产党", "员"]]


def test_keep_empty_keeps_line_alignment(tmp_path):
    path = write(tmp_path, "一  二\r\n\r\n  \r\n三\r\n\r\n")
    assert read_segmented(path) == [["一", "二"], ["三"]]
    # blank and whitespace-only lines give []; the final line end does not add a line
    assert read_segmented(path, keep_empty=True) == [["一", "二"], [], [], ["三"], []]
    assert read_lines(path, keep_empty=True) == ["一  二", "", "", "三", ""]


def test_last_line_without_line_end_is_kept(tmp_path):
    assert read_segmented(write(tmp_path, "一 二\n三")) == [["一", "二"], ["三"]]


def test_read_lines_strips_each_line(tmp_path):
    path = write(tmp_path, BOM + "\u3000共同创造美好的新世纪  \r\n\r\n他说\r\n".encode())
    assert read_lines(path) == ["共同创造美好的新世纪", "他说"]


# --- strict decoding and empty files ----------------------------------------------------------------------


def test_gbk_bytes_in_a_utf8_file_name_the_line_and_offset(tmp_path):
    good = "第一行\r\n第二行\r\n".encode()
    path = write(tmp_path, good + "坏的".encode("gbk") + b"\r\n")
    with pytest.raises(DataError) as err:
        read_segmented(path)
    assert err.value.line == 3
    assert str(path) in str(err.value) and "line 3" in str(err.value)
    assert f"byte offset {len(good)}" in str(err.value)


@pytest.mark.parametrize("reader", [read_segmented, read_lines, read_word_list, read_wordsim, read_cedict])
def test_every_reader_rejects_bad_utf8(tmp_path, reader):
    with pytest.raises(DataError, match="not valid UTF-8"):
        reader(write(tmp_path, b"ok\n\xff\xfe\n"))


@pytest.mark.parametrize("reader", [read_segmented, read_lines, read_wordsim])
@pytest.mark.parametrize("data", [b"", BOM])
def test_empty_file_is_an_error(tmp_path, reader, data):
    with pytest.raises(DataError, match="file is empty"):
        reader(write(tmp_path, data))


def test_missing_file_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="cannot read file"):
        read_lines(tmp_path / "nope.utf8")


# --- word lists and tables ---------------------------------------------------------------------------------


def test_word_list_plain_one_per_line(tmp_path):
    assert read_word_list(write(tmp_path, "研习班\r\n义演\r\n\r\n碰头会\r\n")) == ["研习班", "义演", "碰头会"]


def test_word_list_keeps_a_bare_hash_word_but_skips_comments(tmp_path):
    # the PTB word lists contain "#" as a word (numbers were rewritten N -> #)
    path = write(tmp_path, "# a comment\n#\n$\n#\tanother comment\nthe\n")
    assert read_word_list(path) == ["#", "$", "the"]
    assert read_word_list(path, comment=None) == ["#", "#", "$", "#", "the"]


def test_word_list_detects_a_header_and_reads_tab_columns(tmp_path):
    path = write(tmp_path, "idiom\tsources\tn_sources\n一丁不识\tfunnlp,jionlp\t2\n一丁点儿\tfunnlp\t1\n", "m.tsv")
    assert read_word_list(path) == ["一丁不识", "一丁点儿"]
    assert read_word_list(path, column=2) == ["2", "1"]


def test_word_list_tab_columns_keep_empty_fields_in_place(tmp_path):
    # Russian loanword lists: BOM, CRLF, header, empty columns
    text = BOM + "hanzi_trad\thanzi_simp\tpinyin\r\nNONE\t阿耳申\t\r\n阿爾申\t阿尔申\tāěrshén\r\n".encode()
    assert read_word_list(write(tmp_path, text, "r.tsv"), column=1) == ["阿耳申", "阿尔申"]


def test_word_list_strips_spaces_around_tab_fields(tmp_path):
    # THUOCL: "word \t count"
    assert read_word_list(write(tmp_path, "守望相助 \t 54113\n随时随地 \t 52510\n")) == ["守望相助", "随时随地"]


def test_word_list_whitespace_columns_and_a_pipe_header(tmp_path):
    text = "HANZI | PINYIN | ORIGINAL FORM | DONOR \n1 咖啡 kāfēi café French\n2 茶 chá *la Loloish\n"
    assert read_word_list(write(tmp_path, text), column=1) == ["咖啡", "茶"]


def test_word_list_csv_with_quoted_fields(tmp_path):
    text = 'id,word,gloss\n0,阿尔申,"arshin, a unit"\n1,阿法林,x\n'
    assert read_word_list(write(tmp_path, text, "w.csv"), column=1) == ["阿尔申", "阿法林"]


def test_word_list_does_not_take_an_ascii_entry_for_a_header(tmp_path):
    assert read_word_list(write(tmp_path, "aer\nbanknote\n")) == ["aer", "banknote"]
    assert read_word_list(write(tmp_path, "3Q\t3Q\tsan1 Q\n")) == ["3Q"]


def test_word_list_skip_lines_drops_a_preamble(tmp_path):
    path = write(tmp_path, BOM + "By@萌名NameMoe\r\n2019.07.27\r\n\r\n前所未有\r\n毫无疑问\r\n".encode())
    assert read_word_list(path, skip_lines=2) == ["前所未有", "毫无疑问"]


def test_word_list_missing_column_is_an_error(tmp_path):
    with pytest.raises(DataError, match="column 1") as err:
        read_word_list(write(tmp_path, "一\t1\n二\n"), column=1)
    assert err.value.line == 2


def test_read_tsv_rows_and_ragged_line(tmp_path):
    path = write(tmp_path, "rank\tchar\tcount\n1\t的\t257527483\n\n2\t一\t82487248\n", "c.tsv")
    assert read_tsv(path) == [
        {"rank": "1", "char": "的", "count": "257527483"},
        {"rank": "2", "char": "一", "count": "82487248"},
    ]
    with pytest.raises(DataError, match="2 fields, but the header has 3") as err:
        read_tsv(write(tmp_path, "a\tb\tc\n1\t2\t3\n1\t2\n", "bad.tsv"))
    assert err.value.line == 3


def test_read_tsv_keeps_quotes_in_tab_files_and_parses_csv(tmp_path):
    tsv = write(tmp_path, 'word\tdefinition\nNG\t(loanword from "no good")\n', "q.tsv")
    assert read_tsv(tsv) == [{"word": "NG", "definition": '(loanword from "no good")'}]
    csv_path = write(tmp_path, 'rank,char,definition\n1,的,"possessive, adjectival suffix"\n', "h.csv")
    assert read_tsv(csv_path, delimiter=",")[0]["definition"] == "possessive, adjectival suffix"


# --- word similarity and CC-CEDICT ---------------------------------------------------------------------


def test_wordsim_tabs_crlf_and_stray_spaces(tmp_path):
    path = write(tmp_path, "老虎\t猫\t7.35\r\n钱\t 现金\t4.58\r\n")
    assert read_wordsim(path) == [("老虎", "猫", 7.35), ("钱", "现金", 4.58)]


@pytest.mark.parametrize(
    "line, problem",
    [("老虎\t猫", "expected 3 fields"), ("老虎\t猫\t7\t8", "expected 3 fields"), ("老虎\t猫\t高", "not a number"),
     ("老虎\t猫\tnan", "not a number"), ("老虎\t\t7", "expected 3 fields")],
)
def test_wordsim_malformed_line_names_file_and_line(tmp_path, line, problem):
    path = write(tmp_path, f"电脑\t键盘\t7.62\n{line}\n")
    with pytest.raises(DataError, match=problem) as err:
        read_wordsim(path)
    assert err.value.line == 2 and err.value.path == path


CEDICT = (
    "# CC-CEDICT\r\n"
    "# \r\n"
    "#! version=1\r\n"
    "中國 中国 [Zhong1 guo2] /China/\r\n"
    "% % [pa1] /percent (Tw)/\r\n"
    "3C 3C [san1 C] /abbr. for computers, communications, and consumer electronics/China Compulsory Certificate (CCC)/\r\n"
    "乾 干 [gan1] /dry/clean/\r\n"
    "幹 干 [gan4] /tree trunk/to work/\r\n"
)


def test_cedict_entries_by_simplified_headword(tmp_path):
    entries = read_cedict(write(tmp_path, CEDICT))
    assert entries["中国"] == [CedictEntry("中國", "中国", "Zhong1 guo2", ("China",))]
    assert entries["3C"][0].glosses == (
        "abbr. for computers, communications, and consumer electronics",
        "China Compulsory Certificate (CCC)",
    )
    assert [e.traditional for e in entries["干"]] == ["乾", "幹"]
    assert entries["%"][0].pinyin == "pa1"


def test_cedict_malformed_line(tmp_path):
    with pytest.raises(DataError, match="not a CC-CEDICT entry") as err:
        read_cedict(write(tmp_path, CEDICT + "中國 中国 Zhong1 guo2 /China/\r\n"))
    assert err.value.line == 9


# --- the real data -------------------------------------------------------------------------------------


def counts(sentences: list[list[str]]) -> tuple[int, int, int]:
    return len(sentences), sum(map(len, sentences)), sum(len(w) for s in sentences for w in s)


def test_pku_test_gold_matches_the_bakeoff_statistics(real_mirror):
    path = resolve("sighan2005", "pku_test_gold.utf8")
    assert counts(read_segmented(path)) == (1944, 104372, 172733)
    # with its trailing empty line the gold aligns line by line with the unsegmented input
    gold = read_segmented(path, keep_empty=True)
    test = read_lines(resolve("sighan2005", "testing/pku_test.utf8"), keep_empty=True)
    assert len(gold) == len(test) == 1945
    assert all("".join(words) == line.replace(" ", "") for words, line in zip(gold, test))


def test_msr_test_gold_matches_the_bakeoff_statistics(real_mirror):
    assert counts(read_segmented(resolve("sighan2005", "msr_test_gold.utf8"))) == (3985, 106873, 184355)


def test_real_word_lists(real_mirror):
    assert len(read_word_list(resolve("sighan2005", "pku_training_words.utf8"))) == 55303
    assert "#" in read_word_list(resolve("snlm_ptb", "ptb/words.txt"))
    idioms = read_word_list(resolve("idioms", "chengyu_4char_merged.tsv"))
    assert len(idioms) == 47848 and all(len(w) == 4 for w in idioms)
    assert len(read_wordsim(resolve("wordsim", "wordsim-297.tsv"))) == 297
