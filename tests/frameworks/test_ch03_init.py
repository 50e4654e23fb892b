"""Chapter 03 (initialization): what it says PyTorch 2.13 and Paddle 3.3 do, run in them."""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import torch
from torch import nn

from chapters import chapter_definition, paddle_dynamic
from claims import claim


# ---------------------------------------------------------------------------------- PyTorch


@claim("torch-init-linear-default-uniform-weight-bias")
def test_torch_linear_default_is_uniform_one_over_sqrt_fan_in_for_weight_and_bias():
    torch.manual_seed(0)
    wide = nn.Linear(1000, 500)
    bound = 1 / math.sqrt(1000)
    w, b = wide.weight.detach().numpy(), wide.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.999 * bound and np.abs(b).max() > 0.9 * bound
    assert abs(w.std() / (bound / math.sqrt(3)) - 1) < 0.01        # uniform, not normal
    assert abs(b.std() / (bound / math.sqrt(3)) - 1) < 0.15        # the bias too, not zeros


@claim("torch-init-linear-kaiming-a-sqrt5")
def test_torch_linear_reset_parameters_is_kaiming_uniform_a_sqrt5_weight_then_bias():
    source = inspect.getsource(nn.Linear.reset_parameters)
    assert "kaiming_uniform_(self.weight, a=math.sqrt(5))" in source
    gain = nn.init.calculate_gain("leaky_relu", math.sqrt(5))
    assert math.isclose(gain, 1 / math.sqrt(3))
    assert math.isclose(gain, math.sqrt(2 / (1 + 5)))
    assert math.isclose(math.sqrt(3) * gain / math.sqrt(1000), 1 / math.sqrt(1000))
    torch.manual_seed(0)
    layer = nn.Linear(1000, 500)
    torch.manual_seed(0)
    by_hand = nn.init.kaiming_uniform_(torch.empty(500, 1000), a=math.sqrt(5))
    bias = nn.init.uniform_(torch.empty(500), -1 / math.sqrt(1000), 1 / math.sqrt(1000))
    assert torch.equal(by_hand, layer.weight.detach())            # bit for bit: weight first ...
    assert torch.equal(bias, layer.bias.detach())                 # ... then the bias


@claim("torch-init-calculate-gain-table")
def test_torch_calculate_gain_table():
    g = nn.init.calculate_gain
    assert g("linear") == 1 and g("sigmoid") == 1
    assert math.isclose(g("tanh"), 5 / 3)
    assert math.isclose(g("relu"), math.sqrt(2))
    assert math.isclose(g("leaky_relu"), math.sqrt(2 / (1 + 0.01 ** 2)))   # default slope 0.01
    assert math.isclose(g("leaky_relu", 0.2), math.sqrt(2 / (1 + 0.2 ** 2)))
    assert math.isclose(g("selu"), 3 / 4)


@claim("torch-init-data-is-a-tensor")
def test_torch_data_is_a_tensor_with_in_place_methods():
    torch.manual_seed(0)
    m = nn.Linear(4, 8)
    assert isinstance(m.weight.data, torch.Tensor)
    m.weight.data.normal_(0, 0.01)                   # the D2L / tutorial lines run ...
    m.bias.data.fill_(0)
    assert torch.all(m.bias == 0)                     # ... and change the parameter itself
    assert 0.002 < float(m.weight.detach().std()) < 0.02
    assert isinstance(m.weight.data.abs(), torch.Tensor)


@claim("torch-init-tensor-methods-need-no-grad")
def test_torch_in_place_methods_on_a_parameter_need_no_grad():
    m = nn.Linear(4, 8)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation"):
        m.weight.normal_(0, 0.01)
    with torch.no_grad():
        m.weight.normal_(0, 0.01)
        m.bias.fill_(0)
    assert torch.all(m.bias == 0) and float(m.weight.detach().abs().max()) < 0.05


@claim("torch-init-functions-in-place")
def test_torch_init_functions_change_an_existing_tensor_in_place():
    layer = nn.Linear(400, 300)
    weight = layer.weight
    returned = nn.init.normal_(layer.weight, 0.0, 0.02)
    assert returned is weight and layer.weight is weight             # the same object
    assert abs(float(layer.weight.detach().std()) - 0.02) < 0.001    # with new values


@claim("torch-module-double-float64")
def test_torch_module_double_makes_parameters_float64():
    net = nn.Sequential(nn.Linear(4, 3), nn.Tanh()).double()
    assert all(p.dtype == torch.float64 for p in net.parameters())
    assert net(torch.randn(2, 4, dtype=torch.float64)).dtype == torch.float64


@claim("torch-forward-hook-output-stds")
def test_torch_the_chapters_hook_code_runs_with_torch_for_dt():
    output_stds = chapter_definition("03_initialization", "def output_stds(model, x):",
                                     {"dt": torch})["output_stds"]     # torch for dt
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.Tanh()) for _ in range(3)]).double()
    x = torch.randn(16, 8, dtype=torch.float64)
    stds = output_stds(model, x)
    expected, h = [], x
    with torch.no_grad():
        for block in model:
            h = block(h)
            expected.append(h.numpy().std())                          # NumPy: divides by n
    assert len(stds) == 3 and np.allclose(stds, expected, rtol=1e-12)
    assert all(len(b._forward_hooks) == 0 for b in model)             # the handles removed them


