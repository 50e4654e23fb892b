"""Bad input to schedulers' and the GradScaler's ``load_state_dict`` (and the scaler's setters):
refused, named, and nothing changed.

Each case goes through ``refused`` (tests/bad_input.py): the error, the words its message must
hold (the key and the value), and the objects that must be bit for bit what they were: the
optimizer, the scheduler and, for a scheduler of schedulers, every one of its schedulers.
"""
from __future__ import annotations

import math

import pytest

import dltutor as dt
from dltutor import nn, optim
from dltutor.optim import lr_scheduler as L

from bad_input import refused

NAN, INF = math.nan, math.inf


def sgd(groups: int = 1):
    params = [{"params": [nn.Parameter(dt.zeros(1))], "lr": 0.1 / (i + 1)} for i in range(groups)]
    return optim.SGD(params, lr=0.1, momentum=0.9)


def stepped(sched, steps: int = 3, metric=None):
    for _ in range(steps):
        sched.step() if metric is None else sched.step(metric)
    return sched


class Decay:
    """A callable object: LambdaLR saves its attributes."""

    def __init__(self):
        self.rate = 0.5

    def __call__(self, step):
        return self.rate ** step


MAKERS = {
    "StepLR": lambda o: L.StepLR(o, step_size=2, gamma=0.5),
    "MultiStepLR": lambda o: L.MultiStepLR(o, milestones=[1, 4], gamma=0.5),
    "ExponentialLR": lambda o: L.ExponentialLR(o, gamma=0.9),
    "LinearLR": lambda o: L.LinearLR(o, start_factor=0.5, total_iters=4),
    "CosineAnnealingLR": lambda o: L.CosineAnnealingLR(o, T_max=5),
    "LambdaLR": lambda o: L.LambdaLR(o, Decay()),
    "LinearWarmup": lambda o: L.LinearWarmup(o, 2, after=L.ExponentialLR(o, gamma=0.5)),
    "OneCycleLR": lambda o: L.OneCycleLR(o, max_lr=1.0, total_steps=10),
    "ReduceLROnPlateau": lambda o: L.ReduceLROnPlateau(o, patience=1),
}

