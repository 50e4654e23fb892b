"""Bad input to optimizers, clipping, regularizers and schedulers: refused, named, nothing changed.

Each case goes through ``refused`` (tests/bad_input.py): the exception type, the words the
message must hold, and the state (model with gradients, optimizer with momentum, scheduler) that
must be bit for bit what it was.
"""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dltutor as dt
from dltutor import nn, optim
from dltutor.optim import NonFiniteGradientError, OptimizerStateError, lr_scheduler
from dltutor.optim.lr_scheduler import (CosineAnnealingLR, ExponentialLR, LambdaLR, LinearLR,
                                        StepLR)

from bad_input import refused

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
def test_an_lr_set_by_hand_is_checked_before_the_step(lr):
    """``param_groups[0]["lr"] = ...`` skips the constructor's checks; step() catches it."""
    net, opt = trained()
    backward(net, seed=5)
    opt.param_groups[0]["lr"] = lr
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
