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
from ..i18n import text
from .answers import called, type_name, whole_numbers
from .checker import CheckResult, Exercise


def _trainable_arange(t: Any) -> CheckResult:
    if not isinstance(t, Tensor):
        return text("ch01.t_type_make_dt", kind=type(t).__name__)
    if tuple(t.shape) != (2, 3) or not np.array_equal(t.numpy(), np.arange(6).reshape(2, 3)):
        return text("ch01.t_hold_np_arange", shape=tuple(t.shape))
    if t.dtype.kind != "f":
        return text("ch01.t_has_dtype_integers", dtype=t.dtype)
    if not t.requires_grad:
        return text("ch01.t_requires_grad_false")
    return None


Q1 = Exercise(
    "01.1", names=("t",),
    title="ch01.q1.title",
    expects="ch01.q1.expects",
    check=_trainable_arange,
    hints=("ch01.q1.hint1", "ch01.q1.hint2"),
    solution="t = dt.tensor(np.arange(6).reshape(2, 3), dtype=dt.float32, requires_grad=True)")


def _expand_gradient(predicted_grad: Any) -> CheckResult:
    got = np.asarray(predicted_grad, dtype=float)
    if got.shape == (3, 1) and np.allclose(got, 4.0):
        return None
    if got.size and np.allclose(got, 4.0):
        return text("ch01.right_values_wrong_shape", shape=got.shape)
    if got.size and np.allclose(got, 1.0):
        return text("ch01.each_entry_col_used")
    return text("ch01.think_how_many_times")


Q2 = Exercise(
    "01.2", names=("predicted_grad",),
    title="ch01.q2.title",
    expects="ch01.q2.expects",
    check=_expand_gradient,
    hints=("ch01.q2.hint1", "ch01.q2.hint2", "ch01.q2.hint3"),
    solution=("predicted_grad = np.full((3, 1), 4.0)\n"
              "# check it:\n"
              "col = dt.ones(3, 1, requires_grad=True)\n"
              "col.expand(3, 4).sum().backward()\n"
              "print(col.grad)"))


def _mul_shape(mul_shape: Any) -> CheckResult:
    got = whole_numbers(mul_shape)
    if got is None:
        return text("ch01.give_shape_tuple_whole")
    if got == (2, 1, 6):
        return None
    if got == (2, 6):
        return text("ch01.first_two_axes_a2")
    if got in ((12, 6), (2, 6, 1), (6,)):
        return text("ch01.not_what_comes_back")
    return text("ch01.x_num_col_dims", got=got)


Q3 = Exercise(
    "01.3", names=("mul_shape",),
    title="ch01.q3.title",
    expects="ch01.q3.expects",
    check=_mul_shape,
    hints=("ch01.q3.hint1", "ch01.q3.hint2"),
    solution=("mul_shape = tuple(mul(a2, dt.randn(12, 6), x_num_col_dims=2).shape)   # (2, 1, 6)"))

_ALL_PARAMS = {f"stage{i}.{p}" for i in (1, 2, 3) for p in ("weight", "bias")}


def _detach_at_stage1(with_grad: Any) -> CheckResult:
    got = set(with_grad)
    want = {name for name in _ALL_PARAMS if not name.startswith("stage1")}
    if got == want:
        return None
    unknown = got - _ALL_PARAMS
    if unknown:
        return text("ch01.no_parameter_called_use", name=sorted(unknown)[0])
    if any(name.startswith("stage1") for name in got):
        return text("ch01.stage1_upstream_cut_backward")
    return text("ch01.stage2_now_downstream_cut")


Q4 = Exercise(
    "01.4", names=("with_grad",),
    title="ch01.q4.title",
    expects="ch01.q4.expects",
    check=_detach_at_stage1,
    hints=("ch01.q4.hint1", "ch01.q4.hint2"),
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
        return text("ch01.names_kind_error_store", name=type_name(caught))
    want, _ = _backward_twice(retain=False)
    if not isinstance(caught, BaseException):
        return text("ch01.second_backward_error_error")
    if type(caught) is not type(want):
        return text("ch01.not_what_second_backward", name=type(caught).__name__)
    if str(caught).split(":")[0] != str(want).split(":")[0]:
        return text("ch01.right_kind_error_other")
    got = np.asarray(grad_after_two.numpy() if isinstance(grad_after_two, Tensor)
                     else grad_after_two, dtype=float)
    _, twice = _backward_twice(retain=True)
    if got.shape == twice.shape and np.allclose(got, twice):
        return None, text("ch01.first_backward_kept_graph")
    if got.shape == twice.shape and np.allclose(got, twice / 2):
        return text("ch01.gradient_backward_after_two")
    if got.shape == twice.shape and np.allclose(got, twice * 1.5):
        return text("ch01.x_grad_still_held")
    return text("ch01.grad_after_two_x")


Q5 = Exercise(
    "01.5", names=("second_backward_error", "grad_after_two"),
    title="ch01.q5.title",
    expects="ch01.q5.expects",
    check=_second_backward,
    hints=("ch01.q5.hint1", "ch01.q5.hint2"),
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


# Fresh functions for 01.6: (the key of what it computes, the function on a Tensor, its
# gradient in NumPy).
_GRADIENT_CASES = (
    ("ch01.sum_squares", lambda x: (x * x).sum(), lambda a: 2 * a),
    ("ch01.mean_cubes", lambda x: (x * x * x).mean(), lambda a: 3 * a ** 2 / a.size),
    ("ch01.sum_tanh", lambda x: tanh(x).sum(), lambda a: 1 - np.tanh(a) ** 2),
)


def _input_gradient(input_gradient: Any) -> CheckResult:
    if not callable(input_gradient):
        return text("ch01.input_gradient_function_f")
    rng = np.random.default_rng(16)
    for (what, f, derivative), shape in zip(_GRADIENT_CASES, ((3,), (2, 4), (5, 1))):
        x = rng.normal(size=shape)
        answer, failure = called("input_gradient", input_gradient, f, x.copy())
        if failure:
            return failure
        grad = answer.numpy() if isinstance(answer, Tensor) else answer
        grad = np.asarray(grad, dtype=float) if grad is not None else None
        if grad is None or grad.shape != x.shape:
            return text("ch01.array_shaped_gradient_have", what=text(what), shape=shape,
                        got=None if grad is None else grad.shape)
        if not np.allclose(grad, derivative(x), rtol=1e-6, atol=1e-9):
            if np.allclose(grad, float(f(Tensor(x)).item())):
                return text("ch01.value_f_x_gradient")
            return text("ch01.gradient_not_right_make", what=text(what))
    return None


Q6 = Exercise(
    "01.6", names=("input_gradient",),
    title="ch01.q6.title",
    expects="ch01.q6.expects",
    check=_input_gradient,
    hints=("ch01.q6.hint1", "ch01.q6.hint2"),
    solution=("def input_gradient(f, x):\n"
              "    t = dt.tensor(x, requires_grad=True)\n"
              "    f(t).backward()\n"
              "    return t.grad.numpy()"))

EXERCISES = [Q1, Q2, Q3, Q4, Q5, Q6]
