"""Lazy layers (dltutor/nn/lazy.py): what a partly loaded state dict leaves at the first forward,
and which axis gives LazyLinear its ``in_features``.

A state dict loaded into an uninitialized lazy layer creates the parameters it names with their
loaded shapes (as in PyTorch); the first forward then draws PyTorch's default values for the
parameters still missing, with the same draws as the plain layer, and keeps what was loaded.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn
from dltutor.nn import init
from dltutor.nn.parameter import is_uninitialized

BIAS = np.array([1.0, -2.0, 3.0])
WEIGHT = np.arange(12.0).reshape(3, 4) / 10


def affine(x, weight, bias):
    """What a Linear layer computes, in NumPy: ``x @ weight.T + bias`` over the last axis."""
    return x @ weight.T + bias


# -- a state dict loaded in part ------------------------------------------------------------------
def test_a_lazy_linear_keeps_a_loaded_bias_and_draws_its_weight_at_the_first_forward():
    """Loading only the bias creates the bias; the first forward must create the weight from
    the input without drawing over the bias, and draw the weight a plain Linear would draw."""
    net = nn.Sequential(nn.LazyLinear(3))
    result = net.load_state_dict({"0.bias": BIAS}, strict=False)
    assert result.missing_keys == ["0.weight"] and result.unexpected_keys == []
    assert is_uninitialized(net[0].weight) and not is_uninitialized(net[0].bias)
    bias = net[0].bias
    dt.manual_seed(5)
    x = dt.rand(2, 5)
    dt.manual_seed(7)
    y = net(x)
    np.testing.assert_array_equal(net[0].bias.numpy(), BIAS.astype(np.float32))
    assert net[0].bias is bias and net[0].weight.shape == (3, 5) and type(net[0]) is nn.Linear
    dt.manual_seed(7)
    plain = nn.Linear(5, 3)
    np.testing.assert_array_equal(net[0].weight.numpy(), plain.weight.numpy())
    np.testing.assert_allclose(y.numpy(), affine(x.numpy(), plain.weight.numpy(), BIAS),
                               rtol=1e-6)


def test_a_weight_loaded_before_the_first_forward_stays_and_fixes_in_features():
    """A loaded weight already has its in_features: the first forward keeps it, draws only the
    bias (PyTorch's default range for that fan-in, the plain layer's draw) and refuses an
    input of another width."""
    layer = nn.LazyLinear(3)
    result = layer.load_state_dict({"weight": WEIGHT}, strict=False)
    assert result.missing_keys == ["bias"]
    assert layer.weight.shape == (3, 4) and is_uninitialized(layer.bias)
    dt.manual_seed(11)
    x = dt.rand(2, 4)
    dt.manual_seed(13)
    y = layer(x)
    assert layer.in_features == 4 and type(layer) is nn.Linear
    np.testing.assert_array_equal(layer.weight.numpy(), WEIGHT.astype(np.float32))
    assert np.abs(layer.bias.numpy()).max() <= 1 / math.sqrt(4)
    dt.manual_seed(13)
    np.testing.assert_array_equal(layer.bias.numpy(), nn.Linear(4, 3).bias.numpy())
    np.testing.assert_allclose(y.numpy(), affine(x.numpy(), WEIGHT, layer.bias.numpy()),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="in_features=4"):
        layer(dt.rand(2, 5))


def test_a_loaded_value_wins_over_the_lazy_layers_own_initializers():
    """weight_init and bias_init fill what the first forward creates, not what was loaded."""
    layer = nn.LazyLinear(3, weight_init=init.Constant(0.5), bias_init=init.Constant(0.0))
    layer.load_state_dict({"bias": BIAS}, strict=False)
    layer(dt.ones(1, 4))
    np.testing.assert_array_equal(layer.bias.numpy(), BIAS.astype(np.float32))
    assert layer.weight.shape == (3, 4) and (layer.weight.numpy() == 0.5).all()


def test_a_lazy_conv2d_keeps_a_loaded_bias_at_its_first_forward():
    """LazyConv2d shares the creation code: only its weight is drawn, from the channels."""
    conv = nn.LazyConv2d(3, kernel_size=3)
    conv.load_state_dict({"bias": BIAS}, strict=False)
    conv(dt.rand(1, 2, 5, 5))
    np.testing.assert_array_equal(conv.bias.numpy(), BIAS.astype(np.float32))
    assert conv.weight.shape == (3, 2, 3, 3) and np.abs(conv.weight.numpy()).max() > 0


# -- which axis is in_features ---------------------------------------------------------------------
def test_lazy_linear_takes_in_features_from_the_last_axis_of_a_3d_input():
    """(batch, seq, features): in_features is the last axis, not axis 1, and the layer maps
    every position, giving (batch, seq, out_features)."""
    layer = nn.LazyLinear(4)
    x = dt.rand(2, 5, 7)
    y = layer(x)
    assert layer.in_features == 7 and layer.weight.shape == (4, 7) and y.shape == (2, 5, 4)
    np.testing.assert_allclose(y.numpy(), affine(x.numpy(), layer.weight.numpy(),
                                                 layer.bias.numpy()), rtol=1e-5, atol=1e-6)
    assert layer(dt.rand(3, 7)).shape == (3, 4)          # now a plain Linear(7, 4)


def test_lazy_linear_takes_in_features_from_a_1d_input():
    """A single sample of shape (features,) sizes the weight too, and gives (out_features,)."""
    layer = nn.LazyLinear(4)
    x = dt.rand(7)
    y = layer(x)
    assert layer.in_features == 7 and layer.weight.shape == (4, 7) and y.shape == (4,)
    np.testing.assert_allclose(y.numpy(), affine(x.numpy(), layer.weight.numpy(),
                                                 layer.bias.numpy()), rtol=1e-5, atol=1e-6)
