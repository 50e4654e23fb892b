"""The diagnostics on what a learner really writes in PyTorch and Paddle: a model that is a
subclass of ``torch.nn.Module`` / ``paddle.nn.Layer``, an optimizer of their own class
(``class MySGD(torch.optim.SGD)``), AdamW, parameters given without names, and the Recorder
sampling every n-th step (dltutor/diagnose/adapters, dltutor/trace.py).

As in test_diagnose_torch.py and test_diagnose_paddle.py, each verdict is checked against what
the framework's own ``step()`` then does, and each number against the framework's own state.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import dltutor as dt
from dltutor import diagnose, nn, optim
from dltutor.diagnose.adapters import adapter_for
from dltutor.trace import Recorder

from claims import claim
from diagnose_cases import X


class TorchNet(torch.nn.Module):
    """A learner's model: named attributes, a nested block, its own forward."""

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU())
        self.head = torch.nn.Linear(4, 1)

    def forward(self, x):
        return self.head(self.body(x))


class MySGD(torch.optim.SGD):
    """A learner's optimizer class: SGD's rules under another name."""


class MyAdamW(torch.optim.AdamW):
    pass


def torch_model() -> TorchNet:
    torch.manual_seed(0)
    return TorchNet()


def moves(param, step) -> bool:
    before = param.detach().clone()
    step()
    return not torch.equal(before, param.detach())


def fill_momentum(net, opt, x) -> None:
    """One real step (the momentum buffers fill), then a zero gradient."""
    net(x).sum().backward()
    opt.step()
    opt.zero_grad()
    (net(x) * 0).sum().backward()


TORCH_CAUSES = ["requires_grad_false", "not_in_optimizer", "lr_zero", "zero_grad",
                "moves_by_momentum", "moves_by_weight_decay", "no_grad"]


def torch_subclass_case(cause: str, kind=torch.optim.SGD):
    net, x = torch_model(), torch.from_numpy(X)
    name, first = "body.0.weight", net.body[0].weight
    params = list(net.named_parameters())
    kwargs = {"momentum": 0.9} if cause == "moves_by_momentum" else (
        {"weight_decay": 0.5} if cause == "moves_by_weight_decay" else {})
    if cause == "requires_grad_false":
        first.requires_grad_(False)
    elif cause == "not_in_optimizer":
        params = [(n, p) for n, p in params if p is not first]
    elif cause == "lr_zero":
        params = [{"params": [(name, first)], "lr": 0.0},
                  {"params": [(n, p) for n, p in params if p is not first]}]
    opt = kind(params, lr=0.1, **kwargs)
    if cause == "moves_by_momentum":
        fill_momentum(net, opt, x)
    elif cause in ("zero_grad", "moves_by_weight_decay"):
        (net(x) * 0).sum().backward()
    elif cause != "no_grad":
        net(x).sum().backward()
    return net, opt, name


@claim("torch-diagnose-verdicts")
@pytest.mark.parametrize("kind", [torch.optim.SGD, MySGD])
@pytest.mark.parametrize("cause", TORCH_CAUSES)
def test_verdicts_on_a_subclassed_pytorch_model_and_optimizer_are_what_pytorch_does(cause, kind):
    net, opt, name = torch_subclass_case(cause, kind)
    check = diagnose.why_not_updating(net, opt, name)
    assert check.cause == cause, check
    will_move = cause in ("moves_by_momentum", "moves_by_weight_decay")
    assert check.will_move is will_move
    assert moves(dict(net.named_parameters())[name], opt.step) is will_move


@claim("torch-diagnose-verdicts")
@pytest.mark.parametrize("kind", [torch.optim.AdamW, MyAdamW])
def test_adamw_and_a_subclass_of_it_decay_decoupled_and_keep_exp_avg(kind):
    net, x = torch_model(), torch.from_numpy(X)
    opt = kind(net.named_parameters(), lr=0.1, weight_decay=0.05)
    fill_momentum(net, opt, x)
    weight = net.body[0].weight
    explanation = diagnose.explain_lr(opt, weight)
    assert explanation.decay_kinds == ["decoupled"] and explanation.decay_coeff == 0.05
    adapter = adapter_for(net, opt)
    entry = next(e for e in adapter.entries(opt) if e.param is weight)
    assert entry.name == "body.0.weight"
    [(key, value)] = adapter.momentum_state(entry)
    assert key == "exp_avg" and np.array_equal(value, opt.state[weight]["exp_avg"].numpy())
    check = diagnose.why_not_updating(net, opt, "body.0.weight")
    assert check.cause == "moves_by_momentum" and check.will_move
    assert moves(weight, opt.step)


