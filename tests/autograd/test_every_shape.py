"""Every public op on every shape (issue 46): forward and backward on 0-d, empty (a zero-size
dimension), one-element, non-contiguous (a transposed or strided view as the backend array) and
broadcast inputs, in float32, float64 and float16.

The ops, their NumPy formulas and the inputs each needs are the table in every_shape_table.py.
Each case checks, as PyTorch would give them:

* the result's shape (the NumPy formula's) and dtype (the input's: float16 stays float16), and
  that its data is a backend array, not a NumPy scalar (a 0-d result is a 0-d array);
* after a backward with a random upstream gradient, each input's ``.grad``: its shape, its
  dtype, a backend array again;
* the values: the forward against the NumPy formula; the gradient, in float64, against central
  differences of the op itself (tests/gradcheck.py), and for float32, float16 and empty inputs
  against central differences of the NumPy formula in float64.

Kinds PyTorch refuses too (a 0-d input to matmul, the max of an empty tensor) must raise.
For the non-contiguous kind the upstream gradient is a strided view too. Every case runs under
NumPy and under the marked stand-in GPU backend (tests/conftest.py), where each array an op
makes, forward and backward, must stay on the backend.
"""
from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

import dltutor as dt
from dltutor import backend as B
from dltutor.autograd.function import make_tensor
from gradcheck import gradcheck
from tests.autograd.every_shape_table import OPS

TOLERANCE = {"float64": (1e-7, 1e-9), "float32": (2e-4, 2e-5), "float16": (2e-2, 2e-2)}


def values(domain: str, shape: tuple, rng: np.random.Generator) -> np.ndarray:
    """Float64 values for one input, chosen so that a finite difference crosses no kink."""
    return np.asarray(_values(domain, shape, rng), dtype=np.float64)   # (0-d: not a scalar)


def _values(domain: str, shape: tuple, rng: np.random.Generator) -> np.ndarray:
    if domain == "pos":
        return rng.uniform(0.5, 2.0, shape)
    if domain == "unit":
        return rng.uniform(0.0, 1.0, shape)
    if domain in ("away", "clip"):
        low, high = (0.1, 1.5) if domain == "away" else (0.6, 1.2)
        magnitude = rng.uniform(low, high, shape)
        if domain == "clip":     # half inside (|x| <= 0.4), half outside the bounds +-0.5
            magnitude = np.where(rng.random(shape) < 0.5, magnitude - 0.8 + 0.1, magnitude)
            magnitude = np.abs(magnitude)
        return magnitude * rng.choice([-1.0, 1.0], shape)
    if domain == "distinct":
        n = int(np.prod(shape))
        return (rng.permutation(n) * 0.375 - n * 0.125).reshape(shape)
    return rng.standard_normal(shape)


def non_contiguous(a: np.ndarray, strict: bool = True) -> np.ndarray:
    """``a``'s values in a view that is not C-contiguous: the transpose of a transposed copy
    (two or more dimensions), or every second element of a buffer (one dimension). (Not
    ``strict``: a shape such as (3, 1) may stay contiguous.)"""
    if a.ndim >= 2:
        view = np.ascontiguousarray(np.swapaxes(a, -1, -2)).swapaxes(-1, -2)
    else:
        buffer = np.zeros(2 * a.shape[0], dtype=a.dtype)
        buffer[::2] = a
        view = buffer[::2]
    assert not strict or a.size <= 1 or a.ndim == 0 or not view.flags.c_contiguous
    return view


def laid_out(t: dt.Tensor, ndim: int) -> dt.Tensor:
    """The same view made by ops, for the gradient check (which builds tensors itself): its
    inputs are the buffers :func:`gradcheck_arrays` gives."""
    return t.transpose(-1, -2) if ndim >= 2 else t[::2]


def gradcheck_arrays(a: np.ndarray) -> np.ndarray:
    if a.ndim >= 2:
        return np.ascontiguousarray(np.swapaxes(a, -1, -2))
    buffer = np.zeros(2 * a.shape[0])
    buffer[::2] = a
    return buffer


def reference(op, arrays, extra):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(op.ref(*arrays, *extra), dtype=None)


