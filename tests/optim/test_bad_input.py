"""Bad input to optimizers, clipping, regularizers and schedulers: refused, named, nothing changed.

Each case goes through ``refused`` (tests/bad_input.py): the exception type, the words the
message must hold, and the state (model with gradients, optimizer with momentum, scheduler) that
must be bit for bit what it was.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dltutor as dt
from dltutor import nn, optim
from dltutor.optim import NonFiniteGradientError, OptimizerStateError, lr_scheduler
from dltutor.optim.lr_scheduler import (CosineAnnealingLR, ExponentialLR, LambdaLR, LinearLR,
                                        StepLR)

from bad_input import GlobalGenerator, refused

NAN, INF = float("nan"), float("inf")


def model() -> nn.Module:
    dt.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def backward(net: nn.Module, seed: int = 1) -> None:
    dt.manual_seed(seed)
    net(dt.randn(5, 3)).pow(2).sum().backward()


def trained(cls=optim.SGD, steps: int = 2, **options):
    """A model and its optimizer after ``steps`` steps: state (momentum) and gradients exist."""
    net = model()
    if cls is optim.SGD:
        options.setdefault("momentum", 0.9)
    options.setdefault("lr", 0.1)
    opt = cls(net.named_parameters(), **options)
    for step in range(steps):
        opt.zero_grad()
        backward(net, seed=step)
        opt.step()
    return net, opt


# --- hyperparameters at construction ------------------------------------------------------------
def make(cls, **kwargs):
    return lambda: cls(model().parameters(), **kwargs)


CONSTRUCTION = [
    ("SGD lr NaN", make(optim.SGD, lr=NAN), ValueError, ["SGD", "lr", "nan"]),
    ("SGD lr inf", make(optim.SGD, lr=INF), ValueError, ["SGD", "lr", "finite"]),
    ("SGD lr negative", make(optim.SGD, lr=-0.1), ValueError, ["SGD", "lr", "-0.1"]),
    ("SGD lr string", make(optim.SGD, lr="0.1"), ValueError, ["SGD", "lr", "'0.1'"]),
    ("SGD lr None", make(optim.SGD, lr=None), ValueError, ["SGD", "lr", "None"]),
    ("SGD lr True", make(optim.SGD, lr=True), ValueError, ["SGD", "lr", "True"]),
    ("SGD momentum -1", make(optim.SGD, lr=0.1, momentum=-1), ValueError, ["momentum", "-1"]),
    ("SGD momentum NaN", make(optim.SGD, lr=0.1, momentum=NAN), ValueError, ["momentum", "nan"]),
    ("SGD dampening inf", make(optim.SGD, lr=0.1, dampening=INF), ValueError, ["dampening"]),
    ("SGD weight_decay -1", make(optim.SGD, lr=0.1, weight_decay=-1), ValueError,
     ["weight_decay", "-1"]),
    ("SGD weight_decay inf", make(optim.SGD, lr=0.1, weight_decay=INF), ValueError,
     ["weight_decay", "finite"]),
    ("Adam beta1 = 1", make(optim.Adam, betas=(1.0, 0.999)), ValueError, ["Adam", "betas[0]"]),
    ("Adam beta2 NaN", make(optim.Adam, betas=(0.9, NAN)), ValueError, ["Adam", "betas[1]"]),
    ("Adam one beta", make(optim.Adam, betas=(0.9,)), ValueError, ["Adam", "betas", "pair"]),
    ("Adam eps -1", make(optim.Adam, eps=-1.0), ValueError, ["Adam", "eps"]),
    ("Adam eps NaN", make(optim.Adam, eps=NAN), ValueError, ["Adam", "eps", "nan"]),
    ("AdamW weight_decay NaN", make(optim.AdamW, weight_decay=NAN), ValueError,
     ["AdamW", "weight_decay"]),
    ("RMSprop alpha 1.5", make(optim.RMSprop, alpha=1.5), ValueError, ["RMSprop", "alpha"]),
    ("Adagrad lr_decay -1", make(optim.Adagrad, lr_decay=-1.0), ValueError,
     ["Adagrad", "lr_decay"]),
    ("nonfinite unknown", make(optim.SGD, lr=0.1, nonfinite="ignore"), ValueError,
     ["nonfinite", "'ignore'", "'skip'"]),
    ("nonfinite True", make(optim.Adam, nonfinite=True), ValueError, ["nonfinite", "True"]),
    ("nonfinite None", make(optim.AdamW, nonfinite=None), ValueError, ["nonfinite", "None"]),
    # Flags are real bools (issue 46): "no" is a true string, 1 a number.
    ("SGD maximize 'no'", make(optim.SGD, lr=0.1, maximize="no"), TypeError,
     ["SGD", "maximize", "'no'", "True or False"]),
    ("SGD nesterov 'yes'", make(optim.SGD, lr=0.1, momentum=0.9, nesterov="yes"), TypeError,
     ["SGD", "nesterov", "'yes'"]),
    ("SGD nesterov 1", make(optim.SGD, lr=0.1, momentum=0.9, nesterov=1), TypeError,
     ["SGD", "nesterov", "1"]),
    ("Adam amsgrad 'no'", make(optim.Adam, amsgrad="no"), TypeError, ["Adam", "amsgrad", "'no'"]),
    ("AdamW maximize None", make(optim.AdamW, maximize=None), TypeError,
     ["AdamW", "maximize", "None"]),
    ("RMSprop centered 'yes'", make(optim.RMSprop, centered="yes"), TypeError,
     ["RMSprop", "centered", "'yes'"]),
    ("Adagrad maximize 0", make(optim.Adagrad, maximize=0), TypeError, ["Adagrad", "maximize"]),
    # eps 0 divides a zero gradient by zero (item 6 of issue 46; PyTorch accepts it).
    ("Adam eps 0", make(optim.Adam, eps=0.0), ValueError, ["Adam", "eps", "> 0", "0/0 = NaN"]),
    ("AdamW eps 0", make(optim.AdamW, eps=0), ValueError, ["AdamW", "eps", "0/0"]),
    ("RMSprop eps 0", make(optim.RMSprop, eps=0.0), ValueError, ["RMSprop", "eps", "0/0"]),
    ("Adagrad eps 0", make(optim.Adagrad, eps=0.0), ValueError, ["Adagrad", "eps", "0/0"]),
    ("Adam eps -0.0", make(optim.Adam, eps=-0.0), ValueError, ["Adam", "eps"]),
    ("L2Decay NaN", lambda: optim.L2Decay(NAN), ValueError, ["L2Decay", "coeff", "nan"]),
    ("L2Decay -1", lambda: optim.L2Decay(-1.0), ValueError, ["L2Decay", "coeff"]),
    ("L1Decay inf", lambda: optim.L1Decay(INF), ValueError, ["L1Decay", "coeff", "finite"]),
    ("L1Decay string", lambda: optim.L1Decay("0.1"), ValueError, ["L1Decay", "coeff"]),
]


@pytest.mark.parametrize("label, call, error, names", CONSTRUCTION,
                         ids=[case[0] for case in CONSTRUCTION])
def test_bad_hyperparameters_are_refused_at_construction(label, call, error, names):
    refused(call, error, *names)


# --- clip thresholds ----------------------------------------------------------------------------
CLIPS = [
    ("ClipGradByNorm 0", lambda net: optim.ClipGradByNorm(0), ["ClipGradByNorm", "clip_norm"]),
    ("ClipGradByNorm -1", lambda net: optim.ClipGradByNorm(-1), ["ClipGradByNorm", "-1"]),
    ("ClipGradByNorm NaN", lambda net: optim.ClipGradByNorm(NAN), ["ClipGradByNorm", "nan"]),
    ("ClipGradByNorm inf", lambda net: optim.ClipGradByNorm(INF), ["ClipGradByNorm", "finite"]),
    ("ClipGradByGlobalNorm 0", lambda net: optim.ClipGradByGlobalNorm(0),
     ["ClipGradByGlobalNorm", "clip_norm"]),
    ("ClipGradByGlobalNorm NaN", lambda net: optim.ClipGradByGlobalNorm(NAN),
     ["ClipGradByGlobalNorm", "nan"]),
    ("ClipGradByGlobalNorm string", lambda net: optim.ClipGradByGlobalNorm("1"),
     ["ClipGradByGlobalNorm", "'1'"]),
    ("ClipGradByValue 0", lambda net: optim.ClipGradByValue(0), ["ClipGradByValue", "max"]),
    ("ClipGradByValue -1", lambda net: optim.ClipGradByValue(-1), ["ClipGradByValue", "-1"]),
    ("ClipGradByValue NaN", lambda net: optim.ClipGradByValue(NAN), ["ClipGradByValue", "nan"]),
    ("clip_grad_norm_ max_norm -1", lambda net: optim.clip_grad_norm_(net.parameters(), -1),
     ["clip_grad_norm_", "max_norm", "-1"]),
    ("clip_grad_norm_ max_norm 0", lambda net: optim.clip_grad_norm_(net.parameters(), 0),
     ["clip_grad_norm_", "max_norm"]),
    ("clip_grad_norm_ max_norm NaN", lambda net: optim.clip_grad_norm_(net.parameters(), NAN),
     ["clip_grad_norm_", "max_norm", "nan"]),
    ("clip_grad_norm_ max_norm inf", lambda net: optim.clip_grad_norm_(net.parameters(), INF),
     ["clip_grad_norm_", "max_norm", "finite"]),
    ("clip_grad_norm_ norm_type 0", lambda net: optim.clip_grad_norm_(net.parameters(), 1.0,
                                                                       norm_type=0),
     ["clip_grad_norm_", "norm_type"]),
    ("clip_grad_norm_ norm_type -2", lambda net: optim.clip_grad_norm_(net.parameters(), 1.0,
                                                                        norm_type=-2),
     ["clip_grad_norm_", "norm_type", "-2"]),
    ("clip_grad_norm_ norm_type string", lambda net: optim.clip_grad_norm_(
        net.parameters(), 1.0, norm_type="l2"), ["clip_grad_norm_", "norm_type", "'l2'"]),
    ("clip_grad_norm_ norm_type NaN", lambda net: optim.clip_grad_norm_(
        net.parameters(), 1.0, norm_type=NAN), ["clip_grad_norm_", "norm_type"]),
    ("clip_grad_value_ -1", lambda net: optim.clip_grad_value_(net.parameters(), -1),
     ["clip_grad_value_", "clip_value", "-1"]),
    ("clip_grad_value_ 0", lambda net: optim.clip_grad_value_(net.parameters(), 0),
     ["clip_grad_value_", "clip_value"]),
    ("clip_grad_value_ NaN", lambda net: optim.clip_grad_value_(net.parameters(), NAN),
     ["clip_grad_value_", "nan"]),
]


@pytest.mark.parametrize("label, call, names", CLIPS, ids=[case[0] for case in CLIPS])
def test_clip_thresholds_must_be_finite_and_positive(label, call, names):
    net = model()
    backward(net)
    refused(lambda: call(net), ValueError, *names, state=[net])


# --- a saved optimizer state that does not fit --------------------------------------------------
def _first(state):
    return state["state"]["0.weight"]


SAVED = [
    ("no 'state'", lambda s: s.pop("state"), ["'state'"]),
    ("state not a dict", lambda s: s.__setitem__("state", [1, 2]), ["'state'"]),
    ("no 'param_groups'", lambda s: s.pop("param_groups"), ["'param_groups'"]),
    ("one group missing", lambda s: s["param_groups"].pop(), ["group"]),
    ("another optimizer class", lambda s: s.__setitem__("optimizer", "Adam"), ["Adam", "SGD"]),
    ("moment of the wrong shape",
     lambda s: _first(s).__setitem__("momentum_buffer", np.zeros(7, np.float32)),
     ["momentum_buffer", "0.weight", "(7,)"]),
    ("moment of strings",
     lambda s: _first(s).__setitem__("momentum_buffer", np.full((4, 3), "a")),
     ["momentum_buffer", "0.weight", "not numbers"]),
    ("moment of objects",
     lambda s: _first(s).__setitem__("momentum_buffer", np.full((4, 3), None, dtype=object)),
     ["momentum_buffer", "0.weight", "object"]),
    ("complex moment",
     lambda s: _first(s).__setitem__("momentum_buffer", np.zeros((4, 3), np.complex64)),
     ["momentum_buffer", "0.weight", "complex"]),
    ("step a fraction", lambda s: _first(s).__setitem__("step", 1.5), ["'step'", "0.weight"]),
    ("step negative", lambda s: _first(s).__setitem__("step", -3), ["'step'", "0.weight"]),
    ("step a string", lambda s: _first(s).__setitem__("step", "2"), ["'step'", "0.weight"]),
    ("step NaN", lambda s: _first(s).__setitem__("step", NAN), ["'step'", "0.weight"]),
    ("state entry not a dict", lambda s: s["state"].__setitem__("0.weight", [1.0]),
     ["0.weight", "list"]),
    ("state of an unknown parameter", lambda s: s["state"].__setitem__("9.weight", {}),
     ["9.weight"]),
    ("step_count a fraction", lambda s: s.__setitem__("step_count", 2.5), ["step_count"]),
    ("step_count negative", lambda s: s.__setitem__("step_count", -1), ["step_count"]),
    ("skipped_steps a string", lambda s: s.__setitem__("skipped_steps", "0"),
     ["skipped_steps"]),
    ("group lr NaN", lambda s: s["param_groups"][0].__setitem__("lr", NAN), ["group 0", "lr"]),
    ("group lr inf", lambda s: s["param_groups"][0].__setitem__("lr", INF), ["group 0", "lr"]),
    ("group lr negative", lambda s: s["param_groups"][0].__setitem__("lr", -1.0),
     ["group 0", "lr"]),
    ("group momentum negative", lambda s: s["param_groups"][0].__setitem__("momentum", -0.5),
     ["group 0", "momentum"]),
    ("group weight_decay NaN", lambda s: s["param_groups"][0].__setitem__("weight_decay", NAN),
     ["group 0", "weight_decay"]),
    ("group unknown hyperparameter", lambda s: s["param_groups"][0].__setitem__("betas", 0.9),
     ["group 0", "betas"]),
    ("group parameter renamed", lambda s: s["param_groups"][0]["params"].__setitem__(0, "w"),
     ["0.weight", "'w'"]),
    # issue 46: what the next step() or state_dict() would have tripped on, refused at load.
    ("param_names one short", lambda s: s["param_groups"][0].__setitem__("param_names", ["a"]),
     ["group 0", "param_names", "['a']", "list of 4 names"]),
    ("param_names a string", lambda s: s["param_groups"][0].__setitem__("param_names", "abcd"),
     ["group 0", "param_names", "'abcd'"]),
    ("param_names repeated", lambda s: s["param_groups"][0].__setitem__(
        "param_names", ["a", "a", "b", "c"]), ["group 0", "param_names", "twice"]),
    ("maximize 'no'", lambda s: s["param_groups"][0].__setitem__("maximize", "no"),
     ["group 0", "maximize", "'no'"]),
    ("nesterov 'yes'", lambda s: s["param_groups"][0].__setitem__("nesterov", "yes"),
     ["group 0", "nesterov", "'yes'"]),
    ("nesterov without dampening 0", lambda s: s["param_groups"][0].update(
        nesterov=True, dampening=0.5), ["group 0", "Nesterov", "dampening=0.5"]),
    ("param_groups 5", lambda s: s.__setitem__("param_groups", 5),
     ["'param_groups'", "int", "list"]),
    ("a group that is a number", lambda s: s["param_groups"].__setitem__(0, 5),
     ["group 0", "int"]),
    ("a group's params a string", lambda s: s["param_groups"][0].__setitem__("params", "0.weight"),
     ["group 0", "'params'", "str"]),
    ("regularizer without coeff", lambda s: s["param_groups"][0].__setitem__(
        "weight_decay", {"regularizer": "L2Decay"}), ["group 0", "L2Decay", "coeff"]),
    ("regularizer of an unknown kind", lambda s: s["param_groups"][0].__setitem__(
        "weight_decay", {"regularizer": "L3Decay", "coeff": 0.1}), ["group 0", "L3Decay"]),
    ("regularizer coeff NaN", lambda s: s["param_groups"][0].__setitem__(
        "weight_decay", {"regularizer": "L1Decay", "coeff": NAN}), ["group 0", "coeff", "nan"]),
    ("moment NaN", lambda s: _first(s)["momentum_buffer"].data.__setitem__((0, 0), NAN),
     ["momentum_buffer", "0.weight", "NaN or Inf"]),
    ("moment -inf", lambda s: _first(s)["momentum_buffer"].data.__setitem__((1, 2), -INF),
     ["momentum_buffer", "0.weight", "NaN or Inf"]),
    ("moment of shape ()",
     lambda s: _first(s).__setitem__("momentum_buffer", np.zeros((), np.float32)),
     ["momentum_buffer", "0.weight", "shape ()", "(4, 3)"]),
    ("moment a plain number", lambda s: _first(s).__setitem__("momentum_buffer", 0.5),
     ["momentum_buffer", "0.weight", "is a float", "(4, 3)"]),
    ("moment of integers",
     lambda s: _first(s).__setitem__("momentum_buffer", np.zeros((4, 3), np.int64)),
     ["momentum_buffer", "0.weight", "int64", "floating-point"]),
    ("moment too large for float32",
     lambda s: _first(s).__setitem__("momentum_buffer", np.full((4, 3), 1e300)),
     ["momentum_buffer", "0.weight", "1e+300", "float32", "inf"]),
    ("an extra number NaN", lambda s: _first(s).__setitem__("scale", NAN),
     ["'scale'", "0.weight", "finite"]),
]


@pytest.mark.parametrize("label, corrupt, names", SAVED, ids=[case[0] for case in SAVED])
def test_a_saved_state_that_does_not_fit_changes_nothing(label, corrupt, names):
    net, opt = trained()
    saved = copy.deepcopy(opt.state_dict())
    corrupt(saved)
    refused(lambda: opt.load_state_dict(saved), OptimizerStateError, "nothing was changed",
            *names, state=[net, opt])


_HYPERPARAMETERS = {"lr": -1e-3, "momentum": -0.1, "dampening": -2.0, "weight_decay": -1e-4}


@settings(max_examples=40, deadline=None)
@given(key=st.sampled_from(sorted(_HYPERPARAMETERS)),
       bad=st.sampled_from(["nan", "inf", "-inf", "negative", "string", "none", "bool"]))
def test_any_bad_hyperparameter_in_a_saved_state_is_refused_whole(key, bad):
    """Property: one hyperparameter replaced by NaN, an infinity, a negative number, a string,
    None or a bool in a saved state is refused, and neither the groups nor the momentum change."""
    net, opt = trained()
    saved = copy.deepcopy(opt.state_dict())
    value = {"nan": NAN, "inf": INF, "-inf": -INF, "negative": _HYPERPARAMETERS[key],
             "string": "0.1", "none": None, "bool": True}[bad]
    saved["param_groups"][0][key] = value
    refused(lambda: opt.load_state_dict(saved), OptimizerStateError, "group 0", key,
            state=[net, opt])


def test_saved_state_goes_to_the_parameter_of_the_same_name_in_any_order():
    """Resume with the same named parameters listed in another order: each momentum buffer
    follows its name, so the run continues exactly as the uninterrupted one."""
    net, opt = trained(steps=2)
    saved_model = copy.deepcopy(net.state_dict())
    saved_opt = copy.deepcopy(opt.state_dict())
    for step in range(2, 4):                     # the uninterrupted run
        opt.zero_grad()
        backward(net, seed=step)
        opt.step()
    expected = {k: v.numpy().copy() for k, v in net.state_dict().items()}

    resumed = model()
    resumed.load_state_dict(saved_model)
    reordered = list(resumed.named_parameters())[::-1]
    opt2 = optim.SGD(reordered, lr=0.1, momentum=0.9)
    opt2.load_state_dict(saved_opt)
    for step in range(2, 4):
        opt2.zero_grad()
        backward(resumed, seed=step)
        opt2.step()
    for key, value in resumed.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), expected[key], err_msg=key)


# --- schedulers ---------------------------------------------------------------------------------
def _boom(step):
    raise ZeroDivisionError("the schedule's own function failed")


SCHEDULERS = [
    ("StepLR step_size 0", lambda o: StepLR(o, step_size=0), ValueError, ["StepLR", "step_size"]),
    ("StepLR step_size 2.5", lambda o: StepLR(o, step_size=2.5), TypeError,
     ["StepLR", "step_size", "2.5"]),
    ("StepLR gamma NaN", lambda o: StepLR(o, step_size=2, gamma=NAN), ValueError,
     ["StepLR", "gamma", "nan"]),
    ("StepLR gamma -1", lambda o: StepLR(o, step_size=2, gamma=-1.0), ValueError,
     ["StepLR", "gamma"]),
    ("ExponentialLR gamma inf", lambda o: ExponentialLR(o, gamma=INF), ValueError,
     ["ExponentialLR", "gamma", "finite"]),
    ("CosineAnnealingLR T_max 0", lambda o: CosineAnnealingLR(o, T_max=0), ValueError,
     ["CosineAnnealingLR", "T_max"]),
    ("CosineAnnealingLR eta_min NaN", lambda o: CosineAnnealingLR(o, T_max=10, eta_min=NAN),
     ValueError, ["CosineAnnealingLR", "eta_min"]),
    ("LinearLR start_factor 0", lambda o: LinearLR(o, start_factor=0.0), ValueError,
     ["LinearLR", "start_factor"]),
    ("LinearLR total_iters -1", lambda o: LinearLR(o, total_iters=-1), ValueError,
     ["LinearLR", "total_iters"]),
    ("LambdaLR not callable", lambda o: LambdaLR(o, lr_lambda=0.5), TypeError,
     ["LambdaLR", "lr_lambda"]),
    ("LambdaLR function raises", lambda o: LambdaLR(o, lr_lambda=_boom), ZeroDivisionError,
     ["schedule's own function"]),
    ("LambdaLR returns NaN", lambda o: LambdaLR(o, lambda step: NAN), ValueError,
     ["LambdaLR", "lr_lambda(0)", "nan"]),
    ("LambdaLR returns inf", lambda o: LambdaLR(o, lambda step: INF), ValueError,
     ["LambdaLR", "lr_lambda(0)", "finite"]),
    ("LambdaLR returns negative", lambda o: LambdaLR(o, lambda step: -1.0), ValueError,
     ["LambdaLR", "param group 0", "-0.1"]),
    ("LambdaLR returns a string", lambda o: LambdaLR(o, lambda step: "1"), (TypeError, ValueError),
     ["LambdaLR"]),
    ("LambdaLR too many functions", lambda o: LambdaLR(o, [lambda s: 1.0] * 3), ValueError,
     ["LambdaLR", "3"]),
    ("last_epoch without initial_lr", lambda o: StepLR(o, step_size=2, last_epoch=3), KeyError,
     ["initial_lr", "last_epoch"]),
]


@pytest.mark.parametrize("label, build, error, names", SCHEDULERS,
                         ids=[case[0] for case in SCHEDULERS])
def test_a_scheduler_that_cannot_be_built_leaves_the_optimizer_alone(label, build, error, names):
    """No ``initial_lr`` left behind, no lr changed: the optimizer is as it was."""
    net, opt = trained()
    refused(lambda: build(opt), error, *names, state=[net, opt])
    assert all("initial_lr" not in group for group in opt.param_groups)


def test_a_schedule_that_fails_later_changes_neither_the_lr_nor_its_count():
    net, opt = trained()
    sched = LambdaLR(opt, lambda step: 1.0 if step < 2 else NAN)
    sched.step()
    refused(sched.step, ValueError, "LambdaLR", "lr_lambda(2)", state=[opt, sched])
    assert sched.last_epoch == 1 and sched.get_last_lr() == [0.1]


# --- groups -------------------------------------------------------------------------------------
GROUPS = [
    ("a parameter already in a group", lambda net: {"params": [net[0].weight]}, ValueError,
     ["appears twice"]),
    ("not a parameter", lambda net: {"params": [3]}, TypeError, ["int"]),
    ("lr NaN", lambda net: {"params": [nn.Parameter([1.0])], "lr": NAN}, ValueError,
     ["lr", "nan"]),
    ("momentum inf", lambda net: {"params": [nn.Parameter([1.0])], "momentum": INF}, ValueError,
     ["momentum"]),
    ("weight_decay a string", lambda net: {"params": [nn.Parameter([1.0])],
                                           "weight_decay": "0.1"}, ValueError, ["weight_decay"]),
]


@pytest.mark.parametrize("label, group, error, names", GROUPS, ids=[case[0] for case in GROUPS])
def test_add_param_group_checks_the_whole_group_first(label, group, error, names):
    net, opt = trained()
    refused(lambda: opt.add_param_group(group(net)), error, *names, state=[net, opt])


@pytest.mark.parametrize("lr", [NAN, INF, -0.5, "0.1", None])
def test_an_lr_set_by_hand_is_refused_when_written(lr):
    """``param_groups[0]["lr"] = ...`` runs the constructor's check as it is written: the
    group keeps its lr, and the next step uses it."""
    net, opt = trained()
    backward(net, seed=5)
    refused(lambda: opt.param_groups[0].__setitem__("lr", lr), ValueError,
            "param_groups[0]['lr']", repr(lr), state=[net, opt])


def _group_write(key, value):
    return lambda opt: opt.param_groups[0].__setitem__(key, value)


# (label, optimizer and its options, the write, the error, the words): issue 46, item 2.
SET_BY_HAND = [
    ("SGD maximize 'no'", (optim.SGD, {}), _group_write("maximize", "no"), TypeError,
     ["param_groups[0]['maximize'] = 'no'", "True or False"]),
    ("SGD nesterov 'yes'", (optim.SGD, {}), _group_write("nesterov", "yes"), TypeError,
     ["param_groups[0]['nesterov']", "'yes'"]),
    ("SGD momentum 0 under nesterov", (optim.SGD, {"nesterov": True}),
     _group_write("momentum", 0.0), ValueError, ["param_groups[0]['momentum'] = 0.0", "Nesterov"]),
    ("SGD momentum NaN", (optim.SGD, {}), _group_write("momentum", NAN), ValueError,
     ["param_groups[0]['momentum']", "nan"]),
    ("Adam amsgrad 'no'", (optim.Adam, {}), _group_write("amsgrad", "no"), TypeError,
     ["param_groups[0]['amsgrad']", "'no'"]),
    ("Adam eps 0", (optim.Adam, {}), _group_write("eps", 0.0), ValueError,
     ["param_groups[0]['eps']", "0/0"]),
    ("Adam betas (1, 0.9)", (optim.Adam, {}), _group_write("betas", (1.0, 0.9)), ValueError,
     ["param_groups[0]['betas']", "betas[0]"]),
    ("Adam a key it does not know", (optim.Adam, {}), _group_write("momentum", 0.9), ValueError,
     ["param_groups[0]['momentum']", "unknown hyperparameter"]),
    ("RMSprop centered 1", (optim.RMSprop, {}), _group_write("centered", 1), TypeError,
     ["param_groups[0]['centered'] = 1"]),
    ("Adagrad eps 0", (optim.Adagrad, {}), _group_write("eps", 0), ValueError,
     ["param_groups[0]['eps']", "0/0"]),
    ("param_names one short", (optim.SGD, {}), _group_write("param_names", ["x"]), ValueError,
     ["param_groups[0]['param_names']", "list of 4 names"]),
    ("update with one bad value", (optim.SGD, {}),
     lambda opt: opt.param_groups[0].update(lr=0.5, maximize="no"), TypeError,
     ["param_groups[0]['maximize']", "'no'"]),
    ("|= with a bad value", (optim.Adam, {}),
     lambda opt: opt.param_groups[0].__ior__({"eps": -1.0}), ValueError,
     ["param_groups[0]['eps']", "-1.0"]),
    ("setdefault of an unknown key", (optim.SGD, {}),
     lambda opt: opt.param_groups[0].setdefault("betas", (0.9, 0.99)), ValueError,
     ["param_groups[0]['betas']", "unknown hyperparameter"]),
]


@pytest.mark.parametrize("label, made, write, error, names", SET_BY_HAND,
                         ids=[case[0] for case in SET_BY_HAND])
def test_a_setting_written_into_a_group_by_hand_meets_the_constructors_check(
        label, made, write, error, names):
    """The write is refused as it happens, naming the group, key and value; the group keeps
    what it had, and the next step is the one it would have been."""
    cls, options = made
    if cls is optim.SGD:
        options = {"momentum": 0.9, **options}
    net, opt = trained(cls, **options)
    backward(net, seed=5)
    refused(lambda: write(opt), error, *names, state=[net, opt])
    opt.step()


def _a_parameter_write(name, value):
    return lambda net: setattr(net[0].weight, name, value)


class _Penalty(optim.L2Decay):
    """A regularizer whose coeff was changed after it was made (so its own check never ran)."""


def _nan_coeff():
    penalty = _Penalty(0.1)
    penalty.coeff = NAN
    return penalty


# (label, the write, the error, the words): issue 46, item 2 (lr_mult, regularizer, need_clip).
PARAMETER_SETTINGS = [
    ("lr_mult NaN", _a_parameter_write("lr_mult", NAN), ValueError,
     ["Parameter of shape (4, 3)", "lr_mult", "nan"]),
    ("lr_mult inf", _a_parameter_write("lr_mult", INF), ValueError, ["lr_mult", "finite"]),
    ("lr_mult -1", _a_parameter_write("lr_mult", -1), ValueError, ["lr_mult", ">= 0", "-1"]),
    ("lr_mult a string", _a_parameter_write("lr_mult", "2"), ValueError, ["lr_mult", "'2'"]),
    ("lr_mult True", _a_parameter_write("lr_mult", True), ValueError, ["lr_mult", "True"]),
    ("regularizer a number", _a_parameter_write("regularizer", 0.01), TypeError,
     ["Parameter of shape (4, 3)", "regularizer", "weight_decay"]),
    ("regularizer with a NaN coeff", lambda net: setattr(net[0].weight, "regularizer",
                                                         _nan_coeff()),
     ValueError, ["regularizer", "coeff", "nan"]),
    ("need_clip 'no'", _a_parameter_write("need_clip", "no"), TypeError,
     ["Parameter of shape (4, 3)", "need_clip", "'no'"]),
    ("need_clip 0", _a_parameter_write("need_clip", 0), TypeError, ["need_clip", "0"]),
    ("need_clip None", _a_parameter_write("need_clip", None), TypeError, ["need_clip", "None"]),
]


@pytest.mark.parametrize("label, write, error, names", PARAMETER_SETTINGS,
                         ids=[case[0] for case in PARAMETER_SETTINGS])
def test_a_parameter_setting_written_later_meets_the_constructors_check(label, write, error,
                                                                         names):
    """Accepted before: ``p.lr_mult = nan`` then step() gave NaN weights, ``inf`` inf weights,
    ``-1`` a step up the loss. Now the write is refused and the step is the one it was."""
    net, opt = trained()
    backward(net, seed=5)
    refused(lambda: write(net), error, *names, state=[net, opt])
    opt.step()
    assert all(np.isfinite(p.numpy()).all() for p in net.parameters())


PARAMETERS_MADE = [
    ("need_clip 'no'", lambda: nn.Parameter([1.0], need_clip="no"), TypeError, ["need_clip"]),
    ("need_clip 1", lambda: nn.Parameter([1.0], need_clip=1), TypeError, ["need_clip", "1"]),
    ("regularizer NaN coeff", lambda: nn.Parameter([1.0], regularizer=_nan_coeff()), ValueError,
     ["Parameter", "coeff", "nan"]),
]


@pytest.mark.parametrize("label, make_param, error, names", PARAMETERS_MADE,
                         ids=[case[0] for case in PARAMETERS_MADE])
def test_a_parameter_refuses_the_same_settings_when_made(label, make_param, error, names):
    refused(make_param, error, *names, state=[GlobalGenerator()])


@pytest.mark.parametrize("lr", [NAN, -0.5, None])
def test_an_lr_slipped_past_the_group_is_still_refused_at_step(lr):
    """A write that bypasses the group's check (``dict.__setitem__``, or a group replaced by a
    plain dict) still meets step()'s lr check before anything changes."""
    net, opt = trained()
    backward(net, seed=5)
    dict.__setitem__(opt.param_groups[0], "lr", lr)
    refused(opt.step, ValueError, "param_groups[0]['lr']", state=[net, opt])


