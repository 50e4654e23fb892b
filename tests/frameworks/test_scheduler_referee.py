"""Schedulers with PyTorch as the referee, where a small bug in dltutor would go unseen: a param
group added after the scheduler was built, OneCycleLR's first momentum, a second step.

No chapter makes these claims (no ``@claim``): each test runs PyTorch 2.13 and dltutor side by
side and asserts that dltutor does what PyTorch does (or, where dltutor differs on purpose, that
it differs only as its docstrings say).
"""
from __future__ import annotations

import pytest
import torch

import dltutor as dt
from dltutor import nn, optim
from dltutor.optim import lr_scheduler as dt_sched

torch_sched = torch.optim.lr_scheduler

# The schedules that compute each lr from the current one, so a group added later follows them.
FOLLOWING = {
    "StepLR": lambda m, o: m.StepLR(o, step_size=2, gamma=0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[1, 3], gamma=0.5),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, gamma=0.5),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.5, total_iters=2),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=4),
}


def run_steps(opt, sched, steps):
    """Per step, [(lr, has initial_lr) per group]; a step that raises ends the run with the
    error's type name (CosineAnnealingLR at its bottom needs one base lr per group)."""
    seen = []
    for _ in range(steps):
        try:
            sched.step()
        except ValueError as error:
            return seen + [type(error).__name__]
        seen.append([(g["lr"], "initial_lr" in g) for g in opt.param_groups])
    return seen


def torch_run(make, steps, add_group=True, momentum=0.9):
    """(optimizer, scheduler, per-step [(lr, has initial_lr) per group]) in PyTorch."""
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1, momentum=momentum)
    sched = make(torch_sched, opt)
    if add_group:
        opt.add_param_group({"params": [torch.nn.Parameter(torch.zeros(1))], "lr": 0.01})
    return opt, sched, run_steps(opt, sched, steps)


def dt_run(make, steps, add_group=True, momentum=0.9):
    """The same in dltutor."""
    opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1, momentum=momentum)
    sched = make(dt_sched, opt)
    if add_group:
        opt.add_param_group({"params": [nn.Parameter(dt.zeros(1))], "lr": 0.01})
    return opt, sched, run_steps(opt, sched, steps)


@pytest.mark.parametrize("name", FOLLOWING)
def test_a_group_added_after_the_scheduler_follows_it_without_an_initial_lr(name):
    """PyTorch: the new group's lr follows the schedule from its own lr, and it gets no
    ``initial_lr`` (only the scheduler's constructor writes it); ``base_lrs`` keep one entry;
    CosineAnnealingLR fails at the bottom of its cosine (step T_max + 1), which needs a base lr
    per group. dltutor: the same numbers, bit for bit, the same keys, the same ValueError."""
    t_opt, t_sched, t_seen = torch_run(FOLLOWING[name], 5)
    d_opt, d_sched, d_seen = dt_run(FOLLOWING[name], 5)
    steps = [step for step in t_seen if isinstance(step, list)]
    assert len(steps) >= 4 and all(not has for step in steps for _, has in step[1:])
    assert d_seen == t_seen
    assert d_sched.base_lrs == t_sched.base_lrs == [0.1]
    assert d_sched.get_last_lr() == t_sched.get_last_lr()


@pytest.mark.parametrize("name", FOLLOWING)
def test_a_scheduler_built_after_add_param_group_stores_every_initial_lr(name):
    """Built after the group was added, the scheduler writes ``initial_lr`` into every group
    (a group that has one keeps it), in PyTorch and in dltutor."""
    t_opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    t_opt.add_param_group({"params": [torch.nn.Parameter(torch.zeros(1))], "lr": 0.01})
    t_sched = FOLLOWING[name](torch_sched, t_opt)
    d_opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
    d_opt.add_param_group({"params": [nn.Parameter(dt.zeros(1))], "lr": 0.01})
    d_sched = FOLLOWING[name](dt_sched, d_opt)
    assert [g["initial_lr"] for g in d_opt.param_groups] == \
        [g["initial_lr"] for g in t_opt.param_groups] == [0.1, 0.01]
    for _ in range(3):
        t_sched.step()
        d_sched.step()
    assert [g["lr"] for g in d_opt.param_groups] == [g["lr"] for g in t_opt.param_groups]


@pytest.mark.parametrize("name, make", [
    ("LambdaLR", lambda m, o: m.LambdaLR(o, lambda e: 0.5 ** e)),
    ("OneCycleLR", lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=10)),
])
def test_a_schedule_from_base_lrs_refuses_a_group_added_later(name, make):
    """LambdaLR and OneCycleLR compute from one value per group known at construction: PyTorch
    fails at the next step (ValueError from zip(strict=True), KeyError 'max_lr') and counts
    the step anyway; dltutor refuses it with a ValueError saying to build the scheduler after
    the last add_param_group, and a failed step is not counted (nothing changes)."""
    t_opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1, momentum=0.9)
    t_sched = make(torch_sched, t_opt)
    t_opt.add_param_group({"params": [torch.nn.Parameter(torch.zeros(1))], "lr": 0.01})
    with pytest.raises((ValueError, KeyError)):
        t_sched.step()
    assert t_sched.last_epoch == 1                          # PyTorch counted the failed step
    d_opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1, momentum=0.9)
    d_sched = make(dt_sched, d_opt)
    d_opt.add_param_group({"params": [nn.Parameter(dt.zeros(1))], "lr": 0.01})
    lrs = [g["lr"] for g in d_opt.param_groups]
    with pytest.raises(ValueError, match="add_param_group"):
        d_sched.step()
    assert d_sched.last_epoch == 0 and [g["lr"] for g in d_opt.param_groups] == lrs


