"""The SIGHAN bakeoff word-segmentation scorer: the official `score` script's numbers, to every printed digit.

    result = score_files("pku_training_words.utf8", "pku_test_gold.utf8", "our_output.txt")
    print(format_report(result))          # the official layout: (per-line blocks and) the === SUMMARY
    hanzilm score TRAIN_WORDS GOLD TEST   # the same from the shell; --mode exact for the exact alignment

What the official script (icwb2-data `scripts/score`, a perl script) does, and so what this module does:

* **Reading.** Gold and test files are read line by line in parallel, as bytes. Each line is stripped of ASCII
  whitespace (space, TAB, LF, CR, FF, VT: perl's `\\s` on bytes; not NBSP, not U+3000), then every ideographic
  space U+3000 (and the Big5 byte pair A1 40) becomes a space, every CR inside the line is deleted (it joins the
  words on either side), and the line is split on runs of ASCII whitespace (perl `split /\\s+/`: a line that
  began with U+3000 gets an empty first word). A UTF-8 byte-order mark is part of the first word. A gold line
  with no word is skipped, test words and all. The training word list is read the same way, one word per line
  (perl `chop`: a last line without a line end loses its last byte).
* **Alignment, the default ("official").** For each line the script writes the gold and the test words one per
  line to two files and reads `diff -y` of them (GNU diff's side-by-side output). GNU diff is not a minimal
  diff: it first sets aside words that occur in only one of the two lists and, where many words repeat, finds
  fewer common words than a longest common subsequence. We run the same program the same way, one call per line
  (`diff -y gold test`, two private temporary files, no shell), and read its output with the script's own
  regular expressions: a line with ` | ` is a substitution, ` > ` an insertion, ` < ` a deletion; a line with
  a left-hand word and one of these marks misses a gold word, one with a mark and a right-hand word a test word;
  the left-hand word, as diff prints it (truncated to its column), is looked up in the word list for OOV/IV.
  diff runs with LC_ALL=C.UTF-8 so that its column widths, hence that truncation, do not depend on the
  caller's locale.
* **Alignment, "exact".** A longest common subsequence of the two word lists (a minimal diff): the most correct
  words any alignment finds. Each hunk of n gold and m test words between two common words counts min(n, m)
  substitutions, n - min deletions and m - min insertions; every gold word is looked up whole. On good output
  the two modes agree to the script's three decimals; on weak output (many repeated one-character words) the
  exact one finds more correct words (PKU test, one character per word: F 0.343 exact, 0.330 official).
* **The metrics, as the script computes them.** Recall = (gold words - missed gold words) / gold words,
  precision likewise over test words, F = 2PR / (P + R); OOV rate = OOV gold words / gold words, OOV recall =
  1 - missed OOV / OOV, IV recall = 1 - missed IV / IV; printed with `%2.3f` (`format_report`).

Stricter than the script: a line whose characters differ from the gold line's, or a different number of lines,
is an error naming the file and line (the script scores such files silently, or dies dividing by zero on an
empty test line); `allow_mismatch` (CLI `--allow-mismatch`) scores such lines as the script does and lists
them (the official MSR test input differs from its gold on 16 lines). Trailing blank lines are ignored.
`offset_counts` is an independent cross-check: a word is right when a gold word covers the same characters.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from ..data.readers import read_bytes
from ..errors import DataError, HanzilmError

if TYPE_CHECKING:  # numpy is imported by the functions that use it: `hanzilm` registers its commands
    import numpy as np  # (and `--threads` is set) before any numeric library loads

OFFICIAL, EXACT = "official", "exact"
MODES = (OFFICIAL, EXACT)
DEFAULT_MODE = OFFICIAL
# diff measures its side-by-side columns with the locale's character widths (in the C locale a non-ASCII byte
# takes no column), which decides where a word longer than its column is cut: one locale keeps numbers stable
DIFF_LOCALE = "C.UTF-8"
DIFF_WORKERS = 2  # diff processes at once (score's default workers): each line is one short process


@dataclass
class Counts:
    """The script's counters: its totals, and the missed words the metrics are computed from."""
    insertions: int = 0
    deletions: int = 0
    substitutions: int = 0
    true_words: int = 0
    test_words: int = 0
    true_missed: int = 0   # gold words on a changed line of the diff (the script's per-line $rawrecall)
    test_missed: int = 0   # test words on a changed line ($rawprecision)
    oov: int = 0           # gold words not in the training word list ($OOV)
    iv: int = 0            # ... and in it ($IV)
    oov_missed: int = 0
    iv_missed: int = 0

    @property
    def nchange(self) -> int:
        return self.insertions + self.deletions + self.substitutions

    @property
    def correct(self) -> int:
        return self.true_words - self.true_missed

    @property
    def oov_correct(self) -> int:
        return self.oov - self.oov_missed

    @property
    def recall(self) -> float:
        return _ratio(self.true_words - self.true_missed, self.true_words)

    @property
    def precision(self) -> float:
        return _ratio(self.test_words - self.test_missed, self.test_words)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0  # the script's (1 + beta) * P * R / (beta * P + R)

    @property
    def oov_rate(self) -> float:
        return _ratio(self.oov, self.true_words)

    @property
    def oov_recall(self) -> float:
        return 1 - self.oov_missed / self.oov if self.oov else math.nan

    @property
    def iv_recall(self) -> float:
        return 1 - self.iv_missed / self.iv if self.iv else math.nan

    def add(self, other: Counts) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def metrics(self, percent: bool = False) -> dict[str, float]:
        k = 100.0 if percent else 1.0
        return {"precision": k * self.precision, "recall": k * self.recall, "f1": k * self.f1,
                "oov_rate": k * self.oov_rate, "oov_recall": k * self.oov_recall, "iv_recall": k * self.iv_recall}


