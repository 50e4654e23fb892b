"""The glossary's names table (notebooks/GLOSSARY.md), rows "tying / shared parameters"
through "weight decay" (the rest of unit glossary_a, after test_rows_glossary_a.py): each
PyTorch and Paddle cell, run in PyTorch 2.13 and Paddle 3.3 for what the row says it does."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from absence import spellings_found
from chapters import paddle_dynamic
from claims import row

def torch_step(opt, loss):
    """One step of ``opt`` after ``loss.backward()``: how far it moved each parameter, and
    each parameter's gradient (in the order of its groups)."""
    params = [p for group in opt.param_groups for p in group["params"]]
    before = [p.detach().clone() for p in params]
    opt.zero_grad()
    loss.backward()
    opt.step()
    return [b - p.detach() for b, p in zip(before, params)], [p.grad.clone() for p in params]


def paddle_step(opt, params, loss):
    """One step of the Paddle optimizer ``opt``: how far it moved each of ``params``, and
    each one's gradient."""
    before = [p.numpy().copy() for p in params]
    opt.clear_grad()
    loss.backward()
    grads = [p.grad.numpy().copy() for p in params]
    opt.step()
    return [b - p.numpy() for b, p in zip(before, params)], grads


# --- tying ----------------------------------------------------------------------------------

@row("torch-names-glossary", "tying / shared parameters", "same")
def test_torch_a_module_used_twice_and_an_assigned_weight_are_one_parameter():
    shared = torch.nn.Linear(2, 2)
    tied = torch.nn.Sequential(shared, torch.nn.Tanh(), shared)
    untied = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh(), torch.nn.Linear(2, 2))
    untied.load_state_dict({**tied.state_dict(), "2.weight": shared.weight,
                            "2.bias": shared.bias})
    assert len(list(tied.parameters())) == 2                          # listed once
    x = torch.tensor([[1.0, -1.0]])
    tied(x).sum().backward()
    untied(x).sum().backward()
    assert torch.allclose(shared.weight.grad, untied[0].weight.grad + untied[2].weight.grad)
    a, b = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    b.weight = a.weight
    assert b.weight is a.weight and len(list(torch.nn.Sequential(a, b).parameters())) == 3
    with torch.no_grad():
        a.weight[0, 0] = 42.0
    assert b.weight[0, 0].item() == 42.0


@row("paddle-names-glossary", "tying / shared parameters",
     "same (static graph: `ParamAttr(name=...)`)")
def test_paddle_a_layer_used_twice_and_an_assigned_weight_are_one_parameter(paddle):
    shared = paddle.nn.Linear(2, 2)
    tied = paddle.nn.Sequential(shared, paddle.nn.Tanh(), shared)
    untied = paddle.nn.Sequential(paddle.nn.Linear(2, 2), paddle.nn.Tanh(), paddle.nn.Linear(2, 2))
    for layer in (untied[0], untied[2]):
        layer.set_state_dict(shared.state_dict())
    assert len(tied.parameters()) == 2
    x = paddle.to_tensor([[1.0, -1.0]])
    tied(x).sum().backward()
    untied(x).sum().backward()
    summed = untied[0].weight.grad.numpy() + untied[2].weight.grad.numpy()
    assert np.allclose(shared.weight.grad.numpy(), summed, atol=1e-6)
    a, b = paddle.nn.Linear(2, 2), paddle.nn.Linear(2, 2)
    b.weight = a.weight
    assert b.weight is a.weight and len(paddle.nn.Sequential(a, b).parameters()) == 3
    a.weight.set_value(np.full((2, 2), 42.0, np.float32))
    assert np.array_equal(b.weight.numpy(), np.full((2, 2), 42.0, np.float32))


@row("paddle-names-glossary", "tying / shared parameters",
     "same (static graph: `ParamAttr(name=...)`)")
def test_paddle_static_graph_two_layers_with_one_paramattr_name_share_it(paddle):
    """Two static fc layers given ParamAttr(name="glossary_a_fc_w") read one weight.
    paddle.static.nn.fc is a legacy-program layer: run under OldIrGuard, as chapter 05 does."""
    paddle.enable_static()
    try:
        with paddle.pir_utils.OldIrGuard():
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                x = paddle.static.data("x", [2, 4], "float32")
                attr = paddle.ParamAttr(name="glossary_a_fc_w")
                one = paddle.static.nn.fc(x, 3, weight_attr=attr)
                two = paddle.static.nn.fc(x, 3, weight_attr=attr)
            names = [p.name for p in main.all_parameters()]
            exe = paddle.static.Executor(paddle.CPUPlace())
            exe.run(startup)
            feed = {"x": np.arange(8, dtype="float32").reshape(2, 4)}
            out_one, out_two, w = exe.run(main, feed=feed,
                                          fetch_list=[one, two, "glossary_a_fc_w"])
    finally:
        paddle.disable_static()
    assert names.count("glossary_a_fc_w") == 1 and len(names) == 3      # one weight, 2 biases
    assert np.allclose(out_one, feed["x"] @ w) and np.allclose(out_two, out_one)


