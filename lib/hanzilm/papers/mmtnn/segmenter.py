"""A word segmenter people can use: `Segmenter.load(path).segment(text)` and `hanzilm segment --model M [FILE]`.

A saved segmenter is a directory: config.json (format, model spec, sizes), model.safetensors (weights),
chars.json (the character vocabulary) and, with bigram features, bigrams.json. No pickle anywhere.

Input handling: whitespace in a line is a word boundary and is dropped from the output; half-width ASCII is looked
up as full-width (`tags.normalize`); unknown characters map to <unk>; URLs and e-mail addresses are one word and
runs of ASCII letters/digits are never split inside, nor is a grapheme cluster (a letter with its combining marks,
an emoji sequence), and a control character is a word of its own (`tags.allowed_tags`); lines longer than `max_piece`
characters are cut at punctuation (else hard) before decoding, so memory stays bounded; an empty line stays
empty. Decoding is batched: pieces of similar length are decoded together. `rules=False, max_piece=None` is the
paper's decoding, the book's: plain Viterbi over the model's scores of each whitespace-separated chunk.

Decoding runs on whichever model the segmenter holds: the trained torch `WindowTagger`, or, as `load` gives by
default, the same weights in NumPy (`NumpyTagger`), so that a command line loading a saved segmenter does not
spend a second importing torch. `hanzilm segment` itself is `commands.py`.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator, Literal, Sequence, TextIO

import numpy as np

from ...data.resolve import file_sha256
from ...errors import DataError
from ...io import atomic_path, atomic_write_text
from .encoding import Encoder
from .numpy_tagger import NumpyTagger
from .spec import TaggerSpec

if TYPE_CHECKING:
    from .tagger import WindowTagger
from .tags import B, E, S, allowed_tags, tags_to_words
from .traditional import SimplifiedLookup
from .viterbi import viterbi

# every saved segmenter's config.json names this format, the stored ones too: renaming it breaks loading them
FORMAT = "hanzilm.segmenter/1"
MANIFEST = "manifest.json"
_BREAK_AFTER = re.compile(r"[。！？；，、：!?;,]")


class Segmenter:
    def __init__(self, model: WindowTagger | NumpyTagger, encoder: Encoder, *, rules: bool = True,
                 max_piece: int | None = 1000, batch_chars: int = 4096, search_chars: int = 65536,
                 traditional: bool = True):
        # batch_chars: a batch's hidden activations (about 4 kB per character for MMTNN) stay in cache. The
        # Viterbi search loops over positions with a few NumPy calls each, whatever the number of pieces, so it
        # runs over search_chars at once (fewer, longer steps)
        if hasattr(model, "eval"):
            model.eval()  # a torch module
        self.model = model
        self.encoder = encoder
        self.rules = rules
        # traditional (or mixed) text read through OpenCC's table: each character the model does not know as
        # the simplified form it knows (`traditional.SimplifiedLookup`); the words keep the reader's characters
        self.lookup = SimplifiedLookup.for_vocab(set(encoder.vocab.itos)) if traditional else None
        self.max_piece = max_piece
        self.batch_chars = batch_chars
        self.search_chars = search_chars

    # ---- persistence ----
    def save(self, directory: str | Path) -> None:
        if isinstance(self.model, NumpyTagger):
            raise TypeError("a segmenter loaded for decoding only is not saved again: load it with engine='torch'")
        from safetensors.torch import save_model

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.encoder.save(directory)
        with atomic_path(directory / "model.safetensors") as tmp:
            save_model(self.model, str(tmp))
        config = {"format": FORMAT, "spec": dataclasses.asdict(self.model.spec),
                  "n_chars": len(self.encoder.vocab), "n_bigrams": self.encoder.n_bigrams}
        atomic_write_text(directory / "config.json", json.dumps(config, indent=1))
        # written last: the checksum of every file, verified by `load` (a file changed, truncated or swapped in
        # from another model is refused)
        atomic_write_text(directory / MANIFEST, json.dumps({"format": FORMAT, "sha256": {
            f.name: file_sha256(f) for f in sorted(directory.iterdir()) if f.is_file() and f.name != MANIFEST}}, indent=1))

    @classmethod
    def load(cls, directory: str | Path, engine: Literal["numpy", "torch"] = "numpy", **options) -> Segmenter:
        """A saved segmenter; engine "torch" loads a WindowTagger (to train further), "numpy" decodes the same."""
        directory = Path(directory)
        _verify(directory)
        path = directory / "config.json"
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
            if config.get("format") != FORMAT:
                raise ValueError(f"format is {config.get('format')!r}, expected {FORMAT!r}")
            spec = TaggerSpec(**config["spec"])
            n_chars, n_bigrams = int(config["n_chars"]), int(config["n_bigrams"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise DataError(f"not a segmenter: {type(e).__name__}: {e}", path=path) from None
        encoder = Encoder.load(directory)
        if (len(encoder.vocab), encoder.n_bigrams) != (n_chars, n_bigrams):
            raise DataError(f"the vocabularies have {len(encoder.vocab)} characters and {encoder.n_bigrams} "
                            f"bigrams, config.json says {n_chars} and {n_bigrams}", path=directory)
        weights = directory / "model.safetensors"
        if engine == "numpy":
            model = NumpyTagger.load(weights, spec, n_chars, n_bigrams)
        elif engine == "torch":
            from ...store import load_model
            from .tagger import WindowTagger

            model = load_model(WindowTagger(spec, n_chars, n_bigrams), weights, device="cpu")  # checks values
        else:
            raise ValueError(f"engine must be 'numpy' or 'torch', not {engine!r}")
        return cls(model, encoder, **options)

    # ---- segmentation ----
    def segment(self, text: str) -> list[str]:
        """The words of one line of text (whitespace separates words and is dropped)."""
        return self.segment_lines([text])[0]

    cut = segment  # jieba's name for it: `load("pku-mmtnn+pre").cut("我爱北京天安门")`

    def segment_lines(self, lines: Sequence[str]) -> list[list[str]]:
        pieces: list[str] = []
        where: list[int] = []
        for n, line in enumerate(lines):
            for chunk in line.split():
                for piece in self._cut(chunk):
                    pieces.append(piece)
                    where.append(n)
        out: list[list[str]] = [[] for _ in lines]
        for n, words in zip(where, self.segment_pieces(pieces)):
            out[n].extend(words)
        return out

    def _cut(self, chunk: str) -> Iterator[str]:
        """Pieces of at most max_piece characters (one longer only where no word may begin inside it), cut after
        the last punctuation of a window when it is past a quarter of it, else as late as a word may begin: never
        inside a URL, an ASCII run or a grapheme cluster the rules keep whole."""
        mask = allowed_tags(chunk) if self.rules and self.max_piece is not None and len(chunk) > self.max_piece \
            else None
        start = 0
        while self.max_piece is not None and len(chunk) - start > self.max_piece:
            k = self._cut_point(chunk, start, mask)
            if k is None:
                break
            yield chunk[start:k]
            start = k
        if start < len(chunk):
            yield chunk[start:]

    def _cut_point(self, chunk: str, start: int, mask: np.ndarray | None) -> int | None:
        """Where the piece starting at `start` ends: a position where a word may begin (the mask allows B or S
        there and E or S before it), punctuation first; None if no word may begin after `start`."""
        def may_begin(k: int) -> bool:
            return mask is None or bool((mask[k, B] or mask[k, S]) and (mask[k - 1, E] or mask[k - 1, S]))

        end = start + self.max_piece
        cuts = [m.end() for m in _BREAK_AFTER.finditer(chunk, start, end)]
        cuts = [k for k in cuts if k - start > self.max_piece // 4 and may_begin(k)]
        if cuts:
            return cuts[-1]
        later = (k for k in range(end, start, -1) if may_begin(k))
        return next(later, None) or next((k for k in range(end + 1, len(chunk)) if may_begin(k)), None)

    def segment_pieces(self, pieces: Sequence[str]) -> list[list[str]]:
        """Words of each piece (no whitespace inside), decoded in batches of similar length."""
        order = sorted(range(len(pieces)), key=lambda i: len(pieces[i]))
        lengths = [len(pieces[i]) for i in order]
        result: list[list[str]] = [[] for _ in pieces]
        for a, b in _spans(lengths, self.search_chars):
            for i, words in zip(order[a:b], self._decode([pieces[i] for i in order[a:b]])):
                result[i] = words
        return result

    def _decode(self, texts: list[str]) -> list[list[str]]:
        """Words of `texts` (sorted by length): scored in batches of `batch_chars`, searched in one go."""
        lengths = np.array([len(t) for t in texts])
        masks = [allowed_tags(t) for t in texts] if self.rules else [None] * len(texts)
        looked = [self.lookup(t) for t in texts] if self.lookup else texts   # what the model reads
        scores = np.zeros((len(texts), max(lengths), 5, 4), np.float32)
        for a, b in _spans(lengths, self.batch_chars):
            if lengths[a] > self.batch_chars:  # one text alone, longer than a batch: scored along it
                scores[a, :lengths[a]] = self._long_scores(looked[a], masks[a])
                continue
            part = self.model.decode_scores(self.encoder.arrays(looked[a:b]))
            scores[a:b, :part.shape[1]] = part
        allowed = None
        if self.rules:
            if any(m is not None for m in masks):
                allowed = np.ones((len(texts), scores.shape[1], 4), dtype=bool)
                for b, m in enumerate(masks):
                    if m is not None:
                        allowed[b, :len(m)] = m
        tags, _ = viterbi(scores, lengths, constrain=self.model.spec.constrain, allowed=allowed)
        return [tags_to_words(t, tags[b]) for b, t in enumerate(texts)]


    def _long_scores(self, text: str, mask: np.ndarray | None) -> np.ndarray:
        """`decode_scores` of one text, `batch_chars` positions at a time: a position's scores read only its
        window of characters (and their bigrams), so each slice is scored with that much context on either side
        and the scores are those of the whole text, in memory bounded by a batch (a line of a million characters
        no longer holds gigabytes of activations). Positions the mask forces, as the one before them, are left
        at 0: the search passes them on the one path they allow, whatever their scores (a long ASCII run costs
        nothing to score)."""
        context = self.model.spec.window  # more than the window's half and its bigrams need
        out = np.zeros((len(text), 5, 4), np.float32)
        for start, end in _scored_spans(mask, len(text), self.batch_chars):
            lo, hi = max(0, start - context), min(len(text), end + context)
            out[start:end] = self.model.decode_scores(self.encoder.arrays([text[lo:hi]]))[0, start - lo:end - lo]
        return out


def _scored_spans(mask: np.ndarray | None, length: int, size: int) -> Iterator[tuple[int, int]]:
    """(start, end) slices of at most `size` positions covering every position whose scores a search can use:
    all but those forced by the mask (one tag allowed) after a forced one."""
    need = np.ones(length, dtype=bool)
    if mask is not None:
        one = mask.sum(axis=1) == 1
        need[1:] = ~(one[1:] & one[:-1])
    edges = np.flatnonzero(np.diff(np.concatenate([[0], need.view(np.int8), [0]])))
    for a, b in zip(edges[::2], edges[1::2]):
        for start in range(int(a), int(b), size):
            yield start, min(start + size, int(b))


def _spans(lengths: Sequence[int], max_chars: int) -> Iterator[tuple[int, int]]:
    """(start, end) of consecutive runs of `lengths` (sorted) whose padded size, count x longest, stays within
    `max_chars` (a single longer one is a run of its own)."""
    a = 0
    while a < len(lengths):
        b = a + 1
        while b < len(lengths) and (b - a + 1) * lengths[b] <= max_chars:
            b += 1
        yield a, b
        a = b


# ---- the command line ----

def iter_lines(stream: Iterable[bytes], name: str) -> Iterator[str]:
    """Strictly decoded UTF-8 lines ending at LF, CR LF or a lone CR (old Mac files), each without a leading BOM
    (files joined together carry one at every join); a bad byte is an error naming the line."""
    for n, raw in enumerate(stream, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DataError(f"not valid UTF-8 at byte {e.start} of the line (byte {raw[e.start:e.start + 1].hex()}); "
                            "convert the file to UTF-8 first", path=name, line=n) from None
        text = text.removesuffix("\n").removesuffix("\r")
        for line in text.split("\r"):
            yield line.lstrip("\ufeff")


def segment_stream(segmenter: Segmenter, lines: Iterable[str], out: TextIO, sep: str = "  ",
                   block: int = 2000) -> int:
    """Segment lines in blocks (bounded memory for any input size); returns the number of lines. A bad line
    stops the stream after every line before it is written, whatever the block size (as a line-by-line run
    would leave it)."""
    count, buf = 0, []
    try:
        for line in lines:
            buf.append(line)
            if len(buf) == block:
                count += _flush(segmenter, buf, out, sep)
                buf = []
    except DataError:
        _flush(segmenter, buf, out, sep)
        raise
    return count + _flush(segmenter, buf, out, sep)


def _flush(segmenter: Segmenter, buf: list[str], out: TextIO, sep: str) -> int:
    for words in segmenter.segment_lines(buf):
        out.write(sep.join(words) + "\n")
    return len(buf)


def _verify(directory: Path) -> None:
    """Check every file against the directory's manifest.json (segmenters saved before manifests have none: they
    are checked by shape and value only)."""
    path = directory / MANIFEST
    if not path.is_file():
        if not directory.is_dir():
            raise DataError("no such segmenter directory", path=directory)
        return
    try:
        expected = json.loads(path.read_text(encoding="utf-8"))["sha256"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise DataError(f"unreadable manifest: {type(e).__name__}: {e}", path=path) from None
    for name, digest in expected.items():
        f = directory / name
        if not f.is_file():
            raise DataError("missing (manifest.json lists it)", path=f)
        if file_sha256(f) != digest:
            raise DataError("its sha256 differs from manifest.json: the file was changed, truncated or swapped in "
                            "from another model", path=f)

