"""Schedulers' and the GradScaler's state: one check per key, used by the constructor and by
``load_state_dict``; boundaries, second calls and good loads (the refusals are in
test_bad_input_schedules.py)."""
from __future__ import annotations

import math
from collections import Counter

import pytest

import dltutor as dt
from dltutor import nn, optim
from dltutor.optim import lr_scheduler as L
from dltutor.optim.lr_scheduler import state_checks

from tests.optim.test_bad_input_schedules import MAKERS, built, chained, sequential, sgd, stepped

# Keys whose value the scheduler checks itself (they need the scheduler: its schedulers, its
# functions, its phases, its milestones count).
CHECKED_BY_THE_SCHEDULER = {"lr_lambdas", "after", "_schedulers", "_schedule_phases",
                            "_milestones"}


def stepped_scheduler(name: str):
    """The scheduler ``name`` after a few steps: one of MAKERS, or a SequentialLR or a
    ChainedScheduler of two or three of them."""
    if name == "SequentialLR":
        return sequential()[1]
    if name == "ChainedScheduler":
        return chained()[1]
    return built(name)[1]


# The name, not a function that makes the scheduler: lambdas made in a loop all read its last
# name (this test once checked ReduceLROnPlateau nine times and the other eight never).
@pytest.mark.parametrize("name", [*MAKERS, "SequentialLR", "ChainedScheduler"])
def test_every_state_key_has_a_check(name):
    """A new attribute of a scheduler lands in its state dict: it needs a check there too."""
    sched = stepped_scheduler(name)
    assert type(sched).__name__ == name
    unchecked = [key for key in sched.state_dict() if key not in CHECKED_BY_THE_SCHEDULER
                 and state_checks.check_of(type(sched), key) is None]
    assert not unchecked, f"{type(sched).__name__} state keys without a check: {unchecked}"


@pytest.mark.parametrize("name", MAKERS)
def test_a_saved_state_loads_into_a_fresh_scheduler_and_continues_alike(name):
    opt, sched, _ = built(name)
    saved = sched.state_dict()
    fresh_opt = sgd()
    fresh = MAKERS[name](fresh_opt)
    fresh.load_state_dict(saved)
    fresh.load_state_dict(saved)                        # a second load: the same state
    assert fresh.state_dict() == saved
    fresh_opt.load_state_dict(opt.state_dict())
    metric = (1.0,) if name == "ReduceLROnPlateau" else ()
    sched.step(*metric)
    fresh.step(*metric)
    assert fresh.get_last_lr() == sched.get_last_lr()


def test_loaded_values_are_stored_as_the_constructor_stores_them():
    opt = sgd()
    sched = L.StepLR(opt, step_size=2)
    sched.load_state_dict({"step_size": 30.0})           # epochs / 4 in a saved file
    assert sched.step_size == 30 and type(sched.step_size) is int
    multi = L.MultiStepLR(opt, milestones=[1, 2])
    multi.load_state_dict({"milestones": {3: 2}})       # dt.load gives a Counter back as a dict
    assert multi.milestones == Counter({3: 2}) and isinstance(multi.milestones, Counter)


@pytest.mark.parametrize("key, good, bad", [
    ("last_epoch", -1, -2),
    ("_step_count", 0, -1),
    ("step_size", 1, 0),
    ("gamma", 0.0, -1e-300),
])
def test_step_lr_state_boundaries(key, good, bad):
    opt = sgd()
    sched = L.StepLR(opt, step_size=2)
    sched.load_state_dict({key: good})
    assert getattr(sched, key) == good
    with pytest.raises(ValueError, match=key):
        sched.load_state_dict({key: bad})
    assert getattr(sched, key) == good


def test_step_size_one_decays_at_every_step_after_a_load():
    opt = sgd()
    sched = L.StepLR(opt, step_size=5, gamma=0.5)
    sched.load_state_dict({"step_size": 1})
    stepped(sched, 2)
    assert sched.get_last_lr() == [0.025]


def test_one_cycle_last_epoch_may_reach_total_steps_but_not_pass_it():
    opt = sgd()
    sched = L.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    sched.load_state_dict({"last_epoch": 10})
    with pytest.raises(ValueError, match="last_epoch=11"):
        sched.load_state_dict({"last_epoch": 11})
    assert sched.last_epoch == 10


def test_one_cycle_flags_must_be_real_bools():
    with pytest.raises(TypeError, match="three_phase must be True or False, got 'no'"):
        L.OneCycleLR(sgd(), max_lr=1.0, total_steps=10, three_phase="no")
    with pytest.raises(TypeError, match="cycle_momentum must be True or False, got 1"):
        L.OneCycleLR(sgd(), max_lr=1.0, total_steps=10, cycle_momentum=1)


