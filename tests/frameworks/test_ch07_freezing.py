"""Chapter 07 (freezing parameters): what it says PyTorch 2.13 and Paddle 3.3 do, run in them."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from chapters import chapter_cell
from claims import claim

from dltutor import nn, optim

F = torch.nn.functional


# --- PyTorch: the chapter's small network and batch ----------------------------------------

def make_net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))


def batch():
    torch.manual_seed(1)
    return torch.randn(32, 3), torch.randn(32, 1)


def train_step(net, opt, x, y):
    opt.zero_grad()
    loss = F.mse_loss(net(x), y)
    loss.backward()
    opt.step()


@claim("torch-freezing-requires-grad-false-skipped")
def test_torch_requires_grad_false_no_grad_no_state_no_decay():
    x, y = batch()
    net = make_net()
    net[0].requires_grad_(False)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=0.01)
    before = net[0].weight.detach().clone()
    for _ in range(5):
        train_step(net, opt, x, y)
    assert net[0].weight.grad is None and net[0].bias.grad is None
    assert net[0].weight not in opt.state and net[0].bias not in opt.state   # no momentum
    assert torch.equal(net[0].weight, before)                              # no decay either
    assert "momentum_buffer" in opt.state[net[2].weight]                    # the rest trained


@claim("torch-freezing-frozen-layer-output-no-graph")
def test_torch_frozen_first_layer_records_no_graph():
    x, _ = batch()
    net = make_net()
    net[0].requires_grad_(False)
    hidden = net[0](x)
    assert not hidden.requires_grad and hidden.grad_fn is None
    assert make_net()[0](x).grad_fn is not None


@claim("torch-freezing-lr-zero-momentum-accumulates")
def test_torch_group_lr_zero_keeps_weight_but_momentum_grows():
    x, y = batch()
    net = make_net()
    opt = torch.optim.SGD([{"params": net[0].parameters(), "lr": 0.0},
                           {"params": net[2].parameters()}], lr=0.05, momentum=0.9,
                          weight_decay=0.01)
    before = net[0].weight.detach().clone()
    norms = []
    for _ in range(5):
        train_step(net, opt, x, y)
        norms.append(opt.state[net[0].weight]["momentum_buffer"].norm().item())
    assert torch.equal(net[0].weight, before)          # it did not move
    assert net[0].weight.grad is not None              # but it got a gradient
    assert norms[-1] > 1.5 * norms[0]                  # and its momentum keeps growing


@claim("torch-freezing-left-out-grad-accumulates")
def test_torch_left_out_layer_gradient_accumulates_until_module_zero_grad():
    x, y = batch()
    net = make_net()
    opt = torch.optim.SGD(net[2].parameters(), lr=0.05, momentum=0.9)
    before = net[0].weight.detach().clone()
    arrived = []
    net[0].weight.register_hook(lambda grad: arrived.append(grad.clone()))
    norms = []
    for _ in range(5):
        train_step(net, opt, x, y)              # opt.zero_grad() clears net[2] only
        norms.append(net[0].weight.grad.norm().item())
    assert torch.equal(net[0].weight, before) and len(arrived) == 5
    assert torch.allclose(net[0].weight.grad, sum(arrived), atol=1e-6)
    assert norms[-1] > 2 * norms[0]
    net.zero_grad()                               # the module's: every parameter
    assert net[0].weight.grad is None


@claim("torch-freezing-zero-grad-set-to-none")
def test_torch_zero_grad_leaves_none_and_set_to_none_false_leaves_zeros_in_the_same_tensor():
    assert inspect.signature(torch.optim.Optimizer.zero_grad).parameters["set_to_none"].default
    for w, opt_class in ((torch.nn.Parameter(torch.tensor([1.0, 2.0])), torch.optim.SGD),
                         (nn.Parameter([1.0, 2.0]), optim.SGD)):         # PyTorch, then dltutor
        opt = opt_class([w], lr=0.1)
        (w * w).sum().backward()
        kept = w.grad
        opt.zero_grad(set_to_none=False)
        assert w.grad is kept and w.grad.tolist() == [0.0, 0.0]
        opt.zero_grad()
        assert w.grad is None


@claim("paddle-freezing-clear-grad-zeros")
def test_paddle_clear_grad_leaves_zeros_and_set_to_zero_false_leaves_none(paddle):
    w = paddle.create_parameter([2], "float32")
    w.set_value(paddle.to_tensor([1.0, 2.0]))
    p = nn.Parameter([1.0, 2.0])
    for param, opt in ((w, paddle.optimizer.SGD(learning_rate=0.1, parameters=[w])),
                       (p, optim.SGD([p], lr=0.1))):                       # Paddle, then dltutor
        (param * param).sum().backward()
        opt.clear_grad()
        assert param.grad is not None and param.grad.numpy().tolist() == [0.0, 0.0]
        (param * param).sum().backward()
        opt.clear_grad(set_to_zero=False)
        assert param.grad is None
