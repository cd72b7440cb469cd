"""The SIGHAN bakeoff word-segmentation scorer, written from the behaviour of the official `score` script.

    result = score_files("pku_training_words.utf8", "pku_test_gold.utf8", "our_output.txt")
    print(format_report(result))          # the official layout: per-line blocks and the === SUMMARY
    hanzilm score TRAIN_WORDS GOLD TEST   # the same from the shell

Behaviour (as the official script, release 1 of icwb2-data):

* Gold and test are read line by line in parallel; each line is trimmed and split on runs of whitespace.
* Words are aligned per line by a minimal diff of the two word lists (the script writes one word per line and
  runs `diff`): the correct words are a longest common subsequence. On lines with the same characters this is,
  up to rare ties between repeated words, the alignment by character offsets (a word is correct when a gold
  word covers exactly the same characters), which `offset_counts` computes as a cross-check.
* Between two consecutive correct words, the n unmatched gold and m unmatched test words (one diff hunk) count
  min(n, m) substitutions, n - min deletions and m - min insertions.
  Recall = (gold words - deletions - substitutions) / gold words = correct / gold words; precision likewise
  over test words; F = 2PR / (P + R).
* OOV words are gold words not in the training word list: OOV rate = OOV gold words / gold words, OOV recall =
  correctly segmented OOV gold words / OOV gold words, IV recall the same over the other gold words.
* Unlike the script, which silently scores files that do not correspond, a line whose characters differ from
  the gold line's, or a different number of lines, is an error naming the file and line; `allow_mismatch` (CLI
  `--allow-mismatch`) scores such lines anyway and lists them (the official MSR test input needs it).
  Trailing blank lines are ignored on both sides (the PKU gold ends with one).

Evidence that the word diff is the script's alignment: jieba 0.42.1 on the MSR test input scores F 81.3 with the
official script (`../shared/anchors.md`); the word diff gives 81.33, the offset alignment 81.18 (the official MSR
test input differs from its gold on 16 lines, where offsets lose their sync and a diff does not).
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Iterable, Sequence

from ..data.readers import read_lines, read_word_list
from ..errors import DataError


@dataclass
class Counts:
    insertions: int = 0
    deletions: int = 0
    substitutions: int = 0
    true_words: int = 0
    test_words: int = 0
    correct: int = 0
    oov: int = 0
    oov_correct: int = 0

    @property
    def nchange(self) -> int:
        return self.insertions + self.deletions + self.substitutions

    @property
    def recall(self) -> float:
        return _ratio(self.true_words - self.deletions - self.substitutions, self.true_words)

    @property
    def precision(self) -> float:
        return _ratio(self.test_words - self.insertions - self.substitutions, self.test_words)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0

    @property
    def oov_rate(self) -> float:
        return _ratio(self.oov, self.true_words)

    @property
    def oov_recall(self) -> float:
        return _ratio(self.oov_correct, self.oov)

    @property
    def iv_recall(self) -> float:
        return _ratio(self.correct - self.oov_correct, self.true_words - self.oov)

    def add(self, other: Counts) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def metrics(self, percent: bool = False) -> dict[str, float]:
        k = 100.0 if percent else 1.0
        return {"precision": k * self.precision, "recall": k * self.recall, "f1": k * self.f1,
                "oov_rate": k * self.oov_rate, "oov_recall": k * self.oov_recall, "iv_recall": k * self.iv_recall}


@dataclass
class ScoreResult:
    total: Counts
    lines: list[Counts] = field(default_factory=list)
    test_name: str = ""
    mismatched: list[int] = field(default_factory=list)  # lines scored although their characters differ


def _ratio(a: int, b: int) -> float:
    return a / b if b else math.nan


def offset_line(gold: Sequence[str], test: Sequence[str], dictionary: frozenset[str] | set[str]) -> Counts:
    """The cross-check: counts of one line pair by character offsets. A test word is correct when a gold word spans
    the same offsets and is the same string; the words between two correct ones are counted as one hunk."""
    c = Counts(true_words=len(gold), test_words=len(test))
    i = j = 0
    gpos = tpos = 0
    n = m = 0  # gold / test words in the current region (between two common boundaries)
    hunk_n = hunk_m = 0  # unmatched words since the last correct word
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
                c.correct += 1
                if gword not in dictionary:
                    c.oov_correct += 1
            else:
                hunk_n, hunk_m = hunk_n + n, hunk_m + m
            n = m = 0
    _hunk(c, hunk_n + n, hunk_m + m)
    c.oov = sum(w not in dictionary for w in gold)
    return c


def _hunk(c: Counts, n: int, m: int) -> None:
    """A run of n gold and m test words between two correct words, counted like one diff hunk."""
    s = min(n, m)
    c.substitutions += s
    c.deletions += n - s
    c.insertions += m - s


def score(dictionary: Iterable[str], gold: Sequence[Sequence[str]], test: Sequence[Sequence[str]], *,
          gold_name: str = "gold", test_name: str = "test", allow_mismatch: bool = False) -> ScoreResult:
    """Score word lists line by line (both already split; blank lines are empty lists).

    A line whose characters differ from the gold line's is an error, unless allow_mismatch: then it is scored
    anyway (words right only where offsets and strings agree), as the official script does silently, and its
    number is listed in `result.mismatched`. The official MSR test input itself differs from its gold on 16 lines
    (e.g. line 442 lacks the gold's final quotation mark), so any system's MSR output needs it."""
    dictionary = frozenset(dictionary)
    gold, test = _trim(gold), _trim(test)
    if len(gold) != len(test):
        raise DataError(f"has {len(test)} non-trailing-blank lines, but the gold file {gold_name} has {len(gold)}",
                        path=test_name)
    result = ScoreResult(total=Counts(), test_name=test_name)
    for lineno, (g, t) in enumerate(zip(gold, test), start=1):
        gs, ts = "".join(g), "".join(t)
        if gs != ts and allow_mismatch:
            result.mismatched.append(lineno)
        elif gs != ts:
            k = next((i for i, (a, b) in enumerate(zip(gs, ts)) if a != b), min(len(gs), len(ts)))
            raise DataError(f"its characters differ from the gold line ({gold_name}) at character {k + 1}: "
                            f"gold {gs[max(0, k - 5):k + 5]!r} vs test {ts[max(0, k - 5):k + 5]!r}",
                            path=test_name, line=lineno)
        c = score_line(g, t, dictionary)
        result.lines.append(c)
        result.total.add(c)
    return result


def _trim(lines: Sequence[Sequence[str]]) -> list[Sequence[str]]:
    lines = list(lines)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def read_words(path: str | Path) -> list[list[str]]:
    return [line.split() for line in read_lines(path, keep_empty=True)]


def score_files(train_words: str | Path | None, gold: str | Path, test: str | Path, *,
                allow_mismatch: bool = False) -> ScoreResult:
    dictionary = read_word_list(train_words, comment=None, skip_lines=0) if train_words else []
    return score(dictionary, read_words(gold), read_words(test), gold_name=str(gold), test_name=str(test),
                 allow_mismatch=allow_mismatch)


def format_report(result: ScoreResult, per_line: bool = False) -> str:
    """The official script's summary block (and, with per_line, its per-line blocks), 3 decimals."""
    out: list[str] = []
    if per_line:
        for c in result.lines:
            out += [f"--INSERTIONS:\t{c.insertions}", f"--DELETIONS:\t{c.deletions}",
                    f"--SUBSTITUTIONS:\t{c.substitutions}", f"--NCHANGE:\t{c.nchange}",
                    f"--NTRUTH:\t{c.true_words}", f"--NTEST:\t{c.test_words}",
                    f"--TRUE WORDS RECALL:\t{_f3(c.recall)}", f"--TEST WORDS PRECISION:\t{_f3(c.precision)}"]
    t = result.total
    out += ["=== SUMMARY:", f"=== TOTAL INSERTIONS:\t{t.insertions}", f"=== TOTAL DELETIONS:\t{t.deletions}",
            f"=== TOTAL SUBSTITUTIONS:\t{t.substitutions}", f"=== TOTAL NCHANGE:\t{t.nchange}",
            f"=== TOTAL TRUE WORD COUNT:\t{t.true_words}", f"=== TOTAL TEST WORD COUNT:\t{t.test_words}",
            f"=== TOTAL TRUE WORDS RECALL:\t{_f3(t.recall)}", f"=== TOTAL TEST WORDS PRECISION:\t{_f3(t.precision)}",
            f"=== F MEASURE:\t{_f3(t.f1)}", f"=== OOV Rate:\t{_f3(t.oov_rate)}",
            f"=== OOV Recall Rate:\t{_f3(t.oov_recall)}", f"=== IV Recall Rate:\t{_f3(t.iv_recall)}",
            "\t".join(["###", result.test_name, *(str(x) for x in (t.insertions, t.deletions, t.substitutions,
                       t.nchange, t.true_words, t.test_words)),
                       *(_f3(x) for x in (t.recall, t.precision, t.f1, t.oov_rate, t.oov_recall, t.iv_recall))])]
    return "\n".join(out) + "\n"


def _f3(x: float) -> str:
    return "--" if math.isnan(x) else f"{x:.3f}"


# ---- the official alignment (a word diff) and the cross-check (character offsets) ----

def _lcs_pairs(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """Index pairs of one longest common subsequence of a and b (common prefix and suffix first, then dynamic
    programming on the middle)."""
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
    if p and q:
        table = [[0] * (q + 1) for _ in range(p + 1)]
        for i in range(p - 1, -1, -1):
            row, below, ai = table[i], table[i + 1], mid_a[i]
            for j in range(q - 1, -1, -1):
                row[j] = below[j + 1] + 1 if ai == mid_b[j] else (below[j] if below[j] >= row[j + 1] else row[j + 1])
        i = j = 0
        while i < p and j < q:
            if mid_a[i] == mid_b[j]:
                pairs.append((lo + i, lo + j))
                i, j = i + 1, j + 1
            elif table[i + 1][j] >= table[i][j + 1]:
                i += 1
            else:
                j += 1
    pairs += [(n - hi + k, m - hi + k) for k in range(hi)]
    return pairs


def score_line(gold: Sequence[str], test: Sequence[str], dictionary: frozenset[str] | set[str]) -> Counts:
    """Counts of one line pair, as the official script computes them: a minimal diff of the two word lists
    (one word per line), i.e. a longest common subsequence of words; each hunk of n gold and m test words between
    two common words counts min(n, m) substitutions, n - min deletions and m - min insertions."""
    c = Counts(true_words=len(gold), test_words=len(test), oov=sum(w not in dictionary for w in gold))
    prev_i = prev_j = -1
    for i, j in [*_lcs_pairs(gold, test), (len(gold), len(test))]:
        _hunk(c, i - prev_i - 1, j - prev_j - 1)
        if i < len(gold):
            c.correct += 1
            c.oov_correct += gold[i] not in dictionary
        prev_i, prev_j = i, j
    return c


def offset_counts(dictionary: Iterable[str], gold: Sequence[Sequence[str]], test: Sequence[Sequence[str]]) -> Counts:
    """Totals by character-offset alignment (`offset_line`), the cross-check of the word-diff totals."""
    dictionary = frozenset(dictionary)
    total = Counts()
    for g, t in zip(_trim(gold), _trim(test)):
        total.add(offset_line(g, t, dictionary))
    return total


def cli(args: argparse.Namespace) -> int:
    """`hanzilm score` (parser in eval/commands.py)."""
    words = None if args.train_words in ("-", "") else args.train_words
    result = score_files(words, args.gold, args.test, allow_mismatch=args.allow_mismatch)
    sys.stdout.write(format_report(result, per_line=args.per_line))
    if result.mismatched:
        print(f"hanzilm score: warning: {len(result.mismatched)} line(s) differ from the gold in their characters "
              f"and were scored anyway: {', '.join(map(str, result.mismatched[:20]))}", file=sys.stderr)
    return 0
