"""`hanzilm score`: the SIGHAN bakeoff scorer on the command line."""

from __future__ import annotations

import argparse
import sys

from ..cliutil import add_threads
from ..errors import DataError
from .sighan import format_report, score_files  # the standard library only: cheap for --help


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="score a segmentation against the gold (the SIGHAN bakeoff metrics)",
                       description="Score TEST against GOLD with the SIGHAN bakeoff metrics; TRAIN_WORDS is the "
                                   "training word list (for OOV recall). UTF-8 files, one sentence per line. "
                                   "The default reproduces the official bakeoff script (it runs GNU `diff -y` per "
                                   "line, as the script does); --mode exact aligns by a longest common "
                                   "subsequence of words instead.")
    p.add_argument("train_words", help="training word list, one word per line ('-' for none)")
    p.add_argument("gold", help="the gold segmentation: words separated by spaces, one sentence per line")
    p.add_argument("test", help="the segmentation to score, line for line with the gold")
    p.add_argument("--mode", choices=("official", "exact"), default="official",
                   help="official: the script's alignment (GNU diff, needs `diff` on PATH; the default); "
                        "exact: a longest common subsequence of words")
    p.add_argument("--per-line", action="store_true",
                   help="also print the per-line blocks (in official mode with diff's output, as the script)")
    p.add_argument("--allow-mismatch", action="store_true",
                   help="score lines whose characters differ from the gold instead of stopping (listed on stderr)")
    add_threads(p, what="diff processes at once in official mode")
    p.set_defaults(func=_score)


def _score(args: argparse.Namespace) -> int:
    words = None if args.train_words in ("-", "") else args.train_words
    result = score_files(words, args.gold, args.test, allow_mismatch=args.allow_mismatch, mode=args.mode,
                         keep_diff=args.per_line, workers=args.threads)
    if result.total.true_words == 0:  # F would print as 0.000, a score of nothing
        raise DataError("the gold has no words: nothing to score against", path=args.gold)
    # bytes: a word the A1 40 split cut in two is written back as the script writes it
    report = format_report(result, per_line=args.per_line).encode("utf-8", "surrogateescape")
    sys.stdout.flush()
    sys.stdout.buffer.write(report)
    sys.stdout.buffer.flush()
    if result.mismatched:
        print(f"hanzilm score: warning: {len(result.mismatched)} line(s) differ from the gold in their characters "
              f"and were scored anyway: {', '.join(map(str, result.mismatched[:20]))}", file=sys.stderr)
    return 0