@claim("torch-diagnose-verdicts")
@pytest.mark.parametrize("kwargs, kinds", [
    ({"weight_decay": 0.1}, ["coupled_l2"]),
    ({"weight_decay": 0.1, "decoupled_weight_decay": True}, ["decoupled"]),
    ({"weight_decay": 0.0}, []),
])
def test_adam_weight_decay_is_coupled_unless_pytorch_is_told_decoupled(kwargs, kinds):
    net = torch_model()
    weight = net.head.weight
    opt = torch.optim.Adam(net.parameters(), lr=0.1, **kwargs)
    explanation = diagnose.explain_lr(opt, weight)
    assert explanation.decay_kinds == kinds
    # PyTorch proves which: with a zero gradient, decoupled decay moves the weight by exactly
    # lr x wd x w; coupled L2 goes through Adam's normalisation (a step of about lr)
    (net(torch.from_numpy(X)) * 0).sum().backward()
    before = weight.detach().clone()
    opt.step()
    change = (before - weight.detach()).abs().max().item()
    expected = {"coupled_l2": 0.1, "decoupled": 0.1 * 0.1 * before.abs().max().item()}
    assert change == pytest.approx(expected[kinds[0]] if kinds else 0.0, rel=1e-3, abs=1e-7)


@claim("torch-diagnose-verdicts")
def test_parameters_given_without_names_are_numbered_across_groups_as_dltutor_numbers_them():
    tnet = torch_model()
    topt = torch.optim.SGD([{"params": list(tnet.body.parameters()), "lr": 0.5},
                            {"params": list(tnet.head.parameters())}], lr=0.1)
    dnet = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1))
    dopt = optim.SGD([{"params": list(dnet[0].parameters()), "lr": 0.5},
                      {"params": list(dnet[1].parameters())}], lr=0.1)
    theirs, ours = (adapter_for(n, o).entries(o) for n, o in ((tnet, topt), (dnet, dopt)))
    assert [(e.name, e.group_index) for e in theirs] == [(e.name, e.group_index) for e in ours] \
        == [("#0", 0), ("#1", 0), ("#2", 1), ("#3", 1)]
    assert [e.param for e in theirs] == [p for g in topt.param_groups for p in g["params"]]
    assert diagnose.explain_lr(topt, "#2").group_lr == 0.1
    assert diagnose.explain_lr(topt, "#1").effective_lr == 0.5
    rows = diagnose.summary(tnet, topt).rows
    assert [(r["name"], r["group"], r["effective_lr"]) for r in rows] == [
        ("body.0.weight", 0, 0.5), ("body.0.bias", 0, 0.5), ("head.weight", 1, 0.1),
        ("head.bias", 1, 0.1)]


@claim("torch-diagnose-verdicts")
def test_parameters_given_with_names_keep_pytorchs_param_names():
    net = torch_model()
    opt = torch.optim.SGD([{"params": list(net.head.named_parameters())},
                           {"params": list(net.body.named_parameters()), "lr": 0.2}], lr=0.1)
    entries = adapter_for(net, opt).entries(opt)
    assert [e.name for e in entries] == [n for g in opt.param_groups for n in g["param_names"]] \
        == ["weight", "bias", "0.weight", "0.bias"]
    assert diagnose.explain_lr(opt, "0.weight").group_lr == 0.2


def torch_loop(net, opt, steps, rec=None):
    """Train ``steps`` steps; the gradient norm of the first parameter before each step."""
    x, norms = torch.from_numpy(X), []
    for _ in range(steps):
        opt.zero_grad()
        loss = net(x).pow(2).mean()
        loss.backward()
        if rec is not None:
            rec.log_loss(loss)
        norms.append(float(next(net.parameters()).grad.norm()))
        opt.step()
    return norms


