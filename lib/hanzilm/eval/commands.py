"""`hanzilm score`: the SIGHAN bakeoff scorer on the command line (heavy imports only when it runs)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="score a segmentation against the gold (the SIGHAN bakeoff metrics)",
                       description="Score TEST against GOLD with the SIGHAN bakeoff metrics; TRAIN_WORDS is the "
                                   "training word list (for OOV recall). UTF-8 files, one sentence per line. "
                                   "The default reproduces the official bakeoff script (it runs GNU `diff -y` per "
                                   "line, as the script does); --mode exact aligns by a longest common "
                                   "subsequence of words instead.")
    p.add_argument("train_words", help="training word list, one word per line ('-' for none)")
    p.add_argument("gold")
    p.add_argument("test")
    p.add_argument("--mode", choices=("official", "exact"), default="official",
                   help="official: the script's alignment (GNU diff, needs `diff` on PATH; the default); "
                        "exact: a longest common subsequence of words")
    p.add_argument("--per-line", action="store_true",
                   help="also print the per-line blocks (in official mode with diff's output, as the script)")
    p.add_argument("--allow-mismatch", action="store_true",
                   help="score lines whose characters differ from the gold instead of stopping (listed on stderr)")
    p.set_defaults(func=_score)


def _score(args: argparse.Namespace) -> int:
    from .sighan import cli

    return cli(args)
