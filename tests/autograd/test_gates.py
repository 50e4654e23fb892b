"""Gates (dltutor/autograd/ops/gates.py): a gradient that passes where a mask is on and is
exactly +0.0 where it is off, whatever it holds there.

The reference is ``np.where(on, g, 0)``, compared bit for bit (NaN, inf and the sign of zero
included): ``g * on`` differs from it exactly where these tests look. The ops that use gates
(relu, clip, maximum, minimum, max pooling, max/min of a whole tensor) are compared with
PyTorch itself in tests/frameworks/test_engine_vs_torch.py.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dltutor as dt
from dltutor.autograd.ops.gates import gate

SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, -1.5, 2.0]


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values, NaN where NaN, and the same sign on every zero."""
    return (a.dtype == b.dtype and a.shape == b.shape
            and np.array_equal(a, b, equal_nan=True)
            and np.array_equal(np.signbit(a[a == 0]), np.signbit(b[b == 0])))


@settings(max_examples=200, deadline=None)
@given(dtype=st.sampled_from([np.float16, np.float32, np.float64]), data=st.data())
def test_a_gate_is_where_on_every_value_and_every_dtype(dtype, data):
    shape = data.draw(hnp.array_shapes(max_dims=3, max_side=5))
    grad = data.draw(hnp.arrays(dtype, shape, elements=st.sampled_from(SPECIALS)
                                | st.floats(-1e3, 1e3, width=np.dtype(dtype).itemsize * 8)))
    on = data.draw(hnp.arrays(np.bool_, shape))
    expected = np.where(on, grad, 0).astype(dtype)
    assert same_bits(gate(grad, on), expected)


def test_the_product_it_replaces_differs_where_the_mask_is_off():
    grad = np.array([-2.0, np.inf, np.nan, 3.0])
    on = np.array([False, False, False, True])
    with np.errstate(invalid="ignore"):                           # inf * 0
        assert not same_bits(grad * on, np.where(on, grad, 0.0))  # the bug a gate avoids
    assert same_bits(gate(grad, on), np.array([0.0, 0.0, 0.0, 3.0]))


def test_a_mask_broadcasts_like_the_product():
    grad = np.arange(6.0, dtype=np.float32).reshape(2, 3) - 3
    on = np.array([True, False, True])
    assert same_bits(gate(grad, on), np.where(on, grad, 0).astype(np.float32))


def test_a_long_double_gradient_is_gated_too():
    """float128 on x86 has no integer as wide (the gate falls back to where); elsewhere it is
    float64-sized: either way the same numbers."""
    grad = np.array([-1.0, np.nan, 4.0], dtype=np.longdouble)
    assert same_bits(gate(grad, np.array([False, False, True])),
                     np.array([0.0, 0.0, 4.0], dtype=np.longdouble))


def test_the_input_gradient_of_a_dead_relu_unit_prints_as_zero_not_minus_zero():
    x = dt.tensor([-1.0, 2.0], requires_grad=True)
    dt.relu(x).backward(dt.tensor([-1.0, -1.0]))
    assert repr(x.grad) == "tensor([ 0., -1.])"          # g * mask printed tensor([-0., -1.])


@pytest.mark.parametrize("op", [
    lambda x: dt.relu(x), lambda x: dt.clip(x, -0.5, 0.5), lambda x: dt.maximum(x, dt.zeros(4)),
    lambda x: dt.minimum(x, dt.zeros(4)), lambda x: dt.max(x)])
def test_an_inf_gradient_stops_where_the_op_does_not_pass_it(op):
    x = dt.tensor([-1.0, 0.25, 2.0, -3.0], requires_grad=True)
    out = op(x)
    out.backward(dt.full(out.shape, np.inf))
    assert not np.isnan(x.grad.numpy()).any()         # inf * 0 would have been NaN
