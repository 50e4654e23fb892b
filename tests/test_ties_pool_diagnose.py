"""Max-pooling with tied maxima (PyTorch's rule), one parameter tied across two different
modules, and the threshold of ``why_not_updating``'s "clipped to near zero" verdict."""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
from dltutor.nn import functional as F
from dltutor import backend as B
from dltutor import diagnose as D
from dltutor import nn, optim
from gradcheck import gradcheck


def on_backend(array, requires_grad=False):
    return dt.tensor(B.current().asarray(np.asarray(array, dtype=np.float64)),
                     requires_grad=requires_grad)


# --- 7. max-pooling with tied maxima ------------------------------------------------------------
def torch_max_pool2d_grad(x, upstream, kernel, stride, padding):
    """PyTorch's CPU max_pool2d backward, written out: each window scans its real (unpadded)
    pixels row by row and keeps the FIRST strictly larger value, or any NaN (so the LAST NaN
    wins); that one pixel receives the window's whole upstream gradient."""
    n, c, h, w = x.shape
    grad = np.zeros_like(x)
    out_h, out_w = upstream.shape[2:]
    for b in range(n):
        for ch in range(c):
            for oh in range(out_h):
                for ow in range(out_w):
                    h0, w0 = oh * stride - padding, ow * stride - padding
                    h1, w1 = min(h0 + kernel, h), min(w0 + kernel, w)
                    h0, w0 = max(h0, 0), max(w0, 0)
                    best, where = -np.inf, (h0, w0)
                    for i in range(h0, h1):
                        for j in range(w0, w1):
                            if x[b, ch, i, j] > best or np.isnan(x[b, ch, i, j]):
                                best, where = x[b, ch, i, j], (i, j)
                    grad[(b, ch) + where] += upstream[b, ch, oh, ow]
    return grad


def pool_grad(x0, kernel, stride, padding, upstream=None):
    x = on_backend(x0, requires_grad=True)
    y = F.max_pool2d(x, kernel, stride=stride, padding=padding)
    if upstream is None:
        upstream = np.ones(y.shape)
    y.backward(on_backend(upstream))
    return x.grad.numpy(), upstream


def test_all_tied_window_gives_everything_to_its_first_pixel(backend):
    """A constant input: every 2x2 window's gradient goes to its top-left pixel only (not
    split four ways, not to another pixel)."""
    grad, _ = pool_grad(np.zeros((1, 1, 4, 4)), 2, 2, 0)
    expected = np.zeros((4, 4))
    expected[::2, ::2] = 1.0
    np.testing.assert_array_equal(grad[0, 0], expected)


def test_partly_tied_windows_pick_the_first_maximum_in_row_major_order(backend):
    """Ties in the second row, in a column and on a diagonal: the first maximum in row-major
    scan order wins each window."""
    x = np.array([[0., 1., 7., 3.],
                  [2., 2., 7., 7.],
                  [5., 4., 9., 1.],
                  [5., 5., 0., 9.]]).reshape(1, 1, 4, 4)
    grad, _ = pool_grad(x, 2, 2, 0, upstream=np.array([[[[1., 2.], [3., 4.]]]]))
    expected = np.array([[0., 0., 2., 0.],
                         [1., 0., 0., 0.],
                         [3., 0., 4., 0.],
                         [0., 0., 0., 0.]])
    np.testing.assert_array_equal(grad[0, 0], expected)


