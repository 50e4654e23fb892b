"""Chapter 01's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them
against dltutor/exercises/ch01.py)."""
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


def second_backward():
    """The error a second backward() raises, caught as the exercise asks."""
    x = dt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (x ** 2).sum()
    loss.backward()
    try:
        loss.backward()
    except RuntimeError as err:
        return err
    raise AssertionError("a second backward() without retain_graph=True should raise")


SECOND_BACKWARD_ERROR = second_backward()
TWICE = np.array([4.0, 8.0, 12.0])         # two backward passes of (x ** 2).sum(): 2 * 2x

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
    "01.5": ({"second_backward_error": SECOND_BACKWARD_ERROR, "grad_after_two": TWICE},
             [({"second_backward_error": RuntimeError, "grad_after_two": TWICE},
               ["'RuntimeError'", "error object itself"]),
              ({"second_backward_error": "RuntimeError", "grad_after_two": TWICE},
               ["'RuntimeError'", "error object itself"]),
              ({"second_backward_error": ValueError("graph freed"), "grad_after_two": TWICE},
               ["ValueError", "catch"]),
              ({"second_backward_error": RuntimeError("guessed"), "grad_after_two": TWICE},
               ["other message"]),
              ({"second_backward_error": SECOND_BACKWARD_ERROR, "grad_after_two": TWICE / 2},
               ["one backward", "added up"]),
              ({"second_backward_error": SECOND_BACKWARD_ERROR, "grad_after_two": TWICE * 1.5},
               ["make x and loss again"]),
              ({"second_backward_error": SECOND_BACKWARD_ERROR, "grad_after_two": "x.grad"},
               ["x.grad's numbers"])]),
    "01.6": ({"input_gradient": input_gradient},
             [({"input_gradient": gradient_of_a_plain_tensor}, ["raised RuntimeError",
                                                                "requires_grad"]),
              ({"input_gradient": value_instead_of_gradient}, ["value of f(x)"]),
              ({"input_gradient": twice_x}, ["mean of cubes"]),
              ({"input_gradient": "backward"}, ["function"])]),
}

SELF_CONTAINED = {"01.1", "01.2", "01.5", "01.6"}