# --- optimizers and their settings ----------------------------------------------------------

def torch_pair():
    """Two layers ``a`` and ``b`` and an input for them, in PyTorch."""
    return torch.nn.Linear(3, 1), torch.nn.Linear(3, 1), torch.tensor([[1.0, 2.0, 3.0]])


def paddle_pair(paddle):
    return paddle.nn.Linear(3, 1), paddle.nn.Linear(3, 1), paddle.to_tensor([[1.0, 2.0, 3.0]])


@row("torch-names-glossary", "optimizer", "`torch.optim.SGD`")
@row("torch-names-glossary", "learning rate", "`lr`")
def test_torch_sgd_moves_each_parameter_by_lr_times_its_gradient():
    a, _, x = torch_pair()
    opt = torch.optim.SGD(a.parameters(), lr=0.5)
    assert opt.param_groups[0]["lr"] == 0.5
    moves, grads = torch_step(opt, a(x).sum())
    assert all(torch.allclose(m, 0.5 * g) for m, g in zip(moves, grads))
    opt.param_groups[0]["lr"] = 0.1                       # the step reads it every time
    moves, grads = torch_step(opt, a(x).sum())
    assert all(torch.allclose(m, 0.1 * g) for m, g in zip(moves, grads))


@row("paddle-names-glossary", "optimizer", "`paddle.optimizer.SGD`")
@row("paddle-names-glossary", "learning rate", "`learning_rate`")
def test_paddle_sgd_moves_each_parameter_by_learning_rate_times_its_gradient(paddle):
    a, _, x = paddle_pair(paddle)
    opt = paddle.optimizer.SGD(learning_rate=0.5, parameters=a.parameters())
    assert opt.get_lr() == 0.5
    moves, grads = paddle_step(opt, a.parameters(), a(x).sum())
    assert all(np.allclose(m, 0.5 * g, atol=1e-6) for m, g in zip(moves, grads))
    with pytest.raises(TypeError, match="lr"):
        paddle.optimizer.SGD(lr=0.5, parameters=a.parameters())      # not PyTorch's keyword


def optimizers(module, left_out):
    """The names of every optimizer class ``module`` offers, less those in ``left_out``."""
    base = module.Optimizer
    return sorted(name for name, value in vars(module).items() if isinstance(value, type)
                  and issubclass(value, base) and value is not base and name not in left_out)


# Where a group's own rate does not hold (reported to the lead, not claimed by the table).
TORCH_NO_GROUP_LR = {"LBFGS": "refuses parameter groups",
                     "SparseAdam": "takes sparse gradients only"}
PADDLE_NO_RATE_SCALE = {"Rprop": "ignores a group's learning_rate and ParamAttr's",
                        "LBFGS": "step needs a closure; moves only the last group"}


@row("torch-names-glossary", "parameter group", "same")
@pytest.mark.parametrize("name", optimizers(torch.optim, TORCH_NO_GROUP_LR))
def test_torch_every_optimizer_steps_a_group_with_its_own_lr(name):
    """Equal weights, equal gradients: the group at lr 0.01 moves 0.1 times as far."""
    a, b = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    b.load_state_dict(a.state_dict())
    x = torch.tensor([[1.0, 2.0, 3.0]])
    opt = getattr(torch.optim, name)([{"params": [a.weight]},
                                      {"params": [b.weight], "lr": 0.01}], lr=0.1)
    assert [group["lr"] for group in opt.param_groups] == [0.1, 0.01]
    (move_a, move_b), _ = torch_step(opt, (a(x) + b(x)).sum())
    assert move_a.abs().min() > 0 and torch.allclose(move_b, 0.1 * move_a, rtol=1e-3, atol=0)


@row("torch-names-glossary", "parameter group", "same")
def test_torch_sgd_group_lr_is_the_rate_itself():
    """The same, in absolute terms for SGD: a group's lr replaces the optimizer's."""
    a, b, x = torch_pair()
    opt = torch.optim.SGD([{"params": a.parameters()},
                           {"params": b.parameters(), "lr": 0.01}], lr=0.1)
    moves, grads = torch_step(opt, (a(x) + b(x)).sum())
    assert all(torch.allclose(m, 0.1 * g) for m, g in zip(moves[:2], grads[:2]))
    assert all(torch.allclose(m, 0.01 * g) for m, g in zip(moves[2:], grads[2:]))


