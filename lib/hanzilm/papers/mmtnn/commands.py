"""`hanzilm segment`: segment text with a trained MMTNN (heavy imports only when the command runs)."""

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


def _segment(args: argparse.Namespace) -> int:
    from .segmenter import cli

    return cli(args)