def numeric_gradients(op, arrays, extra, upstream, eps=1e-6):
    """Central differences of ``sum(ref(arrays) * upstream)``, in float64. Where the result
    is NaN whatever the input (the mean of an empty tensor), the gradient is 0, as PyTorch
    gives it: the sum of no elements' contributions."""
    grads = []
    for i, a in enumerate(arrays):
        grad = np.zeros_like(a)
        for index in np.ndindex(a.shape):
            shifted = [x.copy() for x in arrays]
            shifted[i][index] = a[index] + eps
            plus = (reference(op, shifted, extra) * upstream).sum()
            shifted[i][index] = a[index] - eps
            minus = (reference(op, shifted, extra) * upstream).sum()
            grad[index] = (plus - minus) / (2 * eps)
        if any(x.size == 0 for x in arrays):
            grad = np.nan_to_num(grad, nan=0.0)
        grads.append(grad)
    return grads


def assert_array(data, what):
    assert isinstance(data, np.ndarray), f"{what} is a {type(data).__name__}, not an array"
    assert B.backend_of(data) is B.current(), f"{what} left the {B.current().name} backend"


CASES = [pytest.param(op, kind, dtype, id=f"{op.name}-{kind}-{dtype}")
         for op in OPS for kind in op.shapes for dtype in op.dtypes]


# NaN and inf arise silently, as in PyTorch (the mean of nothing is NaN): a NumPy RuntimeWarning
# from an op fails the case.
@pytest.mark.filterwarnings("ignore:mse_loss", "error::RuntimeWarning")
@pytest.mark.parametrize("op,kind,dtype", CASES)
def test_op_on_shape(op, kind, dtype, backend):
    rng = np.random.default_rng(zlib.crc32(f"{op.name}{kind}{dtype}".encode()))
    arrays = [values(d, s, rng).astype(dtype).astype(np.float64)
              for d, s in zip(op.domains, op.shapes[kind])]
    extra = op.extra.get(kind, ())
    on_backend = B.current().asarray          # (the marked backend: a view that keeps strides)
    if kind == "noncontig":
        leaves = [make_tensor(on_backend(non_contiguous(a.astype(dtype)))) for a in arrays]
    else:
        leaves = [dt.tensor(a.astype(dtype)) for a in arrays]
    for t in leaves:
        t.requires_grad_(op.grad)
    if kind in op.refused:
        with pytest.raises(op.refused[kind]):
            op.call(*leaves, *extra)
        return
    out = op.call(*leaves, *extra)
    expected = reference(op, arrays, extra)
    assert_array(out.data, "the result's data")
    assert out.shape == expected.shape
    want = op.out_dtype or (dtype if op.grad else expected.dtype)
    assert out.dtype == np.dtype(want), f"{dtype} input gave a {out.dtype} result"
    rtol, atol = TOLERANCE[str(np.dtype(want))] if op.grad else (0, 0)
    np.testing.assert_allclose(out.numpy().astype(np.float64), expected, rtol=rtol, atol=atol)
    if not op.grad:
        return
    upstream = np.asarray(rng.standard_normal(out.shape)).astype(out.dtype)
    if kind == "noncontig" and out.ndim:        # the upstream gradient a strided view too
        out.backward(make_tensor(on_backend(non_contiguous(upstream, strict=False))))
    else:
        out.backward(dt.tensor(upstream))
    for i, (t, a) in enumerate(zip(leaves, arrays)):
        assert t.grad is not None, f"input {i} got no gradient"
        assert_array(t.grad.data, f"input {i}'s gradient")
        assert (t.grad.shape, t.grad.dtype) == (a.shape, np.dtype(dtype)), f"input {i}"
    if dtype == "float64" and op.out_dtype is None and all(a.size for a in arrays):
        if kind == "noncontig":
            gradcheck(lambda *ts: op.call(*[laid_out(t, a.ndim) for t, a in zip(ts, arrays)],
                                          *extra), *[gradcheck_arrays(a) for a in arrays])
        else:
            gradcheck(lambda *ts: op.call(*ts, *extra), *arrays)
        return
    numeric = numeric_gradients(op, arrays, extra, upstream.astype(np.float64))
    rtol, atol = TOLERANCE[dtype]             # the gradient is in the input's dtype
    for i, (t, g) in enumerate(zip(leaves, numeric)):
        np.testing.assert_allclose(t.grad.numpy().astype(np.float64), g, rtol=rtol,
                                   atol=atol * max(1.0, np.abs(g).max(initial=0)),
                                   err_msg=f"gradient of input {i}")
