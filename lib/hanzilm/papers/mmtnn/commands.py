"""`hanzilm segment`: segment text with a trained MMTNN (heavy imports only when the command runs)."""

from __future__ import annotations

import argparse
import contextlib
import sys
import json
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

from ...cliutil import add_threads, set_threads
from ...errors import DataError
from ...models import Model, resolve, scan

SHIPPED = Path(__file__).parent / "shipped"
DEFAULT_MODEL = "pku-mmtnn+pre"  # shipped with the package: `hanzilm segment` works before anything is trained


def segmenter_name(config: dict) -> str:
    """pku-mmtnn+pre+bigram-lr0.05, msr-nn-lr0.2, pku-crf, pku-mmtnn-lr0.05-s1 (seeds other than 0). A stored run
    names its learning rate (the dev set chooses one of several per model); the shipped model is the bare
    `pku-mmtnn+pre`."""
    name = f"{config.get('dataset')}-{config.get('model')}"
    name += "+pre" * bool(config.get("pretrained")) + "+bigram" * bool(config.get("bigram"))
    name += f"-lr{config['lr']:g}" if "lr" in config and config.get("model") != "crf" else ""
    return name + (f"-s{config['seed']}" if config.get("seed") else "")


MODEL_NAMES = {"SegmentationConfig": ("mmtnn", segmenter_name)}


def shipped_models() -> list[Model]:
    out = []
    for info in sorted(SHIPPED.glob("*/shipped.json")):
        record = json.loads(info.read_text(encoding="utf-8"))
        out.append(Model(record["name"], "mmtnn", "shipped", info.parent, record.get("metrics", {})))
    return out


def segmenter_dir(ref: str) -> Path:
    """The saved segmenter a `--model` value means: a directory, or a model name (`hanzilm models`)."""
    if Path(ref).is_dir():
        return Path(ref)
    model = resolve(ref, scan(MODEL_NAMES, shipped_models()), paper="mmtnn")
    directory = model.path if model.profile == "shipped" else model.path / "segmenter"
    if not directory.is_dir():
        raise DataError(f"{model.ref} has no saved neural segmenter (the CRF baseline is not one)", path=model.path)
    return directory

BLOCK = 2000  # lines segmented together when nobody watches the output: long and short pieces batch better


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("segment", help="segment Chinese text with a trained model (one sentence per line)",
                       description="Segment FILE (default: stdin) with a saved segmenter; writes one line per input "
                                   "line, words separated by two spaces (the bakeoff's format), in UTF-8.")
    p.add_argument("--model", default=DEFAULT_MODEL,
                   help=f"a model name from `hanzilm models` (NAME or NAME@PROFILE) or a saved segmenter directory "
                        f"(default: {DEFAULT_MODEL}, shipped with the package)")
    p.add_argument("file", nargs="?", help="UTF-8 input, one sentence per line (default: stdin)")
    p.add_argument("--sep", default="  ", help="word separator (default: two spaces)")
    p.add_argument("--no-rules", action="store_true", help="do not keep URLs / ASCII runs together")
    p.add_argument("--flush", action="store_true",
                   help="write each line as soon as it is read (the default when the output is a terminal; "
                        "otherwise lines are segmented in blocks of %d, which is faster)" % BLOCK)
    add_threads(p)
    p.set_defaults(func=_segment)


def _segment(args: argparse.Namespace) -> int:
    set_threads(args.threads)
    from .segmenter import Segmenter, iter_lines, segment_stream

    segmenter = Segmenter.load(segmenter_dir(args.model), rules=not args.no_rules)
    out = sys.stdout.buffer
    interactive = args.flush or sys.stdout.isatty()
    writer = _Utf8Lines(out, flush=interactive)
    name = args.file or "<stdin>"
    if args.file:
        try:
            stream = open(args.file, "rb")
        except OSError as e:
            raise DataError(f"cannot read file: {e.strerror}", path=args.file) from None
    else:
        stream = contextlib.nullcontext(sys.stdin.buffer)  # stdin is not ours to close
    with stream as f:
        segment_stream(segmenter, iter_lines(_read(f, name), name), writer, args.sep,
                       block=1 if interactive else BLOCK)
    out.flush()
    return 0


def _read(stream: BinaryIO, name: str) -> Iterator[bytes]:
    """The stream's lines; a failed read names the input (a failed write names the output, see cliutil)."""
    lines = iter(stream)
    while True:
        try:
            line = next(lines)
        except StopIteration:
            return
        except OSError as e:
            raise DataError(f"cannot read file: {e.strerror}", path=name) from None
        yield line


class _Utf8Lines:
    """The text stream segment_stream writes to: UTF-8 whatever the locale, one flush per line when asked."""

    def __init__(self, out: BinaryIO, flush: bool):
        self.out, self.flush_each = out, flush

    def write(self, text: str) -> int:
        n = self.out.write(text.encode("utf-8"))
        if self.flush_each:
            self.out.flush()
        return n

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)
