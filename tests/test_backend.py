"""The backend switch: NumPy by default, CuPy on request, and proof that ops never escape it."""
from __future__ import annotations

import math
import subprocess
import sys
import types
import warnings

import numpy as np
import pytest

import dltutor as dt
from dltutor import backend as B
from dltutor.autograd.function import Function
from dltutor.nn import functional as F

import marked_backend
from marked_backend import Marked, StrayNumpyCall


def test_import_does_not_import_cupy():
    code = "import sys, dltutor; print('cupy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_numpy_is_the_default():
    assert B.current().name == "numpy"
    assert B.current() == "numpy" and B.current() == "cpu"
    assert dt.ones(2).device == "cpu"


def test_use_works_as_call_and_as_context_manager():
    marked_backend.register()
    with B.use("marked"):
        assert B.current().name == "marked"
        assert isinstance(dt.zeros(3).data, Marked)
    assert B.current().name == "numpy"
    B.use("marked")
    try:
        assert B.current().name == "marked"
    finally:
        B.use("numpy")


def test_unknown_backend_names_the_choices():
    with pytest.raises(ValueError, match="unknown backend or device 'tpu'.*numpy"):
        B.use("tpu")


def _block_cupy(monkeypatch, module=None):
    import importlib

    real = importlib.import_module

    def fake_import(name, *args):
        if name == "cupy":
            if module is None:
                raise ImportError("No module named 'cupy'")
            return module
        return real(name, *args)

    monkeypatch.setattr(B.importlib, "import_module", fake_import)
    monkeypatch.delitem(B._registry, "cupy", raising=False)


def test_gpu_without_cupy_says_how_to_install(monkeypatch):
    _block_cupy(monkeypatch)
    with pytest.raises(B.GPUUnavailableError, match=r'CuPy.*not installed.*pip install cupy-cuda12x'):
        B.use("gpu")
    assert B.current().name == "numpy"  # a failed switch changes nothing
    assert B.gpu_available() is False


def test_gpu_without_a_device_says_so(monkeypatch):
    def no_device():
        raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")

    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDeviceCount=no_device)))
    _block_cupy(monkeypatch, fake)
    with pytest.raises(B.GPUUnavailableError, match="CuPy is installed but no usable GPU"):
        dt.ones(2).to("gpu")
    assert B.gpu_available() is False


def test_get_array_module_and_to_numpy():
    marked_backend.register()
    assert B.get_array_module(np.zeros(2)) is np
    m = np.zeros(2).view(Marked)
    assert B.get_array_module(m) is marked_backend.XP
    back = B.to_numpy(m)
    assert type(back) is np.ndarray
    assert B.to_numpy([1, 2]).tolist() == [1, 2]


def test_tensor_to_moves_data_and_gradients_flow_back():
    marked_backend.register()
    x = dt.tensor([1.0, 2.0], requires_grad=True)
    y = x.to("marked")
    assert isinstance(y.data, Marked) and y.device == "marked"
    (y * y).sum().backward()
    assert type(x.grad.data) is np.ndarray
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    assert x.to("cpu") is x


def test_creation_functions_follow_the_current_backend(backend):
    made = [dt.tensor([1.0]), dt.tensor(np.ones(2)), dt.zeros(2), dt.ones(2, 2), dt.full((2,), 3.0),
            dt.rand(3), dt.randn(3), dt.eye(2), dt.arange(3), dt.zeros_like(dt.ones(2)),
            dt.randint(0, 3, (4,))]
    for t in made:
        assert t.device == {"numpy": "cpu", "marked": "marked", "cupy": "gpu"}[backend]


def test_same_seed_gives_same_numbers_on_every_backend():
    marked_backend.register()
    dt.manual_seed(7)
    cpu = dt.randn(5).numpy()
    with B.use("marked"):
        dt.manual_seed(7)
        other = dt.randn(5).numpy()
    np.testing.assert_array_equal(cpu, other)


# --- the marked backend must be able to fail -------------------------------------------------
class StrayExp(Function):
    """An op written wrongly: calls NumPy directly instead of the backend's module."""

    def forward(self, a):
        return np.exp(a)

    def backward(self, g):
        return (g,)


class StrayZerosInBackward(Function):
    """An op whose backward makes its gradient with np.zeros instead of xp.zeros."""

    def forward(self, a):
        return a * 2

    def backward(self, g):
        out = np.zeros(g.shape, dtype=g.dtype)
        out[...] = g * 2
        return (out,)


