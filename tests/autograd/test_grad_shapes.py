"""The ops that say ``grad_shapes_exact = True`` keep their word.

The engine skips its shape check (and ``reduce_to_shape``) for the gradients of those ops, so
a broken promise would put a wrongly shaped gradient into the graph unnoticed. Here every such
op's backward is called on every graph of the gradient-check cases, with a random upstream
gradient, and each gradient it returns must have its input's shape. The checker is shown to
fail on an op that breaks the promise.
"""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
from dltutor.autograd import ops  # noqa: F401 - imports every op class
from dltutor.autograd.function import Function
from gradcheck import gradcheck
from tests.autograd.test_ops_gradcheck import CASES


def all_subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub} | all_subclasses(sub)
    return found


# The op classes a graph can hold (Pool2d is only the base of MaxPool2d and AvgPool2d).
EXACT_OPS = {cls for cls in all_subclasses(Function) if cls.grad_shapes_exact
             and cls.__module__.startswith("dltutor.") and not cls.__subclasses__()}


def broken_promises(out: dt.Tensor, seed: int = 0) -> list[str]:
    """Walk the graph below ``out``; call the backward of each op that promises exact shapes
    on a random gradient of its output's shape; return what broke the promise."""
    rng = np.random.default_rng(seed)
    problems, seen, todo = [], set(), [out]
    while todo:
        t = todo.pop()
        fn = t.grad_fn
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        if fn.grad_shapes_exact:
            upstream = rng.standard_normal(t.shape).astype(t.dtype)
            for i, (x, g) in enumerate(zip(fn.inputs, fn.backward(upstream))):
                if g is not None and x.requires_grad and g.shape != x.shape:
                    problems.append(f"{fn.op_name}: gradient {i} has shape {g.shape}, "
                                    f"its input {tuple(x.shape)}")
        todo.extend(fn.inputs)
    return problems


def ops_in(out: dt.Tensor) -> set[type]:
    found, todo = set(), [out]
    while todo:
        fn = todo.pop().grad_fn
        if fn is not None and type(fn) not in found:
            found.add(type(fn))
            todo.extend(fn.inputs)
    return found


def build(name: str) -> dt.Tensor:
    fn, arrays = CASES[name]
    return fn(*[dt.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays])


@pytest.mark.parametrize("name", sorted(CASES))
def test_exact_ops_return_their_inputs_shapes(name):
    assert broken_promises(build(name)) == []


def test_every_exact_op_is_reached_by_a_case():
    reached = set().union(*(ops_in(build(name)) for name in CASES))
    assert EXACT_OPS, "no op says grad_shapes_exact: the test would check nothing"
    assert EXACT_OPS <= reached, sorted(c.__name__ for c in EXACT_OPS - reached)


def test_the_check_catches_a_broken_promise():
    class SumsTooMuch(Function):   # says exact, but returns the gradient summed to a scalar
        grad_shapes_exact = True

        def forward(self, a):
            return a * 2

        def backward(self, g):
            return (g.sum(keepdims=True).reshape(()) * 2,)

    out = SumsTooMuch()(dt.tensor(np.ones((2, 3)), requires_grad=True))
    assert broken_promises(out) == ["sums_too_much: gradient 0 has shape (), its input (2, 3)"]


@pytest.mark.parametrize("bias_shape", [(4,), (1, 4), (1,), (), (2, 4)])
@pytest.mark.parametrize("x_shape", [(2, 3), (5, 2, 3)])
def test_linear_bias_of_any_broadcasting_shape(x_shape, bias_shape):
    """PyTorch's F.linear takes any bias that broadcasts against the output; Linear sums the
    bias gradient back to the bias's own shape itself (the engine trusts its shapes)."""
    rng = np.random.default_rng(3)
    gradcheck(lambda x, w, b: dt.linear(x, w, b), rng.standard_normal(x_shape),
              rng.standard_normal((4, 3)), rng.standard_normal(bias_shape))


def test_clip_by_a_larger_bound_sums_the_gradient_back():
    """A clip bound may be an array that broadcasts the input to a larger shape (PyTorch's
    clamp takes tensors): clip is not an exact-shape op, the engine sums its gradient back."""
    rng = np.random.default_rng(4)
    low = rng.standard_normal((2, 3)) * 0.1
    gradcheck(lambda a: dt.clip(a, low, None), rng.uniform(0.5, 1.0, 3))
