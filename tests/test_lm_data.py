"""LM data: encoding with the document separator, deterministic batches, perplexity over a stream."""

import math

import numpy as np
import torch

from hanzilm.data.vocab import CharVocab
from hanzilm.papers.backpack.data import DOC, SPECIALS, BlockBatches, encode_documents
from hanzilm.papers.backpack.perplexity import perplexity, stream_nll


def _vocab():
    return CharVocab.build(["天气很好", "我们去\n沙滩"], specials=SPECIALS)


def test_encode_documents_puts_a_separator_before_each_document():
    v = _vocab()
    ids = encode_documents(["天气", "沙滩?"], v)
    assert ids.dtype == np.uint16
    assert v.decode(ids.tolist()) == f"{DOC}天气{DOC}沙滩<unk>"
    assert ids.tolist() == [v.stoi[DOC], *v.encode("天气"), v.stoi[DOC], *v.encode("沙滩?")]


def test_batches_are_a_pure_function_of_seed_and_step():
    tokens = np.arange(1000, dtype=np.uint16)
    a, b = BlockBatches(tokens, 4, 16, seed=0), BlockBatches(tokens, 4, 16, seed=0)
    assert torch.equal(a(7), b(7)) and not torch.equal(a(7), a(8))
    assert not torch.equal(a(7), BlockBatches(tokens, 4, 16, seed=1)(7))
    x = a(3)
    assert x.shape == (4, 17) and x.dtype == torch.long
    assert torch.all(x[:, 1:] - x[:, :-1] == 1)  # contiguous windows


class Uniform(torch.nn.Module):
    def __init__(self, v):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(1))
        self.v = v

    def forward(self, ids):
        return torch.zeros(*ids.shape, self.v) + self.w


def test_perplexity_predicts_every_token_after_the_first_once():
    tokens = np.arange(103) % 10
    total, count = stream_nll(Uniform(10), tokens, block_size=8, batch_size=3)
    assert count == 102 and math.isclose(total, 102 * math.log(10), rel_tol=1e-6)
    assert math.isclose(perplexity(Uniform(10), tokens, 8)["ppl"], 10.0, rel_tol=1e-6)
    assert stream_nll(Uniform(10), tokens, 8, max_tokens=20)[1] == 20
