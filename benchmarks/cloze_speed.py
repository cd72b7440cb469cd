"""The cloze's beam search: incremental decoding (`papers/backpack/decode.py`, what the chapter runs) against
re-running every beam's whole passage at every step (the search as the paper describes it, and as this project
ran it before), in one process, on the chapter's own cloze cases.

    .venv/bin/python benchmarks/cloze_speed.py [--profile cpu] [--cases 40] [--threads 1] [--random]

The models are the profile's trained pair from its store (book/backpack/table1 trains them; `--random`: untrained ones of the same sizes, whose flat
distributions make near-ties, and so any disagreement between the two searches, likelier). Prints seconds per
case for each search and model, the ratio, and whether the two searches return the same candidates in the same
order (their scores agree to float rounding, about 1e-6). The trends page re-runs the cloze on six snapshots of
both models; it was three fifths of that page's time with the re-running search.
"""

from __future__ import annotations

import argparse
import time

import torch

from hanzilm.papers.backpack import experiment
from hanzilm.papers.backpack.cloze import beam_candidates
from hanzilm.papers.backpack.gpt import GPT


def last_logits(model, ids, last):
    """Logits of the last `last` positions only (the output layer is the largest product of a small LM)."""
    features = model.hidden if isinstance(model, GPT) else model.represent
    return features(ids)[:, -last:] @ model.wte.weight.T


@torch.no_grad()
def rerun_beam(model, context, n_chars, ending, beam, banned, block):
    """The baseline: beam search that runs the model over each beam's whole sequence at every step, with the
    output layer on the newest positions only (the chapter's search before `decode.py`)."""
    keep = block - n_chars - len(ending)
    ctx = list(context)[-keep:]
    seqs, scores = torch.tensor([ctx]), torch.zeros(1)
    for _ in range(n_chars):
        logp = torch.log_softmax(last_logits(model, seqs, 1)[:, -1], dim=-1)
        logp[:, banned] = float("-inf")
        top = (scores[:, None] + logp).flatten().topk(beam)
        rows, tokens = top.indices // logp.size(1), top.indices % logp.size(1)
        seqs, scores = torch.cat([seqs[rows], tokens[:, None]], dim=1), top.values
    end = torch.tensor(ending).expand(seqs.size(0), -1)
    full = torch.cat([seqs, end], dim=1)
    logp = torch.log_softmax(last_logits(model, full[:, :-1], len(ending)), dim=-1)
    scores = scores + logp.gather(-1, end[..., None]).squeeze(-1).sum(-1)
    order = torch.argsort(scores, descending=True, stable=True)
    return [(tuple(seqs[i, len(ctx):].tolist()), scores[i].item()) for i in order.tolist()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--threads", type=int, default=1, help="1: as the trends page's workers run it")
    ap.add_argument("--random", action="store_true", help="untrained models of the profile's sizes")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    ch = experiment.configure(a.profile)
    corpus = experiment.load_corpus(ch)
    vocab = corpus.vocab
    cases = experiment.cloze_cases(ch, corpus)[:a.cases]
    banned = [vocab.stoi[s] for s in vocab.specials]
    if a.random:
        pair = {m: experiment.build(ch.lm.pair()[m], len(vocab)) for m in experiment.MODELS}
    else:  # never trains: an error names the notebook that does
        pair = {m: experiment.load_trained(ch, m)[0] for m in experiment.MODELS}
    print(f"{len(cases)} cloze cases of the {a.profile} profile, beam {ch.cloze.beam}, {a.threads} thread(s), "
          f"{'untrained' if a.random else 'trained'} models")
    for name, model in pair.items():
        model.eval()
        secs = {"rerun": 0.0, "incremental": 0.0}
        same = 0
        for case in cases:
            args = (model, vocab.encode(case.context), len(case.word), vocab.encode(case.ending), ch.cloze.beam,
                    banned, ch.lm.block_size)
            t0 = time.perf_counter()
            base = rerun_beam(*args)
            secs["rerun"] += time.perf_counter() - t0
            t0 = time.perf_counter()
            ours = beam_candidates(*args)
            secs["incremental"] += time.perf_counter() - t0
            same += [c for c, _ in base] == [c for c, _, _ in ours]
        n = len(cases)
        print(f"  {name:9s} rerun {secs['rerun'] / n * 1e3:7.1f} ms/case   incremental "
              f"{secs['incremental'] / n * 1e3:6.1f} ms/case   {secs['rerun'] / secs['incremental']:5.1f}x   "
              f"same candidates in the same order: {same}/{n}")


if __name__ == "__main__":
    main()