# --- a NaN or Inf gradient ----------------------------------------------------------------------
def poison(net, value, name="0.weight"):
    dict(net.named_parameters())[name].grad.data[0, ...] = value


NONFINITE = [
    ("SGD, NaN", optim.SGD, {}, NAN, "0.weight"),
    ("SGD, inf", optim.SGD, {}, INF, "0.weight"),
    ("SGD, -inf in a bias", optim.SGD, {}, -INF, "2.bias"),
    ("SGD, global-norm clip", optim.SGD, {"grad_clip": optim.ClipGradByGlobalNorm(1.0)}, NAN,
     "2.weight"),
    ("SGD, per-tensor clip", optim.SGD, {"grad_clip": optim.ClipGradByNorm(1.0)}, INF,
     "0.bias"),
    ("SGD, value clip", optim.SGD, {"grad_clip": optim.ClipGradByValue(0.1)}, NAN, "0.weight"),
    ("SGD, L2 decay", optim.SGD, {"weight_decay": optim.L2Decay(0.1)}, NAN, "0.weight"),
    ("Adam", optim.Adam, {}, NAN, "0.weight"),
    ("AdamW, clip", optim.AdamW, {"grad_clip": optim.ClipGradByGlobalNorm(1.0)}, INF, "2.bias"),
    ("RMSprop", optim.RMSprop, {}, NAN, "0.bias"),
    ("Adagrad", optim.Adagrad, {}, INF, "2.weight"),
]


