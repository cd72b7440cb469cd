"""Readers for the text formats of the data mirror.

Every reader decodes strictly as UTF-8 (a stray GBK or Big5 byte is an error naming the file, line and byte
offset, never a replacement character), strips a leading BOM, accepts LF, CRLF and lone CR line ends, and splits
words on runs of any Unicode whitespace (`str.split()`), which covers the bakeoff's double spaces and the
ideographic space U+3000 of the AS gold. Nothing is skipped silently: a malformed line raises `DataError`.
"""

from __future__ import annotations

import codecs
import csv
import math
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from ..errors import DataError

__all__ = [
    "read_bytes",
    "CedictEntry",
    "read_cedict",
    "read_lines",
    "read_segmented",
    "read_text",
    "read_tsv",
    "read_word_list",
    "read_wordsim",
]


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes; a failure is a DataError naming the file."""
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise DataError(f"cannot read file: {e.strerror}", path=Path(path)) from None


def read_text(path: str | Path) -> str:
    """The whole file as text: strict UTF-8, BOM removed, every line end turned into '\\n'."""
    path = Path(path)
    data = read_bytes(path)
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    if len(data) == bom:
        raise DataError("file is empty", path=path)
    try:
        text = data[bom:].decode("utf-8")
    except UnicodeDecodeError as e:
        offset = bom + e.start
        raise DataError(
            f"not valid UTF-8 at byte offset {offset} (byte {data[offset:offset + 1].hex()}: {e.reason}); "
            "is it in the original GBK/Big5 encoding? Use the .utf8 file",
            path=path,
            line=_line_number(data, offset),
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_segmented(path: str | Path, *, keep_empty: bool = False) -> list[list[str]]:
    """Sentences as word lists: SIGHAN gold/training files and SNLM one-sentence-per-line files.

    With keep_empty=True a blank line gives [] so the result stays aligned with the file's lines, as the scorer
    needs; a final line end does not start an extra line."""
    sentences = (line.split() for _, line in _numbered_lines(path))
    return [words for words in sentences if words or keep_empty]


def read_lines(path: str | Path, *, keep_empty: bool = False) -> list[str]:
    """Unsegmented text (SIGHAN test input), one stripped line per entry."""
    lines = (line.strip() for _, line in _numbered_lines(path))
    return [line for line in lines if line or keep_empty]


def read_word_list(
    path: str | Path,
    *,
    column: int = 0,
    comment: str | None = "#",
    skip_lines: int | None = None,
) -> list[str]:
    """One entry per line from `column` of a word list or lexicon, in file order.

    Columns are TAB-separated when the line has a TAB (so empty columns keep their place), comma-separated in a
    .csv file, and whitespace-separated otherwise. Blank lines and comments are skipped. A comment is `comment`
    followed by whitespace ("# note"): a bare "#" is a word in the PTB lists, where numbers became '#'.

    skip_lines=None drops a header line if the first entry line looks like one (two or more fields that are all
    ASCII column names, e.g. "idiom<TAB>sources<TAB>n_sources"); an integer instead drops exactly that many
    physical lines first and detects nothing (funNLP_ChengYu_Corpus_5W.txt opens with a two-line signature:
    skip_lines=2).
    """
    path = Path(path)
    is_csv = path.suffix.lower() == ".csv"
    lines = _numbered_lines(path)[skip_lines or 0 :]
    header_checked = skip_lines is not None
    words: list[str] = []
    for lineno, line in lines:
        if not line.strip() or _is_comment(line, comment):
            continue
        if not header_checked:
            header_checked = True
            if _looks_like_header(line):
                continue
        fields = _split_fields(line, is_csv)
        if column >= len(fields):
            raise DataError(f"line has {len(fields)} field(s), column {column} was asked for", path, lineno)
        word = fields[column].strip()
        if not word:
            raise DataError(f"column {column} is empty", path, lineno)
        words.append(word)
    return words


def read_tsv(path: str | Path, *, delimiter: str = "\t") -> list[dict[str, str]]:
    """Rows of a file with a header line, as dicts keyed by the header's column names (values stripped).

    TAB-separated files are split on every TAB with no quoting (glosses contain '"'); other delimiters follow
    CSV quoting rules."""
    path = Path(path)
    quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
    header: list[str] | None = None
    result: list[dict[str, str]] = []
    for lineno, line in _numbered_lines(path):
        if not line.strip():
            continue
        try:
            row = next(csv.reader([line], delimiter=delimiter, quoting=quoting, strict=True))
        except csv.Error as e:
            raise DataError(f"malformed line: {e}", path, lineno) from None
        fields = [field.strip() for field in row]
        if header is None:
            if len(set(fields)) != len(fields) or not all(fields):
                raise DataError(f"header has empty or repeated column names: {fields}", path, lineno)
            header = fields
        elif len(fields) != len(header):
            raise DataError(f"{len(fields)} fields, but the header has {len(header)}", path, lineno)
        else:
            result.append(dict(zip(header, fields)))
    return result


def read_wordsim(path: str | Path) -> list[tuple[str, str, float]]:
    """Word-similarity pairs: word1, word2, score per line (TAB- or whitespace-separated)."""
    path = Path(path)
    pairs: list[tuple[str, str, float]] = []
    for lineno, line in _numbered_lines(path):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split("\t")] if "\t" in line else line.split()
        if len(fields) != 3 or not all(fields):
            raise DataError(f"expected 3 fields (word1, word2, score), found {fields}", path, lineno)
        try:
            score = float(fields[2])
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise DataError(f"score {fields[2]!r} is not a number", path, lineno)
        pairs.append((fields[0], fields[1], score))
    return pairs


@dataclass(frozen=True)
class CedictEntry:
    traditional: str
    simplified: str
    pinyin: str
    glosses: tuple[str, ...]


_CEDICT_LINE = re.compile(r"(\S+) (\S+) \[([^\]]*)\] /(.*)/")


def read_cedict(path: str | Path, only: Collection[str] | None = None) -> dict[str, list[CedictEntry]]:
    """CC-CEDICT entries keyed by simplified headword, in file order ("#" lines are comments); with `only`,
    just those headwords' entries (the other lines are not parsed: a few words' glosses in a tenth of the
    time)."""
    path = Path(path)
    entries: dict[str, list[CedictEntry]] = {}
    for lineno, line in _numbered_lines(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if only is not None and line.split(" ", 2)[1:2] != [] and line.split(" ", 2)[1] not in only:
            continue  # a malformed line without a second field still reaches the check below
        m = _CEDICT_LINE.fullmatch(line)
        if m is None:
            raise DataError("not a CC-CEDICT entry (TRAD SIMP [pin1 yin1] /gloss/.../)", path, lineno)
        trad, simp, pinyin, glosses = m.groups()
        entry = CedictEntry(trad, simp, pinyin, tuple(glosses.split("/")))
        entries.setdefault(simp, []).append(entry)
    return entries


def _numbered_lines(path: str | Path) -> list[tuple[int, str]]:
    """(1-based line number, line) pairs; a final line end does not start another line."""
    lines = read_text(path).split("\n")
    if lines[-1] == "":
        lines.pop()
    return list(enumerate(lines, start=1))


def _line_number(data: bytes, offset: int) -> int:
    prefix = data[:offset]
    return prefix.count(b"\n") + prefix.count(b"\r") - prefix.count(b"\r\n") + 1


def _is_comment(line: str, comment: str | None) -> bool:
    if not comment or not line.startswith(comment):
        return False
    rest = line[len(comment) :]
    return bool(rest) and rest[0].isspace()


_COLUMN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_ ]*")


def _looks_like_header(line: str) -> bool:
    names = [name.strip() for name in re.split(r"[\t,|]", line.strip())]
    return len(names) >= 2 and all(_COLUMN_NAME.fullmatch(name) for name in names)


def _split_fields(line: str, is_csv: bool) -> list[str]:
    if "\t" in line:
        return line.split("\t")
    if is_csv:
        return next(csv.reader([line]))
    return line.split()
