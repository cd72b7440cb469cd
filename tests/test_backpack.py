"""The Backpack: Eq. 3 and 6 checked against explicit sums, sense interventions, causal masking, the second
residual of Appendix A.1, the parameter-count formula, exact resume."""

import pytest
import torch

from hanzilm.papers.backpack.backpack import Backpack, BackpackConfig, sense_sum
from hanzilm.papers.backpack.kernels import causal_sense_mix
from hanzilm.papers.backpack.gpt import GPTConfig
from hanzilm.train import TrainConfig, train

CFG = BackpackConfig(vocab_size=40, block_size=16, n_layer=2, n_head=2, n_embd=16, n_senses=4)


def _model(cfg=CFG, seed=0):
    torch.manual_seed(seed)
    return Backpack(cfg).eval()


def test_shapes_and_alpha_is_causal_softmax():
    m, ids = _model(), torch.randint(0, 40, (3, 10))
    assert m(ids).shape == (3, 10, 40)
    assert m.senses(ids).shape == (3, 10, 4, 16)
    assert m.vocabulary_senses().shape == (40, 4, 16)
    a = m.alpha(ids)
    assert a.shape == (3, 4, 10, 10)
    assert torch.all(a >= 0) and torch.allclose(a.sum(-1), torch.ones(3, 4, 10))
    assert torch.all(a.triu(1) == 0)


def test_eq3_weighted_sum_of_senses_and_tied_output():
    m, ids = _model(), torch.randint(0, 40, (2, 9))
    a, C = m.alpha(ids), m.senses(ids)
    o = torch.zeros(2, 9, 16)
    for b in range(2):
        for i in range(9):
            for j in range(9):
                for l in range(4):
                    o[b, i] += a[b, l, i, j] * C[b, j, l]
    assert torch.allclose(m.represent(ids), o, atol=1e-5)
    assert torch.allclose(m(ids), o @ m.wte.weight.T, atol=1e-5)
    assert torch.allclose(m(ids, alpha=a), m(ids), atol=1e-5)


def test_scaled_alpha_divides_the_logits_by_the_square_root_of_the_sense_width():
    """The ablation's variant: alpha = softmax(q k^T / sqrt(d/k)), and the model's output mixes the senses with
    exactly those weights (the mix scales as alpha() does); unscaled, Eq. 6 as the paper writes it."""
    import dataclasses

    plain = _model()
    scaled = Backpack(dataclasses.replace(CFG, scaled_alpha=True)).eval()
    scaled.load_state_dict(plain.state_dict())
    ids = torch.randint(0, 40, (2, 12))
    q, k = plain._qk(ids)
    logits = (q @ k.transpose(-2, -1)).masked_fill(~torch.ones(12, 12, dtype=torch.bool).tril(), float("-inf"))
    assert torch.allclose(plain.alpha(ids), logits.softmax(-1), atol=1e-6)
    assert torch.allclose(scaled.alpha(ids), (logits / (16 / 4) ** 0.5).softmax(-1), atol=1e-6)
    assert torch.allclose(scaled(ids, alpha=scaled.alpha(ids)), scaled(ids), atol=1e-5)
    assert not torch.allclose(scaled(ids), plain(ids), atol=1e-3)


def test_alpha_entropy_is_relative_to_a_uniform_past():
    from hanzilm.papers.backpack.alpha_scaling import alpha_entropy

    class Uniform(torch.nn.Module):
        def alpha(self, ids):
            T = ids.shape[1]
            a = torch.ones(T, T).tril()
            return (a / a.sum(-1, keepdim=True)).expand(ids.shape[0], 3, T, T)

    class OnePosition(Uniform):
        def alpha(self, ids):
            return torch.eye(ids.shape[1]).expand(ids.shape[0], 3, ids.shape[1], ids.shape[1])

    ids = torch.zeros(2, 8, dtype=torch.long)
    uniform, peaked = alpha_entropy(Uniform(), ids), alpha_entropy(OnePosition(), ids)
    assert list(uniform.sense) == [0, 1, 2]
    assert uniform.relative_entropy.tolist() == pytest.approx([1.0] * 3)
    assert peaked.entropy.tolist() == pytest.approx([0.0] * 3, abs=1e-9)


def test_senses_are_per_token_and_computed_once_per_distinct_token():
    m, ids = _model(), torch.tensor([[3, 5, 3, 3, 7]])
    C = m.senses(ids)
    assert torch.allclose(C, m.sense_network(m.wte(ids)), atol=1e-6)
    assert torch.equal(C[0, 0], C[0, 2]) and torch.allclose(C[0, 0], m.vocabulary_senses()[3], atol=1e-6)


