import torch
import torch.nn.functional as F

from hanzilm.softmax import cross_entropy, linear_selected_log_probs, selected_log_probs


def test_selected_log_probs_equal_log_softmax_gather_with_its_gradient():
    torch.manual_seed(0)
    logits = (torch.randn(5, 3, 40, dtype=torch.float64) * 4).requires_grad_()
    index = torch.randint(0, 40, (5, 3, 2))
    index[0, 0] = torch.tensor([7, 7])     # one symbol picked twice: its gradients add
    weights = torch.randn(5, 3, 2, dtype=torch.float64)
    ours = selected_log_probs(logits, index)
    (ours * weights).sum().backward()
    ours_grad, logits.grad = logits.grad, None
    reference = torch.log_softmax(logits, -1).gather(-1, index)
    (reference * weights).sum().backward()
    torch.testing.assert_close(ours, reference, rtol=0, atol=1e-12)
    torch.testing.assert_close(ours_grad, logits.grad, rtol=0, atol=1e-12)
    # fp32, the training dtype: the forward equals logsumexp's bit for bit
    x = torch.randn(64, 300) * 6
    i = torch.randint(0, 300, (64, 2))
    assert torch.equal(selected_log_probs(x, i), x.gather(-1, i) - torch.logsumexp(x, -1, keepdim=True))


def test_cross_entropy_is_torch_cross_entropy_with_its_gradient():
    torch.manual_seed(1)
    logits = (torch.randn(3, 7, 50, dtype=torch.float64) * 5).requires_grad_()
    targets = torch.randint(0, 50, (3, 7))
    ours = cross_entropy(logits, targets)
    (ours * 3).backward()
    ours_grad, logits.grad = logits.grad, None
    reference = F.cross_entropy(logits.reshape(-1, 50), targets.reshape(-1))
    (reference * 3).backward()
    torch.testing.assert_close(ours, reference, rtol=0, atol=1e-12)
    torch.testing.assert_close(ours_grad, logits.grad, rtol=0, atol=1e-12)


def test_cross_entropy_of_bf16_logits_is_computed_in_fp32():
    torch.manual_seed(2)
    logits = torch.randn(256, 3000) * 8
    targets = torch.randint(0, 3000, (256,))
    half = logits.bfloat16()
    ours = cross_entropy(half, targets)
    assert ours.dtype == torch.float32
    # fp32 arithmetic on the widened bf16 values: bf16 arithmetic would be off in the third digit
    torch.testing.assert_close(ours, F.cross_entropy(half.float(), targets), rtol=1e-6, atol=0)


def _reference(x, weight, bias, index):
    return torch.log_softmax(F.linear(x, weight, bias), -1).gather(-1, index)


def test_linear_selected_log_probs_equal_the_output_layer_then_log_softmax_with_their_gradients():
    torch.manual_seed(4)
    for bias in (True, False):
        x = torch.randn(7, 3, 16, dtype=torch.float64, requires_grad=True)
        weight = torch.randn(50, 16, dtype=torch.float64, requires_grad=True)
        b = torch.randn(50, dtype=torch.float64, requires_grad=True) if bias else None
        index = torch.randint(0, 50, (7, 3, 2))
        index[0, 0] = torch.tensor([4, 4])   # one symbol picked twice: its gradients add
        g = torch.randn(7, 3, 2, dtype=torch.float64)
        params = [t for t in (x, weight, b) if t is not None]
        ours = linear_selected_log_probs(x, weight, b, index, rows=5)   # 21 rows: blocks of 5, the last of 1
        ours_grads = torch.autograd.grad((ours * g).sum(), params)
        reference = _reference(x, weight, b, index)
        reference_grads = torch.autograd.grad((reference * g).sum(), params)
        assert ours.shape == index.shape and ours.dtype == torch.float64
        torch.testing.assert_close(ours, reference, rtol=0, atol=1e-12)
        for mine, theirs in zip(ours_grads, reference_grads):
            torch.testing.assert_close(mine, theirs, rtol=0, atol=1e-12)


def test_linear_selected_log_probs_in_bf16_is_autocasts_output_layer_normalised_in_fp32():
    torch.manual_seed(5)
    x = torch.randn(300, 64, requires_grad=True)
    weight = (torch.randn(1000, 64) * 0.3).requires_grad_()
    bias = torch.randn(1000, requires_grad=True)
    index = torch.randint(0, 1000, (300, 2))
    ours = linear_selected_log_probs(x, weight, bias, index, dtype=torch.bfloat16, rows=64)
    with torch.autocast("cpu", dtype=torch.bfloat16):      # the dtype autocast's matmul gives, by default
        assert torch.equal(linear_selected_log_probs(x, weight, bias, index, rows=64), ours)
        logits = F.linear(x, weight, bias)
    reference = _reference(x.bfloat16(), weight.bfloat16(), bias.bfloat16(), index).float()
    assert ours.dtype == torch.float32
    # the same bf16 products (summed in another order by the blocked matmul), normalised in fp32
    torch.testing.assert_close(ours, torch.log_softmax(logits.float(), -1).gather(-1, index), rtol=0, atol=1e-5)
    assert (ours - reference).abs().max() > 1e-3     # bf16 normalisation would be off in the third digit
    grads = torch.autograd.grad(ours.sum(), (x, weight, bias))
    exact = torch.autograd.grad(_reference(x, weight, bias, index).sum(), (x, weight, bias))
    for mine, theirs in zip(grads, exact):
        assert mine.dtype == torch.float32
        torch.testing.assert_close(mine, theirs, rtol=0.05, atol=0.02 * theirs.abs().max().item())


def test_linear_selected_log_probs_keep_nothing_for_a_backward_in_evaluation(monkeypatch):
    torch.manual_seed(6)
    x, weight = torch.randn(40, 8, requires_grad=True), torch.randn(30, 8, requires_grad=True)
    index = torch.randint(0, 30, (40, 1))
    kept = []
    real_empty = torch.empty
    monkeypatch.setattr(torch, "empty", lambda *a, **k: kept.append(a) or real_empty(*a, **k))
    with torch.no_grad():
        evaluated = linear_selected_log_probs(x, weight, None, index, rows=16)
    assert not kept and evaluated.grad_fn is None
    trained = linear_selected_log_probs(x, weight, None, index, rows=16)
    assert kept == [(40, 30)] and trained.grad_fn is not None
    assert torch.equal(evaluated, trained.detach())
