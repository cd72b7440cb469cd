"""Segmental LMs: nothing leaks from under the span / causal mask, shapes, a finite loss, gradients everywhere,
padding does not change a sequence's likelihood."""

from __future__ import annotations

import pytest
import torch

from hanzilm.papers.mslm.model import FORMS, SPECIALS, SLMConfig, SegmentalLM, causal_mask, span_mask

N_SPECIAL = len(SPECIALS)


RELEASED = FORMS["released"]


def tiny(encoder: str, k: int = 3, layers: int = 2, **form) -> SegmentalLM:
    torch.manual_seed(0)
    cfg = SLMConfig(encoder=encoder, dim=16, num_heads=2, feedforward_dim=24, encoder_layers=layers,
                    max_seg_len=k, **form)
    return SegmentalLM(cfg, vocab_size=N_SPECIAL + 7).eval()


def batch(rows: list[list[int]]) -> dict:
    T = max(map(len, rows))
    chars = torch.zeros(len(rows), T, dtype=torch.long)
    for i, r in enumerate(rows):
        chars[i, :len(r)] = torch.tensor(r)
    return {"chars": chars, "lengths": torch.tensor([len(r) for r in rows])}


def random_row(n: int, seed: int) -> list[int]:
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, 7, (n,), generator=g) + N_SPECIAL).tolist()


def test_masks():
    m = span_mask(6, 2)
    assert m[1].tolist() == [True, True, False, False, True, True]      # 1 may not see 2, 3
    assert m[5].all() and causal_mask(4)[1].tolist() == [True, True, False, False]


@pytest.mark.parametrize("form", FORMS.values())
@pytest.mark.parametrize("layers", [1, 2])
def test_mslm_encoding_does_not_see_under_the_span_mask(layers, form):
    k, n = 3, 10
    model = tiny("mslm", k=k, layers=layers, **form)
    row = random_row(n, 0)
    enc = model.encode(*batch([row]).values())
    for t in range(n):
        changed = list(row)
        for j in range(t, min(n, t + k)):                       # the characters of any segment starting at t
            changed[j] = N_SPECIAL + (changed[j] - N_SPECIAL + 1) % 7
        enc2 = model.encode(*batch([changed]).values())
        assert torch.allclose(enc[0, t], enc2[0, t], atol=1e-6), t
        # and the encoder is not blind: a character just outside the span changes it
        if t + k < n:
            outside = list(row)
            outside[t + k] = N_SPECIAL + (outside[t + k] - N_SPECIAL + 1) % 7
            assert not torch.allclose(enc[0, t], model.encode(*batch([outside]).values())[0, t], atol=1e-6)


@pytest.mark.parametrize("form", FORMS.values())
@pytest.mark.parametrize("encoder", ["dmslm", "rslm"])
def test_directional_encoders_see_only_the_left_context(encoder, form):
    n = 9
    model = tiny(encoder, **form)
    row = random_row(n, 1)
    enc = model.encode(*batch([row]).values())
    for t in range(n):
        changed = row[:t] + random_row(n - t, 100 + t)
        changed[t] = N_SPECIAL + (row[t] - N_SPECIAL + 1) % 7  # at least the first character differs
        assert torch.allclose(enc[0, t], model.encode(*batch([changed]).values())[0, t], atol=1e-6), t


@pytest.mark.parametrize("form", FORMS.values())
@pytest.mark.parametrize("encoder", ["rslm", "mslm", "dmslm"])
def test_shapes_padding_loss_and_gradients(encoder, form):
    model = tiny(encoder, k=4, **form)
    rows = [random_row(11, 2), random_row(5, 3), random_row(1, 4)]
    b = batch(rows)
    seg = model.segment_logprobs(b["chars"], b["lengths"])
    assert seg.shape == (3, 11, 4)
    assert (seg[1, 5:] == 0).all()                               # past the end: untouched
    with torch.no_grad():
        ll = model.log_likelihood(b)
        for i, r in enumerate(rows):                             # padding does not change a sequence's score
            alone = model.log_likelihood(batch([r]))
            assert float(ll[i]) == pytest.approx(float(alone[0]), abs=1e-4)
    assert all(sum(s) == len(r) and max(s) <= 4 for s, r in zip(model.segment(b), rows))
    model.train()
    loss = model.loss(b)
    assert torch.isfinite(loss) and loss.item() > 0
    loss.backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
        if name != "embedding.weight":
            assert p.grad.abs().sum() > 0, name
    assert model.batch_size_units(b) == 17