def test_plateau_may_switch_mode_with_its_worst_value():
    opt = sgd()
    sched = L.ReduceLROnPlateau(opt)
    sched.load_state_dict({"mode": "max", "mode_worse": -math.inf, "best": -math.inf})
    sched.step(0.5)
    assert sched.best == 0.5 and sched.mode == "max"


def test_a_composite_state_loads_every_scheduler_once_checked():
    opt, seq, children = sequential()
    saved = seq.state_dict()
    saved["_schedulers"][1]["gamma"] = 0.25
    saved["_schedulers"][0]["last_epoch"] = 1
    seq.load_state_dict(saved)
    assert children[1].gamma == 0.25 and children[0].last_epoch == 1


def test_a_sequential_step_refused_then_retried_counts_once():
    """A failed step is not a step: fix the cause, step again, and the count moves by one."""
    opt = sgd()
    factor = {"value": -1.0}
    first = L.StepLR(opt, 5)
    then = L.LambdaLR(opt, lambda e: factor["value"] if e == 1 else 1.0)
    seq = L.SequentialLR(opt, [first, then], milestones=[1])
    seq.step()
    with pytest.raises(ValueError, match="param group 0"):
        seq.step()
    factor["value"] = 0.5
    seq.step()
    assert (seq.last_epoch, seq._step_count, then.last_epoch) == (2, 3, 1)
    assert seq.get_last_lr() == [0.05]


def test_a_chained_step_is_counted_once_per_call():
    opt, chain, (first, second) = chained()
    assert (chain.last_epoch, first.last_epoch, second.last_epoch) == (3, 3, 3)
    chain.step()
    assert (chain.last_epoch, first.last_epoch, second.last_epoch) == (4, 4, 4)


# -- GradScaler -----------------------------------------------------------------------------------
def test_scaler_setters_take_effect_like_pytorchs():
    w = nn.Parameter([1.0])
    opt = optim.SGD([w], lr=0.1)
    scaler = optim.GradScaler(init_scale=8.0, growth_interval=100)
    scaler.set_growth_factor(4.0)
    scaler.set_backoff_factor(0.25)
    scaler.set_growth_interval(2)
    for _ in range(2):
        opt.zero_grad()
        scaler.scale(w.sum()).backward()
        scaler.step(opt)
        scaler.update()
    assert scaler.get_scale() == 32.0                     # grown once, by 4, after 2 steps
    opt.zero_grad()
    scaler.scale(w.sum() * math.inf).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 8.0                      # backed off by 0.25


def test_a_shorter_growth_interval_keeps_the_tracker_below_it():
    scaler = optim.GradScaler(growth_interval=10)
    scaler.load_state_dict({**scaler.state_dict(), "_growth_tracker": 9})
    scaler.set_growth_interval(3)
    assert scaler.state_dict()["_growth_tracker"] == 2


def test_a_scaler_tracker_just_below_the_interval_loads():
    scaler = optim.GradScaler(growth_interval=5)
    scaler.load_state_dict({**scaler.state_dict(), "_growth_tracker": 4, "scale": 2.0})
    assert scaler.state_dict()["_growth_tracker"] == 4 and scaler.get_scale() == 2.0


def test_one_cycle_momentum_at_step_zero_is_max_momentum_for_any_sgd_momentum():
    """(PyTorch's numbers: tests/frameworks/test_scheduler_referee.py.)"""
    for momentum in (0.0, 0.5, 0.99):
        opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1, momentum=momentum)
        L.OneCycleLR(opt, max_lr=1.0, total_steps=10, max_momentum=0.9, base_momentum=0.8)
        assert opt.param_groups[0]["momentum"] == 0.9


@pytest.mark.parametrize("make", [lambda o: L.StepLR(o, step_size=1, gamma=0.5),
                                  lambda o: L.ExponentialLR(o, gamma=0.5)])
def test_a_group_added_after_the_scheduler_follows_it_from_its_own_lr(make):
    """As in PyTorch (tests/frameworks/test_scheduler_referee.py): the new group decays with
    the others, from its own lr, and gets no initial_lr; base_lrs keep the groups of the
    constructor."""
    opt = sgd()
    sched = make(opt)
    opt.add_param_group({"params": [nn.Parameter(dt.zeros(1))], "lr": 0.01})
    stepped(sched, 2)
    assert [g["lr"] for g in opt.param_groups] == [0.025, 0.0025]
    assert "initial_lr" not in opt.param_groups[1] and sched.base_lrs == [0.1]
