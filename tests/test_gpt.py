"""GPT-2 character LM: shapes, causal masking, tied embeddings, the parameter-count formula, exact resume."""

import json

import pytest
import torch

from hanzilm.papers.backpack.gpt import GPT, GPTConfig
from hanzilm.train import TrainConfig, train

CFG = GPTConfig(vocab_size=50, block_size=16, n_layer=2, n_head=2, n_embd=16)


def _model(cfg=CFG, seed=0):
    torch.manual_seed(seed)
    return GPT(cfg).eval()


def test_shapes_and_loss():
    m = _model()
    ids = torch.randint(0, 50, (3, 10))
    assert m(ids).shape == (3, 10, 50)
    assert m.hidden(ids).shape == (3, 10, 16)
    batch = torch.randint(0, 50, (3, 11))
    loss = m.loss(batch)
    assert loss.ndim == 0 and abs(loss.item() - torch.log(torch.tensor(50.0)).item()) < 0.5  # near uniform at init
    assert m.batch_size_units(batch) == 30
    with pytest.raises(ValueError, match="block_size"):
        m(torch.zeros(1, 17, dtype=torch.long))


def test_no_future_leakage():
    m = _model()
    ids = torch.randint(0, 50, (2, 12))
    base = m(ids)
    for t in range(11):
        changed = ids.clone()
        changed[:, t + 1:] = (changed[:, t + 1:] + 7) % 50
        out = m(changed)
        assert torch.allclose(out[:, :t + 1], base[:, :t + 1], atol=1e-6)
        assert not torch.allclose(out[:, t + 1], base[:, t + 1])


def test_tied_embedding_and_init():
    m = _model(GPTConfig(vocab_size=500, block_size=16, n_layer=4, n_head=2, n_embd=64))
    names = [n for n, _ in m.named_parameters()]
    assert not any("lm_head" in n for n in names)  # the output layer is E^T itself
    assert abs(m.wte.weight.std().item() - 0.02) < 0.002
    proj = m.transformer.h[0].mlp.c_proj.weight
    assert abs(proj.std().item() - 0.02 / (2 * 4) ** 0.5) < 0.002
    assert torch.count_nonzero(m.transformer.h[0].attn.c_attn.bias) == 0


def _batches(step):
    g = torch.Generator().manual_seed(step)
    return torch.randint(0, 50, (4, 9), generator=g)


class Crash(Exception):
    pass


def test_kill_and_resume_reproduces_the_loss_curve(tmp_path):
    cfg = GPTConfig(vocab_size=50, block_size=8, n_layer=1, n_head=2, n_embd=16, dropout=0.1)
    tc = TrainConfig(steps=12, lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1, warmup_steps=2, schedule="linear",
                     grad_clip=1.0, eval_every=0, checkpoint_every=5, log_every=1)
    straight = train(_model(cfg).train(), tc, _batches, None, tmp_path / "a")

    def crashing(step):
        if step == 8:
            raise Crash
        return _batches(step)
    with pytest.raises(Crash):
        train(_model(cfg).train(), tc, crashing, None, tmp_path / "b")
    resumed = train(_model(cfg, seed=5).train(), tc, _batches, None, tmp_path / "b")
    key = lambda h: [(r["step"], r.get("loss")) for r in h]  # noqa: E731
    assert key(resumed.history) == key(straight.history)
    assert json.loads((tmp_path / "b" / "last.json").read_text())["step"] == 12