@pytest.mark.parametrize("label, cls, options, value, name", NONFINITE,
                         ids=[case[0] for case in NONFINITE])
def test_a_nonfinite_gradient_stops_the_step_before_it_changes_anything(label, cls, options,
                                                                          value, name):
    net, opt = trained(cls, **options)
    opt.zero_grad()
    backward(net, seed=7)
    poison(net, value, name)
    error = refused(opt.step, NonFiniteGradientError, name, "NaN or Inf", "step 3",
                    state=[net, opt])
    assert error.names == [name] and error.step == 2 and isinstance(error, FloatingPointError)


def test_every_nonfinite_gradient_is_named_and_a_recorded_step_is_refused_too():
    net, opt = trained()
    opt.record_steps = True
    backward(net, seed=7)
    poison(net, NAN, "0.weight")
    poison(net, INF, "2.weight")
    error = refused(opt.step, NonFiniteGradientError, "'0.weight'", "'2.weight'",
                    state=[net, opt])
    assert error.names == ["0.weight", "2.weight"]


def test_skip_changes_nothing_and_counts_the_step():
    """AMP's behaviour: the step is left out, and the optimizer says so."""
    net, opt = trained(grad_clip=optim.ClipGradByGlobalNorm(1.0), nonfinite="skip")
    opt.zero_grad()
    backward(net, seed=7)
    poison(net, NAN)
    from bad_input import snapshot
    before = snapshot([net, opt.state, opt.param_groups])
    opt.step()
    assert snapshot([net, opt.state, opt.param_groups]) == before
    assert opt.skipped_steps == 1 and opt.step_count == 2
    assert opt.state_dict()["skipped_steps"] == 1


