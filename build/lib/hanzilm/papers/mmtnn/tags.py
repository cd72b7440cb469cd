"""BMES tags, character normalisation for lookup, and the tag constraints of non-Chinese runs, grapheme
clusters and control characters."""

from __future__ import annotations

import re
import unicodedata
from typing import Sequence

import numpy as np
import regex

TAGS = "BMES"
B, M, E, S = range(4)
START = 4          # the "previous tag" of the first character
N_TAGS = 4

# VALID[prev, cur]: B/M continue a word (M or E next); E/S/START close one (B or S next)
VALID = np.zeros((5, 4), dtype=bool)
VALID[B, M] = VALID[B, E] = VALID[M, M] = VALID[M, E] = True
for _p in (E, S, START):
    VALID[_p, B] = VALID[_p, S] = True
VALID_END = np.array([False, False, True, True])  # a sentence ends with E or S


def words_to_tags(words: Sequence[str]) -> list[int]:
    tags: list[int] = []
    for w in words:
        if len(w) == 1:
            tags.append(S)
        elif w:
            tags += [B] + [M] * (len(w) - 2) + [E]
    return tags


def tags_to_words(chars: str, tags: Sequence[int] | np.ndarray) -> list[str]:
    """Words of `chars` under `tags`; robust to invalid sequences (a word starts at B or S, or after E or S)."""
    t = np.asarray(tags)[:len(chars)]
    if len(t) == 0:
        return []
    starts = (t[1:] == B) | (t[1:] == S) | (t[:-1] == E) | (t[:-1] == S)
    cuts = [0, *(np.flatnonzero(starts) + 1).tolist(), len(chars)]
    return [chars[a:b] for a, b in zip(cuts, cuts[1:])]


_FULLWIDTH = {c: c + 0xFEE0 for c in range(0x21, 0x7F)}
_HALF_WIDTH = re.compile(r"[!-~]+")


def normalize(text: str) -> str:
    """The lookup form of a text: half-width ASCII letters, digits and punctuation become their full-width forms
    (the People's Daily training text writes '１９９８年', the PKU test '1998年'). Output keeps the original."""
    # only the ASCII runs are translated: str.translate looks every character of a Chinese text up (3x slower)
    return _HALF_WIDTH.sub(lambda m: m.group().translate(_FULLWIDTH), text)


# URLs and e-mail addresses are one word; a run of ASCII letters/digits (with inner . , : - _ as in 3.14,
# 1,000, 10:30) is never split inside, but may join its neighbours ('2001年'). An address's local part is tried
# only where a run of its characters starts, and taken whole (possessive): tried from every position of a long
# run without an '@', it cost time quadratic in the run.
_WHOLE = re.compile(r"(?:https?://|ftp://|www\.)[!-~]+"
                    r"|(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]++@[A-Za-z0-9-]++(?:\.[A-Za-z0-9-]++)+")
_RUN = re.compile(r"[A-Za-z0-9]+(?:(?:[.:_-]|,(?=\d))[A-Za-z0-9]+)*")


# an extended grapheme cluster (UAX #29: a letter and its combining marks, an emoji ZWJ sequence or flag, a
# character with its variation selector) is one user-perceived character: no word boundary falls inside it
_CLUSTER = regex.compile(r"\X")
# Every rule of UAX #29 that keeps two code points in one cluster involves one of these break classes (CR LF,
# Hangul L V T, Extend, ZWJ, SpacingMark, Prepend, Regional_Indicator), and control characters are Cc: a text
# with none of them (nearly all Chinese text) is one cluster per code point, with nothing to constrain.
_MAY_CLUSTER_OR_CONTROL = regex.compile(
    "[" + "".join(f"\\p{{Grapheme_Cluster_Break={c}}}" for c in
                  ("CR", "LF", "L", "V", "T", "Extend", "ZWJ", "SpacingMark", "Prepend", "Regional_Indicator"))
    + "\\p{Cc}]")
# Printable ASCII, the CJK ideographs and punctuation (without the ideographic tone marks U+302A-F), general
# punctuation (without its joiners and format characters) and the full-width forms: none clusters or is a control
# character (a test checks each code point), and a text of these alone, nearly any Chinese text, is cleared by
# `re` at a third of the cost of the search above
_PLAIN = re.compile("[ -~\u00b7\u2010-\u2027\u2030-\u205e\u3000-\u3029\u3030-\u303f\u4e00-\u9fff\uff01-\uff5e]*")
_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")  # what every URL, address and ASCII run holds


def allowed_tags(text: str) -> np.ndarray | None:
    """A (len(text), 4) boolean mask of the tags each character may take, or None when nothing is constrained.

    URLs, e-mail addresses and ASCII runs are kept whole (see above); a grapheme cluster is never split; a
    control character (NUL, ESC, ...; Unicode category Cc) is a word of its own, so it never hides inside a
    word of the output."""
    mask = None
    taken = np.zeros(len(text), dtype=bool)
    for pattern, whole in ((_WHOLE, True), (_RUN, False)) if _ASCII_ALNUM.search(text) else ():
        for m in pattern.finditer(text):
            s, e = m.span()
            if e - s < 2 or taken[s:e].any():
                continue
            if mask is None:
                mask = np.ones((len(text), 4), dtype=bool)
            taken[s:e] = True
            mask[s:e] = False
            mask[s + 1:e - 1, M] = True
            if whole:
                mask[s, B] = mask[e - 1, E] = True
            else:
                mask[s, [B, M]] = True
                mask[e - 1, [M, E]] = True
    if _PLAIN.fullmatch(text) or not _MAY_CLUSTER_OR_CONTROL.search(text):
        return mask  # no clusters of several code points, no control characters
    for m in _CLUSTER.finditer(text):
        s, e = m.span()
        if e - s == 1 and unicodedata.category(text[s]) != "Cc":
            continue
        if mask is None:
            mask = np.ones((len(text), 4), dtype=bool)
        if e - s == 1:
            mask[s] = [False, False, False, True]  # a control character alone: S
            continue
        # the first code point starts a word or continues one (B, M), the inner ones continue it (M), the last
        # ends it or goes on (M, E): no word starts or ends inside the cluster
        keep = np.zeros((e - s, 4), dtype=bool)
        keep[:, M] = True
        keep[0, B] = keep[-1, E] = True
        mask[s:e] &= keep
    return mask