@dataclass
class LineScore:
    number: int            # 1-based line of the files
    counts: Counts
    diff: bytes = b""      # the `diff -y` output (official mode, when asked to keep it)


@dataclass
class ScoreResult:
    total: Counts
    lines: list[LineScore] = field(default_factory=list)
    gold_name: str = "gold"
    test_name: str = "test"
    mode: str = DEFAULT_MODE
    mismatched: list[int] = field(default_factory=list)  # lines scored although their characters differ
    scorer: str = ""       # the alignment and, in official mode, the diff program's version


def _ratio(a: int, b: int) -> float:
    return a / b if b else math.nan


# the counts a line adds to the totals the metrics are computed from: what a bootstrap over lines resamples
LINE_FIELDS = ("true_words", "true_missed", "test_words", "test_missed", "oov", "oov_missed")


def line_counts(result: ScoreResult) -> np.ndarray:
    """(lines, LINE_FIELDS): each scored line's counts, which sum to `result.total`'s."""
    import numpy as np

    rows = [[getattr(line.counts, f) for f in LINE_FIELDS] for line in result.lines]
    return np.array(rows, dtype=float).reshape(len(rows), len(LINE_FIELDS))


def measure_of_totals(totals: np.ndarray, measure: str = "f1") -> np.ndarray:
    """F1 or OOV recall (percent) of (..., LINE_FIELDS) count totals, as `Counts` computes them: the statistic
    of a bootstrap over lines (`hanzilm.spread.bootstrap_sd`)."""
    import numpy as np

    t = dict(zip(LINE_FIELDS, np.moveaxis(np.asarray(totals, dtype=float), -1, 0)))
    if measure == "oov_recall":
        return 100 * (1 - t["oov_missed"] / t["oov"])
    if measure != "f1":
        raise ValueError(f"unknown measure {measure!r} (f1, oov_recall)")
    recall = (t["true_words"] - t["true_missed"]) / t["true_words"]
    precision = (t["test_words"] - t["test_missed"]) / t["test_words"]
    both = precision + recall
    # no word right: F1 0, as `Counts.f1` has it
    return np.divide(100 * 2 * precision * recall, both, out=np.zeros_like(both), where=both > 0)


# ---- reading, as the script reads ----

_SPACE = b" \t\n\r\f\v"                        # perl's \s on bytes
_IDEOGRAPHIC_SPACE = re.compile(rb"\xe3\x80\x80|\xa1\x40")  # U+3000 in UTF-8; the Big5 ideographic space
_RUNS = re.compile(rb"[ \t\n\r\f\v]+")
_SPLITS_WORDS = re.compile(rb"[ \t\n\r\f\v]|\xe3\x80\x80|\xa1\x40")


