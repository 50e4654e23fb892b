"""Chapter 01's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them)."""
from __future__ import annotations

import numpy as np

import dltutor as dt


def input_gradient(f, x):
    t = dt.tensor(x, requires_grad=True)
    f(t).backward()
    return t.grad.numpy()


def gradient_of_a_plain_tensor(f, x):
    t = dt.tensor(x)
    f(t).backward()
    return t.grad.numpy()


def value_instead_of_gradient(f, x):
    return np.full(np.shape(x), f(dt.tensor(x)).item())


def twice_x(f, x):
    """Right for the sum of squares only."""
    return 2 * x


CASES = {
    "01.1": ({"t": dt.tensor(np.arange(6).reshape(2, 3), dtype=dt.float32, requires_grad=True)},
             [({"t": dt.tensor(np.arange(6).reshape(2, 3))}, ["int64", "floating"]),
              ({"t": dt.tensor(np.arange(6).reshape(2, 3), dtype=dt.float32)}, ["requires_grad"]),
              ({"t": np.arange(6).reshape(2, 3)}, ["dt.tensor"])]),
    "01.2": ({"predicted_grad": np.full((3, 1), 4.0)},
             [({"predicted_grad": np.ones((3, 1))}, ["add up"]),
              ({"predicted_grad": np.full((3, 4), 4.0)}, ["shape", "(3, 1)"])]),
    "01.3": ({"mul_shape": (2, 1, 6)},
             [({"mul_shape": (2, 6)}, ["(2, 1)"]), ({"mul_shape": [2, 3, 6]}, ["rows"]),
              ({"mul_shape": "(2, 1, 6)"}, ["tuple of whole numbers"])]),
    "01.4": ({"with_grad": ["stage2.weight", "stage2.bias", "stage3.weight", "stage3.bias"]},
             [({"with_grad": {"stage3.weight", "stage3.bias"}}, ["stage2", "downstream"]),
              ({"with_grad": {"stage1.weight", "stage2.weight", "stage2.bias", "stage3.weight",
                              "stage3.bias"}}, ["stage1", "upstream"]),
              ({"with_grad": {"fc.weight"}}, ["'fc.weight'"])]),
    "01.5": ({"second_backward_error": RuntimeError},
             [({"second_backward_error": ValueError}, ["'ValueError'", "read"])]),
    "01.6": ({"input_gradient": input_gradient},
             [({"input_gradient": gradient_of_a_plain_tensor}, ["raised RuntimeError",
                                                                "requires_grad"]),
              ({"input_gradient": value_instead_of_gradient}, ["value of f(x)"]),
              ({"input_gradient": twice_x}, ["mean of cubes"]),
              ({"input_gradient": "backward"}, ["function"])]),
}

SELF_CONTAINED = {"01.1", "01.2", "01.5", "01.6"}
