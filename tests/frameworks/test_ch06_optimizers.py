"""Chapter 06 (optimizers and parameter groups): what it says PyTorch 2.13 and Paddle 3.3 do.

Each test runs the real framework on the setup the chapter describes and checks the numbers a
step produces (not only attributes).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from chapters import paddle_dynamic
from claims import claim, row


def _torch_moves(params_list, momentum, steps=2):
    """Moves per step of a weight w = 1.0 (gradient 0.5 per use, lr 0.1), w listed as given."""
    w = params_list[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = torch.optim.SGD(params_list, lr=0.1, momentum=momentum)
    moves = []
    for _ in range(steps):
        old = w.item()
        opt.zero_grad()
        (w * 0.5).sum().backward()
        opt.step()
        moves.append(round(old - w.item(), 4))
    return moves


# ---------------------------------------------------------------- PyTorch


@claim("torch-crossentropyloss-reduction-modes")
def test_torch_cross_entropy_loss_module_reduction():
    loss_fn = torch.nn.CrossEntropyLoss()
    assert loss_fn.reduction == "mean"                 # the default
    logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 0.3]])
    labels = torch.tensor([0, 2])
    per = torch.nn.CrossEntropyLoss(reduction="none")(logits, labels)
    expected = -torch.log_softmax(logits, 1)[[0, 1], [0, 2]]
    assert per.shape == (2,) and torch.allclose(per, expected)
    assert torch.isclose(loss_fn(logits, labels), expected.mean())
    assert torch.isclose(torch.nn.CrossEntropyLoss(reduction="sum")(logits, labels), expected.sum())
    assert torch.isclose(loss_fn(logits, labels), torch.nn.functional.cross_entropy(logits, labels))


@row("torch-names-06", "parameter groups", "same")
@claim("torch-optim-groups-from-plain-lists")
def test_torch_groups_from_plain_parameter_lists():
    conv, fc = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
    opt = torch.optim.SGD([{"params": list(conv.parameters())},
                           {"params": list(fc.parameters()), "lr": 0.01}], lr=0.05)
    assert [g["lr"] for g in opt.param_groups] == [0.05, 0.01]
    assert [len(g["params"]) for g in opt.param_groups] == [2, 2]
    assert opt.param_groups[0]["momentum"] == 0      # a setting the group did not give: the default
    before = [p.detach().clone() for p in (conv.weight, fc.weight)]
    fc(conv(torch.tensor([[1.0, -2.0]]))).sum().backward()
    opt.step()
    for p, old, lr in zip((conv.weight, fc.weight), before, (0.05, 0.01)):
        assert torch.allclose(old - p.detach(), lr * p.grad, atol=1e-7)


@claim("torch-no-lr-mult-own-group")
def test_torch_has_no_lr_mult_a_group_of_its_own_instead():
    layer = torch.nn.Linear(3, 2)
    assert not hasattr(layer.weight, "lr_mult") and not hasattr(layer.weight, "regularizer")
    layer.weight.lr_mult = 2.0                           # an attribute PyTorch never reads
    opt = torch.optim.SGD([{"params": [layer.weight], "lr": 0.01 * 2.0},
                           {"params": [layer.bias], "lr": 0.01}], lr=0.05)
    w0, b0 = layer.weight.detach().clone(), layer.bias.detach().clone()
    layer(torch.tensor([[1.0, 2.0, 3.0]])).sum().backward()
    opt.step()
    assert torch.allclose(w0 - layer.weight.detach(), 0.02 * layer.weight.grad, atol=1e-7)
    assert torch.allclose(b0 - layer.bias.detach(), 0.01 * layer.bias.grad, atol=1e-7)
    assert "regularizer" not in opt.defaults and "lr_mult" not in opt.defaults


@row("torch-names-06", "decay chosen by name", "— (use two groups)")
@claim("torch-weight-decay-two-groups")
def test_torch_bias_free_decay_with_two_groups():
    layer = torch.nn.Linear(3, 2)
    opt = torch.optim.SGD([{"params": [layer.weight], "weight_decay": 0.01},
                           {"params": [layer.bias], "weight_decay": 0.0}], lr=0.05)
    w0, b0 = layer.weight.detach().clone(), layer.bias.detach().clone()
    layer.weight.grad, layer.bias.grad = torch.zeros_like(w0), torch.zeros_like(b0)
    opt.step()
    assert torch.allclose(layer.weight.detach(), w0 * (1 - 0.05 * 0.01), atol=1e-8)
    assert torch.equal(layer.bias.detach(), b0)


@row("torch-names-06", "a parameter twice in one group",
     "a warning, then updated twice per step")
@claim("torch-duplicate-in-one-group-warns-updates-twice")
def test_torch_parameter_twice_in_one_group_warns_and_updates_twice():
    w = torch.nn.Parameter(torch.tensor([1.0]))
    with pytest.warns(UserWarning, match="duplicate parameters"):
        torch.optim.SGD([w, w], lr=0.1)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        torch.optim.SGD([{"params": [w, w]}], lr=0.1)
    assert _torch_moves([torch.nn.Parameter(torch.tensor([1.0]))], 0.0) == [0.05, 0.05]
    w = torch.nn.Parameter(torch.tensor([1.0]))
    assert _torch_moves([w, w], 0.0) == [0.1, 0.1]                     # plain SGD: lr doubled
    assert _torch_moves([torch.nn.Parameter(torch.tensor([1.0]))], 0.9) == [0.05, 0.095]
    w = torch.nn.Parameter(torch.tensor([1.0]))
    assert _torch_moves([w, w], 0.9) == [0.1, round(0.095 + 0.1355, 4)]   # 2x, then ~2.4x


@row("torch-names-06", "a parameter in two groups", "`ValueError`")
@claim("torch-duplicate-in-two-groups-valueerror")
def test_torch_parameter_in_two_groups_is_refused():
    w = torch.nn.Parameter(torch.tensor([1.0]))
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        torch.optim.SGD([{"params": [w]}, {"params": [w], "lr": 0.01}], lr=0.1)


# ---------------------------------------------------------------- Paddle


def _paddle_linear(paddle, weight_attr=None, bias=False):
    layer = paddle.nn.Linear(2, 1, weight_attr=weight_attr, bias_attr=None if bias else False)
    layer.weight.set_value(np.array([[1.0], [-2.0]], dtype="float32"))
    return layer


def _paddle_step(paddle, layer, opt):
    """One step on the input [3, 4]; returns (weight before, its gradient, the move)."""
    w0 = layer.weight.numpy().copy()
    opt.clear_grad()
    layer(paddle.to_tensor([[3.0, 4.0]])).sum().backward()
    grad = layer.weight.grad.numpy().copy()
    opt.step()
    return w0, grad, w0 - layer.weight.numpy()


@row("paddle-names-06", "per-parameter lr multiplier", "`ParamAttr(learning_rate=2.0)` (flat "
     "list only: a group overwrites it with its `learning_rate`)")
@claim("paddle-paramattr-flat-list-lr-and-regularizer")
def test_paddle_paramattr_in_a_flat_list():
    """Flat list: lr = optimizer lr x ParamAttr rate; the ParamAttr regularizer replaces the
    optimizer's weight decay."""
    paddle = paddle_dynamic()
    from paddle.regularizer import L1Decay
    layer = _paddle_linear(paddle, paddle.ParamAttr(learning_rate=0.5, regularizer=L1Decay(0.1)))
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=layer.parameters(), weight_decay=0.01)
    assert layer.weight.optimize_attr == {"learning_rate": 0.5}
    w0, g, move = _paddle_step(paddle, layer, opt)
    np.testing.assert_allclose(move, 0.1 * 0.5 * (g + 0.1 * np.sign(w0)), rtol=1e-5)
    both = 0.1 * 0.5 * (g + 0.1 * np.sign(w0) + 0.01 * w0)            # if both decays applied
    assert not np.allclose(move, both, rtol=1e-5)


