"""Chapter 03's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them
against dltutor/exercises/ch03.py)."""
from __future__ import annotations

import math

from dltutor import nn
from dltutor.nn import init


def identity(m):
    if isinstance(m, nn.Linear):
        init.eye_(m.weight)
        init.zeros_(m.bias)


def identity_weight_only(m):
    if isinstance(m, nn.Linear):
        init.eye_(m.weight)


def identity_of_every_module(m):
    """Forgets that apply also visits the ReLU and the Sequential."""
    init.eye_(m.weight)
    init.zeros_(m.bias)


CASES = {
    "03.1": ({"conv_bound": 1 / math.sqrt(75)},
             [({"conv_bound": 1 / math.sqrt(3)}, ["in_channels x kh x kw"]),
              ({"conv_bound": 1 / math.sqrt(400)}, ["fan_out"])]),
    "03.2": ({"identity_init": identity},
             [({"identity_init": identity_weight_only}, ["bias"]),
              ({"identity_init": identity_of_every_module}, ["raised AttributeError"]),
              ({"identity_init": "eye"}, ["function"])]),
    "03.3": ({"tanh_gain": 5 / 3},
             [({"tanh_gain": math.sqrt(2)}, ["ReLU"]), ({"tanh_gain": 1}, ["above 1"])]),
}

SELF_CONTAINED: set[str] = set()
