"""Chapter 08's names table (freezing), cell by cell: what each PyTorch 2.13 and Paddle 3.3 cell
does, run in the framework. Cells already proved by a @claim test in test_ch08_freezing.py carry
their @row marker there; this file proves the rest.
"""
from __future__ import annotations

import contextlib
import importlib.metadata
import inspect
import io
import re

import numpy as np
import pytest
import torch
from absence import spellings_found
from claims import row

T08, P08 = "torch-names-08", "paddle-names-08"
TORCH_OPTIMIZERS = sorted((c for c in vars(torch.optim).values()
                           if inspect.isclass(c) and issubclass(c, torch.optim.Optimizer)),
                          key=lambda c: c.__name__)


def _torch_net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))


def _torch_train(net, opt, steps=3):
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.mse_loss(net(x), y).backward()
        opt.step()


def _snapshot(named):
    return {n: np.array(p.numpy() if hasattr(p, "stop_gradient") else p.detach().numpy())
            for n, p in named}


# --- PyTorch -------------------------------------------------------------------------------


@row(T08, "no gradient for a parameter",
     "`p.requires_grad_(False)`, `module.requires_grad_(False)`")
def test_torch_requires_grad_false_on_a_parameter_or_a_module_stops_it_training():
    net = _torch_net()
    p = net[0].weight
    assert p.requires_grad_(False) is p and not p.requires_grad        # one parameter
    assert net[2].requires_grad_(False) is net[2]                       # every one of a module
    before = _snapshot(net.named_parameters())
    _torch_train(net, torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=0.1))
    frozen = {"0.weight", "2.weight", "2.bias"}
    for name, q in net.named_parameters():
        assert (q.grad is None) == (name in frozen), name
        assert np.array_equal(q.detach().numpy(), before[name]) == (name in frozen), name


@row(T08, "per-parameter lr multiplier", "— (a param group with `lr=0`)")
def test_torch_has_no_lr_multiplier_on_a_parameter_and_a_group_lr_zero_stands_in():
    spellings = ["lr_mult", "lr_scale", "learning_rate", "lr_factor"]
    assert spellings_found([torch.nn.Parameter, torch.Tensor, *TORCH_OPTIMIZERS], spellings) == []
    assert not [(c.__name__, n) for c in TORCH_OPTIMIZERS for n in inspect.signature(c).parameters
                if any(s in n for s in spellings)]
    net = _torch_net()
    for p in net[0].parameters():
        p.lr_mult = 0.0                                  # a plain Python attribute: ignored
    opt = torch.optim.SGD([{"params": net[0].parameters()},
                           {"params": net[2].parameters(), "lr": 0.0}], lr=0.1)
    before = _snapshot(net.named_parameters())
    _torch_train(net, opt)
    assert not np.array_equal(net[0].weight.detach().numpy(), before["0.weight"])   # it moved
    assert np.array_equal(net[2].weight.detach().numpy(), before["2.weight"])       # lr=0: not


@row(T08, "a group's learning rate", '`opt.param_groups[i]["lr"]`')
def test_torch_param_groups_lr_reads_and_sets_one_groups_rate():
    a, b = (torch.nn.Parameter(torch.ones(2)) for _ in range(2))
    opt = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    assert [group["lr"] for group in opt.param_groups] == [0.1, 0.5]
    opt.param_groups[1]["lr"] = 0.01                     # this group only
    (a.sum() + b.sum()).backward()                       # every gradient is 1
    opt.step()
    assert a.tolist() == pytest.approx([0.9, 0.9]) and b.tolist() == pytest.approx([0.99, 0.99])


@row(T08, "optimizer state of a parameter", "`opt.state[p]`")
def test_torch_opt_state_of_p_is_that_parameters_momentum_and_nothing_for_the_others():
    w, v = torch.nn.Parameter(torch.tensor([1.0, 2.0])), torch.nn.Parameter(torch.tensor([3.0]))
    opt = torch.optim.SGD([w, v], lr=0.1, momentum=0.9)
    (w * w).sum().backward()                             # v gets no gradient
    opt.step()
    assert isinstance(opt.state[w], dict)
    assert opt.state[w]["momentum_buffer"].tolist() == [2.0, 4.0]    # the first step: the gradient
    assert v not in opt.state                            # no step, no state


@row(T08, "clear gradients", "`opt.zero_grad()`, `model.zero_grad()`")
def test_torch_opt_zero_grad_clears_its_own_parameters_model_zero_grad_clears_all():
    net = _torch_net()
    opt = torch.optim.SGD(net[2].parameters(), lr=0.1)
    net(torch.randn(8, 3)).sum().backward()
    opt.zero_grad()
    assert net[2].weight.grad is None and net[2].bias.grad is None
    assert net[0].weight.grad is not None                # not the optimizer's: kept
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


