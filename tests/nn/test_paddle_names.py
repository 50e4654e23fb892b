"""Paddle's spellings (nn.Layer, add_sublayer, set_state_dict, create_parameter, stop_gradient,
nn.ParamAttr with weight_attr=/bias_attr=) are aliases onto the one object model: each does
what the PyTorch-named method does, to the same objects."""
from __future__ import annotations

import math

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn, optim
from dltutor.errors import MessageKeyError
from dltutor.nn import init

from bad_input import GlobalGenerator, refused


# --- nn.Layer, add_sublayer, set_state_dict -----------------------------------------------------
def test_layer_is_module_itself():
    assert nn.Layer is nn.Module

    class Scale(nn.Layer):
        def __init__(self):
            super().__init__()
            self.gain = nn.Parameter(dt.ones(2))

        def forward(self, x):
            return x * self.gain

    assert isinstance(Scale(), nn.Module)
    assert [name for name, _ in Scale().named_parameters()] == ["gain"]


def test_add_sublayer_registers_like_add_module_and_returns_the_sublayer():
    ours, theirs = nn.Sequential(), nn.Sequential()
    fc = nn.Linear(2, 3)
    assert ours.add_sublayer("block 0", fc) is fc
    theirs.add_module("block 0", fc)
    assert ours.get_submodule("block 0") is fc
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["block 0.weight", "block 0.bias"]


def test_add_sublayer_refuses_what_add_module_refuses():
    net = nn.Sequential(nn.Linear(2, 2))
    refused(lambda: net.add_sublayer("a.b", nn.ReLU()), MessageKeyError, "a.b", state=[net])
    refused(lambda: net.add_sublayer("x", nn.Parameter([1.0])), TypeError, "x", "Module",
            state=[net])


def test_set_state_dict_loads_what_matches_and_returns_paddles_pair_of_lists():
    source, target = nn.Linear(2, 3), nn.Linear(2, 3)
    state = source.state_dict()
    state.pop("bias")
    state["extra"] = dt.ones(1)
    before_bias = target.bias.tolist()
    assert target.set_state_dict(state) == (["bias"], ["extra"])
    assert target.weight.tolist() == source.weight.tolist()
    assert target.bias.tolist() == before_bias
    # the same load through PyTorch's name, non-strict:
    other = nn.Linear(2, 3)
    result = other.load_state_dict(state, strict=False)
    assert (list(result.missing_keys), list(result.unexpected_keys)) == (["bias"], ["extra"])
    assert nn.Linear(2, 3).set_state_dict(source.state_dict()) == ([], [])


def test_set_state_dict_refuses_a_shape_mismatch_and_use_structured_name_false():
    target = nn.Linear(2, 3)
    refused(lambda: target.set_state_dict(nn.Linear(2, 4).state_dict()), nn.StateDictError,
            "weight", state=[target])
    refused(lambda: target.set_state_dict(target.state_dict(), use_structured_name=False),
            ValueError, "use_structured_name", state=[target])


# --- create_parameter -------------------------------------------------------------------------
def test_create_parameter_is_new_and_not_registered_until_assigned():
    m = nn.Layer()
    w = m.create_parameter([3, 4])
    assert isinstance(w, nn.Parameter) and w.shape == (3, 4) and w.dtype == dt.float32
    assert w.requires_grad and not w.stop_gradient
    assert list(m.parameters()) == []
    m.w = w
    assert list(m.parameters()) == [w]


def test_create_parameter_defaults_are_paddles_xavier_uniform_and_zero_bias():
    dt.manual_seed(0)
    w = nn.Layer().create_parameter([300, 200]).numpy()
    limit = math.sqrt(6 / (300 + 200))
    assert np.abs(w).max() <= limit
    assert w.std() == pytest.approx(limit / math.sqrt(3), rel=0.02)
    b = nn.Layer().create_parameter([5], is_bias=True)
    assert b.tolist() == [0.0] * 5
    assert nn.Layer().create_parameter([2], dtype="float64", is_bias=True).dtype == dt.float64


def test_create_parameter_initializer_order_attr_then_default_initializer():
    m = nn.Layer()
    attr = nn.ParamAttr(initializer=init.Constant(3.0), learning_rate=0.5, trainable=False,
                        need_clip=False)
    p = m.create_parameter([2, 2], attr=attr, default_initializer=init.Constant(1.0))
    assert p.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert (p.lr_mult, p.requires_grad, p.need_clip) == (0.5, False, False)
    q = m.create_parameter([2], is_bias=True, default_initializer=init.Constant(1.0))
    assert q.tolist() == [1.0, 1.0]
    assert m.create_parameter([2], attr=False) is None


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(shape=3), TypeError, ["create_parameter", "shape"]),
    (dict(shape=[-1, 2]), TypeError, ["shape", "-1"]),
    (dict(shape=[2, 2], dtype="int64"), TypeError, ["dtype", "int64"]),
    (dict(shape=[4]), ValueError, ["(4,)", "is_bias=True"]),
    (dict(shape=[2, 2], default_initializer=init.Normal), TypeError, ["default_initializer"]),
    (dict(shape=[2, 2], attr=init.Constant(1.0)), TypeError, ["attr", "ParamAttr"]),
    (dict(shape=[2, 2], is_bias=1), TypeError, ["is_bias"]),
])
def test_create_parameter_refuses_bad_input_and_draws_nothing(kwargs, error, words):
    m = nn.Layer()
    refused(lambda: m.create_parameter(**kwargs), error, *words, state=[m, GlobalGenerator()])


