"""The SNLM splits of Kawakami et al. (2019) used by the segmental-LM paper, and the missing PKU `tr`.

PKU `tr.txt` could not be obtained; it is the official PKU training file minus the sentences in `va`/`te`.
We rebuild it from the People's Daily 1998-01 stand-in, dropping every sentence whose characters occur as
a `va` or `te` sentence, so no evaluation sentence leaks into training."""

from __future__ import annotations

from .readers import read_segmented
from .resolve import resolve

Sentences = list[list[str]]


def _key(sentence: list[str]) -> str:
    return "".join(sentence)


def pku_train_from_standin(standin: Sentences, heldout: list[Sentences]) -> Sentences:
    held = {_key(s) for part in heldout for s in part}
    return [s for s in standin if s and _key(s) not in held]


def load_snlm(corpus: str) -> dict[str, Sentences]:
    """train/dev/test sentences of the SNLM `pku` or `ptb` corpus (PKU train: the stand-in, see above)."""
    if corpus == "ptb":
        return {split: read_segmented(resolve("snlm_ptb", f"ptb/{name}.txt"))
                for split, name in (("train", "tr"), ("dev", "va"), ("test", "te"))}
    if corpus == "pku":
        dev = read_segmented(resolve("snlm_pku", "pku/va.txt"))
        test = read_segmented(resolve("snlm_pku", "pku/te.txt"))
        standin = read_segmented(resolve("pku_training_pd199801"))
        return {"train": pku_train_from_standin(standin, [dev, test]), "dev": dev, "test": test}
    raise ValueError(f"unknown SNLM corpus {corpus!r}; expected 'pku' or 'ptb'")