@claim("torch-diagnose-verdicts")
@pytest.mark.parametrize("every, capacity, steps, kept", [
    (1, 10, 3, [0, 1, 2]), (2, 10, 7, [0, 2, 4, 6]), (3, 10, 7, [0, 3, 6]),
    (2, 2, 7, [4, 6]), (5, 10, 4, [0]),
])
def test_the_recorder_samples_a_pytorch_loop_every_nth_step_as_dltutors(every, capacity, steps,
                                                                         kept):
    net = torch_model()
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    rec = Recorder(net, opt, every=every, capacity=capacity)
    norms = torch_loop(net, opt, steps, rec)
    assert rec.steps.tolist() == kept
    assert rec.count == len(range(0, steps, every))
    assert rec.names == ["body.0.weight", "body.0.bias", "head.weight", "head.bias"]
    np.testing.assert_allclose(rec.series("grad_norm", "body.0.weight"),
                               [norms[s] for s in kept], rtol=1e-5)
    dnet = nn.Linear(3, 1)
    dopt = optim.SGD(dnet.parameters(), lr=0.05)
    ours = Recorder(dnet, dopt, every=every, capacity=capacity)
    for _ in range(steps):
        dopt.zero_grad()
        dnet(dt.tensor(X)).pow(2).mean().backward()
        dopt.step()
    assert ours.steps.tolist() == kept


@claim("torch-diagnose-verdicts")
def test_a_recorded_pytorch_step_measures_the_update_pytorch_made():
    net = torch_model()
    opt = MySGD(net.parameters(), lr=0.1, momentum=0.9)
    rec = Recorder(net, opt, by="layer")
    for _ in range(2):
        before = [p.detach().clone() for p in net.head.parameters()]
        torch_loop(net, opt, 1, rec)
    update = float(sum(((p.detach() - b) ** 2).sum() for p, b in
                       zip(net.head.parameters(), before)) ** 0.5)
    assert rec.names == ["body.0", "head"]
    assert rec.series("update_norm", "head")[-1] == pytest.approx(update, rel=1e-5)
    assert rec.series("lr", "head").tolist() == [0.1, 0.1]
    rec.detach()
    rec.detach()                                   # a second detach changes nothing
    torch_loop(net, opt, 1)
    assert rec.count == 2


