"""Chapter 10's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them
against dltutor/exercises/ch10.py)."""
from __future__ import annotations

import numpy as np

from dltutor import Tensor


def good_noise(i, epoch):
    return np.random.default_rng([i, epoch]).normal(0.0, 0.01, size=3)


def global_noise(i, epoch):
    return np.random.normal(0.0, 0.01, size=3)


def index_only_noise(i, epoch):
    return np.random.default_rng(i).normal(0.0, 0.01, size=3)


CASES = {
    "10.1": ({"sgd_state_keys": ["momentum_buffer", "step"]},
             [({"sgd_state_keys": ["exp_avg", "exp_avg_sq", "step"]}, ["Adam"]),
              ({"sgd_state_keys": ["momentum_buffer"]}, ["step count"])]),
    "10.2": ({"batches": (4, 3)},
             [({"batches": (3, 3)}, ["100 = 3 x 32 + 4"]), ({"batches": [4, 4]}, ["drops"]),
              ({"batches": (4.9, 3.2)}, ["whole numbers"])]),     # int() would make it (4, 3)
    "10.3": ({"noise": good_noise},
             [({"noise": global_noise}, ["shared generator"]),
              ({"noise": index_only_noise}, ["epoch"]),
              ({"noise": lambda i, e: np.zeros(3) + i + 1000 * e}, ["small"]),
              ({"noise": lambda i, e: np.full(3, 1e-3 * i + 1e-2 * e)}, ["index"])]),
    "10.4": ({"loaded_types": (int, float, Tensor)},
             [({"loaded_types": (Tensor, float, Tensor)}, ["JSON"]),
              ({"loaded_types": (int, float, np.ndarray)}, ["array"]),
              ({"loaded_types": (int, int, Tensor)}, ["loaded_types ="]),
              ({"loaded_types": int}, ["three types"])]),
}

SELF_CONTAINED = {"10.1", "10.2", "10.3", "10.4"}
