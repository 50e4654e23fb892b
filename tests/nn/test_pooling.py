"""Max-pooling with tied maxima: each window's gradient goes where PyTorch's rule sends it."""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
from dltutor.nn import functional as F
from dltutor import backend as B


def on_backend(array, requires_grad=False):
    return dt.tensor(B.current().asarray(np.asarray(array, dtype=np.float64)),
                     requires_grad=requires_grad)


# --- max-pooling with tied maxima ------------------------------------------------------------
def torch_max_pool2d_grad(x, upstream, kernel, stride, padding):
    """PyTorch's CPU max_pool2d backward, written out: each window scans its real (unpadded)
    pixels row by row and keeps the FIRST strictly larger value, or any NaN (so the LAST NaN
    wins); that one pixel receives the window's whole upstream gradient."""
    n, c, h, w = x.shape
    grad = np.zeros_like(x)
    out_h, out_w = upstream.shape[2:]
    for b in range(n):
        for ch in range(c):
            for oh in range(out_h):
                for ow in range(out_w):
                    h0, w0 = oh * stride - padding, ow * stride - padding
                    h1, w1 = min(h0 + kernel, h), min(w0 + kernel, w)
                    h0, w0 = max(h0, 0), max(w0, 0)
                    best, where = -np.inf, (h0, w0)
                    for i in range(h0, h1):
                        for j in range(w0, w1):
                            if x[b, ch, i, j] > best or np.isnan(x[b, ch, i, j]):
                                best, where = x[b, ch, i, j], (i, j)
                    grad[(b, ch) + where] += upstream[b, ch, oh, ow]
    return grad


def pool_grad(x0, kernel, stride, padding, upstream=None):
    x = on_backend(x0, requires_grad=True)
    y = F.max_pool2d(x, kernel, stride=stride, padding=padding)
    if upstream is None:
        upstream = np.ones(y.shape)
    y.backward(on_backend(upstream))
    return x.grad.numpy(), upstream


def test_all_tied_window_gives_everything_to_its_first_pixel(backend):
    """A constant input: every 2x2 window's gradient goes to its top-left pixel only (not
    split four ways, not to another pixel)."""
    grad, _ = pool_grad(np.zeros((1, 1, 4, 4)), 2, 2, 0)
    expected = np.zeros((4, 4))
    expected[::2, ::2] = 1.0
    np.testing.assert_array_equal(grad[0, 0], expected)


def test_partly_tied_windows_pick_the_first_maximum_in_row_major_order(backend):
    """Ties in the second row, in a column and on a diagonal: the first maximum in row-major
    scan order wins each window."""
    x = np.array([[0., 1., 7., 3.],
                  [2., 2., 7., 7.],
                  [5., 4., 9., 1.],
                  [5., 5., 0., 9.]]).reshape(1, 1, 4, 4)
    grad, _ = pool_grad(x, 2, 2, 0, upstream=np.array([[[[1., 2.], [3., 4.]]]]))
    expected = np.array([[0., 0., 2., 0.],
                         [1., 0., 0., 0.],
                         [3., 0., 4., 0.],
                         [0., 0., 0., 0.]])
    np.testing.assert_array_equal(grad[0, 0], expected)


@pytest.mark.parametrize("kernel,stride,padding", [(2, 2, 0), (3, 1, 0), (3, 2, 1), (2, 1, 1)])
def test_max_pool2d_backward_with_many_ties_matches_pytorchs_rule(kernel, stride, padding,
                                                                  backend):
    """Inputs drawn from {0, 1, 2} tie in almost every window; overlapping and padded windows
    each send their gradient to their own first maximum (a random upstream gradient, so no
    mix-up between windows cancels out)."""
    local = np.random.default_rng(kernel * 10 + stride + padding)
    x0 = local.integers(0, 3, (2, 2, 5, 6)).astype(np.float64)
    out_hw = [(n + 2 * padding - kernel) // stride + 1 for n in x0.shape[2:]]
    upstream = local.standard_normal((2, 2, *out_hw))
    grad, _ = pool_grad(x0, kernel, stride, padding, upstream=upstream)
    np.testing.assert_allclose(grad, torch_max_pool2d_grad(x0, upstream, kernel, stride,
                                                           padding), rtol=0, atol=1e-12)


def test_windows_of_minus_infinity_with_padding_keep_their_gradient(backend):
    """Tied maxima of -inf in padded windows: PyTorch never hands gradient to padding."""
    x0 = np.full((1, 1, 2, 2), -np.inf)
    grad, upstream = pool_grad(x0, 2, 1, 1)
    np.testing.assert_array_equal(grad, torch_max_pool2d_grad(x0, upstream, 2, 1, 1))


@pytest.mark.parametrize("padding", [0, 1])
def test_a_window_holding_nan_gives_its_gradient_to_the_last_nan(backend, padding):
    """PyTorch: a NaN is the maximum of its window (the output is NaN), and the last NaN in
    the window's scan order receives the gradient."""
    x0 = np.array([[[[np.nan, 1.0, 3.0], [np.nan, 2.0, np.nan], [0.0, 5.0, 4.0]]]])
    with np.errstate(invalid="ignore"):
        grad, upstream = pool_grad(x0, 2, 1, padding)
    np.testing.assert_array_equal(grad, torch_max_pool2d_grad(x0, upstream, 2, 1, padding))