def split_line_bytes(line: bytes) -> list[bytes]:
    """The words of one line exactly as the script splits it."""
    line = _IDEOGRAPHIC_SPACE.sub(b" ", line.strip(_SPACE)).replace(b"\r", b"")
    words = _RUNS.split(line)
    while words and not words[-1]:  # perl's split drops trailing empty fields, keeps a leading one
        words.pop()
    return words


def split_line(line: str) -> list[str]:
    """`split_line_bytes` on text: what the script makes of a line (NBSP does not split; U+3000 does)."""
    return [_text(w) for w in split_line_bytes(_bytes(line))]


def _bytes(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


def _text(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")  # an A1 40 split can leave a broken UTF-8 sequence


def _read_utf8(path: str | Path) -> bytes:
    path = Path(path)
    data = read_bytes(path)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"not valid UTF-8 at byte offset {e.start} (byte {data[e.start:e.start + 1].hex()}: "
                        f"{e.reason}); is it in the original GBK/Big5 encoding? Use the .utf8 file",
                        path=path, line=data.count(b"\n", 0, e.start) + 1) from None
    return data


def _raw_lines(path: str | Path) -> list[bytes]:
    """The file's lines as perl's readline gives them (each ends at a LF), without the LF."""
    lines = _read_utf8(path).split(b"\n")
    if lines[-1] == b"":  # a final LF ends the last line, it does not start another
        lines.pop()
    return lines


def read_words(path: str | Path) -> list[list[str]]:
    """One word list per line of a gold or test file, split as the script splits."""
    return [[_text(w) for w in split_line_bytes(line)] for line in _raw_lines(path)]


def read_dictionary(path: str | Path) -> set[str]:
    """The training word list as the script reads it: each line without its last byte (perl's `chop`: the LF,
    or the last character's last byte on a final line without one), stripped of ASCII whitespace."""
    chunks = _read_utf8(path).split(b"\n")
    lines = chunks[:-1] + ([chunks[-1][:-1]] if chunks[-1] else [])
    return {_text(line.strip(_SPACE)) for line in lines}


# ---- scoring ----

def score(dictionary: Iterable[str], gold: Sequence[Sequence[str]], test: Sequence[Sequence[str]], *,
          gold_name: str = "gold", test_name: str = "test", allow_mismatch: bool = False,
          mode: str = DEFAULT_MODE, keep_diff: bool = False, workers: int = DIFF_WORKERS) -> ScoreResult:
    """Score word lists line by line (both already split; blank lines are empty lists).

    `mode` is "official" (GNU `diff -y` per line, as the script) or "exact" (a longest common subsequence).
    A word must be one the script could have read (no ASCII whitespace, no U+3000). A line whose characters
    differ from the gold line's is an error, unless allow_mismatch: then it is scored anyway, as the official
    script does silently, and its number is listed in `result.mismatched`. The official MSR test input itself
    differs from its gold on 16 lines (e.g. line 442 lacks the gold's final quotation mark). keep_diff keeps each
    line's diff output (official mode) for `format_report(per_line=True)`; `workers` diff processes run at once."""
    if mode not in MODES:
        raise HanzilmError(f"unknown scoring mode {mode!r}: use one of {', '.join(MODES)}")
    words = {_bytes(w) for w in dictionary}
    gold, test = _trim(gold), _trim(test)
    if len(gold) != len(test):
        raise DataError(f"has {len(test)} non-trailing-blank lines, but the gold file {gold_name} has {len(gold)}",
                        path=test_name)
    result = ScoreResult(total=Counts(), gold_name=gold_name, test_name=test_name, mode=mode)
    jobs: list[tuple[int, list[bytes], list[bytes]]] = []
    for lineno, (g, t) in enumerate(zip(gold, test), start=1):
        gb, tb = _encode(g, gold_name, lineno), _encode(t, test_name, lineno)
        if b"".join(gb) != b"".join(tb):
            if not allow_mismatch:
                raise _mismatch("".join(g), "".join(t), gold_name, test_name, lineno)
            result.mismatched.append(lineno)
        if gb:  # the script skips a gold line without words, and the test words on it
            jobs.append((lineno, gb, tb))
    if mode == EXACT:
        result.lines = [LineScore(n, _exact_line(g, t, words)) for n, g, t in jobs]
        result.scorer = "exact (a longest common subsequence of words)"
    else:
        exe, version = diff_program()
        result.lines = _official_lines(jobs, words, exe, keep_diff, workers)
        result.scorer = f"official (`diff -y` per line, {version})"
    for line in result.lines:
        result.total.add(line.counts)
    return result


def score_line(gold: Sequence[str], test: Sequence[str], dictionary: Iterable[str] = (),
               mode: str = DEFAULT_MODE) -> Counts:
    """The counts of one line pair (a one-line `score`)."""
    return score(dictionary, [gold], [test], mode=mode).total


def score_files(train_words: str | Path | None, gold: str | Path, test: str | Path, *,
                allow_mismatch: bool = False, mode: str = DEFAULT_MODE, keep_diff: bool = False,
                workers: int = DIFF_WORKERS) -> ScoreResult:
    """`score` on files, read as the script reads them (`read_words`, `read_dictionary`)."""
    dictionary = read_dictionary(train_words) if train_words else set()
    return score(dictionary, read_words(gold), read_words(test), gold_name=str(gold), test_name=str(test),
                 allow_mismatch=allow_mismatch, mode=mode, keep_diff=keep_diff, workers=workers)


def _trim(lines: Sequence[Sequence[str]]) -> list[Sequence[str]]:
    lines = list(lines)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _encode(words: Sequence[str], name: str, lineno: int) -> list[bytes]:
    encoded = [_bytes(w) for w in words]
    bad = _SPLITS_WORDS.search(b"\0".join(encoded))  # NUL: no separator byte may complete an A1 40 pair
    if bad:
        raise DataError(f"a word contains {_text(bad.group())!r}, on which the official script splits words",
                        path=name, line=lineno)
    return encoded


def _mismatch(gs: str, ts: str, gold_name: str, test_name: str, lineno: int) -> DataError:
    k = next((i for i, (a, b) in enumerate(zip(gs, ts)) if a != b), min(len(gs), len(ts)))
    hint = ""
    if k == 0 and (gs[:1] == "\ufeff") != (ts[:1] == "\ufeff"):
        hint = " (a byte-order mark, which the official script reads as part of the first word)"
    return DataError(f"its characters differ from the gold line ({gold_name}) at character {k + 1}{hint}: "
                     f"gold {gs[max(0, k - 5):k + 5]!r} vs test {ts[max(0, k - 5):k + 5]!r}",
                     path=test_name, line=lineno)


# ---- the official alignment: GNU diff, called as the script calls it ----

def diff_program() -> tuple[str, str]:
    """(path, version) of the `diff` the official mode runs; a HanzilmError when there is none."""
    exe = shutil.which("diff")
    if exe is None:
        raise HanzilmError("the official scoring mode runs `diff -y` as the bakeoff script does, but no `diff` "
                           "is on PATH: install GNU diffutils (Debian: apt-get install diffutils), or score "
                           "with --mode exact")
    return exe, _diff_version(exe)


@lru_cache(maxsize=None)
def _diff_version(exe: str) -> str:
    try:
        out = subprocess.run([exe, "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env=_diff_env(), timeout=60).stdout.decode("utf-8", "replace")
    except OSError as e:
        raise HanzilmError(f"cannot run {exe}: {e.strerror}") from None
    return (out.splitlines() or ["diff of unknown version"])[0].strip()


def _diff_env() -> dict[str, str]:
    return {**os.environ, "LC_ALL": DIFF_LOCALE}


def _official_lines(jobs: Sequence[tuple[int, list[bytes], list[bytes]]], dictionary: set[bytes], exe: str,
                    keep_diff: bool, workers: int = DIFF_WORKERS) -> list[LineScore]:
    env = _diff_env()
    with tempfile.TemporaryDirectory(prefix="hanzilm-score-") as tmp:
        def run(job: tuple[int, list[bytes], list[bytes]]) -> LineScore:
            lineno, g, t = job
            c = Counts(true_words=len(g), test_words=len(t))
            if g == t and not keep_diff and _printed_whole(g):
                c.oov = sum(w not in dictionary for w in g)  # see _printed_whole
                c.iv = len(g) - c.oov
                return LineScore(lineno, c)
            out = _diff_y(exe, env, Path(tmp) / str(lineno), g, t)
            _read_diff(out, dictionary, c)
            return LineScore(lineno, c, out if keep_diff else b"")

        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(run, jobs))


_MARKS = {b"|", b"<", b">"}
_CONTROL = re.compile(rb"[\x00-\x1f\x7f]")


def _printed_whole(words: list[bytes]) -> bool:
    """Whether `diff -y` of a line with itself is known without running it. diff prints every line as common,
    `word<spaces and TABs>word`; the script's patterns then find no mark (a mark needs whitespace on both sides:
    the right word would have to be |, < or >) and look the left word up whole when it fits its column (61
    columns, and no character is wider than its UTF-8 bytes; no control bytes, which diff prints its own way,
    and no NUL, which makes diff call the files binary). A test checks this against diff itself."""
    return all(0 < len(w) <= 40 and w not in _MARKS for w in words) and not _CONTROL.search(b"".join(words))


def _diff_y(exe: str, env: dict[str, str], stem: Path, gold: list[bytes], test: list[bytes]) -> bytes:
    """`diff -y` of the two word lists written one word per line, as the script writes them (private files
    in a private directory; diff is spawned directly, no shell)."""
    a, b, out, err = (stem.with_suffix(s) for s in (".gold", ".test", ".out", ".err"))
    try:
        a.write_bytes(b"".join(w + b"\n" for w in gold))
        b.write_bytes(b"".join(w + b"\n" for w in test))
        fds = [os.open(f, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600) for f in (out, err)]
        try:
            pid = os.posix_spawn(exe, ["diff", "-y", str(a), str(b)], env, file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, fds[0], 1), (os.POSIX_SPAWN_DUP2, fds[1], 2)])
        finally:
            for fd in fds:
                os.close(fd)
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        if status not in (0, 1):  # 0: the same, 1: different, 2: trouble
            raise HanzilmError(f"`diff -y` failed (exit status {status}): "
                               f"{err.read_bytes().decode('utf-8', 'replace').strip()}")
        return out.read_bytes()
    except OSError as e:
        raise HanzilmError(f"cannot run {exe}: {e.strerror or e}") from None
    finally:
        for f in (a, b, out, err):
            f.unlink(missing_ok=True)