def test_apply_is_pytorch_and_global_clipping_spreads_the_nan():
    """PyTorch's plain step: the NaN reaches the parameter, and a global-norm clip, whose
    norm is NaN, scales every gradient to NaN."""
    net, opt = trained(grad_clip=optim.ClipGradByGlobalNorm(1.0), nonfinite="apply")
    opt.zero_grad()
    backward(net, seed=7)
    poison(net, NAN)
    with np.errstate(invalid="ignore"):
        opt.step()
    assert all(np.isnan(p.numpy()).all() for p in net.parameters())


def test_huge_finite_gradients_are_not_mistaken_for_nonfinite_ones():
    """1e30 squared overflows float32, so the sum of squares is inf; the values are finite."""
    net, opt = trained(optim.SGD, lr=0.0)
    opt.zero_grad()
    backward(net, seed=7)
    poison(net, 1e30)
    opt.step()                                   # lr 0: nothing moves, and nothing is refused
    assert opt.step_count == 3


def test_a_refused_step_leaves_the_hand_checked_update_to_the_next_one():
    """After a refused step, fixing the gradient gives exactly SGD's update, by hand."""
    dt.manual_seed(0)
    w = nn.Parameter([1.0, -2.0])
    opt = optim.SGD([("w", w)], lr=0.5)
    w.grad = dt.tensor([NAN, 1.0])
    refused(opt.step, NonFiniteGradientError, "'w'", state=[w, opt])
    w.grad = dt.tensor([0.25, 1.0])
    opt.step()
    np.testing.assert_array_equal(w.numpy(), np.array([1.0 - 0.5 * 0.25, -2.0 - 0.5 * 1.0],
                                                      dtype=np.float32))


