"""dt.device, dt.cuda and every place that takes a device (PyTorch's first tutorial lines).

The CI machines have no GPU: a stand-in GPU backend (the marked arrays of marked_backend.py
under the name "cupy", device "gpu") shows that "cuda", "cuda:0", "gpu" and dt.device("cuda")
all reach the GPU backend, and that a machine without one says what to install.
"""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
from dltutor import backend as B
from dltutor import nn

import marked_backend
from bad_input import refused
from marked_backend import Marked


@pytest.fixture
def fake_gpu():
    """A GPU backend made of marked arrays, registered as "cupy" for one test."""
    gpu = B.register(B.Backend("cupy", "gpu", marked_backend.XP, Marked,
                               to_numpy=marked_backend.MARKED.to_numpy,
                               from_numpy=lambda a: np.asarray(a).view(Marked)))
    owner = B.BACKEND_BY_ARRAY_TYPE.get(Marked)   # the marked backend, if a test registered it
    B.BACKEND_BY_ARRAY_TYPE[Marked] = gpu
    yield gpu
    B.unregister("cupy")
    if owner is not None:
        B.BACKEND_BY_ARRAY_TYPE[Marked] = owner


def test_device_names_repr_and_equality_follow_pytorch():
    assert repr(dt.device("cuda:0")) == "device(type='cuda', index=0)"
    assert repr(dt.device("cpu")) == "device(type='cpu')"
    assert str(dt.device("cuda", 0)) == "cuda:0" and str(dt.device("gpu")) == "cuda"
    assert dt.device("cuda") == "cuda" and dt.device("cpu") != "cuda"
    assert dt.device(dt.device("cuda"), 0) == dt.device("cuda:0")
    assert len({dt.device("cpu"), dt.device("cpu")}) == 1


@pytest.mark.parametrize("spec, error, words", [
    ("cuda:1", ValueError, ["one GPU", "'cuda:1'"]),
    ("mps", ValueError, ["unknown device", "'cpu'", "'cuda'"]),
    (3, TypeError, ["a name such as 'cpu'", "int"]),
])
def test_a_device_dltutor_does_not_have_is_refused_by_name(spec, error, words):
    refused(lambda: dt.device(spec), error, *words)


def test_the_tutorial_line_picks_the_cpu_here_and_everything_accepts_it(tmp_path):
    device = dt.device("cuda" if dt.cuda.is_available() else "cpu")
    assert device == ("cuda" if B.gpu_available() else "cpu")
    assert dt.cuda.device_count() == int(dt.cuda.is_available())
    net = nn.Linear(3, 2).to(device)
    x = dt.randn(4, 3, device=device)
    assert net(x.to(device)).shape == (4, 2)
    dt.save(net.state_dict(), tmp_path / "net.safetensors")
    state = dt.load(tmp_path / "net.safetensors", map_location=device)
    assert state["weight"].device == "cpu"


def test_every_device_spelling_reaches_the_gpu_backend(fake_gpu, tmp_path):
    dt.save({"w": dt.ones(2)}, tmp_path / "w.safetensors")
    for spec in ("cuda", "cuda:0", "gpu", dt.device("cuda"), dt.device("cuda:0")):
        x = dt.ones(2, requires_grad=True)
        moved = x.to(spec)
        assert isinstance(moved.data, Marked) and moved.device == "gpu"
        moved.sum().backward()                                 # gradients flow back
        assert isinstance(x.grad.data, np.ndarray) and x.grad.tolist() == [1.0, 1.0]
        for made in (dt.zeros(2, device=spec), dt.ones(shape=[2], device=spec),
                     dt.full((2,), 3.0, device=spec), dt.rand(2, device=spec),
                     dt.randn(2, device=spec), dt.normal(0, 1, size=(2,), device=spec),
                     dt.tensor([1.0, 2.0], device=spec)):
            assert isinstance(made.data, Marked), made
        assert isinstance(nn.Linear(2, 2).to(spec).weight.data, Marked)
        loaded = dt.load(tmp_path / "w.safetensors", map_location=spec)
        assert isinstance(loaded["w"].data, Marked)
    assert B.current().name == "numpy"                         # device= never switches it


def test_the_same_random_numbers_on_either_device(fake_gpu):
    dt.manual_seed(3)
    here = dt.randn(5)
    dt.manual_seed(3)
    there = dt.randn(5, device="cuda")
    np.testing.assert_array_equal(here.numpy(), np.asarray(there.data.view(np.ndarray)))


def test_to_takes_a_device_and_a_dtype_together_as_pytorch():
    x = dt.ones(2)
    assert x.to(dt.device("cpu"), dt.float64).dtype == np.float64
    assert x.to(device="cpu", dtype="float64").dtype == np.float64
    assert x.to("cpu") is not None and x.to(dt.float32).dtype == np.float32
    refused(lambda: x.to("cpu", "cuda"), TypeError, "two devices")
    refused(lambda: x.to(dt.float64, dt.float32), TypeError, "two dtypes")


def test_paddle_shape_keyword_on_the_creation_functions():
    assert dt.zeros(shape=[3]).shape == (3,) and dt.ones(shape=(2, 1)).shape == (2, 1)
    assert dt.full(shape=[2], fill_value=1.5).tolist() == [1.5, 1.5]
    assert dt.normal(0, 1, shape=(2, 1)).shape == (2, 1)
    assert dt.rand(shape=[2, 2]).shape == (2, 2) and dt.randn(shape=[4]).shape == (4,)
    refused(lambda: dt.zeros(size=(2,), shape=(2,)), TypeError, "size=", "shape=", "not both")
    refused(lambda: dt.full(shape=[2]), TypeError, "full", "value to fill")
    refused(lambda: dt.full(fill_value=1.0), TypeError, "full", "give the shape")


def test_a_gpu_device_without_a_gpu_says_what_to_install(monkeypatch):
    if B.gpu_available():
        pytest.skip("this machine has a GPU")
    refused(lambda: dt.ones(2).to(dt.device("cuda")), B.GPUUnavailableError, "CuPy")
    refused(lambda: dt.zeros(2, device="cuda"), B.GPUUnavailableError, "CuPy")


def test_module_to_dtype_casts_float_parameters_and_buffers_only():
    layer = nn.Linear(2, 2)
    layer.register_buffer("count", dt.zeros(1, dtype=dt.int64))
    layer.register_buffer("mean", dt.zeros(2))
    layer.plain = dt.zeros(2)                        # not registered: left behind, as in PyTorch
    weight = layer.weight
    assert layer.to("cpu", dt.float64) is layer and layer.weight is weight
    assert {layer.weight.dtype, layer.bias.dtype, layer.mean.dtype} == {np.dtype("float64")}
    assert layer.count.dtype == np.int64 and layer.plain.dtype == np.float32


def test_module_to_an_integer_dtype_is_refused_and_changes_nothing():
    layer = nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"Linear.to: .*must be a float, got int64"):
        layer.to("cpu", dt.int64)
    assert layer.weight.dtype == np.float32
