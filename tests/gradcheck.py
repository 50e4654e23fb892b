"""Gradient checking by central differences, in float64, with a random upstream gradient.

Backpropagating a gradient of ones cannot tell a correct softmax from a broken one (the
gradient of ``sum(softmax(x))`` is zero either way), so the checker multiplies the output by a
random array ``U`` and compares the gradient of ``sum(f(x) * U)`` both ways.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

import dltutor as dt
from dltutor import backend as B


def _objective(fn: Callable, arrays: Sequence[np.ndarray], upstream: np.ndarray) -> float:
    backend = B.current()
    with dt.no_grad():
        out = fn(*[dt.tensor(backend.asarray(a)) for a in arrays])
    return float((out.numpy().astype(np.float64) * upstream).sum())


def gradcheck(fn: Callable, *arrays: np.ndarray, eps: float = 1e-6, rtol: float = 1e-5,
              atol: float = 1e-7, seed: int = 0) -> None:
    """Assert that backward through ``fn`` matches finite differences for every input."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    backend = B.current()
    tensors = [dt.tensor(backend.asarray(a), requires_grad=True) for a in arrays]
    out = fn(*tensors)
    assert out.dtype == np.float64, f"float64 inputs gave a {out.dtype} output"
    upstream = np.random.default_rng(seed).standard_normal(out.shape)
    out.backward(dt.tensor(backend.asarray(upstream)))
    for i, (t, a) in enumerate(zip(tensors, arrays)):
        assert t.grad is not None, f"input {i} got no gradient"
        assert t.grad.shape == a.shape, f"input {i}: grad shape {t.grad.shape} != {a.shape}"
        numeric = np.zeros_like(a)
        for index in np.ndindex(a.shape):
            shifted = [x.copy() for x in arrays]
            shifted[i][index] = a[index] + eps
            plus = _objective(fn, shifted, upstream)
            shifted[i][index] = a[index] - eps
            minus = _objective(fn, shifted, upstream)
            numeric[index] = (plus - minus) / (2 * eps)
        np.testing.assert_allclose(t.grad.numpy(), numeric, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {i} (shape {a.shape})")
