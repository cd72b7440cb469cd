"""`hanzilm senses CHAR`: a character's sense projections E^T C(x)_l from a trained Backpack (Table 2)."""

from __future__ import annotations

import argparse

from ...cliutil import add_threads, set_threads
from ...errors import HanzilmError
from ...profiles import PROFILES

# the trained language models by name: "backpack", "gpt2" (NAME@PROFILE for a profile other than cpu)
MODEL_NAMES = {"LMConfig": ("backpack", lambda config: "gpt2" if config.get("model") == "gpt" else "backpack")}


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
    from ...data.lexicon import cedict
    from . import experiment
    from .projection import top_characters

    set_threads(args.threads)  # torch is loaded now
    if len(args.char) != 1:
        raise HanzilmError(f"give one character, not {args.char!r}")
    if args.top < 1:
        raise HanzilmError("--top must be at least 1")
    # the Backpack of a profile is the one its chapter config trains: NAME@PROFILE needs no store scan
    name, _, profile = (f"backpack@{args.model}" if args.model in PROFILES else args.model).partition("@")
    profile = profile or "cpu"
    if name == "gpt2":
        raise HanzilmError(f"gpt2@{profile} is not a Backpack: only a Backpack has senses")
    if name != "backpack" or profile not in PROFILES:
        raise HanzilmError(f"no Backpack named {args.model!r}: give backpack or backpack@PROFILE "
                           f"(profiles: {', '.join(sorted(PROFILES))}; `hanzilm models` lists the trained ones)")
    model, vocab = experiment.load_trained(experiment.configure(profile), "backpack")
    if args.char not in vocab.stoi or args.char in vocab.specials:
        raise HanzilmError(f"{args.char!r} is not in the backpack@{profile} model's vocabulary ({len(vocab)} entries)")
    dictionary = None if args.no_gloss else cedict()
    table = top_characters(model, vocab, args.char, min(args.top, len(vocab) - len(vocab.specials)), dictionary)
    head = f"{args.char}" + (f" ({dictionary.gloss(args.char)})" if dictionary else "")
    print(f"{head}: top {args.top} characters of E^T C(x)_l per sense, backpack@{profile}; (x)c: xc is a word")
    for sense, g in table.groupby("sense"):
        items = [_visible(r.top) + (f" [{r.gloss}]" if r.gloss else "") for r in g.itertuples()]
        print(f"sense {sense:2d}: " + ("  ".join(items) if dictionary else " ".join(items)))
    return 0


def _visible(text: str) -> str:
    """Whitespace characters (the vocabulary has "\\n" and spaces) written as escapes."""
    return "".join(ascii(c)[1:-1] if c.isspace() else c for c in text)