# ---------------------------------------------------------------------------------- Paddle


def _d2l_init_normal(paddle, nn):
    def init_normal(m):                                  # D2L's Paddle code, verbatim
        if type(m) == nn.Linear:
            paddle.nn.initializer.Normal(mean=0.0, std=0.01)
            paddle.zeros(m.bias)
    return init_normal


def _d2l_my_init(paddle, nn):
    def my_init(m):                                      # D2L's Paddle code, verbatim
        if type(m) == nn.Linear:
            paddle.nn.initializer.XavierUniform(m.weight, -10, 10)
            h = paddle.abs(m.weight) >= 5
            h = paddle.to_tensor(h)
            m = paddle.to_tensor(m.weight)
            m *= h
    return my_init


@claim("paddle-init-d2l-code-typeerror")
def test_paddle_d2l_init_code_stops_with_a_type_error_in_paddle_3():
    paddle = paddle_dynamic()
    nn = paddle.nn
    paddle.seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    before = [p.numpy().copy() for p in net.parameters()]
    with pytest.raises(TypeError, match=r"full\(\): argument \(position 1\) must be list, "
                                        r"tuple, int, or Tensor, but got EagerParamBase"):
        net.apply(_d2l_init_normal(paddle, nn))          # paddle.zeros(m.bias)
    with pytest.raises(TypeError, match="Type promotion only support calculations between "
                                        "floating-point numbers"):
        net.apply(_d2l_my_init(paddle, nn))              # m *= h: float32 times bool
    assert all(np.array_equal(a, p.numpy()) for a, p in zip(before, net.parameters()))
    zeros = paddle.zeros(net[0].bias.shape)              # given a shape: only a new tensor
    assert zeros is not net[0].bias and np.array_equal(net[0].bias.numpy(), before[1])


@claim("paddle-init-object-acts-only-when-called")
def test_paddle_initializer_object_acts_only_when_called_or_given_to_a_layer():
    paddle = paddle_dynamic()
    nn = paddle.nn
    paddle.seed(0)
    layer = nn.Linear(200, 100)
    original = layer.weight.numpy().copy()
    nn.initializer.Normal(mean=0.0, std=0.01)            # made and thrown away
    assert np.array_equal(layer.weight.numpy(), original)
    weight = layer.weight
    nn.initializer.Normal(0.0, 0.01)(layer.weight)       # called on the parameter
    assert layer.weight is weight and abs(layer.weight.numpy().std() - 0.01) < 0.001
    given = nn.Linear(200, 100, weight_attr=paddle.ParamAttr(
        initializer=nn.initializer.Normal(0.0, 0.02)))   # handed to the layer
    assert abs(given.weight.numpy().std() - 0.02) < 0.002


@claim("paddle-init-xavier-weight-as-fan-in")
def test_paddle_xavier_uniform_accepts_the_weight_as_fan_in():
    paddle = paddle_dynamic()
    w = paddle.nn.Linear(4, 8).weight
    original = w.numpy().copy()
    init = paddle.nn.initializer.XavierUniform(w, -10, 10)     # not refused
    assert list(inspect.signature(paddle.nn.initializer.XavierUniform).parameters)[:3] == [
        "fan_in", "fan_out", "gain"]
    assert init._fan_in is w and init._fan_out == -10 and init._gain == 10
    assert np.array_equal(w.numpy(), original)                 # and it changed nothing


@claim("paddle-init-to-tensor-copy-set-value")
def test_paddle_to_tensor_makes_a_copy_and_set_value_changes_the_parameter():
    paddle = paddle_dynamic()
    paddle.seed(0)
    layer = paddle.nn.Linear(4, 8)
    w = layer.weight
    original = w.numpy().copy()
    h = (paddle.abs(w) >= 0.25).astype("float32")
    m = paddle.to_tensor(w)
    m *= h
    assert m is not w and not np.array_equal(m.numpy(), original)    # the copy changed ...
    assert np.array_equal(w.numpy(), original)                        # ... the weight did not
    w.set_value(w * h)
    assert layer.weight is w
    assert np.array_equal(w.numpy(), original * (np.abs(original) >= 0.25))


@claim("paddle-init-assign-initializer")
def test_paddle_assign_initializer_copies_an_array_in():
    paddle = paddle_dynamic()
    w = paddle.nn.Linear(4, 8).weight
    values = np.arange(32, dtype=np.float32).reshape(4, 8)
    paddle.nn.initializer.Assign(values)(w)
    assert np.array_equal(w.numpy(), values)
    emb = paddle.nn.Embedding(6, 2, weight_attr=paddle.ParamAttr(
        initializer=paddle.nn.initializer.Assign(values.reshape(16, 2)[:6])))
    assert np.array_equal(emb.weight.numpy(), values.reshape(16, 2)[:6])


@claim("paddle-linear-default-xavier-zero-bias")
def test_paddle_linear_default_is_xavier_uniform_weight_zero_bias():
    paddle = paddle_dynamic()
    paddle.seed(0)
    fc = paddle.nn.Linear(400, 800)
    a = math.sqrt(6 / (400 + 800))
    w = fc.weight.numpy()
    assert np.abs(w).max() <= a and np.abs(w).max() > 0.999 * a
    assert abs(w.std() / (a / math.sqrt(3)) - 1) < 0.01
    assert (fc.bias.numpy() == 0).all()
