"""loss.backward(inputs=[...]): only those leaves' .grad are written (PyTorch's keyword, and
what GradManager.attach rests on). Compared with PyTorch in tests/frameworks."""
from __future__ import annotations

import pytest

import dltutor as dt

from bad_input import refused


def test_only_the_inputs_get_their_gradient_the_rest_stay_as_they_were():
    a, b, c = (dt.tensor([1.0, 2.0], requires_grad=True) for _ in range(3))
    c.grad = dt.tensor([5.0, 5.0])
    seen = []
    b.register_hook(lambda g: seen.append("b"))
    (a * b + c).sum().backward(inputs=[a])
    assert a.grad.tolist() == [1.0, 2.0] and b.grad is None and c.grad.tolist() == [5.0, 5.0]
    assert seen == []                                    # b's hook did not run either
    (a * b + c).sum().backward(inputs=(b, c))
    assert a.grad.tolist() == [1.0, 2.0] and b.grad.tolist() == [1.0, 2.0]
    assert c.grad.tolist() == [6.0, 6.0]                 # added to what was there


def test_one_tensor_as_inputs_and_a_leaf_root():
    a = dt.tensor([3.0], requires_grad=True)
    a.backward(dt.tensor([2.0]), inputs=a)
    assert a.grad.tolist() == [2.0]
    b = dt.tensor([3.0], requires_grad=True)
    b.backward(dt.tensor([2.0]), inputs=[a])
    assert b.grad is None


@pytest.mark.parametrize("make_inputs, error, words", [
    (lambda a: [a * 2], ValueError, ["item 0", "computed by mul", "leaves only"]),
    (lambda a: [dt.tensor([1.0])], ValueError, ["item 0", "does not require grad"]),
    (lambda a: [a, "a"], TypeError, ["item 1", "str"]),
])
def test_inputs_that_cannot_get_a_grad_are_refused_before_anything_runs(make_inputs, error, words):
    a = dt.tensor([1.0, 2.0], requires_grad=True)
    inputs = make_inputs(a)
    loss = (a * a).sum()
    refused(lambda: loss.backward(inputs=inputs), error, *words, state=[a])
    loss.backward()                                        # the graph is still there
    assert a.grad.tolist() == [2.0, 4.0]
