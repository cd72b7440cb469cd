import torch
import torch.nn.functional as F

from hanzilm.softmax import cross_entropy, selected_log_probs


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


def test_consuming_selected_log_probs_is_the_same_forward_and_refuses_autograd_logits():
    torch.manual_seed(3)
    x = torch.randn(64, 300) * 6
    i = torch.randint(0, 300, (64, 2))
    expected = selected_log_probs(x, i)
    assert torch.equal(selected_log_probs(x.clone(), i, consume=True), expected)
    with torch.no_grad():       # evaluation: logits that required grad may be consumed when nothing records
        assert torch.equal(selected_log_probs(x.clone().requires_grad_(), i, consume=True), expected)
    try:
        selected_log_probs(x.clone().requires_grad_(), i, consume=True)
    except ValueError as e:
        assert "autograd" in str(e)
    else:
        raise AssertionError("consumed logits that autograd needs")