@row("paddle-names-06", "per-parameter lr multiplier", "`ParamAttr(learning_rate=2.0)` (flat "
     "list only: a group overwrites it with its `learning_rate`)")
@claim("paddle-group-overwrites-paramattr")
def test_paddle_group_overwrites_paramattr_lr_and_regularizer():
    """In a group: the group's learning_rate (default 1.0) overwrites the ParamAttr rate, and the
    group's weight decay (default: the optimizer's) replaces the ParamAttr regularizer."""
    paddle = paddle_dynamic()
    from paddle.regularizer import L1Decay, L2Decay
    layer = _paddle_linear(paddle, paddle.ParamAttr(learning_rate=0.5, regularizer=L1Decay(0.1)))
    opt = paddle.optimizer.SGD(learning_rate=0.1, weight_decay=0.01,
                               parameters=[{"params": layer.parameters(), "learning_rate": 2.0}])
    assert layer.weight.optimize_attr == {"learning_rate": 2.0}
    assert isinstance(layer.weight.regularizer, L2Decay)
    assert np.isclose(layer.weight.regularizer._coeff, 0.01)
    w0, g, move = _paddle_step(paddle, layer, opt)
    np.testing.assert_allclose(move, 0.1 * 2.0 * (g + 0.01 * w0), rtol=1e-5)
    np.testing.assert_allclose(move, [[0.602], [0.796]], rtol=1e-5)
    flat_rule = 0.1 * 2.0 * 0.5 * (g + 0.1 * np.sign(w0))
    assert not np.allclose(move, flat_rule, rtol=1e-3)

    # A group that sets nothing: rate 1.0, and no decay at all (the optimizer has none).
    layer = _paddle_linear(paddle, paddle.ParamAttr(learning_rate=0.5, regularizer=L1Decay(0.1)))
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=[{"params": layer.parameters()}])
    assert layer.weight.optimize_attr == {"learning_rate": 1.0} and layer.weight.regularizer is None
    w0, g, move = _paddle_step(paddle, layer, opt)
    np.testing.assert_allclose(move, 0.1 * g, rtol=1e-5)


