"""Hypothesis property tests: broadcasting shapes of the binary ops, and reductions over axes.

The expected gradients come from an oracle that does not share code with the engine: each
input element's gradient is the sum of the upstream gradient over every output position the
element was broadcast to (found with ``np.bincount`` over an index grid).
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import dltutor as dt

settings.register_profile("dltutor", deadline=None, max_examples=60)
settings.load_profile("dltutor")

shapes_pairs = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4,
                                                 min_side=1, max_side=4)


def broadcast_sum(upstream: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``upstream`` into ``shape`` by following where each element was broadcast to."""
    size = int(np.prod(shape))
    index = np.broadcast_to(np.arange(size).reshape(shape), upstream.shape)
    return np.bincount(index.ravel(), weights=upstream.ravel(), minlength=size).reshape(shape)


BINARY = {
    "add": (lambda a, b: a + b, lambda a, b, u: (u, u)),
    "sub": (lambda a, b: a - b, lambda a, b, u: (u, -u)),
    "mul": (lambda a, b: a * b, lambda a, b, u: (u * b, u * a)),
    "div": (lambda a, b: a / b, lambda a, b, u: (u / b, -u * a / b**2)),
}


@given(shapes=shapes_pairs, op=st.sampled_from(sorted(BINARY)), seed=st.integers(0, 2**16))
def test_binary_ops_broadcast_and_reduce_gradients_to_each_input(shapes, op, seed):
    shape_a, shape_b = shapes.input_shapes
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, shape_a)
    b = rng.uniform(0.5, 2.0, shape_b)
    forward, local = BINARY[op]
    ta, tb = dt.tensor(a, requires_grad=True), dt.tensor(b, requires_grad=True)
    out = forward(ta, tb)
    assert out.shape == shapes.result_shape == np.broadcast_shapes(shape_a, shape_b)
    np.testing.assert_allclose(out.numpy(), forward(a, b))
    upstream = rng.standard_normal(out.shape)
    out.backward(dt.tensor(upstream))
    ga, gb = local(np.broadcast_to(a, out.shape), np.broadcast_to(b, out.shape), upstream)
    assert ta.grad.shape == shape_a and tb.grad.shape == shape_b
    np.testing.assert_allclose(ta.grad.numpy(), broadcast_sum(ga, shape_a), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tb.grad.numpy(), broadcast_sum(gb, shape_b), rtol=1e-10, atol=1e-12)


@st.composite
def shape_and_axes(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4))
    axes = draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1),
                          st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True)
                          .map(tuple)))
    return shape, axes


@given(case=shape_and_axes(), keepdims=st.booleans(), seed=st.integers(0, 2**16))
def test_sum_and_mean_over_any_axes(case, keepdims, seed):
    shape, axes = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    for name, reference in (("sum", np.sum), ("mean", np.mean)):
        t = dt.tensor(x, requires_grad=True)
        out = getattr(t, name)(axis=axes, keepdims=keepdims)
        expected = reference(x, axis=axes, keepdims=keepdims)
        assert out.shape == np.shape(expected)
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)
        upstream = rng.standard_normal(out.shape)
        out.backward(dt.tensor(upstream))
        kept = np.sum(x, axis=axes, keepdims=True).shape
        grad = np.broadcast_to(upstream.reshape(kept), shape)
        if name == "mean":
            grad = grad * (np.prod(kept) / x.size)
        assert t.grad.shape == shape
        np.testing.assert_allclose(t.grad.numpy(), grad, rtol=1e-12, atol=1e-12)


@given(case=shape_and_axes(), keepdims=st.booleans(), seed=st.integers(0, 2**16))
def test_max_and_var_shapes_and_values(case, keepdims, seed):
    shape, axes = case
    rng = np.random.default_rng(seed)
    x = rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float64)  # no ties
    t = dt.tensor(x, requires_grad=True)
    out = t.amax(axis=axes, keepdims=keepdims)     # values only, over any axes
    np.testing.assert_array_equal(out.numpy(), np.max(x, axis=axes, keepdims=keepdims))
    out.sum().backward()
    # exactly one winner per reduced group gets gradient 1
    assert t.grad.numpy().sum() == out.numpy().size
    assert set(np.unique(t.grad.numpy())) <= {0.0, 1.0}
    count = x.size // np.max(x, axis=axes, keepdims=True).size
    if count > 1:
        v = dt.tensor(x).var(axis=axes, keepdims=keepdims)
        np.testing.assert_allclose(v.numpy(), np.var(x, axis=axes, keepdims=keepdims, ddof=1))


@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4),
       data=st.data())
def test_reshape_permute_roundtrip_keeps_gradient_shape(shape, data):
    x = dt.tensor(np.arange(float(np.prod(shape))).reshape(shape), requires_grad=True)
    order = data.draw(st.permutations(range(len(shape))))
    y = x.permute(*order).reshape(-1)
    (y * dt.tensor(np.arange(float(y.shape[0])))).sum().backward()
    expected = np.arange(float(np.prod(shape))).reshape(np.transpose(
        np.empty(shape), order).shape)
    np.testing.assert_array_equal(x.grad.numpy(), np.transpose(expected, np.argsort(order)))