@row(T08, "fixed BatchNorm statistics", "— (`bn.eval()` again after every `model.train()`)")
def test_torch_batchnorm_has_no_switch_that_fixes_its_statistics():
    norms = [torch.nn.BatchNorm1d, torch.nn.BatchNorm2d, torch.nn.BatchNorm3d,
             torch.nn.SyncBatchNorm, torch.nn.modules.batchnorm._BatchNorm]
    spellings = ["global_stats", "freeze", "frozen", "fix_stat", "use_running"]
    assert spellings_found(norms, spellings) == []
    assert not [n for c in norms for n in inspect.signature(c).parameters
                if any(s in n for s in spellings)]


@row(T08, "why is it not updating?", "—")
def test_torch_has_no_why_not_updating():
    owners = [torch, torch.nn, torch.nn.utils, torch.nn.Module, torch.optim, torch.optim.Optimizer,
              torch.autograd, torch.utils]
    assert spellings_found(owners, ["why", "not_updating", "diagnos", "frozen", "explain"]) == []


@row(T08, "parameter table", "— (`torchinfo`, third party)")
def test_torch_has_no_parameter_table_and_torchinfo_prints_one():
    owners = [torch, torch.nn, torch.nn.Module, torch.nn.utils, torch.utils]
    spellings = ["summary", "param_table", "parameter_table", "module_stats", "param_stats"]
    assert spellings_found(owners, spellings) == []
    import torchinfo
    assert importlib.metadata.distribution("torchinfo").metadata["Name"] == "torchinfo"
    net = _torch_net()
    net[0].requires_grad_(False)
    stats = torchinfo.summary(net, input_size=(2, 3), verbose=0)
    assert (stats.total_params, stats.trainable_params) == (3 * 4 + 4 + 4 + 1, 4 + 1)
    assert "Linear: 1-1" in str(stats) and "Total params: 21" in str(stats)


# --- Paddle 3.3 ------------------------------------------------------------------------------


def _paddle_steps(paddle, net, opt, steps=3):
    x = paddle.to_tensor(np.random.RandomState(1).randn(8, 3).astype("float32"))
    for _ in range(steps):
        opt.clear_grad()
        net(x).pow(2).mean().backward()
        opt.step()


@row(P08, "no gradient for a parameter", "`p.stop_gradient = True`, `ParamAttr(trainable=False)`")
def test_paddle_stop_gradient_and_trainable_false_get_no_gradient_and_stay(paddle):
    paddle.seed(0)
    net = paddle.nn.Sequential(
        paddle.nn.Linear(3, 4, weight_attr=paddle.ParamAttr(trainable=False)), paddle.nn.Tanh(),
        paddle.nn.Linear(4, 1))
    net[2].weight.stop_gradient = True
    named = [("0.weight", net[0].weight), ("0.bias", net[0].bias), ("2.weight", net[2].weight),
             ("2.bias", net[2].bias)]
    before = _snapshot(named)
    opt = paddle.optimizer.Momentum(learning_rate=0.1, momentum=0.9, weight_decay=0.1,
                                    parameters=net.parameters())
    _paddle_steps(paddle, net, opt)
    for name, p in named:
        frozen = name in ("0.weight", "2.weight")
        assert (p.grad is None) == frozen, name
        assert np.array_equal(p.numpy(), before[name]) == frozen, name


@row(P08, "per-parameter lr multiplier", "`ParamAttr(learning_rate=0.0)`")
def test_paddle_paramattr_learning_rate_multiplies_the_optimizers_rate(paddle):
    layers = {mult: paddle.nn.Linear(2, 1, weight_attr=paddle.ParamAttr(learning_rate=mult))
              for mult in (1.0, 0.5, 0.0)}
    params = [p for layer in layers.values() for p in layer.parameters()]
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=params)
    before = {mult: layer.weight.numpy().copy() for mult, layer in layers.items()}
    x = paddle.to_tensor([[1.0, 2.0]])
    sum(layer(x).sum() for layer in layers.values()).backward()     # every weight's gradient: x
    opt.step()
    for mult, layer in layers.items():
        np.testing.assert_allclose(layer.weight.numpy(), before[mult] - 0.1 * mult * np.float32(
            [[1.0], [2.0]]), rtol=1e-6)
    assert np.array_equal(layers[0.0].weight.numpy(), before[0.0])  # 0.0: it does not move