def test_sense_scale_removes_exactly_that_sense_contribution():
    m, ids = _model(), torch.randint(0, 40, (1, 8))
    a, C, o = m.alpha(ids), m.senses(ids), m.represent(ids)
    assert torch.allclose(m.represent(ids, sense_scale=torch.ones(8, 4)), o)
    j, l = 3, 2
    scale = torch.ones(1, 8, 4)
    scale[0, j, l] = 0.0
    removed = m.represent(ids, sense_scale=scale)
    expected = o - a[0, l, :, j, None] * C[0, j, l]       # o_i loses alpha_lij C(x_j)_l, for i >= j only
    assert torch.allclose(removed, expected, atol=1e-5)
    assert torch.allclose(removed[0, :j], o[0, :j], atol=1e-6)
    scale[0, j, l] = 0.5
    assert torch.allclose(m.represent(ids, sense_scale=scale), o - 0.5 * a[0, l, :, j, None] * C[0, j, l],
                          atol=1e-5)


def test_no_future_leakage():
    m, ids = _model(), torch.randint(0, 40, (2, 12))
    base = m(ids)
    for t in range(11):
        changed = ids.clone()
        changed[:, t + 1:] = (changed[:, t + 1:] + 5) % 40
        assert torch.allclose(m(changed)[:, :t + 1], base[:, :t + 1], atol=1e-5)


def test_the_chunked_mix_is_the_causal_sense_sum_with_its_gradients():
    """Query chunks that skip the keys after their end (the last one shorter) and one whole block give Eq. 3
    with Eq. 6's alpha, forward and backward, unscaled and scaled."""
    torch.manual_seed(1)
    q, k, v = (torch.randn(2, 4, 11, w, dtype=torch.float64, requires_grad=True) for w in (3, 3, 8))
    for scale, chunk in ((1.0, 4), (8 ** -0.5, 4), (1.0, 128)):
        mixed = causal_sense_mix(q, k, v, scale=scale, chunk=chunk)
        att = (scale * q @ k.transpose(-1, -2)).masked_fill(~torch.ones(11, 11, dtype=torch.bool).tril(),
                                                           float("-inf"))
        direct = sense_sum(att.softmax(-1), v)
        assert torch.allclose(mixed, direct, atol=1e-10)
        g = torch.randn_like(direct)
        assert all(torch.allclose(a, b, atol=1e-10) for a, b in zip(torch.autograd.grad(mixed, (q, k, v), g),
                                                                      torch.autograd.grad(direct, (q, k, v), g)))


def test_the_mix_drops_alpha_after_its_softmax_with_its_gradients():
    """Dropout on alpha (Appendix A.2): with one sense and one-hot senses the mix returns alpha itself, so each
    weight is either dropped or alpha / (1 - p), about p of them dropped, and the gradients are those of the
    explicit sum with the same dropped weights."""
    torch.manual_seed(3)
    T, p = 150, 0.25
    q, k = (torch.randn(4, 1, T, 3, dtype=torch.float64, requires_grad=True) for _ in range(2))
    v = torch.eye(T, dtype=torch.float64)[None, None].repeat(4, 1, 1, 1).requires_grad_()
    mixed = causal_sense_mix(q, k, v, dropout=p, chunk=64)                   # (4, T, T): row i is alpha_i.
    att = (q @ k.transpose(-1, -2)).masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
    alpha = att.softmax(-1)[:, 0]
    kept = mixed.detach() != 0
    causal = torch.ones(T, T, dtype=torch.bool).tril().expand(4, T, T)
    assert not kept[~causal].any()
    assert torch.allclose(mixed.detach()[kept], alpha.detach()[kept] / (1 - p), atol=1e-12)
    assert abs(1 - kept[causal].double().mean().item() - p) < 0.01
    direct = (att.softmax(-1) * kept[:, None] / (1 - p) @ v).sum(1)
    g = torch.randn_like(direct)
    assert all(torch.allclose(a, b, atol=1e-10) for a, b in zip(torch.autograd.grad(mixed, (q, k, v), g),
                                                                  torch.autograd.grad(direct, (q, k, v), g)))


def test_the_mix_runs_in_fp32_under_bf16_autocast():
    """bf16 inputs (as autocast makes them) and large unscaled logits: the softmax and the sum over senses are
    those of fp32 on the same inputs (in bf16 the cpu Backpack's perplexity rose)."""
    torch.manual_seed(2)
    q, k, v = (torch.randn(2, 16, 300, w).mul(s).bfloat16() for w, s in ((8, 3.0), (8, 3.0), (128, 1.0)))
    want = causal_sense_mix(q.float(), k.float(), v.float())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got = causal_sense_mix(q, k, v)
    assert got.dtype == torch.float32 and torch.allclose(got, want, atol=1e-5)