def test_the_released_form_is_off_by_default_and_as_the_authors_chose():
    assert set(RELEASED) == {f for f, v in SLMConfig.__dataclass_fields__.items()
                             if v.default is False and f not in ("first_layer_residual", "bf16_output")}
    ours, released = tiny("mslm"), tiny("mslm", **RELEASED)
    extra = set(dict(released.named_parameters())) - set(dict(ours.named_parameters()))
    assert extra == {"project.weight", "project.bias", "encoder.norm.weight", "encoder.norm.bias"}
    assert set(dict(ours.named_parameters())) - set(dict(released.named_parameters())) == {"encoder.positions.f.bias"}
    gate = released.encoder.positions.f
    assert gate.bias is None and bool((gate.weight == 1e-4).all())
    emb = released.embedding.weight.detach()
    assert float(emb[1:].abs().max()) <= 0.1 and bool((emb[0] == 0).all())       # <pad> stays zero
    assert float(ours.embedding.weight[1:].abs().max()) > 0.1                    # ours: N(0, 1)
    for linear in (released.g_start, released.g_h, released.output):
        assert float(linear.weight.abs().max()) <= 0.1 and bool((linear.bias == 0).all())


@pytest.mark.parametrize("flag", sorted(RELEASED))
def test_each_released_choice_changes_the_model_alone(flag):
    """Each flag is a choice of its own: the model with it differs from ours in training. (The final norm, a
    LayerNorm of a LayerNorm's output, starts as the identity: it differs once its gain moves.)"""
    b = batch([random_row(9, 8), random_row(5, 9)])
    losses = []
    for form in ({}, {flag: True}):
        model = tiny("mslm", **form).train()
        if form.get("encoder_norm"):
            torch.nn.init.constant_(model.encoder.norm.weight, 2.0)
        torch.manual_seed(1)
        losses.append(float(model.loss(b)))
    assert losses[0] != losses[1]


def test_single_character_likelihood_is_a_distribution():
    """With k = 1 a one-character input has one segmentation, and sum over the vocabulary of p(x) is the
    decoder's mass on "character then end of segment", at most 1."""
    model = tiny("rslm", k=1)
    rows = [[c] for c in range(N_SPECIAL, N_SPECIAL + 7)]
    with torch.no_grad():
        p = model.log_likelihood(batch(rows)).exp().sum()
    assert 0 < float(p) < 1


def test_bf16_output_is_close_and_only_in_training():
    model = tiny("mslm", k=3)
    b = batch([random_row(9, 6), random_row(4, 7)])
    fp32 = model.loss(b)
    model.cfg = type(model.cfg)(**{**model.cfg.__dict__, "bf16_output": True})
    assert torch.equal(model.loss(b), fp32)                      # eval mode: fp32
    model.train()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    model.encoder.layers[0].dropout = 0.0
    bf16 = model.loss(b)
    assert bf16.item() == pytest.approx(fp32.item(), abs=0.05) and bf16.item() != fp32.item()
    bf16.backward()
    assert torch.isfinite(model.output.weight.grad).all()


def test_first_layer_residual_is_a_choice():
    """Without the residual (the authors' first layer) a position's own input reaches the output only through
    attention: with the attention output zeroed, every position's output is the same."""
    from hanzilm.papers.mslm.model import SegmentalAttentionLayer
    torch.manual_seed(0)
    x = torch.randn(2, 7, 16)
    allowed = torch.ones(1, 1, 7, 7, dtype=torch.bool)
    for residual in (False, True):
        layer = SegmentalAttentionLayer(16, 2, 32, 0.0, residual=residual).eval()
        with torch.no_grad():
            layer.out.weight.zero_()
            layer.out.bias.zero_()
            y = layer(x, x, allowed)
        same = torch.allclose(y, y[:1, :1].expand_as(y), atol=1e-6)
        assert same is (not residual)
    default = SegmentalLM(SLMConfig(encoder="mslm", dim=16, num_heads=2, feedforward_dim=32, encoder_layers=2), 20)
    assert [layer.residual for layer in default.encoder.layers] == [False, True]
