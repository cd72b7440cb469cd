"""`hanzilm segment` and `hanzilm score`, registered together (heavy imports only when a command runs)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("segment", help="segment Chinese text with a trained model (one sentence per line)",
                       description="Segment FILE (default: stdin) with a saved segmenter; writes one line per input "
                                   "line, words separated by two spaces (the bakeoff's format).")
    p.add_argument("--model", required=True, help="a saved segmenter directory (config.json, model.safetensors)")
    p.add_argument("file", nargs="?", help="UTF-8 input, one sentence per line (default: stdin)")
    p.add_argument("--sep", default="  ", help="word separator (default: two spaces)")
    p.add_argument("--no-rules", action="store_true", help="do not keep URLs / ASCII runs together")
    p.set_defaults(func=_segment)

    p = sub.add_parser("score", help="score a segmentation against the gold (the SIGHAN bakeoff metrics)",
                       description="Score TEST against GOLD with the SIGHAN bakeoff metrics; TRAIN_WORDS is the "
                                   "training word list (for OOV recall). UTF-8 files, one sentence per line.")
    p.add_argument("train_words", help="training word list, one word per line ('-' for none)")
    p.add_argument("gold")
    p.add_argument("test")
    p.add_argument("--per-line", action="store_true", help="also print the per-line blocks")
    p.add_argument("--allow-mismatch", action="store_true",
                   help="score lines whose characters differ from the gold instead of stopping (listed on stderr)")
    p.set_defaults(func=_score)


def _segment(args: argparse.Namespace) -> int:
    from .segmenter import cli

    return cli(args)


def _score(args: argparse.Namespace) -> int:
    from ...eval.sighan import cli

    return cli(args)
