"""A WPLC-style cloze set built from our held-out split, and the paper's beam-search evaluation (Sec. 4.2).

Construction (following the published construction of Chinese WPLC, Ge et al. 2021, on our own text):
a case is a passage of whole sentences from one test document, the fewest sentences ending at the target
sentence that hold at least `min_chars` Chinese characters; the target sentence ends in punctuation and
its last significant word (jieba segmentation; trailing punctuation is not a word) has 2 to 4 Chinese
characters. That word is masked; the punctuation after it is the "ending". One case per document (its last
eligible sentence), a seeded sample if there are more than `max_cases`.

Evaluation (the paper's procedure for autoregressive models): from the passage before the gap, beam search
keeps `beam` candidates per step and generates exactly as many characters as the masked word has; each
final candidate then gets the log-probability of the original ending characters added, and candidates are
ranked by that total. Top-1 / top-3: the masked word is the best / among the best three.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from ...data.vocab import CharVocab
from .decode import Decoder

HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_SENTENCE = re.compile(r"[^。！？!?…；;\n]*(?:[。！？!?…；;]+[”’」』）)\"']*|\n|$)")


@dataclass(frozen=True)
class ClozeConfig:
    min_chars: int = 150          # Chinese characters per passage (WPLC: "at least 150")
    min_word: int = 2
    max_word: int = 4
    beam: int = 10                # candidates kept per step (the paper: ten)
    max_cases: int = 4827         # the paper's WPLC dev set has 4,827 cases
    seed: int = 0


@dataclass(frozen=True)
class ClozeCase:
    doc: int          # index of the document in the split
    context: str      # passage text before the gap
    word: str         # the masked word
    ending: str       # the characters after the gap (sentence-final punctuation)


def han_count(text: str) -> int:
    return len(HAN.findall(text))


def sentences(text: str) -> list[str]:
    """Sentences with their final punctuation (and closing quotes); a line end also ends a sentence.
    Concatenated they give `text` back."""
    out = [m.group(0) for m in _SENTENCE.finditer(text) if m.group(0)]
    assert "".join(out) == text
    return out


def _segmenter():
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


def split_last_word(sentence: str, segment=None) -> tuple[str, str, str] | None:
    """(text before the word, the last significant word, the ending) of a sentence, or None if the
    sentence does not end in punctuation."""
    body = sentence.rstrip("\n")
    m = re.search(r"[^\w]+$", body)
    if not m or not HAN.search(body):
        return None
    ending, head = m.group(0), body[:m.start()]
    if not head:
        return None
    words = (segment or _segmenter()).lcut(head)
    word = words[-1]
    return head[:len(head) - len(word)], word, ending


def build_cloze(docs: Sequence[str], cfg: ClozeConfig, vocab: CharVocab | None = None) -> list[ClozeCase]:
    """The cloze cases of `docs` (see the module docstring). With `vocab`, cases whose word or ending holds
    a character outside it are skipped (no model could produce them)."""
    jieba = _segmenter()
    cases: list[ClozeCase] = []
    for d, text in enumerate(docs):
        sents = sentences(text)
        for t in range(len(sents) - 1, -1, -1):
            parts = split_last_word(sents[t], jieba)
            if parts is None:
                continue
            before, word, ending = parts
            if not (cfg.min_word <= len(word) <= cfg.max_word and all(HAN.fullmatch(c) for c in word)):
                continue
            if vocab is not None and any(c not in vocab.stoi for c in word + ending):
                continue
            s, passage = t, sents[t]
            while han_count(passage) < cfg.min_chars and s > 0:
                s -= 1
                passage = sents[s] + passage
            if han_count(passage) < cfg.min_chars:
                break  # earlier sentences have even less context
            context = "".join(sents[s:t]) + before
            cases.append(ClozeCase(doc=d, context=context.lstrip("\n"), word=word, ending=ending))
            break
    if len(cases) > cfg.max_cases:
        keep = np.sort(np.random.default_rng(cfg.seed).choice(len(cases), cfg.max_cases, replace=False))
        cases = [cases[i] for i in keep]
    return cases


@torch.no_grad()
def beam_candidates(model: torch.nn.Module, context: Sequence[int], n_chars: int, ending: Sequence[int],
                    beam: int = 10, banned: Sequence[int] = (), block_size: int | None = None,
                    ) -> list[tuple[tuple[int, ...], float, float]]:
    """Beam search of `n_chars` (>= 1) tokens after `context`, then the ending's log-probability added:
    [(candidate ids, log p(candidate | context), + log p(ending | context, candidate)), ...], best first.
    The context is read once; each step feeds only the beams' newest tokens (`decode.Decoder`)."""
    if n_chars < 1:
        raise ValueError(f"beam search of {n_chars} tokens: the masked word has at least one")
    device = next(model.parameters()).device
    block = block_size or model.block_size
    keep = block - n_chars - len(ending)
    ctx = list(context)[-keep:] if keep > 0 else []
    if not ctx:
        raise ValueError("the context must hold at least one token within the block")
    decoder = Decoder(model)
    logits = decoder.feed(torch.tensor([ctx], dtype=torch.long, device=device), last=1)[:, -1]
    seqs = torch.zeros(1, 0, dtype=torch.long, device=device)
    scores = torch.zeros(1, device=device)
    for step in range(n_chars):
        logp = torch.log_softmax(logits.float(), dim=-1)
        if banned:
            logp[:, list(banned)] = float("-inf")
        total = (scores[:, None] + logp).flatten()
        top = total.topk(min(beam, total.numel()))
        rows, tokens = top.indices // logp.size(1), top.indices % logp.size(1)
        seqs = torch.cat([seqs[rows], tokens[:, None]], dim=1)
        scores = top.values
        decoder.select(rows)
        if step + 1 < n_chars:
            logits = decoder.feed(tokens[:, None])[:, -1]
    gen = scores.clone()
    if ending:
        end = torch.tensor(ending, dtype=torch.long, device=device).expand(seqs.size(0), -1)
        # the logits after the last generated token and after each ending token but the last
        logp = torch.log_softmax(decoder.feed(torch.cat([seqs[:, -1:], end[:, :-1]], dim=1)).float(), dim=-1)
        scores = scores + logp.gather(-1, end[..., None]).squeeze(-1).sum(-1)
    order = torch.argsort(scores, descending=True, stable=True)
    return [(tuple(seqs[i].tolist()), gen[i].item(), scores[i].item()) for i in order.tolist()]


def evaluate_cloze(model: torch.nn.Module, cases: Sequence[ClozeCase], vocab: CharVocab, beam: int = 10,
                   block_size: int | None = None) -> tuple[dict[str, float], list[dict]]:
    """Top-1 / top-3 accuracy over `cases`, and per case the rank of the masked word (0 = best, -1 = not
    in the final beam) and the best candidate."""
    banned = [vocab.stoi[s] for s in vocab.specials]
    was_training = model.training
    model.eval()
    rows = []
    try:
        for case in cases:
            ctx = vocab.encode(case.context)
            word = tuple(vocab.encode(case.word))
            ranked = beam_candidates(model, ctx, len(word), vocab.encode(case.ending), beam, banned, block_size)
            cands = [c for c, _, _ in ranked]
            rank = cands.index(word) if word in cands else -1
            rows.append({"doc": case.doc, "word": case.word, "best": vocab.decode(cands[0]), "rank": rank})
    finally:
        model.train(was_training)
    n = max(1, len(rows))
    top1 = sum(r["rank"] == 0 for r in rows) / n
    top3 = sum(0 <= r["rank"] < 3 for r in rows) / n
    return {"top1": top1, "top3": top3, "cases": len(rows)}, rows
