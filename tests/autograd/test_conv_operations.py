"""The convolution gathers its patches and adds their gradients back in a fixed number of array
operations, whatever the kernel's size (issue 52): on a GPU each operation is a kernel launch,
and one per kernel offset made a 7x7 convolution launch 49 copies each way. Counted on the
marked stand-in backend, through which every array operation of the step passes."""
import pytest

import dltutor as dt
from dltutor.nn import functional as F

import marked_backend


def _operations_of_one_step(kernel, stride):
    """The array operations of one conv2d forward and backward, counted by name, after a first
    step has made the scratch arrays that the next steps reuse."""
    x = dt.randn(2, 3, 12, 12, requires_grad=True)
    weight = dt.randn(4, 3, kernel, kernel, requires_grad=True)
    bias = dt.zeros(4, requires_grad=True)
    out_size = (12 + 2 * (kernel // 2) - kernel) // stride + 1
    grad = dt.randn(2, 4, out_size, out_size)

    def step():
        x.grad = weight.grad = bias.grad = None
        F.conv2d(x, weight, bias, stride=stride, padding=kernel // 2).backward(grad)

    step()
    with marked_backend.counting() as counts:
        step()
    return counts


@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("backend", ["marked"], indirect=True)
def test_a_7x7_convolution_takes_as_many_array_operations_as_a_3x3(backend, stride):
    three = _operations_of_one_step(3, stride)
    seven = _operations_of_one_step(7, stride)
    assert sum(three.values()) > 0
    assert seven == three, f"3x3: {sorted(three.items())}\n7x7: {sorted(seven.items())}"