def test_the_loss_is_the_cross_entropy_of_the_logits_with_its_gradients():
    """The training loss (the output layer normalised a block of rows at a time) against F.cross_entropy over
    `forward`'s logits, in fp64: the value and every parameter's gradient."""
    m = _model(seed=3).double().train()
    batch = torch.randint(0, CFG.vocab_size, (3, 13))
    loss = m.loss(batch)
    grads = torch.autograd.grad(loss, list(m.parameters()))
    want = torch.nn.functional.cross_entropy(m(batch[:, :-1]).flatten(0, 1), batch[:, 1:].flatten())
    assert loss.dtype == torch.float64 and torch.allclose(loss, want, atol=1e-12, rtol=0)
    assert all(torch.allclose(a, b, atol=1e-12) for a, b in zip(grads, torch.autograd.grad(want, list(m.parameters()))))


def test_the_logits_stay_fp32_under_bf16_autocast():
    """o is an unnormalised sum of senses: its logits are those of fp32 on the same o (in bf16 they cost the cpu
    Backpack 2-4 % test perplexity), in the loss too."""
    m = _model(seed=4)
    ids = torch.randint(0, CFG.vocab_size, (2, 12))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits, o = m(ids), m.represent(ids)
        loss = m.loss(ids)
    assert logits.dtype == torch.float32 and torch.equal(logits, o.float() @ m.wte.weight.T)
    want = torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten())
    assert torch.allclose(loss, want, atol=1e-5)


def test_second_residual_of_appendix_a1():
    m = _model()
    net = m.sense_network
    torch.nn.init.zeros_(net.ff_2.c_proj.weight)
    torch.nn.init.zeros_(net.ff_2.c_proj.bias)
    torch.nn.init.ones_(net.ln_2.weight)
    torch.nn.init.zeros_(net.ln_2.bias)
    e = m.wte(torch.tensor([4]))
    h1 = net.ln_1(e + net.ff_1(e))
    C = net(e)  # FF_2 outputs zero: every sense is the (normalised) first feed-forward output
    assert torch.allclose(C[0], torch.nn.functional.layer_norm(h1, (16,)).expand(4, 16), atol=1e-5)


@pytest.mark.parametrize("bias", [True, False])
def test_parameters_are_counted_on_the_meta_device_as_built(bias):
    """`param_count` builds the model on the meta device: the count of the real model, the tied embedding
    once; without positions, less the (block_size, n_embd) position table."""
    from hanzilm.papers.backpack.experiment import param_count
    from hanzilm.papers.backpack.gpt import GPT, GPTConfig

    g = GPTConfig(vocab_size=37, block_size=9, n_layer=3, n_head=2, n_embd=12, bias=bias)
    b = BackpackConfig.matching(g, n_senses=3)
    for cfg, model in ((g, GPT(g)), (b, Backpack(b))):
        assert param_count(cfg) == sum(p.numel() for p in model.parameters())
        assert param_count(cfg, positions=False) == param_count(cfg) - 9 * 12


def test_matching_backpack_has_one_block_fewer():
    g = GPTConfig(vocab_size=100, n_layer=6, n_head=6, n_embd=384)
    b = BackpackConfig.matching(g)
    assert (b.n_layer, b.n_head, b.n_embd, b.n_senses, b.vocab_size) == (5, 6, 384, 16, 100)


class Crash(Exception):
    pass


def test_kill_and_resume_reproduces_the_loss_curve(tmp_path):
    cfg = BackpackConfig(vocab_size=30, block_size=8, n_layer=1, n_head=2, n_embd=8, n_senses=2, dropout=0.1)
    tc = TrainConfig(steps=10, lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1, warmup_steps=2, grad_clip=1.0,
                     eval_every=0, checkpoint_every=4, log_every=1)

    def data(step):
        if step < 0:
            raise Crash
        return torch.randint(0, 30, (4, 9), generator=torch.Generator().manual_seed(step))
    straight = train(_model(cfg).train(), tc, data, None, tmp_path / "a")
    with pytest.raises(Crash):
        train(_model(cfg).train(), tc, lambda s: data(-1 if s == 6 else s), None, tmp_path / "b")
    resumed = train(_model(cfg, seed=3).train(), tc, data, None, tmp_path / "b")
    key = lambda h: [(r["step"], r.get("loss")) for r in h]  # noqa: E731
    assert key(resumed.history) == key(straight.history)