# These two test the stand-in itself, so they run under NumPy and the marked backend only: on
# real CuPy, np.exp dispatches to CuPy and np.zeros fails inside NumPy with CuPy's own error.
ONLY_CPU_AND_MARKED = pytest.mark.parametrize("backend", ["numpy", "marked"], indirect=True)


@ONLY_CPU_AND_MARKED
def test_a_stray_numpy_function_call_fails_under_the_marked_backend(backend):
    x = dt.tensor([1.0, 2.0], requires_grad=True)
    if backend == "numpy":
        StrayExp()(x)  # fine on NumPy: that is why the marked backend exists
    else:
        with pytest.raises(StrayNumpyCall, match="np.exp"):
            StrayExp()(x)


@ONLY_CPU_AND_MARKED
def test_a_stray_numpy_array_in_backward_is_caught(backend):
    x = dt.tensor([1.0, 2.0], requires_grad=True)
    y = StrayZerosInBackward()(x).sum()
    if backend == "numpy":
        y.backward()
    else:
        with pytest.raises(AssertionError, match="stray_zeros_in_backward.s gradient.*not a marked"):
            y.backward()


@pytest.mark.parametrize("backend", ["marked"], indirect=True)
def test_the_marked_check_sees_the_ops_the_kit_runs(backend):
    """The kit's functions run their ops as ``Op(...).apply(x)``: the per-op check must see
    those calls, not only ``Op(...)(x)`` (it once wrapped ``__call__`` alone and saw none)."""
    x = dt.randn(2, 1, 6, 6)
    weight = dt.randn(3, 1, 3, 3, requires_grad=True)
    marked_backend.checked.update(forward=0, backward=0)
    loss = F.cross_entropy(F.max_pool2d(dt.relu(F.conv2d(x, weight)), 2).flatten(1),
                           dt.tensor([0, 1]))
    loss.backward()
    # conv2d, relu, max_pool2d, flatten, cross_entropy: five ops at least, each with a backward
    assert marked_backend.checked["forward"] >= 5
    assert marked_backend.checked["backward"] >= 5


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64])
def test_sums_of_squares_agree_with_numpy_for_every_dtype_and_layout(dtype):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((7, 5)).astype(dtype), rng.standard_normal(3).astype(dtype),
              rng.standard_normal((6, 4)).astype(dtype).T,          # not contiguous
              np.zeros((0,), dtype=dtype), np.arange(12, dtype=dtype).reshape(3, 4)[:, ::2],
              rng.standard_normal(10).astype(dtype)[::3]]
    expected = [float((a.astype(np.float64) ** 2).sum()) for a in arrays]
    got = B.NUMPY.sums_of_squares(arrays)
    assert all(type(n) is float for n in got)
    tolerance = 1e-2 if dtype == np.float16 else 1e-5
    assert got == pytest.approx(expected, rel=tolerance)


def test_sums_of_squares_of_mixed_dtypes_use_each_arrays_own_precision():
    # The first array's dtype picks the fast routine; the others must not be cast to it.
    fine = np.array([1.0, 1e-5])                       # 1 + 1e-10: lost in float32
    arrays = [np.ones(3, np.float32), fine, np.ones(2, np.float16), np.zeros(0, np.float32)]
    assert B.NUMPY.sums_of_squares(arrays) == [3.0, 1.0 + 1e-10, 2.0, 0.0]
    assert B.NUMPY.sums_of_squares([np.ones(2, np.float16), fine])[1] == 1.0 + 1e-10


def test_sums_of_squares_overflow_to_inf_and_keep_nan_silently():
    big = np.full(4, 1e30, dtype=np.float32)            # finite, but its square is not
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # any RuntimeWarning fails the test
        sums = B.NUMPY.sums_of_squares([big, np.array([np.nan, 1.0]),
                                        np.array([np.inf], np.float32), np.full(3, 1e200)])
    assert sums[0] == math.inf and math.isnan(sums[1]) and sums[2] == math.inf
    assert sums[3] == math.inf


def test_sums_of_squares_of_another_backend_use_its_own_dot(backend):
    with B.use(backend):
        a = dt.tensor([[3.0, 4.0], [0.0, 0.0]]).data
        assert B.backend_of(a).sums_of_squares([a]) == [25.0]
