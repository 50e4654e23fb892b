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
from .answers import called, same_number
from .checker import CheckResult, Exercise


def _conv_bound(conv_bound: Any) -> CheckResult:
    if same_number(conv_bound, 1 / math.sqrt(3 * 5 * 5)):
        return None
    if same_number(conv_bound, 1 / math.sqrt(3)):
        return ("Each output of a conv kernel sums over in_channels x kh x kw inputs, not only "
                "the 3 channels: that product is its fan_in.")
    if same_number(conv_bound, 1 / math.sqrt(16 * 25)):
        return "That uses fan_out (16 x 5 x 5); the default bound uses fan_in."
    return "The default bound is 1 / sqrt(fan_in); find fan_in from the weight's shape."


Q1 = Exercise(
    "03.1", names=("conv_bound",),
    title="The default bound of Conv2d weights",
    expects="a number",
    check=_conv_bound,
    hints=("nn.Conv2d(3, 16, kernel_size=5).weight has shape (16, 3, 5, 5).",
           "fan_in = shape[1] x shape[2] x shape[3]; compare with abs(weight).max()."),
    solution=("conv = nn.Conv2d(3, 16, kernel_size=5)\n"
              "conv_bound = 1 / math.sqrt(3 * 5 * 5)\n"
              "assert np.abs(conv.weight.numpy()).max() <= conv_bound"))


def _identity_init(identity_init: Any) -> CheckResult:
    if not callable(identity_init):
        return "identity_init should be a function of a module, like init_normal above."
    for width in (5, 3, 8):                  # fresh widths, and a network it is applied to
        net = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width))
        _, failure = called("net.apply(identity_init)", net.apply, identity_init)
        if failure:
            return failure
        x = randn(3, width).abs()            # ReLU passes non-negative inputs unchanged
        if np.allclose(net(x).numpy(), x.numpy(), atol=1e-6):
            continue
        if np.allclose(net[0].weight.numpy(), np.eye(width)):
            return "The weight is the identity, but the bias still adds its random start: zero it."
        return "After identity_init(layer), layer(x) should return x: weight = identity, bias = 0."
    return None


Q2 = Exercise(
    "03.2", names=("identity_init",),
    title="Write identity_init",
    expects="a function that takes a module",
    check=_identity_init,
    hints=("net.apply calls identity_init on the ReLU too: act only when isinstance(m, "
           "nn.Linear).",
           "def identity_init(m):\n"
           "    if isinstance(m, nn.Linear):    # net.apply calls it on ReLU too\n"
           "        init.eye_(m.weight)\n"
           "        init.zeros_(m.bias)"),
    solution=("def identity_init(m):\n"
              "    if isinstance(m, nn.Linear):\n"
              "        init.eye_(m.weight)\n"
              "        init.zeros_(m.bias)"))


def _tanh_gain(tanh_gain: Any) -> CheckResult:
    if same_number(tanh_gain, 5 / 3):
        return None, "calculate_gain('tanh') is 5/3: tanh shrinks what passes it, so start larger."
    if same_number(tanh_gain, math.sqrt(2)):
        return "sqrt(2) is ReLU's gain (ReLU zeroes half the signal); tanh has its own."
    if same_number(tanh_gain, 1.0):
        return ("tanh's slope is 1 only at 0 and smaller elsewhere, so it shrinks the signal: "
                "its gain is above 1.")
    return "Ask init.calculate_gain for 'tanh'."


Q3 = Exercise(
    "03.3", names=("tanh_gain",),
    title="Xavier's gain for tanh",
    expects="a number",
    check=_tanh_gain,
    hints=("The gain makes up for how much the activation shrinks the signal.",),
    solution="tanh_gain = init.calculate_gain('tanh')        # 5/3")


EXERCISES = [Q1, Q2, Q3]