def paddle_rate_ratio(paddle, name, params_of, b_attr=None):
    """How far the second of two equal layers moves, over how far the first moves, in one
    step of Paddle's optimizer ``name`` at learning_rate 0.1 (``params_of(a, b)``: its list)."""
    a = paddle.nn.Linear(3, 2)
    b = paddle.nn.Linear(3, 2, weight_attr=b_attr)
    b.set_state_dict(a.state_dict())
    x = paddle.to_tensor([[1.0, 2.0, 3.0]])
    opt = getattr(paddle.optimizer, name)(learning_rate=0.1, parameters=params_of(a, b))
    (move_a, move_b), _ = paddle_step(opt, [a.weight, b.weight], (a(x) + b(x)).sum())
    assert np.abs(move_a).min() > 0
    return move_b / move_a


@row("paddle-names-glossary", "parameter group",
     '`[{"params": b, "learning_rate": 0.2}]` (a scale)')
@pytest.mark.parametrize("name", optimizers(paddle_dynamic().optimizer, PADDLE_NO_RATE_SCALE))
def test_paddle_every_optimizer_scales_its_rate_by_a_groups_learning_rate(paddle, name):
    """Equal weights, equal gradients: the group's 0.2 scales 0.1 (to 0.02, not 0.2)."""
    groups = lambda a, b: [{"params": [a.weight]},  # noqa: E731 - a one-line factory
                           {"params": [b.weight], "learning_rate": 0.2}]
    assert np.allclose(paddle_rate_ratio(paddle, name, groups), 0.2, rtol=1e-3)


@row("paddle-names-glossary", "parameter group",
     '`[{"params": b, "learning_rate": 0.2}]` (a scale)')
def test_paddle_sgd_group_learning_rate_multiplies_the_rate(paddle):
    a, b, x = paddle_pair(paddle)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=[
        {"params": a.parameters()}, {"params": b.parameters(), "learning_rate": 0.2}])
    params = a.parameters() + b.parameters()
    moves, grads = paddle_step(opt, params, (a(x) + b(x)).sum())
    assert all(np.allclose(m, 0.1 * g, atol=1e-6) for m, g in zip(moves[:2], grads[:2]))
    assert all(np.allclose(m, 0.1 * 0.2 * g, atol=1e-6)                # 0.02, not 0.2
               for m, g in zip(moves[2:], grads[2:]))


MULT = ["lr_mult", "lr_scale", "lr_multiplier", "lr_factor", "learning_rate"]


@row("torch-names-glossary", "learning-rate multiplier", "— (a group per rate)")
def test_torch_has_no_lr_multiplier_a_group_per_rate_instead():
    owners = [torch.nn.Parameter, torch.Tensor, torch.optim.SGD, torch.optim.Optimizer]
    assert spellings_found(owners, MULT) == []
    a, b, x = torch_pair()
    a.weight.lr_mult = 10.0                               # an attribute no optimizer reads
    opt = torch.optim.SGD([{"params": [a.weight], "lr": 0.1},
                           {"params": [a.bias], "lr": 0.1 * 2}], lr=0.1)
    moves, grads = torch_step(opt, a(x).sum())
    assert torch.allclose(moves[0], 0.1 * grads[0]) and torch.allclose(moves[1], 0.2 * grads[1])


@row("paddle-names-glossary", "learning-rate multiplier", "`ParamAttr(learning_rate=...)`")
def test_paddle_paramattr_learning_rate_multiplies_the_optimizers(paddle):
    layer = paddle.nn.Linear(3, 1, weight_attr=paddle.ParamAttr(learning_rate=10.0))
    opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=layer.parameters())
    x = paddle.to_tensor([[1.0, 2.0, 3.0]])
    (dw, db), (gw, gb) = paddle_step(opt, [layer.weight, layer.bias], layer(x).sum())
    assert np.allclose(dw, 0.1 * gw, atol=1e-6) and np.allclose(db, 0.01 * gb, atol=1e-6)


@row("paddle-names-glossary", "learning-rate multiplier", "`ParamAttr(learning_rate=...)`")
@pytest.mark.parametrize("name", optimizers(paddle_dynamic().optimizer, PADDLE_NO_RATE_SCALE))
def test_paddle_every_optimizer_multiplies_its_rate_by_paramattr_learning_rate(paddle, name):
    """Equal weights, equal gradients: ParamAttr(learning_rate=0.2) moves 0.2 times as far."""
    attr = paddle.ParamAttr(learning_rate=0.2)
    ratio = paddle_rate_ratio(paddle, name, lambda a, b: [a.weight, b.weight], b_attr=attr)
    assert np.allclose(ratio, 0.2, rtol=1e-3)