@pytest.mark.parametrize("kernel,stride,padding", [(2, 2, 0), (3, 1, 0), (3, 2, 1), (2, 1, 1)])
def test_max_pool2d_backward_with_many_ties_matches_pytorchs_rule(kernel, stride, padding,
                                                                  backend):
    """Inputs drawn from {0, 1, 2} tie in almost every window; overlapping and padded windows
    each send their gradient to their own first maximum (a random upstream gradient, so no
    mix-up between windows cancels out)."""
    local = np.random.default_rng(kernel * 10 + stride + padding)
    x0 = local.integers(0, 3, (2, 2, 5, 6)).astype(np.float64)
    out_hw = [(n + 2 * padding - kernel) // stride + 1 for n in x0.shape[2:]]
    upstream = local.standard_normal((2, 2, *out_hw))
    grad, _ = pool_grad(x0, kernel, stride, padding, upstream=upstream)
    np.testing.assert_allclose(grad, torch_max_pool2d_grad(x0, upstream, kernel, stride,
                                                           padding), rtol=0, atol=1e-12)


def test_windows_of_minus_infinity_with_padding_keep_their_gradient(backend):
    """Tied maxima of -inf in padded windows: PyTorch never hands gradient to padding."""
    x0 = np.full((1, 1, 2, 2), -np.inf)
    grad, upstream = pool_grad(x0, 2, 1, 1)
    np.testing.assert_array_equal(grad, torch_max_pool2d_grad(x0, upstream, 2, 1, 1))


@pytest.mark.parametrize("padding", [0, 1])
def test_a_window_holding_nan_gives_its_gradient_to_the_last_nan(backend, padding):
    """PyTorch: a NaN is the maximum of its window (the output is NaN), and the last NaN in
    the window's scan order receives the gradient."""
    x0 = np.array([[[[np.nan, 1.0, 3.0], [np.nan, 2.0, np.nan], [0.0, 5.0, 4.0]]]])
    with np.errstate(invalid="ignore"):
        grad, upstream = pool_grad(x0, 2, 1, padding)
    np.testing.assert_array_equal(grad, torch_max_pool2d_grad(x0, upstream, 2, 1, padding))


# --- 8. one parameter tied across two different modules -----------------------------------------
VOCAB, DIM = 6, 4


class TiedLM(nn.Module):
    """An embedding and an output head that share one (VOCAB, DIM) weight, as in GPT-2."""

    def __init__(self, tie=True):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)
        if tie:
            self.head.weight = self.embed.weight

    def forward(self, idx):
        return self.head(dt.tanh(self.embed(idx)))


IDX = [[0, 2, 5], [5, 2, 1]]
TARGETS = [1, 3, 0, 2, 2, 5]


def lm_loss(model):
    logits = model(dt.tensor(IDX))
    return F.cross_entropy(logits.reshape(-1, VOCAB), dt.tensor(TARGETS))


def test_tied_weight_is_one_parameter_with_two_names():
    """Listed once by parameters(), under both names in state_dict() (one memory)."""
    dt.manual_seed(0)
    model = TiedLM()
    assert model.head.weight is model.embed.weight
    assert len(list(model.parameters())) == 1
    assert [n for n, _ in model.named_parameters()] == ["embed.weight"]
    assert [n for n, _ in model.named_parameters(remove_duplicate=False)] == ["embed.weight",
                                                                              "head.weight"]
    state = model.state_dict()
    assert sorted(state) == ["embed.weight", "head.weight"]
    assert np.shares_memory(state["embed.weight"].data, state["head.weight"].data)


def test_tied_weight_gradient_is_the_sum_of_both_uses():
    """The shared weight's gradient equals the embedding's plus the head's gradient in the
    same model with the two weights untied (but equal)."""
    dt.manual_seed(0)
    tied = TiedLM()
    lm_loss(tied).backward()
    untied = TiedLM(tie=False)
    untied.embed.weight.set_value(tied.embed.weight.numpy())
    untied.head.weight.set_value(tied.embed.weight.numpy())
    lm_loss(untied).backward()
    both = untied.embed.weight.grad.numpy() + untied.head.weight.grad.numpy()
    assert np.abs(untied.embed.weight.grad.numpy()).max() > 0.01   # both uses contribute
    assert np.abs(untied.head.weight.grad.numpy()).max() > 0.01
    np.testing.assert_allclose(tied.embed.weight.grad.numpy(), both, rtol=1e-5, atol=1e-7)


def test_weight_used_as_embedding_and_output_head_matches_finite_differences(backend):
    """The same tie, functionally and in float64: w looks tokens up and then scores them."""
    def tied_forward(w):
        idx = dt.tensor(B.current().asarray(np.array(IDX)))
        return dt.linear(dt.tanh(F.embedding(idx, w)), w)

    gradcheck(tied_forward, np.random.default_rng(8).standard_normal((VOCAB, DIM)))


