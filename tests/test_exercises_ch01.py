"""Chapter 01's exercises answer back (the checks are in ``tests/exercise_checks.py``)."""
from __future__ import annotations

import numpy as np

import dltutor as dt
from exercise_checks import chapter_tests

CASES = {
    "01.1": ({"t": dt.tensor(np.arange(6).reshape(2, 3), dtype=dt.float32, requires_grad=True)},
             [({"t": dt.tensor(np.arange(6).reshape(2, 3))}, ["int64", "floating"]),
              ({"t": dt.tensor(np.arange(6).reshape(2, 3), dtype=dt.float32)}, ["requires_grad"]),
              ({"t": np.arange(6).reshape(2, 3)}, ["dt.tensor"])]),
    "01.2": ({"predicted_grad": np.full((3, 1), 4.0)},
             [({"predicted_grad": np.ones((3, 1))}, ["add up"]),
              ({"predicted_grad": np.full((3, 4), 4.0)}, ["shape", "(3, 1)"])]),
    "01.3": ({"mul_shape": (2, 1, 6)},
             [({"mul_shape": (2, 6)}, ["(2, 1)"]), ({"mul_shape": [2, 3, 6]}, ["rows"])]),
    "01.4": ({"with_grad": ["stage2.weight", "stage2.bias", "stage3.weight", "stage3.bias"]},
             [({"with_grad": {"stage3.weight", "stage3.bias"}}, ["stage2", "downstream"]),
              ({"with_grad": {"stage1.weight", "stage2.weight", "stage2.bias", "stage3.weight",
                              "stage3.bias"}}, ["stage1", "upstream"]),
              ({"with_grad": {"fc.weight"}}, ["'fc.weight'"])]),
    "01.5": ({"second_backward_error": RuntimeError},
             [({"second_backward_error": ValueError}, ["'ValueError'", "read"])]),
}

SELF_CONTAINED = {"01.1", "01.2", "01.5"}

globals().update(chapter_tests("01", CASES, SELF_CONTAINED))