# the script's regular expressions, on diff's output lines (bytes; each with its LF, as perl reads them)
_SUBSTITUTED, _INSERTED, _DELETED = re.compile(rb"\s\|\s"), re.compile(rb"\s>\s"), re.compile(rb"\s<\s")
_LEFT_WORD = re.compile(rb"([^\s]+)\s")
_GOLD_MISSED = re.compile(rb"[^\s]+\s.*\s[|><]\s")
_TEST_MISSED = re.compile(rb"\s[|><]\s.*[^\s]$")


def _read_diff(out: bytes, dictionary: set[bytes], c: Counts) -> None:
    """Add to `c` what the script counts from one line's `diff -y` output."""
    *lines, last = out.split(b"\n")
    for line in [x + b"\n" for x in lines] + ([last] if last else []):
        marked = b"|" in line or b">" in line or b"<" in line  # none of the patterns matches without a mark
        if marked:
            if _SUBSTITUTED.search(line):
                c.substitutions += 1
            elif _INSERTED.search(line):
                c.insertions += 1
            elif _DELETED.search(line):
                c.deletions += 1
        left = _LEFT_WORD.match(line)
        if left:
            oov = left.group(1) not in dictionary  # the word as diff printed it, cut to its column
            c.oov += oov
            c.iv += not oov
            if marked and _GOLD_MISSED.match(line):
                c.oov_missed += oov
                c.iv_missed += not oov
                c.true_missed += 1
        if marked and _TEST_MISSED.search(line):
            c.test_missed += 1


