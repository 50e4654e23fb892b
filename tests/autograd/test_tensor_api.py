"""The tensor API as code learners bring from PyTorch writes it runs as they wrote it (issue #15):
max / min with a dimension, creation, tensor methods (the lazy layers' snippets are in
tests/nn/test_lazy_layers.py).

Each test is a snippet in the shape D2L or the PyTorch tutorials write it, with the kit's
numbers checked against a formula written out here (NumPy), never against the kit itself.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import dltutor as dt
from bad_input import refused
from dltutor import nn
from dltutor.nn import functional as F
from dltutor.nn import init


# -- max / min with a dimension: (values, indices) -------------------------------------------
def test_max_over_classes_returns_predictions_even_for_a_batch_of_two():
    # The PyTorch tutorial idiom. Before #15, dt.max(out, 1) returned one tensor of maxima and
    # the unpacking below split it into its two rows without an error.
    out = dt.tensor([[0.1, 2.0, -1.0], [3.0, 0.5, 0.2]])
    _, predicted = dt.max(out, 1)
    assert predicted.tolist() == [1, 0] and predicted.dtype == dt.int64
    values, indices = out.max(dim=1)
    assert values.tolist() == pytest.approx([2.0, 3.0]) and indices.tolist() == [1, 0]
    assert out.max(1).values is not None and out.max(1).indices.tolist() == [1, 0]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_and_min_along_a_dim_match_numpy(seed, keepdim):
    x = np.random.default_rng(seed).permutation(24).reshape(2, 3, 4).astype(np.float64)
    t = dt.tensor(x)
    for dim in range(-3, 3):
        values, indices = t.max(dim=dim, keepdim=keepdim)
        np.testing.assert_array_equal(values.numpy(), x.max(axis=dim, keepdims=keepdim))
        np.testing.assert_array_equal(indices.numpy(), x.argmax(axis=dim, keepdims=keepdim))
        values, indices = dt.min(t, dim, keepdim=keepdim)
        np.testing.assert_array_equal(values.numpy(), x.min(axis=dim, keepdims=keepdim))
        np.testing.assert_array_equal(indices.numpy(), x.argmin(axis=dim, keepdims=keepdim))


def test_max_along_a_dim_sends_a_tied_gradient_to_the_picked_element_only():
    # PyTorch: max(x, dim) routes the gradient through its index; max(x) / amax split ties.
    x = dt.tensor([[2.0, 2.0, 1.0]], requires_grad=True)
    values, indices = x.max(dim=1)
    values.sum().backward()
    assert indices.tolist() == [0] and x.grad.tolist() == [[1.0, 0.0, 0.0]]
    x.grad = None
    x.max().backward()
    assert x.grad.tolist() == [[0.5, 0.5, 0.0]]
    x.grad = None
    x.amax(dim=1).sum().backward()
    assert x.grad.tolist() == [[0.5, 0.5, 0.0]]


def test_max_of_two_tensors_is_the_elementwise_maximum():
    a, b = dt.tensor([1.0, 5.0]), dt.tensor([3.0, 2.0])
    assert dt.max(a, b).tolist() == [3.0, 5.0] and dt.min(a, b).tolist() == [1.0, 2.0]


def test_max_with_several_dims_points_to_amax():
    refused(lambda: dt.max(dt.ones(2, 3), dim=(0, 1)), TypeError, "amax")
    assert dt.amax(dt.ones(2, 3), dim=(0, 1)).item() == 1.0


def test_softmax_takes_dim_and_refuses_several():
    x = dt.tensor([[1.0, 2.0], [3.0, 5.0]])
    expected = np.exp(x.numpy()) / np.exp(x.numpy()).sum(axis=0)
    np.testing.assert_allclose(F.softmax(x, dim=0).numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(x.log_softmax(dim=0).numpy(), np.log(expected), rtol=1e-6)
    refused(lambda: F.softmax(x, dim=(0, 1)), TypeError, "softmax", "integer")


# -- creation ----------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [dt.zeros, dt.ones, dt.rand, dt.randn])
def test_creation_takes_sizes_a_tuple_a_list_or_size(make):
    assert make(2, 3).shape == make((2, 3)).shape == make([2, 3]).shape == (2, 3)
    assert make(size=(2, 3)).shape == (2, 3)
    refused(lambda: make(2, size=(2,)), TypeError, "size")


def test_normal_like_d2l_draws_the_asked_shape_and_spread():
    # D2L, linear regression from scratch: w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)
    dt.manual_seed(0)
    w = dt.normal(0, 0.01, size=(2, 1), requires_grad=True)
    assert w.shape == (2, 1) and w.requires_grad and w.dtype == dt.float32
    dt.manual_seed(1)
    many = dt.normal(3.0, 2.0, (200_000,)).numpy().astype(np.float64)
    # standard errors: 2 / sqrt(n) for the mean, about 2 / sqrt(2n) for the std
    assert abs(many.mean() - 3.0) < 5 * 2 / math.sqrt(many.size)
    assert abs(many.std() - 2.0) < 5 * 2 / math.sqrt(2 * many.size)
    # tensors of means: one draw per element, here with std 0 exactly the means
    assert dt.normal(dt.tensor([1.0, -4.0]), 0.0).tolist() == [1.0, -4.0]
    refused(lambda: dt.normal(0, -1.0, (2,)), ValueError, "std")


def test_randint_like_pytorch_leaves_out_low():
    dt.manual_seed(0)
    labels = dt.randint(3, (1000,))
    assert labels.dtype == dt.int64 and set(labels.tolist()) == {0, 1, 2}


# -- tensor methods ----------------------------------------------------------------------------
def test_norm_matches_its_formula_for_every_p():
    x = np.random.default_rng(0).normal(size=(3, 4))
    t = dt.tensor(x)
    assert t.norm().item() == pytest.approx(math.sqrt((x ** 2).sum()))
    np.testing.assert_allclose(dt.norm(t, p=1, dim=1).numpy(), np.abs(x).sum(axis=1))
    np.testing.assert_allclose(t.norm(p=3, dim=0).numpy(),
                               (np.abs(x) ** 3).sum(axis=0) ** (1 / 3))
    np.testing.assert_allclose(t.norm(p=math.inf, dim=1, keepdim=True).numpy(),
                               np.abs(x).max(axis=1, keepdims=True))
    assert t.norm(p="fro").item() == pytest.approx(np.linalg.norm(x))


def test_norm_of_zeros_has_gradient_zero_not_nan():
    x = dt.zeros(3, requires_grad=True)
    x.norm().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_d2l_sgd_from_scratch_zeroes_gradients_in_place():
    # D2L: with torch.no_grad(): param -= lr * param.grad / batch_size; param.grad.zero_()
    w = dt.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    with dt.no_grad():
        w -= 0.1 * w.grad / 2
        w.grad.zero_()
    assert w.tolist() == pytest.approx([0.9, 1.8]) and w.grad.tolist() == [0.0, 0.0]


def test_fill_and_random_fills_in_place():
    t = dt.zeros(2, 3)
    assert t.fill_(7) is t and t.tolist() == [[7.0] * 3] * 2
    dt.manual_seed(0)
    a = dt.zeros(1000).normal_(1.0, 0.5)
    dt.manual_seed(0)
    b = init.normal_(nn.Parameter(dt.zeros(1000)), 1.0, 0.5)
    np.testing.assert_array_equal(a.numpy(), b.numpy())        # one implementation
    u = dt.zeros(1000).uniform_(-2, 3).numpy()
    assert u.min() >= -2 and u.max() < 3


def test_in_place_fills_of_a_parameter_need_no_grad_as_in_pytorch():
    p = nn.Parameter(dt.ones(3))
    refused(lambda: p.fill_(0), RuntimeError, "fill_", "no_grad", state=[p])
    refused(lambda: p.normal_(0, 1), RuntimeError, "init.normal_", state=[p])
    refused(lambda: dt.ones(2).fill_([1, 2]), ValueError, "fill_", "one value")
    refused(lambda: dt.ones(2).fill_(None), TypeError, "fill_")
    with dt.no_grad():
        p.fill_(0.5)
    assert p.tolist() == [0.5, 0.5, 0.5]


def test_dtype_conversions_have_pytorchs_names():
    t = dt.tensor([1, 2])
    assert t.float().dtype == dt.float == dt.float32
    assert t.double().dtype == dt.double == dt.float64 and dt.long == dt.int64
    assert t.type() == "int64" and t.type(dt.float32).dtype == dt.float32
    assert t.to(dt.float64).dtype == dt.float64 and t.to("cpu").dtype == dt.int64
    assert dt.zeros(2, dtype=dt.half).dtype == np.float16


def test_star_import_keeps_pythons_own_float_int_and_bool():
    scope: dict = {}
    exec("from dltutor import *", scope)
    assert "float" not in scope and "int" not in scope and "bool" not in scope


def test_format_spec_on_a_loss():
    loss = dt.tensor([[0.123456]])
    assert f"loss {loss:.3f}" == "loss 0.123"



# --- the two places a Tensor's fields are set ----------------------------------------------------
def test_every_way_of_making_a_tensor_sets_every_field():
    """``init_tensor`` lists a Tensor's fields and ``Function.apply`` writes the list out (every
    op runs it): each way of making a tensor must set every slot, with the same defaults."""
    from dltutor.autograd.function import make_tensor
    from dltutor.autograd.tensor import Tensor

    fields = [name for name in Tensor.__slots__ if name != "__weakref__"]
    x = dt.tensor([1.0, 2.0], requires_grad=True)
    made = {"Tensor()": dt.tensor([1.0]), "make_tensor": make_tensor(np.ones(2)),
            "apply, recorded": x * 2, "apply, not recorded": x.detach() * 2,
            "Parameter": dt.nn.Parameter([1.0])}
    for how, t in made.items():
        values = {name: getattr(t, name) for name in fields}   # AttributeError if one is unset
        assert values["grad"] is None and values["_hooks"] is None, how
        assert isinstance(values["requires_grad"], bool), how
        assert (values["_fn"] is not None) == (how == "apply, recorded"), how