# (scheduler, the state's change, error, words the message must hold)
LOADS = [
    ("StepLR", {"step_size": 0}, ValueError, ["StepLR.load_state_dict", "step_size", "0"]),
    ("StepLR", {"step_size": 2.5}, TypeError, ["step_size", "2.5"]),
    ("StepLR", {"step_size": "3"}, TypeError, ["step_size", "'3'"]),
    ("StepLR", {"step_size": True}, TypeError, ["step_size", "True"]),
    ("StepLR", {"last_epoch": "x"}, TypeError, ["last_epoch", "'x'"]),
    ("StepLR", {"last_epoch": -2}, ValueError, ["last_epoch", "-2"]),
    ("StepLR", {"last_epoch": 1.5}, TypeError, ["last_epoch", "1.5"]),
    ("StepLR", {"last_epoch": None}, TypeError, ["last_epoch", "None"]),
    ("StepLR", {"gamma": NAN}, ValueError, ["gamma", "nan"]),
    ("StepLR", {"gamma": INF}, ValueError, ["gamma", "finite", "inf"]),
    ("StepLR", {"gamma": -0.5}, ValueError, ["gamma", "-0.5"]),
    ("StepLR", {"gamma": "0.5"}, ValueError, ["gamma", "'0.5'"]),
    ("StepLR", {"base_lrs": [NAN]}, ValueError, ["base_lrs[0]", "nan"]),
    ("StepLR", {"base_lrs": [0.1, 0.2]}, ValueError, ["base_lrs", "2 entries", "1"]),
    ("StepLR", {"base_lrs": "0.1"}, TypeError, ["base_lrs", "'0.1'"]),
    ("StepLR", {"_last_lr": [INF]}, ValueError, ["_last_lr[0]", "inf"]),
    ("StepLR", {"_step_count": -1}, ValueError, ["_step_count", "-1"]),
    ("StepLR", {"gamma": 0.5, "step_size": 0}, ValueError, ["step_size", "0"]),  # 1st key good
    ("MultiStepLR", {"milestones": {3: 0}}, ValueError, ["milestones[3]", "0"]),
    ("MultiStepLR", {"milestones": {-1: 1}}, ValueError, ["milestones", "-1"]),
    ("MultiStepLR", {"milestones": {"a": 1}}, TypeError, ["milestones", "'a'"]),
    ("MultiStepLR", {"milestones": [4, 1]}, ValueError, ["milestones", "increasing"]),
    ("MultiStepLR", {"milestones": 3}, TypeError, ["milestones", "3"]),
    ("ExponentialLR", {"gamma": NAN}, ValueError, ["ExponentialLR", "gamma", "nan"]),
    ("LinearLR", {"start_factor": 0}, ValueError, ["start_factor", "0"]),
    ("LinearLR", {"end_factor": 1.5}, ValueError, ["end_factor", "1.5"]),
    ("LinearLR", {"total_iters": 0}, ValueError, ["total_iters", "0"]),
    ("LinearLR", {"total_iters": "4"}, TypeError, ["total_iters", "'4'"]),
    ("CosineAnnealingLR", {"T_max": 0}, ValueError, ["T_max", "0"]),
    ("CosineAnnealingLR", {"T_max": NAN}, ValueError, ["T_max", "nan"]),
    ("CosineAnnealingLR", {"eta_min": -1}, ValueError, ["eta_min", "-1"]),
    ("LambdaLR", {"lr_lambdas": "x"}, TypeError, ["lr_lambdas", "'x'"]),
    ("LambdaLR", {"lr_lambdas": [None, None]}, ValueError, ["lr_lambdas", "2 entries"]),
    ("LambdaLR", {"lr_lambdas": [5]}, TypeError, ["lr_lambdas[0]", "5"]),
    ("LambdaLR", {"lr_lambdas": [{"rate": 0.1}], "last_epoch": "x"}, TypeError,
     ["last_epoch", "'x'"]),                        # the function's state is not half-loaded
    ("LinearWarmup", {"warmup_steps": -1}, ValueError, ["warmup_steps", "-1"]),
    ("LinearWarmup", {"start_factor": 2}, ValueError, ["start_factor", "2"]),
    ("LinearWarmup", {"after": None}, ValueError, ["after", "had no"]),
    ("LinearWarmup", {"last_epoch": 9, "after": {"gamma": NAN}}, ValueError,
     ["LinearWarmup.load_state_dict", "after", "gamma", "nan"]),
    ("OneCycleLR", {"total_steps": 0}, ValueError, ["total_steps", "0"]),
    ("OneCycleLR", {"total_steps": 20}, ValueError, ["phases", "19"]),
    ("OneCycleLR", {"cycle_momentum": "no"}, TypeError, ["cycle_momentum", "'no'"]),
    ("OneCycleLR", {"cycle_momentum": False}, ValueError, ["cycle_momentum", "False"]),
    ("OneCycleLR", {"use_beta1": True}, ValueError, ["use_beta1", "True"]),
    ("OneCycleLR", {"_anneal_func_type": "sin"}, ValueError, ["_anneal_func_type", "'sin'"]),
    ("OneCycleLR", {"max_lrs": [0.0]}, ValueError, ["max_lrs[0]", "0.0"]),
    ("OneCycleLR", {"max_lrs": [1.0, 2.0]}, ValueError, ["max_lrs", "2 entries"]),
    ("OneCycleLR", {"min_lrs": [-1.0]}, ValueError, ["min_lrs[0]", "-1.0"]),
    ("OneCycleLR", {"max_momentums": [2.0]}, ValueError, ["max_momentums[0]", "2.0"]),
    ("OneCycleLR", {"base_momentums": [NAN]}, ValueError, ["base_momentums[0]", "nan"]),
    ("OneCycleLR", {"last_epoch": 11}, ValueError, ["last_epoch=11", "total_steps=10"]),
    ("OneCycleLR", {"_schedule_phases": []}, ValueError, ["_schedule_phases", "[]"]),
    ("OneCycleLR", {"_schedule_phases": [{"end_step": 2.0}, {"end_step": 9}]}, ValueError,
     ["_schedule_phases"]),
    ("ReduceLROnPlateau", {"factor": 1.0}, ValueError, ["factor", "1.0"]),
    ("ReduceLROnPlateau", {"patience": -1}, ValueError, ["patience", "-1"]),
    ("ReduceLROnPlateau", {"patience": 2.5}, TypeError, ["patience", "2.5"]),
    ("ReduceLROnPlateau", {"mode": "minimum"}, ValueError, ["mode", "'minimum'"]),
    ("ReduceLROnPlateau", {"mode": "max"}, ValueError, ["mode_worse", "'max'"]),
    ("ReduceLROnPlateau", {"threshold_mode": "relative"}, ValueError, ["threshold_mode"]),
    ("ReduceLROnPlateau", {"threshold": NAN}, ValueError, ["threshold", "nan"]),
    ("ReduceLROnPlateau", {"best": NAN}, ValueError, ["best", "nan"]),
    ("ReduceLROnPlateau", {"best": "0.1"}, ValueError, ["best", "'0.1'"]),
    ("ReduceLROnPlateau", {"cooldown_counter": -1}, ValueError, ["cooldown_counter", "-1"]),
    ("ReduceLROnPlateau", {"num_bad_epochs": "1"}, TypeError, ["num_bad_epochs", "'1'"]),
    ("ReduceLROnPlateau", {"min_lrs": [NAN]}, ValueError, ["min_lrs[0]", "nan"]),
    ("ReduceLROnPlateau", {"default_min_lr": -1}, ValueError, ["default_min_lr", "-1"]),
    ("ReduceLROnPlateau", {"eps": INF}, ValueError, ["eps", "inf"]),
    ("ReduceLROnPlateau", {"cooldown": None}, TypeError, ["cooldown", "None"]),
]


