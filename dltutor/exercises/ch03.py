"""The exercises of chapter 03 (initialization).

>>> Q1.verdict({"conv_bound": 1 / 3 ** 0.5}).message
'Exercise 03.1: not yet. Each output of a conv kernel sums over in_channels x kh x kw inputs, not only the 3 channels: that product is its fan_in.'
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import nn
from ..autograd import randn
from ..i18n import text
from .answers import called, same_number
from .checker import CheckResult, Exercise


def _conv_bound(conv_bound: Any) -> CheckResult:
    if same_number(conv_bound, 1 / math.sqrt(3 * 5 * 5)):
        return None
    if same_number(conv_bound, 1 / math.sqrt(3)):
        return text("ch03.each_output_conv_kernel")
    if same_number(conv_bound, 1 / math.sqrt(16 * 25)):
        return text("ch03.uses_fan_out_x")
    return text("ch03.default_bound_sqrt_fan")


Q1 = Exercise(
    "03.1", names=("conv_bound",),
    title="ch03.q1.title",
    expects="ch03.q1.expects",
    check=_conv_bound,
    hints=("ch03.q1.hint1", "ch03.q1.hint2"),
    solution=("conv = nn.Conv2d(3, 16, kernel_size=5)\n"
              "conv_bound = 1 / math.sqrt(3 * 5 * 5)\n"
              "assert np.abs(conv.weight.numpy()).max() <= conv_bound"))


def _identity_init(identity_init: Any) -> CheckResult:
    if not callable(identity_init):
        return text("ch03.identity_init_function_module")
    for width in (5, 3, 8):                  # fresh widths, and a network it is applied to
        net = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width))
        _, failure = called("net.apply(identity_init)", net.apply, identity_init)
        if failure:
            return failure
        x = randn(3, width).abs()            # ReLU passes non-negative inputs unchanged
        if np.allclose(net(x).numpy(), x.numpy(), atol=1e-6):
            continue
        if np.allclose(net[0].weight.numpy(), np.eye(width)):
            return text("ch03.weight_identity_but_bias")
        return text("ch03.after_identity_init_layer")
    return None


Q2 = Exercise(
    "03.2", names=("identity_init",),
    title="ch03.q2.title",
    expects="ch03.q2.expects",
    check=_identity_init,
    hints=("ch03.q2.hint1", "ch03.q2.hint2"),
    solution=("def identity_init(m):\n"
              "    if isinstance(m, nn.Linear):\n"
              "        init.eye_(m.weight)\n"
              "        init.zeros_(m.bias)"))


def _tanh_gain(tanh_gain: Any) -> CheckResult:
    if same_number(tanh_gain, 5 / 3):
        return None, text("ch03.calculate_gain_tanh_tanh")
    if same_number(tanh_gain, math.sqrt(2)):
        return text("ch03.sqrt_relu_gain_relu")
    if same_number(tanh_gain, 1.0):
        return text("ch03.tanh_slope_only_smaller")
    return text("ch03.ask_init_calculate_gain")


Q3 = Exercise(
    "03.3", names=("tanh_gain",),
    title="ch03.q3.title",
    expects="ch03.q3.expects",
    check=_tanh_gain,
    hints=("ch03.q3.hint1",),
    solution="tanh_gain = init.calculate_gain('tanh')        # 5/3")


EXERCISES = [Q1, Q2, Q3]