@pytest.mark.parametrize("options", [
    {},
    {"base_momentum": 0.8, "max_momentum": 0.9, "three_phase": True},
    {"anneal_strategy": "linear", "pct_start": 0.5},
], ids=["default", "three_phase", "linear"])
@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_one_cycle_first_momentum_and_next_steps_match_pytorch(options, momentum):
    """OneCycleLR replaces the optimizer's momentum at construction: step 0 uses
    ``max_momentum`` whatever momentum SGD was given; each step after moves it opposite the lr.
    Compared with PyTorch for the first four steps and at the end of the cycle."""
    t_opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1, momentum=momentum)
    t_sched = torch_sched.OneCycleLR(t_opt, max_lr=1.0, total_steps=10, **options)
    d_opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1, momentum=momentum)
    d_sched = dt_sched.OneCycleLR(d_opt, max_lr=1.0, total_steps=10, **options)
    assert d_opt.param_groups[0]["momentum"] == t_opt.param_groups[0]["momentum"] == \
        options.get("max_momentum", 0.95)
    for _ in range(9):
        assert d_opt.param_groups[0]["momentum"] == t_opt.param_groups[0]["momentum"]
        assert d_opt.param_groups[0]["lr"] == t_opt.param_groups[0]["lr"]
        t_sched.step()
        d_sched.step()
    assert d_opt.param_groups[0]["momentum"] == t_opt.param_groups[0]["momentum"]
    assert d_opt.param_groups[0]["lr"] == t_opt.param_groups[0]["lr"]


def test_one_cycle_first_beta1_for_adam_matches_pytorch():
    """For Adam the cycled momentum is ``betas[0]``; ``betas[1]`` stays."""
    t_opt = torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))], lr=0.1, betas=(0.5, 0.9))
    torch_sched.OneCycleLR(t_opt, max_lr=1.0, total_steps=10)
    d_opt = optim.Adam([nn.Parameter(dt.zeros(1))], lr=0.1, betas=(0.5, 0.9))
    dt_sched.OneCycleLR(d_opt, max_lr=1.0, total_steps=10)
    assert tuple(d_opt.param_groups[0]["betas"]) == tuple(t_opt.param_groups[0]["betas"]) == \
        (0.95, 0.9)


def test_a_second_state_dict_load_gives_the_same_steps_as_pytorch():
    """Saving at step 3 and loading twice (the second load over the first) continues the
    schedule exactly as PyTorch does."""
    t_opt, t_sched, _ = torch_run(FOLLOWING["StepLR"], 3, add_group=False)
    d_opt, d_sched, _ = dt_run(FOLLOWING["StepLR"], 3, add_group=False)
    t_saved, d_saved = t_sched.state_dict(), d_sched.state_dict()
    for _ in range(2):
        t_sched.step()
        d_sched.step()
    for _ in range(2):                                    # load twice: the same result
        t_sched.load_state_dict(t_saved)
        d_sched.load_state_dict(d_saved)
    assert d_sched.last_epoch == t_sched.last_epoch == 3
    t_sched.step()
    d_sched.step()
    assert d_sched.get_last_lr() == t_sched.get_last_lr()


PYTORCH_SAVED = {**FOLLOWING,
                 "OneCycleLR": lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=10),
                 "ReduceLROnPlateau": lambda m, o: m.ReduceLROnPlateau(o, patience=1)}


@pytest.mark.parametrize("name", PYTORCH_SAVED)
def test_a_state_saved_by_pytorch_passes_the_load_checks(name):
    """Every entry of a loaded state is checked (state_checks.py); a state PyTorch saved after
    three steps is not refused by those checks, and the next step gives PyTorch's lr."""
    metric = (1.0,) if name == "ReduceLROnPlateau" else ()
    t_opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1, momentum=0.9)
    t_sched = PYTORCH_SAVED[name](torch_sched, t_opt)
    for _ in range(3):
        t_opt.step()
        t_sched.step(*metric)
    d_opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1, momentum=0.9)
    d_sched = PYTORCH_SAVED[name](dt_sched, d_opt)
    d_sched.load_state_dict(t_sched.state_dict())
    for group, t_group in zip(d_opt.param_groups, t_opt.param_groups):
        group["lr"] = t_group["lr"]                  # what loading the optimizer's state does
    t_sched.step(*metric)
    d_sched.step(*metric)
    assert d_sched.last_epoch == t_sched.last_epoch
    assert d_sched.get_last_lr() == pytest.approx(t_sched.get_last_lr(), rel=1e-15)