def test_an_optimizer_step_updates_the_tied_weight_once():
    """One SGD step moves the shared weight by lr * (summed gradient), not twice that."""
    dt.manual_seed(0)
    model = TiedLM()
    opt = optim.SGD(model.named_parameters(), lr=0.1)
    lm_loss(model).backward()
    before = model.embed.weight.numpy().copy()
    grad = model.embed.weight.grad.numpy().copy()
    opt.step()
    np.testing.assert_allclose(model.embed.weight.numpy(), before - 0.1 * grad, rtol=1e-6,
                               atol=1e-7)
    assert model.head.weight is model.embed.weight


def test_load_state_dict_keeps_the_tie_across_modules():
    """Loading another tied model's state keeps one object under both names; loading only one
    name (strict=False) changes what the other name sees too."""
    dt.manual_seed(0)
    model, other = TiedLM(), TiedLM()
    weight = model.embed.weight
    model.load_state_dict(other.state_dict())
    assert model.embed.weight is weight and model.head.weight is weight
    np.testing.assert_array_equal(weight.numpy(), other.embed.weight.numpy())

    new = np.arange(VOCAB * DIM, dtype=np.float32).reshape(VOCAB, DIM)
    result = model.load_state_dict({"embed.weight": new}, strict=False)
    assert result.missing_keys == ["head.weight"]
    assert model.head.weight is model.embed.weight
    np.testing.assert_array_equal(model.head.weight.numpy(), new)
    lm_loss(model).backward()                    # still one parameter, one gradient
    assert model.head.weight.grad is model.embed.weight.grad


# --- 9. the "clipped to near zero" threshold ----------------------------------------------------
def small_net():
    dt.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 2))
    dt.manual_seed(1)
    net(dt.randn(5, 3)).sum().backward()
    return net


def clip_at(kind, factor, net):
    """A clip that changes the norm of 0.weight's gradient by ``factor * CLIPPED_SCALE``."""
    target = factor * D.CLIPPED_SCALE
    grads = {n: p.grad.numpy().astype(np.float64) for n, p in net.named_parameters()}
    if kind == "by_norm":
        return optim.ClipGradByNorm(target * np.linalg.norm(grads["0.weight"]))
    if kind == "by_global_norm":
        total = np.sqrt(sum(np.sum(g * g) for g in grads.values()))
        return optim.ClipGradByGlobalNorm(target * total)
    # a bound below every |g| clips every element to it: the norm becomes bound * sqrt(n)
    weight = grads["0.weight"]
    bound = target * np.linalg.norm(weight) / np.sqrt(weight.size)
    assert bound < np.abs(weight).min()
    return optim.ClipGradByValue(bound)


@pytest.mark.parametrize("factor", [0.5, 0.99, 1.01, 2.0])
@pytest.mark.parametrize("kind", ["by_norm", "by_global_norm", "by_value"])
def test_clipped_to_zero_verdict_flips_exactly_at_the_threshold(kind, factor):
    """A clip scale just below CLIPPED_SCALE is "clipped to near zero"; just above it is not,
    for each kind of clip."""
    net = small_net()
    opt = optim.SGD(net.named_parameters(), lr=0.1, grad_clip=clip_at(kind, factor, net))
    check = D.why_not_updating(net, opt, "0.weight")
    clip_row = next(r for r in check.rows if r["check"] == "clipping")
    if factor < 1:
        assert check.cause == "clipped_to_zero", check.verdict
        assert clip_row["status"] == "problem" and check.will_move is False
        assert "clipping scales its gradient to nearly zero" in check.verdict
    else:
        assert check.cause is None, check.verdict
        assert clip_row["status"] == "ok" and check.will_move is True
        assert check.verdict.startswith("should update")


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_the_predicted_scale_is_what_the_step_applies(factor):
    """The scale the verdict is based on is the one the optimizer's step really applies: the
    weight moves by lr * factor * CLIPPED_SCALE * grad."""
    net = small_net()
    weight = net[0].weight
    opt = optim.SGD(net.named_parameters(), lr=0.1, grad_clip=clip_at("by_norm", factor, net))
    before, grad = weight.numpy().copy(), weight.grad.numpy().copy()
    opt.step()
    np.testing.assert_allclose(before - weight.numpy(), 0.1 * factor * D.CLIPPED_SCALE * grad,
                               rtol=1e-3, atol=1e-9)