def torch_lrs(opt, scheduler, epochs=8):
    """The learning rate the optimizer used in each of ``epochs`` epochs."""
    lrs = []
    for _ in range(epochs):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        scheduler.step()
    return lrs


def paddle_lrs(opt, scheduler, epochs=8):
    lrs = []
    for _ in range(epochs):
        lrs.append(opt.get_lr())
        opt.step()
        scheduler.step()
    return lrs


@row("torch-names-glossary", "learning-rate scheduler", "`torch.optim.lr_scheduler.StepLR`")
def test_torch_steplr_multiplies_the_lr_by_gamma_every_step_size_epochs():
    opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    assert torch_lrs(opt, sched, 6) == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]


@row("paddle-names-glossary", "learning-rate scheduler", "`paddle.optimizer.lr.StepDecay`")
def test_paddle_stepdecay_multiplies_the_lr_by_gamma_every_step_size_epochs(paddle):
    sched = paddle.optimizer.lr.StepDecay(learning_rate=1.0, step_size=2, gamma=0.5)
    opt = paddle.optimizer.SGD(learning_rate=sched,
                               parameters=[paddle.create_parameter([1], "float32")])
    assert paddle_lrs(opt, sched, 6) == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]


WARMED = [0.25, 0.5, 0.75, 1.0, 1.0, 0.5, 0.5, 0.25]       # 3 warmup epochs, then StepLR


@row("torch-names-glossary", "warmup", "`LinearLR` + `SequentialLR`")
def test_torch_linearlr_ramps_up_and_sequentiallr_hands_over():
    opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
    after = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    both = torch.optim.lr_scheduler.SequentialLR(opt, [warm, after], milestones=[3])
    assert torch_lrs(opt, both) == WARMED


@row("paddle-names-glossary", "warmup", "`paddle.optimizer.lr.LinearWarmup`")
def test_paddle_linearwarmup_ramps_up_then_hands_over(paddle):
    after = paddle.optimizer.lr.StepDecay(learning_rate=1.0, step_size=2, gamma=0.5)
    warm = paddle.optimizer.lr.LinearWarmup(learning_rate=after, warmup_steps=3,
                                            start_lr=0.25, end_lr=1.0)
    opt = paddle.optimizer.SGD(learning_rate=warm,
                               parameters=[paddle.create_parameter([1], "float32")])
    assert paddle_lrs(opt, warm) == WARMED


MOMENTUM_MOVES = [0.1, 0.1 * 1.9, 0.1 * 2.71]      # lr * (1, 1 + 0.9, 1 + 0.9 + 0.81), g = 1


@row("torch-names-glossary", "momentum", "same")
def test_torch_sgd_momentum_keeps_adding_the_earlier_steps():
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
    moves = [torch_step(opt, p.sum())[0][0].item() for _ in range(3)]     # gradient 1 each time
    assert np.allclose(moves, MOMENTUM_MOVES)


@row("paddle-names-glossary", "momentum", "`paddle.optimizer.Momentum`")
def test_paddle_momentum_keeps_adding_the_earlier_steps(paddle):
    p = paddle.create_parameter([1], "float32")
    opt = paddle.optimizer.Momentum(learning_rate=0.1, momentum=0.9, parameters=[p])
    moves = [paddle_step(opt, [p], p.sum())[0][0].item() for _ in range(3)]
    assert np.allclose(moves, MOMENTUM_MOVES)
    with pytest.raises(TypeError, match="momentum"):
        paddle.optimizer.SGD(learning_rate=0.1, momentum=0.9, parameters=[p])   # not SGD's


@row("torch-names-glossary", "weight decay", "same")
def test_torch_sgd_weight_decay_adds_decay_times_the_weight_to_the_gradient():
    p = torch.nn.Parameter(torch.tensor([2.0, -4.0]))
    opt = torch.optim.SGD([p], lr=0.1, weight_decay=0.01)
    (move,), (grad,) = torch_step(opt, (3 * p).sum())
    assert torch.allclose(move, 0.1 * (grad + 0.01 * torch.tensor([2.0, -4.0])))


@row("paddle-names-glossary", "weight decay", "`weight_decay=0.01` or `L2Decay`")
def test_paddle_weight_decay_a_float_or_l2decay_adds_decay_times_the_weight(paddle):
    for decay in (0.01, paddle.regularizer.L2Decay(0.01)):
        p = paddle.create_parameter([2], "float32",
                                    default_initializer=paddle.nn.initializer.Assign([2.0, -4.0]))
        opt = paddle.optimizer.SGD(learning_rate=0.1, weight_decay=decay, parameters=[p])
        (move,), (grad,) = paddle_step(opt, [p], (3 * p).sum())
        assert np.allclose(move, 0.1 * (grad + 0.01 * np.array([2.0, -4.0])), atol=1e-7), decay