# ---- the exact alignment: a longest common subsequence of words ----

def _exact_line(gold: Sequence[bytes], test: Sequence[bytes], dictionary: set[bytes]) -> Counts:
    """Counts from a longest common subsequence of the two word lists; each hunk of n gold and m test words
    between two common words counts min(n, m) substitutions, n - min deletions and m - min insertions."""
    c = Counts(true_words=len(gold), test_words=len(test))
    common = oov_common = 0
    prev_i = prev_j = -1
    for i, j in [*lcs_pairs(gold, test), (len(gold), len(test))]:
        _hunk(c, i - prev_i - 1, j - prev_j - 1)
        if i < len(gold):
            common += 1
            oov_common += gold[i] not in dictionary
        prev_i, prev_j = i, j
    c.oov = sum(w not in dictionary for w in gold)
    c.iv = len(gold) - c.oov
    c.true_missed, c.test_missed = len(gold) - common, len(test) - common
    c.oov_missed, c.iv_missed = c.oov - oov_common, c.iv - (common - oov_common)
    return c


def _hunk(c: Counts, n: int, m: int) -> None:
    """A run of n gold and m test words between two correct words, counted like one diff hunk."""
    s = min(n, m)
    c.substitutions += s
    c.deletions += n - s
    c.insertions += m - s


