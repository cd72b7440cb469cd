"""The SNLM splits of Kawakami et al. (2019) used by the segmental-LM paper, and the missing PKU `tr`.

PKU is used in its `_cws` form, as the authors trained and scored it (their PKU word2vec vocabulary, in their
repository's `Data/SNLM_sets/pku/pku_w2v_32ep_indices.json`, holds `<punc>`, `<num>` and `<eng>` symbols and none
of the punctuation): every run of punctuation is one `<punc>` symbol, every number one `<num>`, every run of Latin
letters one `<eng>`. `va_cws.txt` / `te_cws.txt` are used as published; `cws_normalise` reproduces them from
`va.txt` / `te.txt` token for token (a test checks all 184,111 tokens).

PKU `tr.txt` could not be obtained; it is the official PKU training file minus the sentences in `va`/`te`.
We rebuild it from the People's Daily 1998-01 stand-in, dropping every sentence whose characters occur as
a `va` or `te` sentence, so no evaluation sentence leaks into training, then normalise it as above.

Each tag is held as one private-use character (`TAG_SYMBOLS`) so that a sentence stays a string of symbols, one
per model input position; `display` turns them back into the tags."""

from __future__ import annotations

import re

from .readers import read_segmented
from .resolve import resolve

Sentences = list[list[str]]

TAG_SYMBOLS = {"<punc>": "\ue000", "<num>": "\ue001", "<eng>": "\ue002"}
_DISPLAY = {v: k for k, v in TAG_SYMBOLS.items()}

# The SNLM rules, read off va/te against va_cws/te_cws: a number is a run of digits (full- or half-width; ℃ and ＋
# count as digits there) with decimal parts and an optional per-cent sign; `·` between digits stays punctuation.
# Han characters and the numeral ○/〇 are kept; any other character is punctuation, a run of it one symbol.
_DIGITS, _LATIN = "0-9０-９℃＋", "A-Za-zＡ-Ｚａ-ｚ"
_TOKENS = re.compile(rf"(?P<num>[{_DIGITS}]+(?:[．.][{_DIGITS}]+)*[％%]?)|(?P<eng>[{_LATIN}]+)|(?P<other>.)")


def _kept(c: str) -> bool:
    return "\u4e00" <= c <= "\u9fff" or c in "○〇"


def cws_normalise(word: str) -> str:
    """One word in SNLM's `_cws` form, with the tags spelled out ('１９９８年' -> '<num>年', '——' -> '<punc>')."""
    out: list[str] = []
    for m in _TOKENS.finditer(word):
        if m.group("num"):
            out.append("<num>")
        elif m.group("eng"):
            out.append("<eng>")
        elif _kept(m.group("other")):
            out.append(m.group("other"))
        elif not out or out[-1] != "<punc>":
            out.append("<punc>")
    return "".join(out)


def to_symbols(word: str) -> str:
    """A `_cws` word with each tag replaced by its one-character symbol."""
    for tag, sym in TAG_SYMBOLS.items():
        word = word.replace(tag, sym)
    return word


def display(text: str) -> str:
    """Symbols back to the SNLM tags, for printing."""
    return "".join(_DISPLAY.get(c, c) for c in text)


def _key(sentence: list[str]) -> str:
    return "".join(sentence)


def pku_train_from_standin(standin: Sentences, heldout: list[Sentences]) -> Sentences:
    """The stand-in's sentences that are not `va`/`te` sentences (compared in their raw form), normalised."""
    held = {_key(s) for part in heldout for s in part}
    return [[to_symbols(cws_normalise(w)) for w in s] for s in standin if s and _key(s) not in held]


def snlm_form(corpus: str) -> dict[str, str]:
    """How `load_snlm` reads `corpus`, recorded beside the file checksums (run keys and provenance): the same
    files read another way are other data."""
    return {"form": "SNLM _cws: <punc>/<num>/<eng> symbols"} if corpus == "pku" else {}


def load_snlm(corpus: str) -> dict[str, Sentences]:
    """train/dev/test sentences of the SNLM `pku` (`_cws` form, train from the stand-in) or `ptb` corpus."""
    if corpus == "ptb":
        return {split: read_segmented(resolve("snlm_ptb", f"ptb/{name}.txt"))
                for split, name in (("train", "tr"), ("dev", "va"), ("test", "te"))}
    if corpus == "pku":
        raw = [read_segmented(resolve("snlm_pku", f"pku/{name}.txt")) for name in ("va", "te")]
        dev, test = ([[to_symbols(w) for w in s] for s in read_segmented(resolve("snlm_pku", f"pku/{name}_cws.txt"))]
                     for name in ("va", "te"))
        standin = read_segmented(resolve("pku_training_pd199801"))
        return {"train": pku_train_from_standin(standin, raw), "dev": dev, "test": test}
    raise ValueError(f"unknown SNLM corpus {corpus!r}; expected 'pku' or 'ptb'")