def _stepped(make_optimizer):
    """A small net and an optimizer that has taken one step (so its state holds arrays)."""
    net = dt.nn.Linear(3, 2)
    opt = make_optimizer(net.named_parameters())
    net(dt.ones(4, 3)).sum().backward()
    opt.step()
    return net, opt


# (label, optimizer, the state entry to drop or replace, replacement or None to drop it, names)
STATE_ENTRIES = [
    ("Adam without exp_avg_sq", lambda ps: optim.Adam(ps), "exp_avg_sq", None,
     ["'exp_avg' but not 'exp_avg_sq'", "'weight'"]),
    ("AMSGrad without max_exp_avg_sq", lambda ps: optim.Adam(ps, amsgrad=True), "max_exp_avg_sq",
     None, ["not 'max_exp_avg_sq'", "'weight'"]),
    ("RMSprop centered without grad_avg", lambda ps: optim.RMSprop(ps, centered=True),
     "grad_avg", None, ["not 'grad_avg'"]),
    ("Adam exp_avg as a list", lambda ps: optim.Adam(ps), "exp_avg", [[0.0] * 3] * 2,
     ["'exp_avg'", "is a list", "(2, 3)"]),
    ("SGD momentum_buffer as a string", lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
     "momentum_buffer", "zeros", ["'momentum_buffer'", "is a str"]),
    ("Adam exp_avg of shape ()", lambda ps: optim.Adam(ps), "exp_avg", np.float32(0.0),
     ["'exp_avg'", "'weight'", "shape ()", "(2, 3)"]),
    ("Adam exp_avg NaN", lambda ps: optim.Adam(ps), "exp_avg", np.full((2, 3), NAN, np.float32),
     ["'exp_avg'", "'weight'", "NaN or Inf"]),
    ("Adam exp_avg_sq inf", lambda ps: optim.Adam(ps), "exp_avg_sq",
     np.full((2, 3), INF, np.float32), ["'exp_avg_sq'", "NaN or Inf"]),
    ("RMSprop square_avg a plain number", lambda ps: optim.RMSprop(ps), "square_avg", 1.0,
     ["'square_avg'", "is a float"]),
]


