"""dltutor.checks, and the hyperparameter checks of the optimizers, clips, regularizers and the
lab that use it: bad values raise an error that names the owner, the argument and the value."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dltutor import checks, nn, optim
from dltutor.optim import lr_scheduler as L

BAD_NUMBERS = [float("nan"), float("inf"), -float("inf"), True, "1", None, [1.0]]


@pytest.mark.parametrize("check", [checks.number, checks.non_negative, checks.positive,
                                   checks.probability])
@pytest.mark.parametrize("bad", BAD_NUMBERS)
def test_every_number_check_refuses_non_finite_values_and_non_numbers(check, bad):
    with pytest.raises(ValueError, match=r"^Owner: arg must be .*, got "):
        check("Owner", "arg", bad)


@pytest.mark.parametrize("check, good, bad", [
    (checks.number, -2.5, None),
    (checks.non_negative, 0, -1e-9),
    (checks.positive, 1e-12, 0.0),
    (checks.probability, 0.0, 1.0),
])
def test_each_check_returns_a_good_value_unchanged_and_refuses_the_edge(check, good, bad):
    assert check("Owner", "arg", good) is good
    with pytest.raises(ValueError, match=f"got {bad!r}"):
        check("Owner", "arg", bad)


def test_numpy_scalars_are_numbers():
    assert checks.non_negative("SGD", "lr", np.float32(0.5)) == np.float32(0.5)


def test_an_infinity_is_said_to_need_to_be_finite_and_nan_is_not_a_number():
    with pytest.raises(ValueError, match=r"^SGD: lr must be a finite number >= 0, got inf$"):
        checks.non_negative("SGD", "lr", math.inf)
    with pytest.raises(ValueError, match=r"^SGD: lr must be a number >= 0, got nan$"):
        checks.non_negative("SGD", "lr", math.nan)


def test_an_empty_owner_leaves_the_prefix_out_and_a_hint_follows_the_value():
    with pytest.raises(ValueError, match=r"^clip threshold must be a number > 0, got 0 \(why\)$"):
        checks.positive("", "clip threshold", 0, hint="why")


def test_between_writes_its_interval_with_open_and_closed_ends():
    with pytest.raises(ValueError, match=r"in \(0, 1\], got 0"):
        checks.between("LinearLR", "start_factor", 0, 0, 1, low_open=True)
    assert checks.between("LinearLR", "start_factor", 1, 0, 1, low_open=True) == 1


def test_a_caller_may_raise_its_own_subclass_of_value_error():
    class LabError(ValueError):
        pass

    with pytest.raises(LabError):
        checks.non_negative("", "learning rate", -1, error=LabError)


def test_integer_is_a_type_error_for_non_integers_and_a_value_error_below_the_minimum():
    assert checks.integer("StepLR", "step_size", np.int64(3), minimum=1) == 3
    for bad in (2.5, 2.0, "3", True, None):
        with pytest.raises(TypeError, match="StepLR: step_size must be an integer, got"):
            checks.integer("StepLR", "step_size", bad)
    with pytest.raises(ValueError, match=r"step_size must be an integer >= 1, got 0"):
        checks.integer("StepLR", "step_size", 0, minimum=1)


# --- the users of the checks -------------------------------------------------------------------
def one_param():
    return [nn.Parameter([1.0])]


@pytest.mark.parametrize("make, message", [
    (lambda: optim.SGD(one_param(), lr=math.inf), "SGD: lr must be a finite number >= 0"),
    (lambda: optim.SGD(one_param(), lr=0.1, momentum=math.nan), "SGD: momentum must be"),
    (lambda: optim.SGD(one_param(), lr=0.1, weight_decay=-1),
     r"SGD: weight_decay must be a number >= 0, got -1 \(or an L1Decay/L2Decay\)"),
    (lambda: optim.Adam(one_param(), eps=math.inf), "Adam: eps must be a finite number"),
    (lambda: optim.Adam(one_param(), betas=(math.nan, 0.9)), r"Adam: betas\[0\] must be"),
    (lambda: optim.AdamW(one_param(), weight_decay=math.inf), "AdamW: weight_decay must be"),
    (lambda: optim.RMSprop(one_param(), alpha=1.5), r"RMSprop: alpha must be a number in \[0, 1\]"),
    (lambda: optim.Adagrad(one_param(), lr_decay=-0.1), "Adagrad: lr_decay must be"),
    (lambda: optim.L2Decay(math.inf), "L2Decay: coeff must be a finite number >= 0"),
    (lambda: optim.L1Decay(-1), "L1Decay: coeff must be a number >= 0, got -1"),
    (lambda: optim.ClipGradByGlobalNorm(math.inf), "ClipGradByGlobalNorm: clip_norm must be"),
    (lambda: optim.ClipGradByNorm(-1.0), "ClipGradByNorm: clip_norm must be a number > 0"),
    (lambda: optim.ClipGradByValue(0.0), "ClipGradByValue: max must be a number > 0, got 0.0"),
    (lambda: optim.ClipGradByValue(math.nan), "ClipGradByValue: max must be"),
    (lambda: optim.ClipGradByValue(1.0, min=1.0), "min must be less than max, got min=1, max=1"),
    (lambda: optim.ClipGradByValue(1.0, min=-math.inf), "ClipGradByValue: min must be a finite"),
    (lambda: optim.clip_grad_value_(one_param(), -1.0), "clip_grad_value_: clip_value must be"),
])
def test_optimizers_clips_and_regularizers_refuse_bad_hyperparameters(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("make, message", [
    (lambda o: L.StepLR(o, 2, gamma=math.nan), "StepLR: gamma must be a number >= 0, got nan"),
    (lambda o: L.MultiStepLR(o, [2], gamma=-0.5), "MultiStepLR: gamma must be"),
    (lambda o: L.ExponentialLR(o, gamma=math.inf), "ExponentialLR: gamma must be a finite"),
    (lambda o: L.CosineAnnealingLR(o, 10, eta_min=-1e-3), "CosineAnnealingLR: eta_min must be"),
    (lambda o: L.CosineAnnealingLR(o, T_max=math.inf), "T_max must be a finite number > 0"),
    (lambda o: L.LinearLR(o, end_factor=math.nan), "LinearLR: end_factor must be"),
])
def test_schedulers_refuse_bad_arguments(make, message):
    with pytest.raises(ValueError, match=message):
        make(optim.SGD(one_param(), lr=0.1))


def test_a_value_clip_range_may_sit_on_one_side_of_zero():
    clip = optim.ClipGradByValue(-1.0, min=-3.0)
    assert (clip.min, clip.max) == (-3.0, -1.0)