def lcs_pairs(a: Sequence, b: Sequence) -> list[tuple[int, int]]:
    """Index pairs of one longest common subsequence of a and b: the common prefix and suffix, then on the middle
    the path that, from the top left, takes a match whenever the two items are equal and otherwise skips a[i]
    unless that loses a common item (the classic table walk). Memory is O(len(b) * sqrt(len(a))) bits."""
    n, m = len(a), len(b)
    lo = 0
    while lo < n and lo < m and a[lo] == b[lo]:
        lo += 1
    hi = 0
    while hi < n - lo and hi < m - lo and a[n - 1 - hi] == b[m - 1 - hi]:
        hi += 1
    middle = _middle_pairs(a[lo:n - hi], b[lo:m - hi])
    return ([(k, k) for k in range(lo)] + [(lo + i, lo + j) for i, j in middle]
            + [(n - hi + k, m - hi + k) for k in range(hi)])


def _middle_pairs(a: Sequence, b: Sequence) -> list[tuple[int, int]]:
    """The table walk of `lcs_pairs` without the table. L(i, j), the LCS length of a[i:] and b[j:], is kept one
    row i at a time as a bit vector over b (bit-parallel LCS, Hyyroe 2004: each row is a few integer operations
    on len(b) bits). The rows are computed bottom-up; every K-th row is kept (K ~ sqrt(len(a))) and the walk,
    which goes top-down, recomputes one block of K rows at a time from the kept row below it."""
    p, q = len(a), len(b)
    if not p or not q:
        return []
    # bit u of a row stands for b[q - 1 - u]: rows are built over the reversed b, whose prefixes are b's suffixes
    where: dict = {}
    for j, w in enumerate(b):
        where.setdefault(w, []).append(q - 1 - j)
    full, nbytes, often = (1 << q) - 1, (q + 7) // 8, math.isqrt(q) + 1
    cached: dict = {}  # masks of words with >= sqrt(q) occurrences: at most sqrt(q) of them

    def mask(w) -> int:
        bits = where.get(w)
        if bits is None:
            return 0
        if len(bits) >= often and w in cached:
            return cached[w]
        buf = bytearray(nbytes)
        for u in bits:
            buf[u >> 3] |= 1 << (u & 7)
        x = int.from_bytes(buf, "little")
        if len(bits) >= often:
            cached[w] = x
        return x

    def up(v: int, w) -> int:  # the row of a[i:] from the row of a[i+1:]
        mk = mask(w)
        if not mk:
            return v
        u = v & mk
        return ((v + u) | (v - u)) & full

    k = math.isqrt(p) + 1
    kept = {p: full}
    v = full
    for i in range(p - 1, -1, -1):
        v = up(v, a[i])
        if i % k == 0:
            kept[i] = v

    def lcs(row: int, j: int) -> int:  # L(i, j) from row i's bits: zeros among the lowest q - j bits
        t = q - j
        return t - (row & ((1 << t) - 1)).bit_count()

    pairs: list[tuple[int, int]] = []
    block_start, block = -1, []
    i = j = 0
    while i < p and j < q:
        start = i - i % k
        if start != block_start:
            end = min(start + k, p)
            block = [0] * (end - start + 1)
            block[-1] = v = kept[end]
            for r in range(end - 1, start - 1, -1):
                v = block[r - start] = up(v, a[r])
            block_start = start
        here, below = block[i - start], block[i + 1 - start]
        li, lb = lcs(here, j), lcs(below, j)
        bits_here, bits_below = here.to_bytes(nbytes, "little"), below.to_bytes(nbytes, "little")
        ai = a[i]
        while j < q:
            if ai == b[j]:
                pairs.append((i, j))
                j += 1
                break
            if lb == li:  # skipping a[i] keeps every common item (L(i+1, j) >= L(i, j+1))
                break
            u = q - 1 - j  # one step right: L(i, j+1) = L(i, j) - 1 + (bit u of the row)
            li += ((bits_here[u >> 3] >> (u & 7)) & 1) - 1
            lb += ((bits_below[u >> 3] >> (u & 7)) & 1) - 1
            j += 1
        i += 1
    return pairs