@pytest.mark.parametrize("label, make, entry, replacement, names", STATE_ENTRIES,
                         ids=[case[0] for case in STATE_ENTRIES])
def test_a_saved_state_missing_or_mistyping_an_array_is_refused_at_load(
        label, make, entry, replacement, names):
    """Accepted before, it made the next step() stop with a bare KeyError: 'exp_avg_sq' (or a
    TypeError on the list). Now the load names the parameter and the entry and changes nothing."""
    net, opt = _stepped(make)
    saved = copy.deepcopy(opt.state_dict())
    first = saved["param_groups"][0]["params"][0]
    if replacement is None:
        del saved["state"][first][entry]
    else:
        saved["state"][first][entry] = replacement
    refused(lambda: opt.load_state_dict(saved), OptimizerStateError, "nothing was changed",
            *names, state=[net, opt])
    opt.step()                      # and the optimizer still steps with the state it had


ADAM_GROUPS = [
    ("amsgrad 'no'", {"amsgrad": "no"}, ["group 0", "amsgrad", "'no'"]),
    ("maximize 'no'", {"maximize": "no"}, ["group 0", "maximize", "'no'"]),
    ("eps 0", {"eps": 0.0}, ["group 0", "eps", "0/0"]),
    ("betas a number", {"betas": 0.9}, ["group 0", "betas", "pair"]),
]


