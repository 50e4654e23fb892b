"""MegEngine's GradManager (seed 004's training loop) over the kit's backward(inputs=...).

What MegEngine does is cited from its source in notebooks/SOURCES.md (mge-tying-grad-sum,
mge-freezing-not-attached-skipped): backward writes .grad of attached tensors only, adds to
what is there, and ends the recording.
"""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn, optim
from dltutor.autodiff import GradManager

from bad_input import refused


def seed_004_loop(attach, steps=3):
    """Seed 004's loop: attach, record, gm.backward, opt.step, opt.clear_grad."""
    dt.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = optim.SGD(net.parameters(), lr=0.1)
    gm = GradManager().attach(attach(net))
    x, y = dt.randn(8, 3), dt.randn(8, 1)
    for _ in range(steps):
        with gm:
            loss = ((net(x) - y) ** 2).mean()
            gm.backward(loss)
        opt.step()
        opt.clear_grad(set_to_zero=False)      # MegEngine's clear_grad leaves None
    return net


def test_the_seed_loop_trains_like_loss_backward():
    """Attaching every parameter gives exactly the plain loop's weights."""
    managed = seed_004_loop(lambda net: net.parameters())
    dt.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = optim.SGD(net.parameters(), lr=0.1)
    x, y = dt.randn(8, 3), dt.randn(8, 1)
    for _ in range(3):
        opt.zero_grad()
        ((net(x) - y) ** 2).mean().backward()
        opt.step()
    for ours, theirs in zip(managed.parameters(), net.parameters()):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_a_parameter_left_out_of_attach_gets_no_gradient_and_stays_still():
    before = seed_004_loop(lambda net: [], steps=0)[0].weight.numpy().copy()
    net = seed_004_loop(lambda net: list(net[2].parameters()))
    np.testing.assert_array_equal(net[0].weight.numpy(), before)     # not attached: frozen
    assert net[0].weight.grad is None


def test_backward_adds_to_grad_and_ends_the_recording():
    w = dt.tensor([2.0])
    gm = GradManager().attach(w)
    assert w.requires_grad                                 # attaching is MegEngine's flag
    with gm:
        gm.backward(w * w)
        refused(lambda: gm.backward(w * w), RuntimeError, "nothing is being recorded")
    with gm:
        gm.backward(w * 3)
    assert w.grad.tolist() == [7.0]                        # 4 + 3: accumulated
    refused(lambda: gm.backward(w * w), RuntimeError, "inside `with gm:`")


def test_recording_twice_is_refused_as_in_megengine():
    gm = GradManager().attach(dt.tensor([1.0]))
    with gm:
        refused(lambda: gm.record(), RuntimeError, "already recording")
    gm.record()                                            # after the block: allowed again
    gm.release()


def test_a_non_scalar_y_takes_ones_and_dy_is_the_upstream_gradient():
    w = dt.tensor([1.0, 2.0])
    gm = GradManager().attach(w)
    with gm:
        gm.backward(w * w)                                 # dy = ones: d/dw sum(w^2) = 2w
    assert w.grad.tolist() == [2.0, 4.0]
    w.grad = None
    with gm:
        gm.backward(w * w, dt.tensor([1.0, 0.5]))
    assert w.grad.tolist() == [2.0, 2.0]


def test_callbacks_see_each_parameter_and_change_its_gradient():
    a, b = dt.tensor([1.0]), dt.tensor([1.0])
    seen = []
    gm = GradManager().attach([a, b], callbacks=lambda p, g: (seen.append(p), g * 10)[1])
    with gm:
        gm.backward(a * 2 + b * 3)
    assert a.grad.tolist() == [20.0] and b.grad.tolist() == [30.0]
    assert len(seen) == 2 and {id(p) for p in seen} == {id(a), id(b)}
    with gm:                                               # the hooks were removed after
        (a * 1).sum().backward()
    assert a.grad.tolist() == [21.0]


@pytest.mark.parametrize("params, callbacks, error, words", [
    ([1.0], None, TypeError, ["item 1", "float"]),
    (None, "not callable", TypeError, ["callback 0", "str"]),
])
def test_attach_checks_everything_before_attaching_anything(params, callbacks, error, words):
    w = dt.tensor([1.0])
    gm = GradManager()
    items = [w] + (params or [])
    refused(lambda: gm.attach(items, callbacks=callbacks), error, *words, state=[w])
    assert gm.attached_tensors() == [] and not w.requires_grad


def test_attach_refuses_a_computed_tensor():
    w = dt.tensor([1.0], requires_grad=True)
    refused(lambda: GradManager().attach([w * 2]), ValueError, "computed by mul")
