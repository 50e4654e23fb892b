"""The names tables of chapters 06 and 07, cell by cell: what each PyTorch and Paddle cell
says, run in PyTorch 2.13 and Paddle 3.3 (cells already proved in test_ch06_optimizers.py and
test_ch07_learning_rates.py carry their @row markers there).
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

from absence import spellings_found
from claims import claim, row

LR_MULT = ["lr_mult", "lr_scale", "learning_rate", "lr_multiplier"]
OPTIMIZERS = [torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW, torch.optim.Adagrad,
              torch.optim.RMSprop]
BY_NAME = dict(ids=lambda kind: kind.__name__)


def _torch_linear():
    layer = torch.nn.Linear(2, 1)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([[1.0, -2.0]]))
        layer.bias.fill_(0.5)
    return layer


def _torch_backward(*layers):
    for layer in layers:
        layer(torch.tensor([[3.0, 4.0]])).sum().backward()


# ---------------------------------------------------------------- PyTorch, chapter 06


@row("torch-names-06", "list the groups", "`opt.param_groups`")
def test_torch_param_groups_is_the_live_list_of_group_dicts():
    a, b = _torch_linear(), _torch_linear()
    opt = torch.optim.SGD([{"params": a.parameters()}, {"params": b.parameters(), "lr": 0.01}],
                          lr=0.05, momentum=0.5)
    groups = opt.param_groups
    assert isinstance(groups, list) and all(isinstance(g, dict) for g in groups)
    assert groups[0]["params"] == [a.weight, a.bias] and groups[1]["params"][0] is b.weight
    assert [g["lr"] for g in groups] == [0.05, 0.01] and groups[1]["momentum"] == 0.5
    groups[1]["lr"] = 0.2                          # live: the next step reads it
    w0 = b.weight.detach().clone()
    _torch_backward(b)
    opt.step()
    assert torch.allclose(w0 - b.weight.detach(), 0.2 * b.weight.grad)


@row("torch-names-06", "add a group later", "`opt.add_param_group(group)`")
def test_torch_add_param_group_appends_a_group_that_steps():
    a, b = _torch_linear(), _torch_linear()
    opt = torch.optim.SGD(a.parameters(), lr=0.05, momentum=0.9)
    opt.add_param_group({"params": b.parameters(), "lr": 0.01})
    assert len(opt.param_groups) == 2 and opt.param_groups[1]["params"] == [b.weight, b.bias]
    assert opt.param_groups[1]["momentum"] == 0.9             # defaults fill the new group
    w0 = b.weight.detach().clone()
    _torch_backward(b)
    opt.step()
    assert torch.allclose(w0 - b.weight.detach(), 0.01 * b.weight.grad)


@row("torch-names-06", "clear gradients", "`opt.zero_grad()`")
def test_torch_zero_grad_clears_the_optimizers_gradients_only():
    a, other = _torch_linear(), _torch_linear()
    opt = torch.optim.SGD(a.parameters(), lr=0.1)
    _torch_backward(a, other)
    assert a.weight.grad is not None
    opt.zero_grad()
    assert a.weight.grad is None and a.bias.grad is None       # set_to_none by default
    assert other.weight.grad is not None                       # not the optimizer's: kept


@row("torch-names-06", "several optimizers as one", "— (call each)")
@row("paddle-names-06", "several optimizers as one", "— (call each)")
def test_no_optimizer_wraps_several_call_each(paddle):
    spellings = ["multi", "chain", "combin", "composite"]
    assert spellings_found([torch.optim], spellings) == []
    assert spellings_found([paddle.optimizer], spellings) == []
    a, b = _torch_linear(), _torch_linear()
    sgd, adam = torch.optim.SGD(a.parameters(), lr=0.1), torch.optim.Adam(b.parameters(), lr=0.01)
    with pytest.raises(TypeError, match="not iterable"):
        torch.optim.SGD(sgd, lr=0.1)                          # an optimizer is no parameter list
    before = [p.detach().clone() for p in (a.weight, b.weight)]
    _torch_backward(a, b)
    sgd.step()
    assert torch.equal(b.weight.detach(), before[1])           # each moves only its own
    adam.step()
    assert not torch.equal(b.weight.detach(), before[1])
    assert torch.allclose(before[0] - a.weight.detach(), 0.1 * a.weight.grad)


@row("torch-names-06", "train only some parameters", "`layer.requires_grad_(False)`")
def test_torch_requires_grad_false_no_grad_no_move():
    frozen, trained = _torch_linear(), _torch_linear()
    assert frozen.requires_grad_(False) is frozen
    opt = torch.optim.SGD([*frozen.parameters(), *trained.parameters()], lr=0.1, momentum=0.9)
    f0, t0 = frozen.weight.detach().clone(), trained.weight.detach().clone()
    trained(frozen(torch.tensor([[3.0, 4.0]])).repeat(1, 2)).sum().backward()
    opt.step()
    assert frozen.weight.grad is None and frozen.bias.grad is None
    assert torch.equal(frozen.weight.detach(), f0)
    assert not torch.equal(trained.weight.detach(), t0)


@row("torch-names-06", "per-parameter lr multiplier", "—")
@row("torch-names-07", "per-parameter lr multiplier", "—")
def test_torch_has_no_per_parameter_lr_multiplier():
    owners = [torch.nn.Parameter, torch.Tensor, torch.optim.Optimizer, *OPTIMIZERS]
    assert spellings_found(owners, LR_MULT) == []
    with pytest.raises(TypeError, match="lr_mult"):
        torch.nn.Parameter(torch.ones(1), lr_mult=2.0)
    layer = _torch_linear()
    layer.weight.lr_mult = 2.0                                  # an attribute nothing reads
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    w0 = layer.weight.detach().clone()
    _torch_backward(layer)
    opt.step()
    assert torch.allclose(w0 - layer.weight.detach(), 0.1 * layer.weight.grad)   # not 0.2


@row("torch-names-06", "per-parameter regularizer", "—")
def test_torch_has_no_per_parameter_regularizer():
    spellings = ["regulari", "l2decay", "l1decay"]
    assert spellings_found([torch.optim, torch.nn, torch.optim.Optimizer], spellings) == []
    assert spellings_found([torch.nn.Parameter, torch.Tensor], spellings + ["weight_decay"]) == []
    layer = _torch_linear()
    layer.weight.regularizer = "L1Decay(0.1)"                    # ignored by every optimizer
    opt = torch.optim.SGD(layer.parameters(), lr=0.1, weight_decay=0.01)
    w0 = layer.weight.detach().clone()
    _torch_backward(layer)
    opt.step()
    assert torch.allclose(w0 - layer.weight.detach(), 0.1 * (layer.weight.grad + 0.01 * w0))


@row("torch-names-06", "decay chosen by name", "— (use two groups)")
def test_torch_has_no_decay_by_name_function():
    spellings = ["apply_decay", "decay_param", "no_decay", "exclude"]
    assert spellings_found([torch.optim, torch.optim.Optimizer, torch.optim.AdamW],
                           spellings) == []
    for kind in (torch.optim.AdamW, torch.optim.Adam, torch.optim.SGD):
        assert not set(inspect.signature(kind).parameters) & {"apply_decay_param_fun",
                                                              "exclude_from_weight_decay"}
    with pytest.raises(TypeError, match="apply_decay_param_fun"):
        torch.optim.AdamW(_torch_linear().parameters(), apply_decay_param_fun=lambda n: True)


# ---------------------------------------------------------------- PyTorch, chapter 07


@row("torch-names-07", "change the lr by hand", '`group["lr"] = x`')
def test_torch_writing_group_lr_changes_the_next_step():
    layer = _torch_linear()
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    moves = []
    for lr in (0.1, 0.3, 0.0):
        opt.param_groups[0]["lr"] = lr
        w0 = layer.weight.detach().clone()
        opt.zero_grad()
        _torch_backward(layer)
        opt.step()
        moves.append((w0 - layer.weight.detach()) / layer.weight.grad)
    assert torch.allclose(torch.stack(moves).squeeze(), torch.tensor([[0.1] * 2, [0.3] * 2,
                                                                      [0.0] * 2]))


def _torch_lrs(make, steps=30, lr=0.05):
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr)
    sched, lrs = make(opt), []
    for _ in range(steps):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return np.array(lrs)


@row("torch-names-07", "schedulers",
     "`torch.optim.lr_scheduler.LinearLR`, `StepLR`, `CosineAnnealingLR`, `SequentialLR`")
def test_torch_the_four_schedulers_give_their_shapes():
    S = torch.optim.lr_scheduler
    linear = _torch_lrs(lambda o: S.LinearLR(o, start_factor=1.0, end_factor=0.0, total_iters=30))
    np.testing.assert_allclose(linear, 0.05 * (1 - np.arange(30) / 30), atol=1e-12)
    stair = _torch_lrs(lambda o: S.StepLR(o, step_size=10, gamma=0.5))
    np.testing.assert_allclose(stair, 0.05 * 0.5 ** (np.arange(30) // 10), atol=1e-12)
    cosine = _torch_lrs(lambda o: S.CosineAnnealingLR(o, T_max=30))
    np.testing.assert_allclose(cosine, 0.025 * (1 + np.cos(np.pi * np.arange(30) / 30)),
                               atol=1e-12)
    seq = _torch_lrs(lambda o: S.SequentialLR(o, [S.ConstantLR(o, factor=0.1, total_iters=5),
                                                  S.StepLR(o, step_size=1, gamma=0.5)],
                                              milestones=[3]))
    np.testing.assert_allclose(seq[:6], [0.005, 0.005, 0.005, 0.05, 0.025, 0.0125], atol=1e-12)


@row("torch-names-07", "where the scheduler goes", "built on the optimizer")
def test_torch_scheduler_takes_the_optimizer_and_writes_its_groups():
    opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.05)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    assert sched.optimizer is opt and opt.param_groups[0]["initial_lr"] == 0.05
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] == 0.025                  # written into the group
    with pytest.raises(TypeError, match="is not an Optimizer"):
        torch.optim.lr_scheduler.StepLR(0.05, step_size=1)      # no schedule from a number
    with pytest.raises(TypeError):
        torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=sched)   # nor as the lr


# ---------------------------------------------------------- PyTorch, chapter 07's second table


class _TorchPlainSGD(torch.optim.Optimizer):
    """A minimal optimizer, p -= lr * grad: the step is a loop its author writes."""

    def __init__(self, params, lr=0.1, weight_decay=0.0, skip=True):
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay))
        self.skip, self.seen = skip, []

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                self.seen.append((group["lr"], p.grad))
                if self.skip and p.grad is None:
                    continue
                self.state[p]["count"] = self.state[p].get("count", 0) + 1
                p.add_(p.grad, alpha=-group["lr"])


@row("torch-names-07-b", "the rule for one parameter", "the body of your loop in `step()`")
def test_torch_optimizer_base_calls_no_per_parameter_rule():
    assert spellings_found([torch.optim.Optimizer], ["update", "optimize_op", "param_rule"]) == []
    with pytest.raises(NotImplementedError):
        torch.optim.Optimizer([torch.nn.Parameter(torch.ones(1))], {}).step()
    p = torch.nn.Parameter(torch.tensor([1.0, -1.0]))
    opt = _TorchPlainSGD([p], lr=0.1)
    p.grad = torch.tensor([3.0, -0.5])
    opt.step()
    assert torch.allclose(p.detach(), torch.tensor([0.7, -0.95]))       # what the loop body did


@row("torch-names-07-b", "per-parameter buffers", "`self.state[p]`")
def test_torch_self_state_is_a_dict_per_parameter_saved_in_the_state_dict():
    a, b = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(2))
    opt = _TorchPlainSGD([a, b])
    assert opt.state[a] == {} and a in opt.state                        # a defaultdict(dict)
    a.grad = torch.ones(2)
    opt.step()
    opt.step()
    assert opt.state[a] == {"count": 2} and opt.state[b] == {}
    saved = opt.state_dict()["state"]
    assert saved[0] == {"count": 2} and saved.get(1, {}) == {}          # keyed by position
    fresh = _TorchPlainSGD([a, b])
    fresh.load_state_dict(opt.state_dict())
    assert fresh.state[a] == {"count": 2}


@row("torch-names-07-b", "the lr for this parameter", '`group["lr"]`')
def test_torch_custom_step_reads_group_lr_that_a_scheduler_writes():
    a, b = torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter(torch.zeros(1))
    opt = _TorchPlainSGD([{"params": [a]}, {"params": [b], "lr": 0.01}], lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    for _ in range(2):
        a.grad, b.grad = torch.ones(1), torch.ones(1)
        opt.step()
        sched.step()
    assert torch.allclose(a.detach(), torch.tensor([-(0.1 + 0.05)]))
    assert torch.allclose(b.detach(), torch.tensor([-(0.01 + 0.005)]))
    assert [lr for lr, _ in opt.seen] == [0.1, 0.01, 0.05, 0.005]


@row("torch-names-07-b", "skip, decay, clip", "you")
def test_torch_base_optimizer_skips_decays_and_clips_nothing():
    assert spellings_found([torch.optim.Optimizer], ["clip", "regulari", "decay", "skip"]) == []
    assert list(inspect.signature(torch.optim.Optimizer.__init__).parameters) == [
        "self", "params", "defaults"]
    p, idle = torch.nn.Parameter(torch.tensor([2.0])), torch.nn.Parameter(torch.ones(1))
    opt = _TorchPlainSGD([p, idle], lr=0.1, weight_decay=0.5, skip=False)
    p.grad = torch.tensor([1000.0])                  # huge: nothing clips it
    with pytest.raises(TypeError):                   # idle's grad None reaches your loop
        opt.step()
    assert opt.seen[-1] == (0.1, None)
    assert torch.allclose(p.detach(), torch.tensor([2.0 - 100.0]))   # no clip, no decay term


# ---------------------------------------------------------- general claims: every optimizer


@claim("torch-duplicate-in-two-groups-valueerror")
@pytest.mark.parametrize("kind", OPTIMIZERS, **BY_NAME)
def test_torch_every_optimizer_refuses_a_parameter_in_two_groups(kind):
    w = torch.nn.Parameter(torch.tensor([1.0]))
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        kind([{"params": [w]}, {"params": [w], "lr": 0.01}], lr=0.1)
    opt = kind([w], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [w]})                  # added later: refused too


@claim("torch-duplicate-in-one-group-warns-updates-twice")
@pytest.mark.parametrize("kind", OPTIMIZERS, **BY_NAME)
def test_torch_every_optimizer_warns_and_updates_a_duplicate_once_per_entry(kind):
    def first_move(listed):
        w = torch.nn.Parameter(torch.tensor([1.0]))
        opt = kind([w] * listed, lr=0.1)
        (w * 0.5).sum().backward()
        opt.step()
        return 1.0 - w.item()

    with pytest.warns(UserWarning, match="duplicate parameters"):
        twice = first_move(2)
    once = first_move(1)
    assert twice > 1.5 * once > 0                     # a second update in the same step


@claim("torch-weight-decay-two-groups")
@pytest.mark.parametrize("kind", OPTIMIZERS, **BY_NAME)
def test_torch_every_optimizer_spares_the_group_with_zero_decay(kind):
    layer = _torch_linear()
    opt = kind([{"params": [layer.weight], "weight_decay": 0.01},
                {"params": [layer.bias], "weight_decay": 0.0}], lr=0.05)
    w0, b0 = layer.weight.detach().clone(), layer.bias.detach().clone()
    layer.weight.grad, layer.bias.grad = torch.zeros_like(w0), torch.zeros_like(b0)
    opt.step()                                        # only decay can move anything
    assert torch.equal(layer.bias.detach(), b0)
    assert (layer.weight.detach() - w0).abs().min() > 0


_MULTIPLYING = {   # name: (PyTorch's scheduler, Paddle's, both from lr 0.05)
    "StepLR": (lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5),
               lambda L: L.StepDecay(0.05, step_size=2, gamma=0.5)),
    "MultiStepLR": (lambda o: torch.optim.lr_scheduler.MultiStepLR(o, [2, 5], gamma=0.1),
                    lambda L: L.MultiStepDecay(0.05, milestones=[2, 5], gamma=0.1)),
    "ExponentialLR": (lambda o: torch.optim.lr_scheduler.ExponentialLR(o, gamma=0.8),
                      lambda L: L.ExponentialDecay(0.05, gamma=0.8)),
    "LinearLR": (lambda o: torch.optim.lr_scheduler.LinearLR(o, 1.0, 0.0, total_iters=8),
                 lambda L: L.LinearLR(0.05, total_steps=8, start_factor=1.0, end_factor=0.0)),
    "CosineAnnealingLR": (lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=8),
                          lambda L: L.CosineAnnealingDecay(0.05, T_max=8)),
}


@claim("torch-steplr-scales-each-group")
@pytest.mark.parametrize("name", list(_MULTIPLYING))
def test_torch_multiplying_schedules_give_paddles_schedule_times_scale(name, paddle):
    """Each group's own lr scaled by the schedule = Paddle's one schedule x the group's scale."""
    make_torch, make_paddle = _MULTIPLYING[name]
    a, b = torch.nn.Parameter(torch.ones(1)), torch.nn.Parameter(torch.ones(1))
    opt = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.01}], lr=0.05)
    sched, theirs, ours = make_torch(opt), make_paddle(paddle.optimizer.lr), []
    schedule = []
    for _ in range(8):
        ours.append([g["lr"] for g in opt.param_groups])
        schedule.append(theirs())
        opt.step()
        sched.step()
        theirs.step()
    assert len(set(schedule)) > 1                                   # the lr did change
    np.testing.assert_allclose(ours, np.outer(schedule, [1.0, 0.2]), rtol=1e-6, atol=1e-12)