# ---- the official script itself, for parity checks ----

OFFICIAL_SCRIPT = "seg/sighan2005/scripts/score"  # in the data mirror (icwb2-data, unmodified)
OFFICIAL_SCRIPT_SHA256 = "7b9410b0d5433e22067e4c75f5bd9fa7ba13e16357bca5fd050e4493f3e5189e"


def official_script() -> Path:
    """The bakeoff's own perl scorer from the data mirror ($HANZILM_DATA_MIRROR or ../shared/data), checked."""
    from ..data.resolve import MIRROR_ENV, file_sha256, shared_data_dir

    roots = [Path(os.environ[MIRROR_ENV])] if os.environ.get(MIRROR_ENV) else []
    roots += [r for r in (shared_data_dir(),) if r is not None]
    for root in roots:
        path = root / OFFICIAL_SCRIPT
        if path.is_file():
            if file_sha256(path) != OFFICIAL_SCRIPT_SHA256:
                raise DataError(f"not the official scorer (sha256 {file_sha256(path)}, expected "
                                f"{OFFICIAL_SCRIPT_SHA256})", path=path)
            return path
    raise DataError(f"the official scorer {OFFICIAL_SCRIPT} is in none of: {', '.join(map(str, roots)) or '-'}")


def run_official_script(train_words: str | Path, gold: str | Path, test: str | Path) -> str:
    """What the official script prints for these files, run with the OS perl and diff in DIFF_LOCALE."""
    perl = shutil.which("perl")
    if perl is None:
        raise HanzilmError("running the official scorer needs perl (Debian: perl-base)")
    r = subprocess.run([perl, str(official_script()), str(train_words), str(gold), str(test)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_diff_env())
    if r.returncode != 0:
        raise HanzilmError(f"the official scorer failed (exit status {r.returncode}): "
                           f"{r.stderr.decode('utf-8', 'replace').strip()}")
    return _text(r.stdout)


def report_totals(report: str) -> dict[str, str]:
    """The summary of a report (the script's or `format_report`'s): each `=== NAME:<TAB>value` line, as
    printed (TOTAL INSERTIONS, ..., F MEASURE, OOV Rate, OOV Recall Rate, IV Recall Rate)."""
    found = re.findall(r"^=== ([^:\n]+):\t(.*)$", report, flags=re.M)
    return dict(found)


# ---- the cross-check: character offsets ----

def offset_line(gold: Sequence[str], test: Sequence[str], dictionary: frozenset[str] | set[str]) -> Counts:
    """Counts of one line pair by character offsets. A test word is correct when a gold word spans the same
    offsets and is the same string; the words between two correct ones are counted as one hunk."""
    c = Counts(true_words=len(gold), test_words=len(test))
    i = j = 0
    gpos = tpos = 0
    n = m = 0  # gold / test words in the current region (between two common boundaries)
    hunk_n = hunk_m = 0  # unmatched words since the last correct word
    correct = oov_correct = 0
    while i < len(gold) or j < len(test):
        # advance whichever side ends first; a region closes when both sides end at the same offset
        gend = gpos + len(gold[i]) if i < len(gold) else math.inf
        tend = tpos + len(test[j]) if j < len(test) else math.inf
        gword = tword = None
        if gend <= tend:
            gword = gold[i]
            n += 1
            gpos, i = gend, i + 1
        if tend <= gend:
            tword = test[j]
            m += 1
            tpos, j = tend, j + 1
        if gend == tend:
            if n == 1 and m == 1 and gword == tword:  # a correct word closes the hunk of changes before it
                _hunk(c, hunk_n, hunk_m)
                hunk_n = hunk_m = 0
                correct += 1
                oov_correct += gword not in dictionary
            else:
                hunk_n, hunk_m = hunk_n + n, hunk_m + m
            n = m = 0
    _hunk(c, hunk_n + n, hunk_m + m)
    c.oov = sum(w not in dictionary for w in gold)
    c.iv = len(gold) - c.oov
    c.true_missed, c.test_missed = len(gold) - correct, len(test) - correct
    c.oov_missed, c.iv_missed = c.oov - oov_correct, c.iv - (correct - oov_correct)
    return c


def offset_counts(dictionary: Iterable[str], gold: Sequence[Sequence[str]], test: Sequence[Sequence[str]]) -> Counts:
    """Totals by character-offset alignment (`offset_line`); gold lines without words are skipped, as scored."""
    dictionary = frozenset(dictionary)
    total = Counts()
    for g, t in zip(_trim(gold), _trim(test)):
        if g:
            total.add(offset_line(g, t, dictionary))
    return total


# ---- the report ----

def format_report(result: ScoreResult, per_line: bool = False) -> str:
    """What the official script prints: with per_line, each scored line's block (its header, in official mode
    with keep_diff the `diff -y` output, and its counts), then the summary; numbers with the script's `%2.3f`."""
    gold, test = _script_name(result.gold_name), _script_name(result.test_name)
    out: list[str] = []
    for line in result.lines if per_line else ():
        c = line.counts
        out.append(f"--{gold}-------{test}----{line.number}\n")
        out.append(_text(line.diff))
        out += [f"INSERTIONS:\t{c.insertions}\n", f"DELETIONS:\t{c.deletions}\n",
                f"SUBSTITUTIONS:\t{c.substitutions}\n", f"NCHANGE:\t{c.nchange}\n", f"NTRUTH:\t{c.true_words}\n",
                f"NTEST:\t{c.test_words}\n", f"TRUE WORDS RECALL:\t{_f3(c.recall)}\n",
                f"TEST WORDS PRECISION:\t{_f3(c.precision)}\n"]
    t = result.total
    out += ["=== SUMMARY:\n", f"=== TOTAL INSERTIONS:\t{t.insertions}\n", f"=== TOTAL DELETIONS:\t{t.deletions}\n",
            f"=== TOTAL SUBSTITUTIONS:\t{t.substitutions}\n", f"=== TOTAL NCHANGE:\t{t.nchange}\n",
            f"=== TOTAL TRUE WORD COUNT:\t{t.true_words}\n", f"=== TOTAL TEST WORD COUNT:\t{t.test_words}\n",
            f"=== TOTAL TRUE WORDS RECALL:\t{_f3(t.recall)}\n",
            f"=== TOTAL TEST WORDS PRECISION:\t{_f3(t.precision)}\n", f"=== F MEASURE:\t{_f3(t.f1)}\n",
            f"=== OOV Rate:\t{_f3(t.oov_rate)}\n", f"=== OOV Recall Rate:\t{_f3(t.oov_recall)}\n",
            f"=== IV Recall Rate:\t{_f3(t.iv_recall)}\n",
            "\t".join(["###", test, *(str(x) for x in (t.insertions, t.deletions, t.substitutions, t.nchange,
                                                         t.true_words, t.test_words)),
                       *(_f3(x) for x in (t.recall, t.precision, t.f1, t.oov_rate, t.oov_recall,
                                          t.iv_recall))]) + "\n"]
    return "".join(out)


def _script_name(name: str) -> str:
    """The script's `s=^/.*/==`: an absolute path loses its directories, a relative one keeps them."""
    return name.rsplit("/", 1)[-1] if name.startswith("/") else name


def _f3(x: float) -> str:
    return "--" if math.isnan(x) else f"{x:.3f}"  # perl's sprintf("%2.3f"): the same C rounding
