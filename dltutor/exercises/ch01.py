"""The exercises of chapter 01 (tensors and autograd).

Each check reads the learner's variables and says, when the answer is not right yet, what is
different in a way that points at the idea (not at the expected value).

>>> import numpy as np
>>> Q2.verdict({"predicted_grad": np.full((3, 4), 4.0)}).message
'Exercise 01.2: not yet. Right values, wrong shape: a gradient has the shape of its tensor, (3, 1), not (3, 4).'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd import Tensor, tanh
from ..i18n import sentence
from .answers import called, type_name, whole_numbers
from .checker import CheckResult, Exercise


def _trainable_arange(t: Any) -> CheckResult:
    if not isinstance(t, Tensor):
        return sentence("t is of type {kind}; make it with dt.tensor(...)",
                        kind=type(t).__name__)
    if tuple(t.shape) != (2, 3) or not np.array_equal(t.numpy(), np.arange(6).reshape(2, 3)):
        return sentence("t should hold np.arange(6).reshape(2, 3); it has shape {shape}",
                        shape=tuple(t.shape))
    if t.dtype.kind != "f":
        return sentence("t has dtype {dtype}: integers cannot require gradients (a gradient is "
                        "a small real change); ask for a floating-point dtype when you make it",
                        dtype=t.dtype)
    if not t.requires_grad:
        return "t.requires_grad is False: pass requires_grad=True (or call t.requires_grad_())"
    return None


Q1 = Exercise(
    "01.1", names=("t",),
    title="A tensor that can require gradients",
    expects="a tensor made with dt.tensor",
    check=_trainable_arange,
    hints=("Try dt.tensor(np.arange(6).reshape(2, 3), requires_grad=True) and read the error.",
           "np.arange gives integers (int64); dt.tensor keeps an array's dtype unless you pass "
           "dtype=..."),
    solution="t = dt.tensor(np.arange(6).reshape(2, 3), dtype=dt.float32, requires_grad=True)")


def _expand_gradient(predicted_grad: Any) -> CheckResult:
    got = np.asarray(predicted_grad, dtype=float)
    if got.shape == (3, 1) and np.allclose(got, 4.0):
        return None
    if got.size and np.allclose(got, 4.0):
        return sentence("Right values, wrong shape: a gradient has the shape of its tensor, "
                        "(3, 1), not {shape}.", shape=got.shape)
    if got.size and np.allclose(got, 1.0):
        return ("Each entry of col is used in 4 places of the (3, 4) tensor, and the gradients "
                "of those uses add up.")
    return "Think of how many times each entry of col is used in the sum."


Q2 = Exercise(
    "01.2", names=("predicted_grad",),
    title="The gradient of an expanded tensor",
    expects="the gradient's numbers, as a list or an array",
    check=_expand_gradient,
    hints=("col.expand(3, 4) repeats each row's single value 4 times without copying.",
           "sum() gives each element of the expanded tensor gradient 1; backward adds the "
           "gradients of all copies of one entry.",
           "The gradient goes back to col itself, so it has col's shape."),
    solution=("predicted_grad = np.full((3, 1), 4.0)\n"
              "# check it:\n"
              "col = dt.ones(3, 1, requires_grad=True)\n"
              "col.expand(3, 4).sum().backward()\n"
              "print(col.grad)"))


def _mul_shape(mul_shape: Any) -> CheckResult:
    got = whole_numbers(mul_shape)
    if got is None:
        return "Give the shape as a tuple of whole numbers, like (2, 3)."
    if got == (2, 1, 6):
        return None
    if got == (2, 6):
        return ("The first two axes of a2 are the rows, and the result keeps them as they "
                "were: (2, 1), not 2.")
    if got in ((12, 6), (2, 6, 1), (6,)):
        return "That is not what comes back after mul reshapes the 2-D product."
    return sentence("{got!r}: with x_num_col_dims=2 the rows are a2's first 2 axes (2, 1), "
                    "flattened to 2 for the product and restored afterwards.", got=got)


Q3 = Exercise(
    "01.3", names=("mul_shape",),
    title="The output shape of mul",
    expects="a shape: a tuple of whole numbers",
    check=_mul_shape,
    hints=("x_num_col_dims=2 splits a2's shape (2, 1, 3, 4) into rows (2, 1) and columns "
           "(3, 4).",
           "The 2-D product is (2, 12) @ (12, 6); mul then gives the rows their own axes back."),
    solution=("mul_shape = tuple(mul(a2, dt.randn(12, 6), x_num_col_dims=2).shape)   # (2, 1, 6)"))

_ALL_PARAMS = {f"stage{i}.{p}" for i in (1, 2, 3) for p in ("weight", "bias")}


def _detach_at_stage1(with_grad: Any) -> CheckResult:
    got = set(with_grad)
    want = {name for name in _ALL_PARAMS if not name.startswith("stage1")}
    if got == want:
        return None
    unknown = got - _ALL_PARAMS
    if unknown:
        return sentence("no parameter is called {name!r}; use names like 'stage2.weight'",
                        name=sorted(unknown)[0])
    if any(name.startswith("stage1") for name in got):
        return "stage1 is upstream of the cut: backward never reaches its parameters."
    return "stage2 is now downstream of the cut, between it and the loss: it gets a gradient."


Q4 = Exercise(
    "01.4", names=("with_grad",),
    title="Which parameters a detach cuts off",
    expects="a set or list of parameter names",
    check=_detach_at_stage1,
    hints=("Backward walks from the loss towards the inputs and stops at the detached tensor.",
           "After moving the cut, stage2 and stage3 lie between the cut and the loss."),
    solution=("# in forward(): h = stage2(stage1(x).relu().detach()).relu()\n"
              "with_grad = {'stage2.weight', 'stage2.bias', 'stage3.weight', 'stage3.bias'}"))


def _backward_twice(retain: bool) -> tuple[BaseException | None, np.ndarray]:
    """The exercise's own run: what a second ``backward()`` on ``(x ** 2).sum()`` raises (None
    when the first kept the graph), and ``x.grad`` afterwards."""
    x = Tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    loss = (x ** 2).sum()
    loss.backward(retain_graph=retain)
    error = None
    try:
        loss.backward()
    except RuntimeError as err:
        error = err
    grad: Any = x.grad                # (a Tensor: the first backward gave x its gradient)
    return error, grad.numpy()


def _second_backward(second_backward_error: Any, grad_after_two: Any) -> CheckResult:
    caught = second_backward_error
    if isinstance(caught, (type, str)):
        return sentence("{name!r} names a kind of error: store the error object itself, "
                        "caught with except Exception as err: second_backward_error = err",
                        name=type_name(caught))
    want, _ = _backward_twice(retain=False)
    if not isinstance(caught, BaseException):
        return ("second_backward_error should be the error object that the second backward() "
                "threw, caught with except Exception as err.")
    if type(caught) is not type(want):
        return sentence("A {name} is not what a second backward() raises here: catch the error "
                        "that loss.backward() raises when you call it again.",
                        name=type(caught).__name__)
    if str(caught).split(":")[0] != str(want).split(":")[0]:
        return ("Right kind of error, other message: catch the error that loss.backward() "
                "itself raises when you call it again.")
    got = np.asarray(grad_after_two.numpy() if isinstance(grad_after_two, Tensor)
                     else grad_after_two, dtype=float)
    _, twice = _backward_twice(retain=True)
    if got.shape == twice.shape and np.allclose(got, twice):
        return None, ("The first backward kept the graph, so the second could walk it again, "
                      "and its gradient was added to the first: twice 2x.")
    if got.shape == twice.shape and np.allclose(got, twice / 2):
        return ("That is the gradient of one backward; after two, x.grad holds both added up "
                "(call backward(retain_graph=True) first, then backward()).")
    if got.shape == twice.shape and np.allclose(got, twice * 1.5):
        return ("x.grad still held the gradient of the first try: make x and loss again before "
                "the two backward calls.")
    return ("grad_after_two should be x.grad after loss.backward(retain_graph=True) and then "
            "loss.backward(), for a fresh x = dt.tensor([1.0, 2.0, 3.0], requires_grad=True).")


Q5 = Exercise(
    "01.5", names=("second_backward_error", "grad_after_two"),
    title="Calling backward twice",
    expects="the error object caught, and x.grad's numbers",
    check=_second_backward,
    hints=("try:\n"
           "    loss.backward()                  # the second call\n"
           "except Exception as err:\n"
           "    second_backward_error = err\n"
           "print(second_backward_error)         # it says what to do",
           "Backward frees the graph it walked, to save memory; retain_graph=True keeps it, and "
           "gradients add up across backward() calls."),
    solution=("x = dt.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
              "loss = (x ** 2).sum()\n"
              "loss.backward()\n"
              "try:\n"
              "    loss.backward()\n"
              "except Exception as err:\n"
              "    second_backward_error = err          # a RuntimeError\n"
              "x = dt.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
              "loss = (x ** 2).sum()\n"
              "loss.backward(retain_graph=True)        # keeps the graph for one more backward\n"
              "loss.backward()\n"
              "grad_after_two = x.grad.numpy()         # [4, 8, 12]: two gradients of 2x added"))


# Fresh functions for 01.6: (what it computes, the function on a Tensor, its gradient in NumPy).
_GRADIENT_CASES = (
    ("the sum of squares", lambda x: (x * x).sum(), lambda a: 2 * a),
    ("the mean of cubes", lambda x: (x * x * x).mean(), lambda a: 3 * a ** 2 / a.size),
    ("the sum of tanh", lambda x: tanh(x).sum(), lambda a: 1 - np.tanh(a) ** 2),
)


def _input_gradient(input_gradient: Any) -> CheckResult:
    if not callable(input_gradient):
        return "input_gradient should be a function of (f, x)."
    rng = np.random.default_rng(16)
    for (what, f, derivative), shape in zip(_GRADIENT_CASES, ((3,), (2, 4), (5, 1))):
        x = rng.normal(size=shape)
        answer, failure = called("input_gradient", input_gradient, f, x.copy())
        if failure:
            return failure
        grad = answer.numpy() if isinstance(answer, Tensor) else answer
        grad = np.asarray(grad, dtype=float) if grad is not None else None
        if grad is None or grad.shape != x.shape:
            return sentence("For {what} of an array shaped {shape}, the gradient should have "
                            "that shape too; got {got!r}.", what=sentence(what), shape=shape,
                            got=None if grad is None else grad.shape)
        if not np.allclose(grad, derivative(x), rtol=1e-6, atol=1e-9):
            if np.allclose(grad, float(f(Tensor(x)).item())):
                return "That is the value of f(x); the gradient comes from backward()."
            return sentence("For {what} the gradient is not right: make x a tensor that requires "
                            "grad, call f on it, then backward().", what=sentence(what))
    return None


Q6 = Exercise(
    "01.6", names=("input_gradient",),
    title="Write input_gradient",
    expects="a function of (f, x) returning an array",
    check=_input_gradient,
    hints=("dt.tensor(x, requires_grad=True) makes a leaf whose .grad backward() fills.",
           "t = dt.tensor(x, requires_grad=True); f(t).backward(); return t.grad.numpy()"),
    solution=("def input_gradient(f, x):\n"
              "    t = dt.tensor(x, requires_grad=True)\n"
              "    f(t).backward()\n"
              "    return t.grad.numpy()"))

EXERCISES = [Q1, Q2, Q3, Q4, Q5, Q6]
