"""The threshold of ``why_not_updating``'s "clipped to near zero" verdict, for every kind of
clip, and the scale it predicts is the one the optimizer's step applies."""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
from dltutor import diagnose as D
from dltutor import nn, optim


# --- the "clipped to near zero" threshold ----------------------------------------------------
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
