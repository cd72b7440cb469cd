"""`hanzilm senses CHAR`: a character's sense projections E^T C(x)_l from a trained Backpack (Table 2)."""

from __future__ import annotations

import argparse

from ...cliutil import add_threads, set_threads
from ...errors import HanzilmError
from ...profiles import PROFILES

# the trained language models by name: "backpack", "gpt2" and the ablation's "backpack-scaled" (alpha logits
# divided by sqrt(d/k)); NAME@PROFILE for a profile other than cpu
MODEL_NAMES = {"LMConfig": ("backpack", lambda config: "gpt2" if config.get("model") == "gpt" else
                            "backpack-scaled" if config.get("scaled_alpha") else "backpack")}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("senses", help="print the top characters of every sense of a character (E^T C(x)_l)",
                       description=__doc__)
    p.add_argument("char", help="one character, e.g. 天")
    p.add_argument("--model", default="backpack",
                   help="which trained Backpack: a name from `hanzilm models`, backpack or backpack@PROFILE "
                        "(default: backpack, the cpu run; a bare profile name such as smoke also works)")
    p.add_argument("--top", type=int, default=10, help="characters per sense (default: 10)")
    p.add_argument("--no-gloss", action="store_true", help="leave out the CC-CEDICT glosses")
    add_threads(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    set_threads(args.threads)
    from pathlib import Path

    from ...data.lexicon import cedict
    from ...models import resolve, scan
    from .sense_reader import SenseReader, label

    if len(args.char) != 1:
        raise HanzilmError(f"give one character, not {args.char!r}")
    if args.top < 1:
        raise HanzilmError("--top must be at least 1")
    if Path(args.model).is_dir():
        where, name = Path(args.model), args.model
    else:
        ref = f"backpack@{args.model}" if args.model in PROFILES else args.model
        model = resolve(ref, scan(MODEL_NAMES), paper="backpack")
        if model.name.split("~")[0] == "gpt2":
            raise HanzilmError(f"{model.ref} is not a Backpack: only a Backpack has senses")
        where, name = model.path, model.ref
    reader = SenseReader.load(where)
    vocab = reader.vocab
    if args.char not in vocab.stoi or args.char in vocab.specials:
        raise HanzilmError(f"{args.char!r} is not in the {name} model's vocabulary ({len(vocab)} entries)")
    top = reader.top(args.char, min(args.top, len(vocab) - len(vocab.specials)))
    dictionary = None
    if not args.no_gloss:  # only the words shown are looked up
        dictionary = cedict(frozenset({args.char} | {w for sense in top for c, _ in sense for w in (c, args.char + c)}))
    head = f"{args.char}" + (f" ({dictionary.gloss(args.char)})" if dictionary else "")
    print(f"{head}: top {args.top} characters of E^T C(x)_l per sense, {name}; (x)c: xc is a word")
    for sense, chars in enumerate(top):
        items = []
        for c, _ in chars:
            shown, _, gloss = label(args.char, c, dictionary)
            items.append(_visible(shown) + (f" [{gloss}]" if gloss else ""))
        print(f"sense {sense:2d}: " + ("  ".join(items) if dictionary else " ".join(items)))
    return 0


def _visible(text: str) -> str:
    """Whitespace characters (the vocabulary has "\\n" and spaces) written as escapes."""
    return "".join(ascii(c)[1:-1] if c.isspace() else c for c in text)