@pytest.mark.parametrize("label, values, names", ADAM_GROUPS, ids=[c[0] for c in ADAM_GROUPS])
def test_a_saved_adam_group_meets_the_constructors_check(label, values, names):
    """Accepted before: amsgrad "no" stopped the next step on a KeyError, maximize "no"
    (a true string) made training climb the loss."""
    net, opt = _stepped(lambda ps: optim.Adam(ps))
    saved = copy.deepcopy(opt.state_dict())
    saved["param_groups"][0].update(values)
    refused(lambda: opt.load_state_dict(saved), OptimizerStateError, "nothing was changed",
            *names, state=[net, opt])


def test_a_state_with_only_a_step_count_still_loads():
    """A parameter's state holding none of the arrays (just ``step``) loads: the rule starts
    them at the next step, as PyTorch's does."""
    net, opt = _stepped(lambda ps: optim.Adam(ps))
    saved = copy.deepcopy(opt.state_dict())
    first = saved["param_groups"][0]["params"][0]
    saved["state"][first] = {"step": 1}
    opt.load_state_dict(saved)
    opt.step()
    assert set(opt.state_dict()["state"][first]) >= {"step", "exp_avg", "exp_avg_sq"}


def _two_group_sgd():
    a, b = nn.Parameter([1.0]), nn.Parameter([2.0])
    return optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.03}], lr=0.1, momentum=0.9)