@claim("paddle-group-overwrites-paramattr", "paddle-group-of-its-own-keeps-settings")
def test_paddle_chapter_example_fc1_weight_in_the_fc_group():
    """The chapter's setup: lr 0.05, the fc group at scale 0.2 (= 0.01), weight_decay 0.01,
    fc1.weight with ParamAttr(learning_rate=2.0, regularizer=L1Decay(0.001)): Paddle steps it
    like fc1.bias, w - 0.01 * (g + 0.01 * w). Its own group keeps its settings."""
    paddle = paddle_dynamic()
    from paddle.regularizer import L1Decay

    def attr():                           # a fresh ParamAttr for each layer built
        return paddle.ParamAttr(learning_rate=2.0, regularizer=L1Decay(0.001))

    layer = _paddle_linear(paddle, attr())
    opt = paddle.optimizer.SGD(learning_rate=0.05, weight_decay=0.01, parameters=[
        {"params": layer.parameters(), "learning_rate": 0.2}])
    w0, g, move = _paddle_step(paddle, layer, opt)
    np.testing.assert_allclose(move, 0.01 * (g + 0.01 * w0), rtol=1e-5)
    assert not np.allclose(move, 0.02 * (g + 0.001 * np.sign(w0)), rtol=1e-3)   # dltutor's step

    layer = _paddle_linear(paddle, attr())           # a group of its own: lr x 2, L1 0.001
    opt = paddle.optimizer.SGD(learning_rate=0.05, weight_decay=0.01, parameters=[
        {"params": layer.parameters(), "learning_rate": 0.4, "weight_decay": L1Decay(0.001)}])
    w0, g, move = _paddle_step(paddle, layer, opt)
    np.testing.assert_allclose(move, 0.02 * (g + 0.001 * np.sign(w0)), rtol=1e-5)


@row("paddle-names-06", "parameter groups", '`parameters=[{"params": a}, {"params": b, '
     '"learning_rate": 0.2}]` (a *scale* of the optimizer\'s lr; chapter 07)')
@claim("paddle-group-lr-is-a-scale")
def test_paddle_group_learning_rate_scales_the_optimizers():
    paddle = paddle_dynamic()
    conv, fc = _paddle_linear(paddle), _paddle_linear(paddle)
    opt = paddle.optimizer.SGD(learning_rate=0.05, parameters=[
        {"params": conv.parameters()}, {"params": fc.parameters(), "learning_rate": 0.2}])
    for layer, lr in ((conv, 0.05), (fc, 0.05 * 0.2)):
        _, g, move = _paddle_step(paddle, layer, opt)
        np.testing.assert_allclose(move, lr * g, rtol=1e-5)


@row("paddle-names-06", "decay chosen by name", "`AdamW(..., apply_decay_param_fun=f)`, "
     "`f(\"linear_1.b_0\")`: the generated name")