# --- stop_gradient ------------------------------------------------------------------------------
def test_stop_gradient_is_not_requires_grad_both_ways():
    t = dt.zeros(2)
    assert t.stop_gradient is True
    t.stop_gradient = False
    assert t.requires_grad is True and t.stop_gradient is False
    p = nn.Linear(2, 2).weight
    assert p.stop_gradient is False
    p.stop_gradient = True
    assert p.requires_grad is False
    p.requires_grad_(True)
    assert p.stop_gradient is False


def test_stop_gradient_refuses_what_requires_grad_refuses():
    ints = dt.tensor([1, 2])
    refused(lambda: setattr(ints, "stop_gradient", False), TypeError, "floating", state=[ints])
    t = dt.zeros(2)
    refused(lambda: setattr(t, "stop_gradient", 0), TypeError, "stop_gradient", state=[t])
    y = dt.ones(2, requires_grad=True) * 2
    refused(lambda: setattr(y, "stop_gradient", True), RuntimeError, "leaf")


# --- ParamAttr on Linear and Conv2d -------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda **kw: nn.Linear(3, 2, **kw),
    lambda **kw: nn.Conv2d(3, 2, 3, **kw),
], ids=["Linear", "Conv2d"])
def test_param_attr_lands_on_the_parameters_attributes(make):
    decay, fill = optim.L2Decay(0.01), init.Constant(0.25)
    layer = make(weight_attr=nn.ParamAttr(learning_rate=0.5, regularizer=decay, need_clip=False,
                                          trainable=False, initializer=fill),
                 bias_attr=nn.ParamAttr(initializer=init.Constant(-1.0), learning_rate=2.0))
    w, b = layer.weight, layer.bias
    assert (w.lr_mult, w.regularizer, w.need_clip, w.requires_grad) == (0.5, decay, False, False)
    assert np.all(w.numpy() == 0.25)
    assert (b.lr_mult, b.regularizer, b.need_clip, b.requires_grad) == (2.0, None, True, True)
    assert np.all(b.numpy() == -1.0)
    assert layer.weight_init is fill          # reset_parameters() draws it again
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]


def test_bias_attr_false_means_no_bias_and_default_attrs_change_nothing():
    layer = nn.Linear(3, 2, bias_attr=False)
    assert layer.bias is None and [n for n, _ in layer.named_parameters()] == ["weight"]
    assert "bias=False" in repr(nn.Conv2d(1, 1, 1, bias_attr=False))
    dt.manual_seed(0)
    plain = nn.Linear(3, 2)
    dt.manual_seed(0)
    attrs = nn.Linear(3, 2, weight_attr=nn.ParamAttr(), bias_attr=True)
    assert plain.weight.tolist() == attrs.weight.tolist()
    assert plain.bias.tolist() == attrs.bias.tolist()
    assert (attrs.weight.lr_mult, attrs.weight.need_clip) == (1.0, True)


def test_weight_init_and_weight_attr_without_initializer_combine():
    layer = nn.Linear(2, 2, weight_init=init.Constant(1.0),
                      weight_attr=nn.ParamAttr(learning_rate=0.0))
    assert layer.weight.tolist() == [[1.0, 1.0], [1.0, 1.0]] and layer.weight.lr_mult == 0.0


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(weight_init=init.Constant(1.0), weight_attr=nn.ParamAttr(initializer=init.Constant(2.0))),
     ValueError, ["Linear", "weight_init=", "keep one"]),
    (dict(bias_init=init.Constant(1.0), bias_attr=nn.ParamAttr(initializer=init.Constant(2.0))),
     ValueError, ["bias_init=", "keep one"]),
    (dict(bias=False, bias_attr=nn.ParamAttr()), ValueError, ["bias=False", "bias_attr"]),
    (dict(bias_attr=False, bias_init=init.Constant(0.0)), ValueError, ["bias_attr=False"]),
    (dict(weight_attr=init.Constant(1.0)), TypeError, ["weight_attr", "ParamAttr", "weight_init"]),
    (dict(weight_attr=False), TypeError, ["weight_attr"]),
    (dict(bias_attr="b"), TypeError, ["bias_attr"]),
])
def test_linear_refuses_contradicting_attrs_before_drawing(kwargs, error, words):
    refused(lambda: nn.Linear(2, 2, **kwargs), error, *words, state=[GlobalGenerator()])


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(learning_rate=-0.5), ValueError, ["ParamAttr", "learning_rate", "-0.5"]),
    (dict(learning_rate=float("inf")), ValueError, ["learning_rate", "finite"]),
    (dict(learning_rate=float("nan")), ValueError, ["learning_rate"]),
    (dict(learning_rate="1"), ValueError, ["learning_rate"]),
    (dict(regularizer=0.01), TypeError, ["ParamAttr", "regularizer", "weight_decay"]),
    (dict(initializer=3), TypeError, ["ParamAttr", "initializer"]),
    (dict(initializer=init.XavierUniform), TypeError, ["initializer=XavierUniform(...)"]),
    (dict(trainable=0), TypeError, ["trainable"]),
    (dict(need_clip="no"), TypeError, ["need_clip"]),
    (dict(name="fc_w"), ValueError, ["name", "fc_w", "state_dict"]),
])
def test_param_attr_checks_its_arguments_when_made(kwargs, error, words):
    refused(lambda: nn.ParamAttr(**kwargs), error, *words)


def test_param_attr_uses_parameters_own_checks():
    with pytest.raises(ValueError, match="Parameter: lr_mult must be a number >= 0 and finite"):
        nn.Parameter([1.0], lr_mult=float("inf"))
    with pytest.raises(TypeError, match="Parameter: regularizer must be"):
        nn.Parameter([1.0], regularizer=0.01)