# (label, build(opt, inner schedulers), the words the error must name): the inner schedulers
# are made first, so the snapshot covers them too; the refused constructor changes nothing.
NEW_SCHEDULERS = [
    ("SequentialLR milestones repeat", lambda o, inner: lr_scheduler.SequentialLR(
        o, inner, milestones=[3, 3]), ["SequentialLR", "milestones"]),
    ("SequentialLR one milestone short", lambda o, inner: lr_scheduler.SequentialLR(
        o, inner + [lr_scheduler.StepLR(o, 2)], milestones=[3]), ["SequentialLR", "milestones"]),
    ("ChainedScheduler with a string", lambda o, inner: lr_scheduler.ChainedScheduler(
        inner + ["cosine"]), ["ChainedScheduler", "schedulers[3]"]),
    ("ReduceLROnPlateau factor 1", lambda o, inner: lr_scheduler.ReduceLROnPlateau(
        o, factor=1.0), ["ReduceLROnPlateau", "factor"]),
    ("ReduceLROnPlateau min_lr list too short", lambda o, inner: lr_scheduler.ReduceLROnPlateau(
        o, min_lr=[0.0]), ["ReduceLROnPlateau", "min_lr"]),
    ("OneCycleLR without total_steps", lambda o, inner: lr_scheduler.OneCycleLR(
        o, max_lr=0.5), ["OneCycleLR", "total_steps"]),
    ("OneCycleLR max_momentum 1.5", lambda o, inner: lr_scheduler.OneCycleLR(
        o, 0.5, total_steps=10, max_momentum=1.5), ["OneCycleLR", "max_momentum"]),
]


@pytest.mark.parametrize("label, build, names", NEW_SCHEDULERS,
                         ids=[case[0] for case in NEW_SCHEDULERS])
def test_a_refused_new_scheduler_changes_neither_the_optimizer_nor_its_schedulers(
        label, build, names):
    opt = _two_group_sgd()
    inner = [lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=3),
             lr_scheduler.StepLR(opt, step_size=2), lr_scheduler.ExponentialLR(opt, 0.9)]
    refused(lambda: build(opt, inner), (TypeError, ValueError), *names, state=[opt, *inner])