@claim("paddle-adamw-apply-decay-param-fun")
def test_paddle_adamw_apply_decay_param_fun_decoupled():
    """AdamW's decay is decoupled (p *= 1 - lr * coeff); the function picks the parameters."""
    paddle = paddle_dynamic()
    layer = paddle.nn.Linear(3, 2)
    seen = []

    def by_suffix(name):
        seen.append(name)
        return not name.endswith("bias")

    opt = paddle.optimizer.AdamW(learning_rate=0.01, weight_decay=0.01,
                                 parameters=layer.parameters(), apply_decay_param_fun=by_suffix)
    layer.bias.set_value(np.array([0.5, -1.5], dtype="float32"))     # Paddle starts biases at 0
    w0, b0 = layer.weight.numpy().copy(), layer.bias.numpy().copy()
    layer.weight.grad = paddle.zeros_like(layer.weight)   # a zero gradient: Adam's own step is 0
    layer.bias.grad = paddle.zeros_like(layer.bias)
    opt.step()
    assert set(seen) == {layer.weight.name, layer.bias.name}         # called with param.name
    np.testing.assert_allclose(layer.weight.numpy(), w0 * (1 - 0.01 * 0.01), rtol=1e-6)
    # param.name is generated ("linear_N.b_0"): not "bias", so the bias decays too
    assert not layer.bias.name.endswith("bias")
    np.testing.assert_allclose(layer.bias.numpy(), b0 * (1 - 0.01 * 0.01), rtol=1e-6)
    assert not np.allclose(layer.bias.numpy(), b0, rtol=0, atol=1e-9)


class _PaddleLeNet:
    """The chapter's LeNet in Paddle (the same layers, built in the same order)."""

    @staticmethod
    def build(paddle):
        class LeNet(paddle.nn.Layer):
            def __init__(self):
                super().__init__()
                self.conv1 = paddle.nn.Conv2D(1, 6, 3, padding=1)
                self.pool = paddle.nn.MaxPool2D(2)
                self.conv2 = paddle.nn.Conv2D(6, 16, 3)
                self.fc1 = paddle.nn.Linear(16 * 2 * 2, 32)
                self.fc2 = paddle.nn.Linear(32, 10)

            def forward(self, x):
                x = self.pool(paddle.nn.functional.relu(self.conv1(x)))
                x = paddle.nn.functional.relu(self.conv2(x)).flatten(1)
                return self.fc2(paddle.nn.functional.relu(self.fc1(x)))

        return LeNet()


PADDLE_GENERATED = {"conv1.weight": "conv2d_0.w_0", "conv1.bias": "conv2d_0.b_0",
                    "conv2.weight": "conv2d_1.w_0", "conv2.bias": "conv2d_1.b_0",
                    "fc1.weight": "linear_0.w_0", "fc1.bias": "linear_0.b_0",
                    "fc2.weight": "linear_1.w_0", "fc2.bias": "linear_1.b_0"}


@row("paddle-names-06", "decay chosen by name", "`AdamW(..., apply_decay_param_fun=f)`, "
     "`f(\"linear_1.b_0\")`: the generated name")
@claim("paddle-generated-param-names", "paddle-adamw-decay-by-name-set")
def test_paddle_lenet_generated_names_and_the_set_fix():
    paddle = paddle_dynamic()
    with paddle.utils.unique_name.guard():                # the counters of a fresh process
        net = _PaddleLeNet.build(paddle)
    names = {n: p.name for n, p in net.named_parameters()}
    assert names == PADDLE_GENERATED

    def by_suffix(name):                  # the filter by name's end: decay all but the biases
        return not name.endswith("bias")

    assert all(by_suffix(p.name) for p in net.parameters())         # decays every parameter

    decay = {p.name for n, p in net.named_parameters() if not n.endswith("bias")}
    opt = paddle.optimizer.AdamW(learning_rate=0.01, weight_decay=0.01,
                                 parameters=net.parameters(),
                                 apply_decay_param_fun=lambda name: name in decay)
    for n, p in net.named_parameters():                  # Paddle starts biases at 0
        if n.endswith("bias"):
            p.set_value(np.linspace(0.5, 1.5, p.shape[0]).astype("float32"))
    before = {n: p.numpy().copy() for n, p in net.named_parameters()}
    for p in net.parameters():
        p.grad = paddle.zeros_like(p)
    opt.step()
    for n, p in net.named_parameters():
        expected = before[n] if n.endswith("bias") else before[n] * (1 - 0.01 * 0.01)
        np.testing.assert_allclose(p.numpy(), expected, rtol=1e-6, atol=0)