def built(name: str):
    opt = sgd()
    sched = MAKERS[name](opt)
    stepped(sched, metric=1.0 if name == "ReduceLROnPlateau" else None)
    parts = [sched] + [getattr(sched, "after", None) or []] + \
        ([sched.lr_lambdas[0]] if name == "LambdaLR" else [])
    return opt, sched, parts


@pytest.mark.parametrize("name, change, error, words", LOADS,
                         ids=[f"{c[0]} {sorted(c[1])}" for c in LOADS])
def test_a_bad_scheduler_state_is_refused_before_anything_is_loaded(name, change, error, words):
    opt, sched, parts = built(name)
    state = {**sched.state_dict(), **change}
    refused(lambda: sched.load_state_dict(state), error, *words, state=[opt, *parts])


def test_a_good_state_still_loads_after_a_refused_one():
    opt, sched, _ = built("StepLR")
    saved = sched.state_dict()
    with pytest.raises(ValueError):
        sched.load_state_dict({**saved, "step_size": 0, "last_epoch": 9})
    sched.load_state_dict({**saved, "last_epoch": 9})
    assert sched.last_epoch == 9


# -- schedulers of schedulers: refused half-way, every scheduler as it was ------------------------
def sequential():
    opt = sgd(2)
    first, second = L.StepLR(opt, 2, gamma=0.5), L.ExponentialLR(opt, gamma=0.5)
    third = L.LambdaLR(opt, lambda e: 1.0)
    seq = L.SequentialLR(opt, [first, second, third], milestones=[2, 4])
    stepped(seq, 3)
    return opt, seq, [first, second, third]


def chained():
    opt = sgd(2)
    first, second = L.StepLR(opt, 2, gamma=0.5), L.ExponentialLR(opt, gamma=0.5)
    chain = L.ChainedScheduler([first, second])
    stepped(chain, 3)
    return opt, chain, [first, second]


def children_changed(state, index, change):
    """``state`` with a good change to every scheduler before ``index`` and ``change`` there."""
    children = [dict(child) for child in state["_schedulers"]]
    for child in children[:index]:
        child["last_epoch"] = 7
    children[index].update(change)
    return {**state, "last_epoch": 8, "_schedulers": children}


COMPOSITE = [
    (sequential, lambda s: children_changed(s, 1, {"gamma": NAN}), ValueError,
     ["_schedulers[1]", "gamma", "nan"]),
    (sequential, lambda s: children_changed(s, 2, {"last_epoch": "x"}), TypeError,
     ["_schedulers[2]", "last_epoch", "'x'"]),
    (sequential, lambda s: children_changed(s, 2, {"lr_lambdas": [None]}), ValueError,
     ["_schedulers[2]", "lr_lambdas"]),
    (sequential, lambda s: {**children_changed(s, 2, {}), "_milestones": [4, 2]}, ValueError,
     ["_milestones", "[4, 2]"]),
    (sequential, lambda s: {**children_changed(s, 2, {}), "_milestones": [2]}, ValueError,
     ["_milestones", "3 schedulers"]),
    (sequential, lambda s: {**children_changed(s, 2, {}), "_step_count": -3}, ValueError,
     ["_step_count", "-3"]),
    (sequential, lambda s: {**s, "_schedulers": s["_schedulers"][:2]}, ValueError,
     ["_schedulers", "3 state dicts"]),
    (chained, lambda s: children_changed(s, 1, {"gamma": -1}), ValueError,
     ["ChainedScheduler", "_schedulers[1]", "gamma", "-1"]),
    (chained, lambda s: {**children_changed(s, 1, {}), "base_lrs": [0.1]}, ValueError,
     ["base_lrs", "1 entries"]),
]


