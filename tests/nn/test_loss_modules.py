"""Loss modules as a PyTorch learner writes them, checked against formulas written out here."""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn, optim
from dltutor.nn import functional as F

from gradcheck import gradcheck


def test_a_pytorch_training_loop_with_a_loss_module_runs():
    """The loop of PyTorch's optimization tutorial, with only the import changed."""
    dt.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    X, y = dt.randn(16, 4), dt.randint(0, 3, (16,))
    losses = []
    for _ in range(20):
        pred = model(X)
        loss = loss_fn(pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((5, 3)), rng.standard_normal((5, 3))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_and_l1_losses_follow_their_formulas(reduction):
    a, b = _data()
    reduce = {"mean": np.mean, "sum": np.sum, "none": lambda x: x}[reduction]
    mse = nn.MSELoss(reduction=reduction)(dt.tensor(a), dt.tensor(b)).numpy()
    l1 = nn.L1Loss(reduction=reduction)(dt.tensor(a), dt.tensor(b)).numpy()
    np.testing.assert_allclose(mse, reduce((a - b) ** 2), rtol=1e-12)
    np.testing.assert_allclose(l1, reduce(np.abs(a - b)), rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_is_the_sigmoid_cross_entropy_and_stable(reduction):
    x = np.array([-30.0, -2.0, 0.0, 0.5, 40.0])
    y = np.array([0.0, 1.0, 0.5, 1.0, 0.0])
    # -(y log s(x) + (1 - y) log(1 - s(x))) with s the sigmoid is log(1 + e^x) - x y
    expected = np.logaddexp(0.0, x) - x * y
    reduce = {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction]
    got = nn.BCEWithLogitsLoss(reduction=reduction)(dt.tensor(x), dt.tensor(y)).numpy()
    np.testing.assert_allclose(got, reduce(expected), rtol=1e-9, atol=1e-12)
    big = nn.BCEWithLogitsLoss()(dt.tensor([1000.0], dtype=dt.float32), dt.tensor([0.0]))
    assert np.isfinite(big.item()) and big.item() == pytest.approx(1000.0)


def test_cross_entropy_loss_module_is_the_function_with_its_settings():
    dt.manual_seed(0)
    logits, labels = dt.randn(6, 4), dt.tensor([0, 1, -100, 3, 2, -100])
    module = nn.CrossEntropyLoss(reduction="sum", ignore_index=-100)
    np.testing.assert_array_equal(module(logits, labels).numpy(),
                                  F.cross_entropy(logits, labels, "sum", -100).numpy())


@pytest.mark.parametrize("fn", [F.l1_loss, F.binary_cross_entropy_with_logits],
                         ids=["l1_loss", "bce_with_logits"])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_new_losses_pass_the_gradient_check(fn, reduction):
    a, b = _data(1)
    a[np.abs(a - b) < 1e-3] += 0.1                   # keep away from |x|'s kink
    b = 1 / (1 + np.exp(-b))                         # targets in (0, 1)
    gradcheck(lambda x, y: fn(x, y, reduction), a, b)


@pytest.mark.parametrize("cls", [nn.CrossEntropyLoss, nn.MSELoss, nn.L1Loss, nn.BCEWithLogitsLoss])
def test_a_loss_module_refuses_an_unknown_reduction(cls):
    with pytest.raises(ValueError, match=f"{cls.__name__}: reduction must be one of"):
        cls(reduction="avg")
    assert list(cls().parameters()) == []


def test_pytorch_idioms_of_a_training_loop_work():
    """``f"{loss:.3f}"`` and ``torch.set_grad_enabled`` as learners write them."""
    loss = dt.tensor(2.0) / 3
    assert f"loss {loss:.3f}" == "loss 0.667" and f"{loss}" == str(loss)
    with pytest.raises(TypeError, match="one-element tensor"):
        f"{dt.ones(2):.2f}"
    w = dt.ones(2, requires_grad=True)
    for training in (False, True):
        with dt.set_grad_enabled(training):
            out = (w * 2).sum()
        assert out.requires_grad is training
    dt.set_grad_enabled(False)
    assert not dt.is_grad_enabled()
    dt.set_grad_enabled(True)
    assert dt.is_grad_enabled()
    with pytest.raises(TypeError, match="set_grad_enabled"):
        dt.set_grad_enabled("no")
