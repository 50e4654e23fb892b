"""Devices beyond the tutorial line (dltutor/devices.py, Tensor.to, Module.to, Tensor.copy_): a
device compared with a string, dtypes given to ``to()`` as strings, and ``copy_`` into a leaf
that requires grad.

A dt.device equals the names of its device (``dt.device("cuda") == "gpu"``), because a
tensor's ``.device`` is a string here ("cpu", "gpu") and ``x.device == device`` must read true
for a tensor on that device. (PyTorch's torch.device equals no string: there ``x.device`` is a
torch.device.)
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn
from dltutor.devices import DEVICE_NAMES, backend_for, device

from bad_input import refused


@pytest.mark.parametrize("spec, equal, unequal", [
    ("cpu", ["cpu"], ["cpu:0", "cuda", "gpu", "cuda:0", "", "CPU", "numpy"]),
    ("cpu:0", ["cpu:0"], ["cpu", "cuda:0"]),
    ("cuda", ["cuda", "gpu"], ["cuda:0", "cpu", "gpu:0"]),
    ("gpu", ["cuda", "gpu"], ["cuda:0", "cpu"]),
    ("cuda:0", ["cuda:0"], ["cuda", "gpu", "cpu:0"]),
])
def test_a_device_equals_exactly_the_names_of_its_device_from_either_side(spec, equal, unequal):
    d = device(spec)
    for name in equal:
        assert d == name and name == d and not d != name
    for name in unequal:
        assert d != name and name != d and not d == name


def test_a_device_compared_with_something_else_is_unequal_not_an_error():
    d = device("cpu")
    for other in (None, 0, 3.5, ["cpu"], ("cpu", None), b"cpu"):
        assert d != other and not d == other
    assert device("cpu") == device("cpu") and device("cuda") == device("gpu")
    assert device("cuda") != device("cuda:0") and device("cpu") != device("cpu:0")


def test_equal_devices_hash_alike_and_a_device_can_be_rebuilt_from_one():
    assert len({device("cuda"), device("gpu"), device("cuda", None)}) == 1
    assert len({device("cpu"), device("cpu:0"), device("cuda:0")}) == 3
    assert device(device("cuda:0")) == device("cuda", 0)
    assert device(device("cuda"), 0) == device("cuda:0")       # an index given wins
    assert device("cpu", 0) == "cpu:0" and str(device("cpu", 0)) == "cpu:0"
    assert repr(device("gpu")) == "device(type='cuda')"


def test_a_tensor_device_compares_true_with_its_device():
    x = dt.zeros(2)
    assert x.device == device("cpu") and device("cpu") == x.device
    assert x.device != device("cuda")


@pytest.mark.parametrize("spec, error, words", [
    ("cuda:1", ValueError, ["cuda:1", "one GPU"]),
    ("tpu", ValueError, ["tpu", "unknown device"]),
    ("CPU", ValueError, ["CPU"]),
    (3, TypeError, ["int"]),
    (None, TypeError, ["NoneType"]),
])
def test_a_device_that_does_not_exist_is_refused_by_name(spec, error, words):
    refused(lambda: device(spec), error, *words)


def test_every_device_name_means_the_device_the_table_says():
    for name, (kind, index) in DEVICE_NAMES.items():
        d = device(name)
        assert (d.type, d.index) == (kind, index)
    assert backend_for("cpu").name == backend_for(device("cpu:0")).name == "numpy"
    refused(lambda: backend_for("cuda:3"), ValueError, "cuda:3")
    refused(lambda: backend_for(1.5), TypeError, "float")


@pytest.mark.parametrize("name, dtype", [
    ("float64", np.float64), ("double", np.float64), ("float16", np.float16),
    ("half", np.float16), ("int64", np.int64), ("long", np.int64), ("int32", np.int32),
    ("bool", np.bool_), ("float32", np.float32),
])
def test_a_dtype_given_to_to_as_a_string_is_a_dtype_not_a_device(name, dtype):
    x = dt.tensor([1.0, 2.0])
    assert x.to(name).dtype == dtype and x.to(name).device == "cpu"
    assert x.to("cpu", name).dtype == dtype and x.to(name, "cpu").dtype == dtype
    assert x.to(dtype=name).dtype == dtype and x.to(device="cpu", dtype=name).dtype == dtype
    layer = nn.Linear(2, 1)
    if np.dtype(dtype).kind == "f":
        assert layer.to(name) is layer and layer.weight.dtype == dtype
    else:
        refused(lambda: layer.to(name), TypeError, "Linear.to", "float", state=[layer])


def test_to_with_nothing_to_change_returns_the_tensor_itself():
    x = dt.ones(2)
    assert x.to("cpu") is x and x.to("float32") is x and x.to(dt.float32) is x
    assert x.to() is x and x.to(device="cpu", dtype="float32") is x
    y = x.to("float64")
    assert y is not x and x.dtype == np.float32


@pytest.mark.parametrize("args, kwargs, error, words", [
    (("float64", "int32"), {}, TypeError, ["two dtypes", "float64", "int32"]),
    (("cpu", "cuda"), {}, TypeError, ["two devices"]),
    (("cpu",), {"device": "cpu"}, TypeError, ["two devices"]),
    (("float64",), {"dtype": "float32"}, TypeError, ["two dtypes"]),
    (("float65",), {}, ValueError, ["float65"]),
    ((3,), {}, TypeError, ["3"]),
])
def test_a_to_call_that_cannot_be_read_is_refused_and_changes_nothing(args, kwargs, error,
                                                                     words):
    x = dt.tensor([1.0, 2.0], requires_grad=True)
    refused(lambda: x.to(*args, **kwargs), error, *words, state=[x])
    layer = nn.Linear(2, 1)
    refused(lambda: layer.to(*args, **kwargs), error, state=[layer])


def test_gradients_flow_back_through_to_with_a_string_dtype():
    w = dt.tensor([1.0, 2.0], requires_grad=True)
    (w.to("float64") * 3).sum().backward()
    assert w.grad.dtype == np.float32 and w.grad.tolist() == [3.0, 3.0]


def test_copy_into_a_leaf_that_requires_grad_is_refused_and_changes_nothing():
    p = nn.Parameter([1.0, 2.0])
    w = dt.tensor([3.0], requires_grad=True)
    for target in (p, w):
        refused(functools.partial(target.copy_, dt.tensor([9.0])), RuntimeError, "copy_",
                "requires grad", "no_grad", state=[target])
    w.grad = dt.tensor([1.0])
    refused(lambda: w.copy_([5.0]), RuntimeError, "copy_", state=[w])      # grad kept


def test_copy_into_a_leaf_that_requires_grad_works_under_no_grad_and_keeps_its_identity():
    p = nn.Parameter([1.0, 2.0])
    data = p.data
    with dt.no_grad():
        assert p.copy_(dt.tensor([5.0])) is p
    assert p.tolist() == [5.0, 5.0] and p.data is data and p.requires_grad
    assert p.grad is None and p.is_leaf
    with dt.no_grad():
        p.copy_(np.array([1, 2]))                       # converted to the parameter's dtype
    assert p.dtype == np.float32 and p.tolist() == [1.0, 2.0]


def test_copy_into_a_tensor_that_does_not_require_grad_needs_no_no_grad():
    p = nn.Parameter([1.0, 2.0]).requires_grad_(False)
    p.copy_([3.0, 4.0])
    assert p.tolist() == [3.0, 4.0]
    x = dt.zeros(2, 2)
    x.copy_(dt.tensor([1.0, 2.0]))
    assert x.tolist() == [[1.0, 2.0], [1.0, 2.0]]


@pytest.mark.parametrize("src, words", [
    (dt.ones(3), ["copy_"]), ("abc", ["copy_"]), (None, ["copy_"]),
])
def test_copy_of_what_does_not_fit_is_refused_and_changes_nothing(src, words):
    p = nn.Parameter([1.0, 2.0])
    with dt.no_grad():
        refused(lambda: p.copy_(src), (TypeError, ValueError), *words, state=[p])