@pytest.mark.parametrize("make, change, error, words", COMPOSITE,
                         ids=[f"{c[0].__name__} {i}" for i, c in enumerate(COMPOSITE)])
def test_a_composite_state_refused_half_way_leaves_every_scheduler_as_it_was(make, change, error,
                                                                              words):
    opt, composite, children = make()
    state = change(composite.state_dict())
    refused(lambda: composite.load_state_dict(state), error, *words,
            state=[opt, composite, *children])


def test_a_composite_step_refused_half_way_changes_nothing():
    """A SequentialLR whose current scheduler computes a negative lr: refused, no count moved."""
    opt = sgd()
    first = L.StepLR(opt, 2)
    then = L.LambdaLR(opt, lambda e: 1.0 - e)          # -1 at its step 2
    seq = L.SequentialLR(opt, [first, then], milestones=[2])
    stepped(seq, 3)
    refused(seq.step, ValueError, "LambdaLR", "param group 0", state=[opt, seq, first, then])
    assert (seq.last_epoch, then.last_epoch) == (3, 1)


# -- GradScaler ---------------------------------------------------------------------------------
SCALER_ARGS = [
    ({"init_scale": NAN}, ValueError, ["init_scale", "nan"]),
    ({"init_scale": 0.0}, ValueError, ["init_scale", "0.0"]),
    ({"init_scale": 1e39}, ValueError, ["init_scale", "float32"]),
    ({"init_scale": "cpu"}, ValueError, ["init_scale", "'cpu'"]),
    ({"growth_factor": 1.0}, ValueError, ["growth_factor", "1.0"]),
    ({"growth_factor": True}, ValueError, ["growth_factor", "True"]),
    ({"growth_factor": INF}, ValueError, ["growth_factor", "inf"]),
    ({"backoff_factor": 0.0}, ValueError, ["backoff_factor", "0.0"]),
    ({"backoff_factor": NAN}, ValueError, ["backoff_factor", "nan"]),
    ({"growth_interval": 0}, ValueError, ["growth_interval", "0"]),
    ({"growth_interval": 2.5}, TypeError, ["growth_interval", "2.5"]),
    ({"enabled": "yes"}, TypeError, ["enabled", "'yes'"]),
]


@pytest.mark.parametrize("kwargs, error, words", SCALER_ARGS, ids=lambda c: str(c)[:40])
def test_a_bad_scaler_argument_is_refused(kwargs, error, words):
    refused(lambda: optim.GradScaler(**kwargs), error, "GradScaler", *words)


def used_scaler():
    """A scaler after two iterations: the scale and the growth tracker have moved."""
    w = nn.Parameter([1.0])
    opt = optim.SGD([w], lr=0.1)
    scaler = optim.GradScaler(init_scale=8.0, growth_interval=5)
    for _ in range(2):
        opt.zero_grad()
        scaler.scale(w.sum()).backward()
        scaler.step(opt)
        scaler.update()
    return scaler


SCALER_LOADS = [
    ({"scale": NAN}, ValueError, ["scale", "nan"]),
    ({"scale": INF}, ValueError, ["scale", "inf"]),
    ({"scale": -1.0}, ValueError, ["scale", "-1.0"]),
    ({"scale": 0.0}, ValueError, ["scale", "0.0"]),
    ({"scale": 1e-50}, ValueError, ["scale", "float32"]),
    ({"scale": "8"}, ValueError, ["scale", "'8'"]),
    ({"growth_factor": 0.5}, ValueError, ["growth_factor", "0.5"]),
    ({"backoff_factor": 1.5}, ValueError, ["backoff_factor", "1.5"]),
    ({"growth_interval": 0}, ValueError, ["growth_interval", "0"]),
    ({"growth_interval": True}, TypeError, ["growth_interval", "True"]),
    ({"_growth_tracker": -1}, ValueError, ["_growth_tracker", "-1"]),
    ({"_growth_tracker": 2.5}, TypeError, ["_growth_tracker", "2.5"]),
    ({"_growth_tracker": 5}, ValueError, ["_growth_tracker", "growth_interval=5", "5"]),
    ({"scale": 4.0, "_growth_tracker": 9}, ValueError, ["_growth_tracker", "9"]),  # scale good
]


