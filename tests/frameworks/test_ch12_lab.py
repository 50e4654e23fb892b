"""Chapter 12 (the live lab): how PyTorch 2.13 and Paddle 3.3 freeze a layer, give one layer its
own lr and clip gradients, as the chapter's table says. MegEngine's rows: notebooks/SOURCES.md."""
from __future__ import annotations

import numpy as np
import torch

from claims import claim, row


def _torch_net():
    return torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.ReLU(), torch.nn.Linear(4, 3),
                               torch.nn.ReLU(), torch.nn.Linear(3, 2))


@row("torch-names-12", "freeze a layer", "`net[2].requires_grad_(False)`")
@claim("torch-lab-requires-grad-freeze")
def test_requires_grad_false_freezes_a_layer():
    net = _torch_net()
    net[2].requires_grad_(False)
    before = net[2].weight.detach().clone()
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        opt.zero_grad()
        net(torch.randn(8, 2)).pow(2).sum().backward()
        opt.step()
    assert net[2].weight.grad is None and net[2].bias.grad is None        # no gradient at all
    assert net[0].weight.grad is not None and net[4].weight.grad is not None
    assert torch.equal(net[2].weight, before)


@row("paddle-names-12", "freeze a layer",
     "`p.stop_gradient = True` (or `ParamAttr(trainable=False)`)")
@claim("paddle-lab-stop-gradient-freeze")
def test_paddle_stop_gradient_and_trainable_false(paddle):
    layer = paddle.nn.Linear(2, 1)
    layer.weight.stop_gradient = True
    layer(paddle.ones([1, 2])).sum().backward()
    assert layer.weight.grad is None and layer.bias.grad is not None
    frozen = paddle.nn.Linear(2, 1, weight_attr=paddle.ParamAttr(trainable=False))
    assert frozen.weight.stop_gradient is True and frozen.bias.stop_gradient is False


@row("torch-names-12", "one layer's lr", 'a param group `{"params": ..., "lr": 3 * lr}`')
@claim("torch-lab-param-group-lr")
def test_param_group_with_three_times_the_lr():
    net = _torch_net()
    lr = 0.1
    opt = torch.optim.SGD([{"params": net[0].parameters(), "lr": 3 * lr},
                           {"params": list(net[2].parameters()) + list(net[4].parameters())}], lr=lr)
    net(torch.randn(8, 2)).pow(2).sum().backward()
    w0, g0 = net[0].weight.detach().clone(), net[0].weight.grad.clone()
    w4, g4 = net[4].weight.detach().clone(), net[4].weight.grad.clone()
    opt.step()
    assert torch.allclose(w0 - net[0].weight.detach(), 3 * lr * g0)
    assert torch.allclose(w4 - net[4].weight.detach(), lr * g4)


@row("paddle-names-12", "one layer's lr", "`ParamAttr(learning_rate=3.0)`")
@claim("paddle-lab-paramattr-learning-rate")
def test_paddle_paramattr_learning_rate_multiplies_the_lr(paddle):
    layer = paddle.nn.Linear(2, 1, weight_attr=paddle.ParamAttr(learning_rate=3.0), bias_attr=False)
    before = layer.weight.numpy().copy()
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=layer.parameters())
    layer(paddle.to_tensor([[1.0, 2.0]])).sum().backward()
    grad = layer.weight.grad.numpy().copy()
    opt.step()
    np.testing.assert_allclose(before - layer.weight.numpy(), 0.3 * grad, rtol=1e-5)


def _grads(net):
    return [p.grad for p in net.parameters()]


