"""`hanzilm segment`: segment text with a trained MMTNN (heavy imports only when the command runs)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

from ...cliutil import add_threads, set_threads
from ...errors import DataError
from ...models import Model, resolve, scan, split_ref

# the book's PKU segmenter (Table 5's MMTNN + pre-training), once `make paper` made it; the cpu run only, not
# whatever other profile's run there is (a smoke model segments at F 63)
# the book's PKU segmenter (Table 5's MMTNN + pre-training, cpu), shipped in the package: `hanzilm segment` and
# `load()` work on a fresh install; `tools/ship_segmenter.py` copies it from the model store after a chapter re-run
SHIPPED = Path(__file__).parent / "shipped" / "pku-mmtnn+pre"
DEFAULT_MODEL = "shipped"


def segmenter_name(config: dict) -> str:
    """pku-mmtnn+pre+bigram-lr0.05, msr-nn-lr0.2, pku-crf, pku-mmtnn-lr0.05-s1 (seeds other than 0). A stored run
    names its learning rate: the chapter trains several per model and its dev set chooses one, which the name
    without the rate stands for (`resolve_segmenter`)."""
    name = f"{config.get('dataset')}-{config.get('model')}"
    name += "+pre" * bool(config.get("pretrained")) + "+bigram" * bool(config.get("bigram"))
    name += f"-lr{config['lr']:g}" if "lr" in config and config.get("model") != "crf" else ""
    return name + (f"-s{config['seed']}" if config.get("seed") else "")


MODEL_NAMES = {"SegmentationConfig": ("mmtnn", segmenter_name)}


def _rate(name: str, family: str) -> float | None:
    """The learning rate of a run named `family`-lr<rate>, else None (another model, a seed, an older run~key)."""
    if not name.startswith(family + "-lr"):
        return None
    try:
        return float(name[len(family) + 3:])
    except ValueError:
        return None


def resolve_segmenter(ref: str, models: Iterable[Model], missing: str | None = None) -> Model:
    """The stored segmenter `ref` (NAME or NAME@PROFILE) names. A name without its learning rate
    (`pku-mmtnn+pre`) is the run of the rate the chapter chooses: the best dev F1 of the rates stored at the
    profile (a bare name: cpu's), on a tie the smaller rate (as `experiment.lr_grid` chooses). `missing`: as
    `resolve`."""
    models = [m for m in models if m.paper == "mmtnn"]
    family, profile = split_ref(ref)
    rates = [(m, r) for m in models if (r := _rate(m.name, family)) is not None and m.profile == profile]
    if not rates or any(m.name == family for m in models):
        return resolve(ref, models, paper="mmtnn", missing=missing)
    best, _ = max(rates, key=lambda mr: (mr[0].metrics.get("dev_f1", float("-inf")), -mr[1]))
    return best


def segmenter_dir(ref: str) -> Path:
    """The saved segmenter a `--model` value means: a model name or a path `hanzilm models` prints (a stored run,
    whose segmenter/ holds it), or a saved segmenter directory."""
    if Path(ref).is_dir():
        return _saved_in(Path(ref), ref)
    if ref == DEFAULT_MODEL:
        return SHIPPED
    models = scan(MODEL_NAMES)
    segmenters = sorted(m.ref for m in models)
    _, profile = split_ref(ref)
    missing = (f"no segmenter {ref!r}: --model takes a segmenter, one of paper mmtnn in `hanzilm models` (here: "
               f"{', '.join(segmenters[:12]) or 'none stored'}{' ...' if len(segmenters) > 12 else ''}), a saved "
               f"segmenter's directory, or {DEFAULT_MODEL!r}, the one shipped with the package (the default); a "
               f"Backpack or a segmental LM is not one. Train the book's with its chapter: make paper "
               f"PROFILE={profile} ONLY='mmtnn/'")
    model = resolve_segmenter(ref, models, missing=missing)
    return _saved_in(model.path, model.ref)


def _saved_in(directory: Path, name: str) -> Path:
    if (directory / "config.json").is_file() or not (directory / "done.json").is_file():
        return directory  # a saved segmenter (anything else is refused by Segmenter.load, naming the file)
    if not (directory / "segmenter").is_dir():
        raise DataError(f"{name} has no saved neural segmenter (the CRF baseline is not one)", path=directory)
    return directory / "segmenter"

BLOCK = 2000  # lines segmented together when nobody watches the output: long and short pieces batch better


def _separator(text: str) -> str:
    if text == "" or "\n" in text or "\r" in text:
        raise argparse.ArgumentTypeError("must be at least one character and no line break: the words of a line "
                                         "would run together, or over several lines")
    return text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("segment", help="segment Chinese text with a trained model (one sentence per line)",
                       description="Segment FILE (default: stdin) with a saved segmenter; writes one line per input "
                                   "line, words separated by two spaces (the bakeoff's format), in UTF-8.")
    p.add_argument("--model", default=DEFAULT_MODEL,
                   help=f"a model name from `hanzilm models` (NAME or NAME@PROFILE) or a saved segmenter directory "
                        f"(default: {DEFAULT_MODEL}, the book's PKU segmenter, shipped with the package)")
    p.add_argument("file", nargs="?", help="UTF-8 input, one sentence per line (default, or '-': stdin)")
    p.add_argument("--sep", default="  ", type=_separator, help="word separator (default: two spaces)")
    p.add_argument("--no-rules", action="store_true", help="do not keep URLs, ASCII runs or grapheme clusters "
                   "(a letter with its combining marks, an emoji sequence) together")
    p.add_argument("--no-traditional", action="store_true", help="read traditional characters as they are, not "
                   "as their simplified forms (OpenCC's table; the output keeps the input's characters either way)")
    p.add_argument("--flush", action="store_true",
                   help="write each line as soon as it is read (the default when the output is a terminal; "
                        "otherwise lines are segmented in blocks of %d, which is faster)" % BLOCK)
    add_threads(p)
    p.set_defaults(func=_segment)


def _segment(args: argparse.Namespace) -> int:
    set_threads(args.threads)
    from .segmenter import Segmenter, iter_lines, segment_stream

    segmenter = Segmenter.load(segmenter_dir(args.model), rules=not args.no_rules,
                               traditional=not args.no_traditional)
    out = sys.stdout.buffer
    interactive = args.flush or sys.stdout.isatty()
    writer = _Utf8Lines(out, flush=interactive)
    name = args.file if args.file not in (None, "-") else "<stdin>"
    if name != "<stdin>":
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