@pytest.mark.parametrize("change, error, words", SCALER_LOADS, ids=lambda c: str(c)[:40])
def test_a_bad_scaler_state_is_refused_before_anything_is_loaded(change, error, words):
    scaler = used_scaler()
    state = {**scaler.state_dict(), **change}
    refused(lambda: scaler.load_state_dict(state), error, "GradScaler", *words, state=[scaler])


def test_a_scaler_state_missing_a_key_or_empty_is_refused():
    scaler = used_scaler()
    state = scaler.state_dict()
    del state["growth_factor"]
    refused(lambda: scaler.load_state_dict(state), KeyError, "growth_factor", state=[scaler])
    refused(lambda: scaler.load_state_dict({}), RuntimeError, "empty", state=[scaler])


@pytest.mark.parametrize("setter, value, error, words", [
    ("set_growth_factor", NAN, ValueError, ["growth_factor", "nan"]),
    ("set_growth_factor", 1, ValueError, ["growth_factor", "1"]),
    ("set_backoff_factor", 1.0, ValueError, ["backoff_factor", "1.0"]),
    ("set_backoff_factor", "0.5", ValueError, ["backoff_factor", "'0.5'"]),
    ("set_growth_interval", 0, ValueError, ["growth_interval", "0"]),
    ("set_growth_interval", 2.5, TypeError, ["growth_interval", "2.5"]),
    ("set_growth_interval", True, TypeError, ["growth_interval", "True"]),
])
def test_a_bad_value_for_a_scaler_setter_is_refused(setter, value, error, words):
    scaler = used_scaler()
    refused(lambda: getattr(scaler, setter)(value), error, "GradScaler", *words, state=[scaler])


# -- a setting assigned by hand: the constructor's check -----------------------------------------
ASSIGNMENTS = [
    ("StepLR", "gamma", NAN, ValueError, ["StepLR", "gamma", "nan"]),
    ("StepLR", "step_size", 0, ValueError, ["StepLR", "step_size", "0"]),
    ("MultiStepLR", "milestones", [4, 1], ValueError, ["milestones", "increasing"]),
    ("ExponentialLR", "gamma", "0.9", ValueError, ["gamma", "'0.9'"]),
    ("LinearLR", "total_iters", 0, ValueError, ["total_iters", "0"]),
    ("LinearLR", "start_factor", 0.0, ValueError, ["start_factor", "0.0"]),
    ("CosineAnnealingLR", "T_max", INF, ValueError, ["T_max", "inf"]),
    ("CosineAnnealingLR", "eta_min", -1, ValueError, ["eta_min", "-1"]),
    ("LinearWarmup", "warmup_steps", -1, ValueError, ["warmup_steps", "-1"]),
    ("ReduceLROnPlateau", "min_lrs", [NAN], ValueError, ["min_lrs[0]", "nan"]),
    ("ReduceLROnPlateau", "factor", 2, ValueError, ["factor", "2"]),
    ("ReduceLROnPlateau", "patience", "3", TypeError, ["patience", "'3'"]),
]


@pytest.mark.parametrize("name, attribute, value, error, words", ASSIGNMENTS,
                         ids=[f"{c[0]}.{c[1]}" for c in ASSIGNMENTS])
def test_a_bad_setting_assigned_by_hand_is_refused(name, attribute, value, error, words):
    opt, sched, parts = built(name)
    refused(lambda: setattr(sched, attribute, value), error, *words, state=[opt, *parts])


def test_a_good_setting_assigned_by_hand_is_stored_as_the_constructor_stores_it():
    opt, sched, _ = built("MultiStepLR")
    sched.milestones = [5, 5, 8]
    assert sched.milestones == {5: 2, 8: 1} and sched.state_dict()["milestones"] == {5: 2, 8: 1}
