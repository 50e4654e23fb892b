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
from bad_input import refused
from dltutor import nn, optim
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


# -- the lazy-layer snippets learners bring from PyTorch (D2L, issue #15) ---------------------
def test_d2l_lazy_initialization_snippet():
    net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
    assert "UninitializedParameter" in repr(net[0].weight)
    refused(lambda: net[0].weight.shape, nn.UninitializedParameterError, "forward")
    X = dt.rand(2, 20)
    assert net(X).shape == (2, 10)
    assert [p.shape for p in net.parameters()] == [(256, 20), (256,), (10, 256), (10,)]
    assert repr(net[0]) == "Linear(in_features=20, out_features=256, bias=True)"


def test_a_lazy_layer_draws_what_the_plain_layer_draws():
    dt.manual_seed(3)
    plain = nn.Linear(5, 4)
    dt.manual_seed(3)
    lazy = nn.LazyLinear(4)
    lazy(dt.ones(1, 5))
    np.testing.assert_array_equal(lazy.weight.numpy(), plain.weight.numpy())
    np.testing.assert_array_equal(lazy.bias.numpy(), plain.bias.numpy())
    bound = 1 / math.sqrt(5)                         # PyTorch's default, from the fan-in
    assert np.abs(lazy.weight.numpy()).max() <= bound


def test_what_needs_values_before_the_first_forward_says_to_run_it():
    net = nn.Sequential(nn.LazyLinear(3))
    weight = net[0].weight
    for call in (lambda: weight.numel(), lambda: init.normal_(weight), lambda: weight * 2,
                 lambda: sum(p.numel() for p in net.parameters())):
        refused(call, nn.UninitializedParameterError, "lazy", "net(X)")
    state = net.state_dict()                         # listed, as PyTorch lists it
    assert list(state) == ["0.weight", "0.bias"] and state["0.weight"] is weight
    refused(lambda: dt.save(state, "unused.safetensors"), nn.UninitializedParameterError,
            "weight of this LazyLinear")


def test_an_optimizer_made_before_the_first_forward_updates_the_created_parameters():
    net = nn.Sequential(nn.LazyLinear(2))
    opt = optim.SGD(net.parameters(), lr=0.1)        # PyTorch allows this too
    x = dt.tensor([[1.0, 2.0, 3.0]])
    loss = net(x).sum()
    before = net[0].weight.numpy().copy()
    loss.backward()
    opt.step()
    # d(sum(x @ W.T + b)) / dW = one row of x per output
    np.testing.assert_allclose(net[0].weight.numpy(), before - 0.1 * np.tile(x.numpy(), (2, 1)),
                               rtol=1e-6)


def test_loading_a_state_dict_creates_a_lazy_layers_parameters():
    full = nn.Sequential(nn.Linear(4, 3))
    lazy = nn.Sequential(nn.LazyLinear(3))
    lazy.load_state_dict(full.state_dict())
    np.testing.assert_array_equal(lazy[0].weight.numpy(), full[0].weight.numpy())
    x = dt.rand(2, 4)
    np.testing.assert_array_equal(lazy(x).numpy(), full(x).numpy())
    wrong = nn.Sequential(nn.LazyLinear(5))
    refused(lambda: wrong.load_state_dict(full.state_dict()), nn.StateDictError, "0.weight",
            "(5, None)")
    assert nn.init is init and "Uninitialized" in repr(wrong[0].weight)   # nothing created


def test_lazy_conv2d_takes_its_channels_from_the_images():
    conv = nn.LazyConv2d(4, kernel_size=3, padding=1)
    assert repr(conv).startswith("LazyConv2d(0, 4")
    assert conv(dt.rand(1, 2, 5, 5)).shape == (1, 4, 5, 5)
    assert conv.weight.shape == (4, 2, 3, 3) and type(conv) is nn.Conv2d
    refused(lambda: nn.LazyConv2d(4, 3)(dt.rand(2, 5)), ValueError, "(N, C, H, W)")


def test_a_lazy_layer_applies_its_initializers_when_it_creates_its_parameters():
    lazy = nn.LazyLinear(3, weight_init=init.Constant(0.5), bias_init=init.Constant(0.0))
    lazy(dt.ones(1, 4))
    assert lazy.weight.shape == (3, 4) and (lazy.weight.numpy() == 0.5).all()
    assert (lazy.bias.numpy() == 0).all()



def test_a_failed_first_forward_leaves_the_lazy_layer_as_it_was():
    """A loaded weight fixes the input size: an input of another width is refused before
    anything changes (the layer stays lazy, its missing bias still uninitialized), and the
    right width works afterwards."""
    layer = nn.LazyLinear(3)
    layer.load_state_dict({"weight": WEIGHT}, strict=False)
    with pytest.raises(ValueError, match=r"shape \(3, 4\).*\(2, 5\).*unchanged"):
        layer(dt.rand(2, 5))
    assert type(layer) is nn.LazyLinear and layer.in_features == 0
    assert is_uninitialized(layer.bias)
    np.testing.assert_array_equal(layer.weight.numpy(), WEIGHT.astype(np.float32))
    assert layer(dt.rand(2, 4)).shape == (2, 3) and type(layer) is nn.Linear