# -- Paddle ------------------------------------------------------------------------------------
def paddle_model(paddle, lr_mult: float = 1.0):
    class PaddleNet(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.body = paddle.nn.Linear(3, 4,
                                         weight_attr=paddle.ParamAttr(learning_rate=lr_mult))
            self.head = paddle.nn.Linear(4, 1)

        def forward(self, x):
            return self.head(paddle.nn.functional.relu(self.body(x)))

    paddle.seed(0)
    return PaddleNet()


@claim("paddle-diagnose-verdicts")
@pytest.mark.parametrize("subclassed", [False, True])
@pytest.mark.parametrize("cause", ["requires_grad_false", "lr_mult_zero", "zero_grad",
                                   "moves_by_momentum", "moves_by_weight_decay"])
def test_verdicts_on_a_subclassed_paddle_layer_and_optimizer(paddle, cause, subclassed):
    net = paddle_model(paddle, lr_mult=0.0 if cause == "lr_mult_zero" else 1.0)
    x = paddle.to_tensor(X)
    kind = paddle.optimizer.Momentum if cause == "moves_by_momentum" else paddle.optimizer.SGD
    if subclassed:
        kind = type("Mine", (kind,), {})
    kwargs = {"weight_decay": 0.5} if cause == "moves_by_weight_decay" else {}
    opt = kind(learning_rate=0.1, parameters=net.parameters(), **kwargs)
    if cause == "requires_grad_false":
        net.body.weight.stop_gradient = True
    if cause == "moves_by_momentum":
        net(x).sum().backward()
        opt.step()
        opt.clear_grad()
    zero = cause in ("zero_grad", "moves_by_momentum", "moves_by_weight_decay")
    (net(x) * (0.0 if zero else 1.0)).sum().backward()
    check = diagnose.why_not_updating(net, opt, "body.weight")
    assert check.cause == cause, check
    before = net.body.weight.numpy().copy()
    opt.step()
    assert bool((net.body.weight.numpy() != before).any()) is check.will_move


@claim("paddle-diagnose-verdicts")
@pytest.mark.parametrize("subclassed", [False, True])
def test_paddle_adamw_and_a_subclass_of_it_decay_decoupled(paddle, subclassed):
    net = paddle_model(paddle)
    kind = paddle.optimizer.AdamW
    kind = type("MyAdamW", (kind,), {}) if subclassed else kind
    opt = kind(learning_rate=0.1, parameters=net.parameters(), weight_decay=0.01,
               apply_decay_param_fun=lambda name: "b_" not in name)
    assert diagnose.explain_lr(opt, net.body.weight).decay_kinds == ["decoupled"]
    assert diagnose.explain_lr(opt, net.body.weight).decay_coeff == 0.01
    assert diagnose.explain_lr(opt, net.body.bias).decay_kinds == ["decoupled_excluded"]
    net(paddle.to_tensor(X)).sum().backward()
    opt.step()
    entry = next(e for e in adapter_for(net, opt).entries(opt) if e.param is net.head.weight)
    assert [key for key, _ in adapter_for(net, opt).momentum_state(entry)] == ["moment1"]


@claim("paddle-diagnose-verdicts")
def test_a_paddle_optimizer_given_a_list_or_groups_names_parameters_by_paddles_names(paddle):
    net = paddle_model(paddle)
    plain = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    grouped = paddle.optimizer.SGD(learning_rate=0.1, parameters=[
        {"params": net.body.parameters(), "learning_rate": 0.5},
        {"params": net.head.parameters()}])
    for opt, groups in ((plain, [0, 0, 0, 0]), (grouped, [0, 0, 1, 1])):
        entries = adapter_for(net, opt).entries(opt)
        assert [e.name for e in entries] == [p.name for p in net.parameters()]
        assert [e.group_index for e in entries] == groups
    assert diagnose.explain_lr(grouped, net.body.weight).group_lr == pytest.approx(0.05)
    assert diagnose.explain_lr(grouped, net.head.weight.name).group_lr == pytest.approx(0.1)
    rows = diagnose.summary(net, grouped).rows
    assert [r["name"] for r in rows] == ["body.weight", "body.bias", "head.weight", "head.bias"]


def paddle_steps(paddle, net, opt, steps):
    x = paddle.to_tensor(X)
    for _ in range(steps):
        opt.clear_grad()
        (net(x) ** 2).mean().backward()
        opt.step()


@claim("paddle-diagnose-verdicts")
@pytest.mark.parametrize("every, steps, kept", [(2, 5, [0, 2, 4]), (3, 7, [0, 3, 6])])
def test_the_recorder_samples_a_paddle_loop_every_nth_step(paddle, every, steps, kept):
    net = paddle_model(paddle)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    rec = Recorder(net, opt, every=every)
    paddle_steps(paddle, net, opt, steps)
    assert rec.steps.tolist() == kept and rec.names[0] == "body.weight"


@claim("paddle-diagnose-verdicts")
@pytest.mark.parametrize("first_out", ["first", "second"])
def test_two_recorders_on_one_paddle_optimizer_each_stop_alone(paddle, first_out):
    net = paddle_model(paddle)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    recs = [Recorder(net, opt), Recorder(net, opt)]
    paddle_steps(paddle, net, opt, 1)
    out, kept = recs if first_out == "first" else recs[::-1]
    out.detach()
    paddle_steps(paddle, net, opt, 2)
    assert (out.count, kept.count) == (1, 3)
    kept.detach()
    paddle_steps(paddle, net, opt, 1)
    assert (out.count, kept.count) == (1, 3)
    assert "step" not in vars(opt)                 # Paddle's own step is back, unwrapped


@claim("paddle-diagnose-verdicts")
def test_the_recorder_records_paddles_effective_lr_and_a_layers_largest(paddle):
    net = paddle_model(paddle, lr_mult=0.5)              # body.weight: ParamAttr lr x 0.5
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    per_param, per_layer = Recorder(net, opt), Recorder(net, opt, by="layer")
    before = net.body.weight.numpy().copy()
    paddle_steps(paddle, net, opt, 1)
    grad = net.body.weight.grad.numpy()
    # Paddle's own step proves the 0.05: the update is 0.05 x the gradient
    np.testing.assert_allclose(before - net.body.weight.numpy(), 0.05 * grad, rtol=1e-4,
                               atol=1e-7)
    assert per_param.series("lr", "body.weight").tolist() == pytest.approx([0.05])
    assert per_param.series("lr", "body.bias").tolist() == pytest.approx([0.1])
    assert per_layer.series("lr", "body").tolist() == pytest.approx([0.1])


@claim("torch-diagnose-verdicts")
def test_the_recorder_gives_a_pytorch_layer_the_largest_lr_of_its_parameters():
    net = torch_model()
    opt = torch.optim.SGD([{"params": [net.body[0].weight], "lr": 0.2},
                           {"params": [net.body[0].bias, *net.head.parameters()]}], lr=0.1)
    rec = Recorder(net, opt, by="layer")
    torch_loop(net, opt, 1)
    assert rec.series("lr", "body.0").tolist() == pytest.approx([0.2])
    assert rec.series("lr", "head").tolist() == pytest.approx([0.1])