@claim("torch-lab-clip-grad")
def test_torch_clip_functions():
    net = _torch_net()
    net(torch.randn(8, 2)).pow(2).mul(100).sum().backward()
    raw = [g.clone() for g in _grads(net)]
    total = torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
    assert torch.isclose(total, torch.linalg.vector_norm(torch.cat([g.flatten() for g in raw])))
    assert total > 1.0                                           # it did clip
    after = torch.linalg.vector_norm(torch.cat([g.flatten() for g in _grads(net)]))
    assert torch.isclose(after, torch.tensor(1.0), atol=1e-5)    # global norm 1: scaled together
    scale = 1.0 / (total + 1e-6)                                 # one factor for all: direction kept
    assert all(torch.allclose(g, r * scale) for g, r in zip(_grads(net), raw))
    # on each parameter: every tensor's own norm is capped
    for p in net.parameters():
        p.grad = 10 * p.grad
        torch.nn.utils.clip_grad_norm_(p, 1.0)
        assert float(p.grad.norm()) <= 1.0 + 1e-5
    torch.nn.utils.clip_grad_value_(net.parameters(), 0.05)
    assert all(float(g.abs().max()) <= float(torch.tensor(0.05)) for g in _grads(net))
    assert any(float(g.abs().max()) == float(torch.tensor(0.05)) for g in _grads(net))


@row("paddle-names-12", "clip the global norm", "`grad_clip=paddle.nn.ClipGradByGlobalNorm(1.0)`")
@row("paddle-names-12", "clip each tensor's norm", "`paddle.nn.ClipGradByNorm(1.0)`")
@row("paddle-names-12", "clip values", "`paddle.nn.ClipGradByValue(0.5)`")
@claim("paddle-lab-grad-clip")
def test_paddle_grad_clip_objects(paddle):
    def step_with(clip):
        paddle.seed(0)
        layer = paddle.nn.Linear(4, 3)
        opt = paddle.optimizer.SGD(learning_rate=1.0, parameters=layer.parameters(), grad_clip=clip)
        before = [p.numpy().copy() for p in layer.parameters()]
        (100 * layer(paddle.ones([2, 4]))).pow(2).sum().backward()
        opt.step()
        return [b - p.numpy() for b, p in zip(before, layer.parameters())]   # lr 1: the grads used

    used = step_with(paddle.nn.ClipGradByGlobalNorm(1.0))
    assert np.isclose(np.sqrt(sum((u ** 2).sum() for u in used)), 1.0, atol=1e-4)
    used = step_with(paddle.nn.ClipGradByNorm(1.0))
    assert all(np.isclose(np.sqrt((u ** 2).sum()), 1.0, atol=1e-4) for u in used)
    used = step_with(paddle.nn.ClipGradByValue(0.5))
    assert all(np.abs(u).max() <= 0.5 + 1e-6 for u in used)
    assert any(np.isclose(np.abs(u).max(), 0.5) for u in used)


def run_chapter_cell(starts_with: str) -> str:
    """Run chapter 12's cell that starts with ``starts_with``, as a learner with the framework
    installed would; what it printed."""
    import contextlib
    import io

    import dltutor
    from chapters import chapter_cell

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(chapter_cell("12_live_lab", starts_with), {"dt": dltutor})
    return printed.getvalue()


@claim("torch-diagnose-verdicts")
def test_chapter_12s_pytorch_cell_gives_the_verdict_dltutor_gives_for_the_same_setup():
    from dltutor import diagnose, nn, optim

    printed = run_chapter_cell('torch = dt.diagnose.import_framework("torch")')
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    net[0].requires_grad_(False)
    opt = optim.SGD(net[2].named_parameters(prefix="2"), lr=0.1, momentum=0.9)
    ours = diagnose.why_not_updating(net, opt, "0.weight").verdict
    assert printed.rstrip().endswith(ours)
    assert "not in the optimizer (never updated): 40 parameters in 2 tensor(s)" in printed


@claim("paddle-diagnose-verdicts")
def test_chapter_12s_paddle_cell_finds_the_zero_paramattr_learning_rate(paddle):
    printed = run_chapter_cell('paddle = dt.diagnose.import_framework("paddle")')
    assert "status          frozen: lr_mult=0" in printed
    assert printed.rstrip().splitlines()[-1].startswith("not updating because: its lr_mult is 0")