@row(P08, "optimizer state of a parameter", "`opt.state_dict()` (accumulators)")
def test_paddle_optimizer_state_is_read_from_state_dict_by_parameter_name(paddle):
    w = paddle.create_parameter([2], "float32")
    w.set_value(paddle.to_tensor([1.0, 2.0]))
    opt = paddle.optimizer.Momentum(learning_rate=0.1, momentum=0.9, parameters=[w])
    assert not hasattr(opt, "state")                     # no per-parameter dict as in PyTorch
    (w * w).sum().backward()
    opt.step()
    velocity = opt.state_dict()[w.name + "_velocity_0"]  # keyed by the parameter's name
    assert velocity.numpy().tolist() == [2.0, 4.0]       # the first step: the gradient


@row(P08, "clear gradients", "`opt.clear_grad()`, `model.clear_gradients()`")
def test_paddle_opt_clear_grad_clears_its_parameters_model_clear_gradients_all(paddle):
    paddle.seed(0)
    net = paddle.nn.Sequential(paddle.nn.Linear(3, 4), paddle.nn.Linear(4, 1))
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net[1].parameters())
    net(paddle.randn([8, 3])).sum().backward()
    opt.clear_grad()
    assert not net[1].weight.grad.numpy().any()          # zeroed (set_to_zero=True)
    assert net[0].weight.grad.numpy().any()              # not the optimizer's: kept
    net.clear_gradients()
    assert all(not p.grad.numpy().any() for p in net.parameters())


@row(P08, "training / evaluation mode", "`model.train()`, `model.eval()`")
def test_paddle_train_and_eval_switch_every_sublayer_and_what_dropout_computes(paddle):
    paddle.seed(0)
    net = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.Dropout(0.5),
                               paddle.nn.BatchNorm1D(4))
    x = paddle.randn([16, 4])
    net.eval()
    assert [layer.training for layer in [net, *net.sublayers()]] == [False] * 4
    assert np.array_equal(net[1](x).numpy(), x.numpy())                 # Dropout: off
    mean = net[2]._mean.numpy().copy()
    net(x)
    assert np.array_equal(net[2]._mean.numpy(), mean)                   # statistics kept
    net.train()
    assert [layer.training for layer in [net, *net.sublayers()]] == [True] * 4
    assert (net[1](paddle.ones([1000])).numpy() == 0).sum() > 300       # Dropout: on
    net(x)
    assert not np.array_equal(net[2]._mean.numpy(), mean)               # statistics move


@row(P08, "freeze some rows of a tensor", "`p.register_hook(fn)`")
def test_paddle_a_gradient_mask_hook_keeps_the_masked_rows(paddle):
    paddle.seed(0)
    emb = paddle.nn.Embedding(6, 3)
    mask = paddle.to_tensor([[0.0]] * 3 + [[1.0]] * 3)  # rows 0-2 frozen
    emb.weight.register_hook(lambda grad: grad * mask)
    opt = paddle.optimizer.Momentum(learning_rate=0.1, momentum=0.9, parameters=emb.parameters())
    before = emb.weight.numpy().copy()
    for _ in range(4):
        opt.clear_grad()
        emb(paddle.to_tensor([0, 1, 2, 3, 4, 5, 3])).pow(2).sum().backward()
        assert not emb.weight.grad.numpy()[:3].any()    # the hook's mask reached .grad
        opt.step()
    moved = np.abs(emb.weight.numpy() - before).max(axis=1)
    assert (moved[:3] == 0).all() and (moved[3:] > 0).all()


@row(P08, "why is it not updating?", "—")
def test_paddle_has_no_why_not_updating(paddle):
    owners = [paddle, paddle.nn, paddle.nn.Layer, paddle.optimizer, paddle.optimizer.Optimizer,
              paddle.utils, paddle.nn.utils, paddle.autograd, paddle.hapi]
    assert spellings_found(owners, ["why", "not_updating", "diagnos", "explain"]) == []


@row(P08, "parameter table", "`paddle.summary(model, input_size)`")
def test_paddle_summary_prints_and_returns_the_parameter_counts(paddle):
    paddle.seed(0)
    net = paddle.nn.Sequential(paddle.nn.Linear(3, 4), paddle.nn.Tanh(), paddle.nn.Linear(4, 1))
    for p in net[0].parameters():
        p.stop_gradient = True
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        counts = paddle.summary(net, (2, 3))
    assert counts == {"total_params": 21, "trainable_params": 5}
    table = printed.getvalue()
    assert len(re.findall(r"Linear-\d+ ", table)) == 2               # one line per layer
    assert "Total params: 21" in table and "Non-trainable params: 16" in table