@claim("paddle-zero-l2-regularizer-turns-decay-off")
def test_paddle_zero_regularizer_on_biases_in_a_flat_list():
    paddle = paddle_dynamic()
    from paddle.regularizer import L2Decay
    layer = paddle.nn.Linear(3, 2, bias_attr=paddle.ParamAttr(regularizer=L2Decay(0.0)))
    layer.bias.set_value(np.array([0.5, -1.5], dtype="float32"))     # Paddle starts biases at 0
    opt = paddle.optimizer.SGD(learning_rate=0.05, weight_decay=0.01, parameters=layer.parameters())
    w0, b0 = layer.weight.numpy().copy(), layer.bias.numpy().copy()
    layer.weight.grad = paddle.zeros_like(layer.weight)
    layer.bias.grad = paddle.zeros_like(layer.bias)
    opt.step()
    np.testing.assert_allclose(layer.weight.numpy(), w0 * (1 - 0.05 * 0.01), rtol=1e-6)
    np.testing.assert_array_equal(layer.bias.numpy(), b0)


@row("paddle-names-06", "a parameter in two groups", "`ValueError`")
@claim("paddle-duplicate-in-two-groups-valueerror")
def test_paddle_parameter_in_two_groups_is_refused():
    paddle = paddle_dynamic()
    layer = _paddle_linear(paddle)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        paddle.optimizer.SGD(learning_rate=0.1, parameters=[{"params": [layer.weight]},
                                                            {"params": [layer.weight]}])


@row("paddle-names-06", "a parameter twice in one group",
     "not checked: updated twice per step")
@claim("paddle-duplicate-in-one-group-unchecked")
def test_paddle_parameter_twice_in_one_group_is_not_checked():
    """No error, no warning; step() updates it once per entry (plain SGD: lr doubled)."""
    paddle = paddle_dynamic()
    for as_group in (False, True):
        w = paddle.create_parameter([1], "float32",
                                    default_initializer=paddle.nn.initializer.Constant(1.0))
        params = [{"params": [w, w]}] if as_group else [w, w]
        with warnings.catch_warnings():
            warnings.simplefilter("error")                  # a warning would fail the test
            opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=params)
        moves = []
        for _ in range(2):
            old = float(w.numpy()[0])
            opt.clear_grad()
            (w * 0.5).sum().backward()
            opt.step()
            moves.append(round(old - float(w.numpy()[0]), 4))
        assert moves == [0.1, 0.1]


@claim("paddle-paramattr-weight-attr")
def test_paddle_weight_attr_sets_rate_and_regularizer_and_bias_attr_false_drops_the_bias(paddle):
    fc = paddle.nn.Linear(4, 2, bias_attr=False, weight_attr=paddle.ParamAttr(
        learning_rate=2.0, regularizer=paddle.regularizer.L1Decay(0.001)))
    assert fc.bias is None and [name for name, _ in fc.named_parameters()] == ["weight"]
    assert fc.weight.optimize_attr["learning_rate"] == 2.0
    assert type(fc.weight.regularizer).__name__ == "L1Decay"
    from dltutor import nn, optim
    ours = nn.Linear(4, 2, bias_attr=False, weight_attr=nn.ParamAttr(
        learning_rate=2.0, regularizer=optim.L1Decay(0.001)))
    assert ours.bias is None and ours.weight.lr_mult == 2.0
    assert type(ours.weight.regularizer).__name__ == "L1Decay"


@claim("torch-no-decay-for-1d-params")
def test_torch_one_dimensional_parameters_are_biases_and_norm_weights():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.LayerNorm(16), torch.nn.ReLU(),
                              torch.nn.Linear(16, 4))
    no_decay = [n for n, p in net.named_parameters() if p.dim() < 2]
    assert no_decay == ["0.bias", "1.weight", "1.bias", "3.bias"]
    decay = [p for p in net.parameters() if p.dim() >= 2]
    rest = [p for p in net.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                             {"params": rest, "weight_decay": 0.0}], lr=0.01)
    before = [p.detach().clone() for p in net.parameters()]
    for p in net.parameters():
        p.grad = torch.zeros_like(p)
    opt.step()                                       # only decay can move anything
    for (name, p), old in zip(net.named_parameters(), before):
        if name in no_decay:
            assert torch.equal(p.detach(), old), name
        else:
            assert torch.allclose(p.detach(), old * (1 - 0.01 * 0.05), atol=1e-8), name
