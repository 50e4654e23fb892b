"""Chapter 03 (initialization): what it says PyTorch 2.13 and Paddle 3.3 do, run in them."""
from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest

import torch
from torch import nn

from chapters import chapter_definition, paddle_dynamic
from claims import claim, row


# ---------------------------------------------------------------------------------- PyTorch


@claim("torch-init-linear-default-uniform-weight-bias")
@row("torch-names-03", "default Linear init", "same")
@pytest.mark.parametrize("fan_in, fan_out", [(1000, 500), (64, 2000), (4000, 300)])
def test_torch_linear_default_is_uniform_one_over_sqrt_fan_in_for_weight_and_bias(fan_in, fan_out):
    """Any Linear(in_features, out_features): the sentence says every one."""
    torch.manual_seed(0)
    wide = nn.Linear(fan_in, fan_out)
    bound = 1 / math.sqrt(fan_in)
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
@row("torch-names-03", "gain of an activation", "`nn.init.calculate_gain`")
def test_torch_calculate_gain_table():
    g = nn.init.calculate_gain
    assert g("linear") == 1 and g("sigmoid") == 1
    assert math.isclose(g("tanh"), 5 / 3)
    assert math.isclose(g("relu"), math.sqrt(2))
    assert math.isclose(g("leaky_relu"), math.sqrt(2 / (1 + 0.01 ** 2)))   # default slope 0.01
    assert math.isclose(g("leaky_relu", 0.2), math.sqrt(2 / (1 + 0.2 ** 2)))
    assert math.isclose(g("selu"), 3 / 4)


_GAIN_CASES = [("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
               ("conv_transpose1d", None), ("conv_transpose2d", None), ("conv_transpose3d", None),
               ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
               ("leaky_relu", 0.2), ("leaky_relu", 0), ("selu", None)]


@claim("torch-init-calculate-gain-table")
@pytest.mark.parametrize("nonlinearity, param", _GAIN_CASES)
def test_dltutor_calculate_gain_gives_pytorchs_number_for_every_nonlinearity(nonlinearity, param):
    """"the same numbers as PyTorch's": every name PyTorch 2.13 knows, compared one by one."""
    import dltutor as dt

    ours = dt.nn.init.calculate_gain(nonlinearity, param)
    theirs = nn.init.calculate_gain(nonlinearity, param)
    assert ours == theirs and type(ours) is type(theirs)


def test_the_gain_cases_are_every_nonlinearity_pytorch_names():
    body = inspect.getsource(nn.init.calculate_gain).split('"""')[-1]     # after the docstring
    assert set(re.findall(r'"([a-z_0-9]+)"', body)) == {n for n, _ in _GAIN_CASES}


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
@pytest.mark.parametrize("method, args", [("normal_", (0, 0.01)), ("uniform_", (-0.1, 0.1)),
                                          ("fill_", (0.5,)), ("zero_", ())])
def test_torch_in_place_methods_on_a_parameter_need_no_grad(method, args):
    """Each of the four methods the chapter names refuses a parameter outside no_grad."""
    m = nn.Linear(4, 8)
    before = m.weight.detach().clone()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation"):
        getattr(m.weight, method)(*args)
    assert torch.equal(m.weight, before)                          # refused: nothing changed
    with torch.no_grad():
        m.weight.normal_(0, 0.01)
        m.bias.fill_(0)
    assert torch.all(m.bias == 0) and float(m.weight.detach().abs().max()) < 0.05


@claim("torch-init-functions-in-place")
@row("torch-names-03", "an initializer for one layer",
     "`init.normal_(layer.weight, 0.0, 0.02)` after making it")
def test_torch_init_functions_change_an_existing_tensor_in_place():
    layer = nn.Linear(400, 300)
    weight = layer.weight
    returned = nn.init.normal_(layer.weight, 0.0, 0.02)
    assert returned is weight and layer.weight is weight             # the same object
    assert abs(float(layer.weight.detach().std()) - 0.02) < 0.001    # with new values


_TORCH_INITS = {"uniform_": (), "normal_": (), "trunc_normal_": (), "constant_": (0.3,),
                "ones_": (), "zeros_": (), "eye_": (), "dirac_": (), "xavier_uniform_": (),
                "xavier_normal_": (), "kaiming_uniform_": (), "kaiming_normal_": (),
                "orthogonal_": (), "sparse_": (0.5,)}


@claim("torch-init-functions-in-place")
@pytest.mark.parametrize("name", sorted(_TORCH_INITS))
def test_every_torch_init_function_changes_the_tensor_in_place(name):
    """"PyTorch ... use functions that change an existing tensor in place": each of them."""
    layer = nn.Conv1d(3, 3, 3) if name == "dirac_" else nn.Linear(6, 4)   # dirac_: 3-5 dims
    weight, before = layer.weight, layer.weight.detach().clone()
    address = weight.data_ptr()
    returned = getattr(nn.init, name)(weight, *_TORCH_INITS[name])
    assert returned is weight and layer.weight is weight and weight.data_ptr() == address
    assert not torch.equal(weight, before) and weight.requires_grad


def test_the_in_place_cases_are_every_init_function_of_torch():
    public = {n for n in dir(nn.init) if n.endswith("_") and not n.startswith("_")}
    assert public == set(_TORCH_INITS)


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
        if type(m) == nn.Linear:  # noqa: E721 - D2L prints it so; the test runs their code
            paddle.nn.initializer.Normal(mean=0.0, std=0.01)
            paddle.zeros(m.bias)
    return init_normal


def _d2l_my_init(paddle, nn):
    def my_init(m):                                      # D2L's Paddle code, verbatim
        if type(m) == nn.Linear:  # noqa: E721 - D2L prints it so; the test runs their code
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


_PADDLE_INITIALIZERS = {"Normal": (0.0, 0.02), "Uniform": (-0.5, 0.5), "Constant": (0.3,),
                        "TruncatedNormal": (), "XavierUniform": (), "XavierNormal": (),
                        "KaimingUniform": (), "KaimingNormal": (), "Orthogonal": (),
                        "Dirac": (), "Bilinear": (),
                        "Assign": (np.arange(24, dtype=np.float32).reshape(6, 4),)}


def _paddle_layer(nn, name, attr=None):
    if name == "Dirac":                                   # for convolution weights only
        return nn.Conv2D(4, 4, 3, weight_attr=attr)
    if name == "Bilinear":                                # for a grouped transposed conv
        return nn.Conv2DTranspose(4, 4, 3, groups=4, weight_attr=attr)
    return nn.Linear(6, 4, weight_attr=attr)


@claim("paddle-init-object-acts-only-when-called")
@pytest.mark.parametrize("name", sorted(_PADDLE_INITIALIZERS))
def test_every_paddle_initializer_acts_only_when_called_or_given_to_a_layer(name):
    """"An initializer does something only when it is called ... or handed to a layer"."""
    paddle = paddle_dynamic()

    def make():
        return getattr(paddle.nn.initializer, name)(*_PADDLE_INITIALIZERS[name])

    paddle.seed(5)
    weight = _paddle_layer(paddle.nn, name).weight
    before = weight.numpy().copy()
    make()                                                # made and thrown away
    assert np.array_equal(weight.numpy(), before)
    paddle.seed(7)
    make()(weight)                                        # called on the parameter
    assert not np.array_equal(weight.numpy(), before)
    paddle.seed(7)
    given = _paddle_layer(paddle.nn, name, paddle.ParamAttr(initializer=make())).weight
    assert np.array_equal(given.numpy(), weight.numpy())  # handed to a layer: the same values


def test_the_paddle_initializer_cases_are_every_initializer_class():
    init = paddle_dynamic().nn.initializer
    classes = {n for n in init.__all__ if n[0].isupper() and not n.endswith("Initializer")}
    assert classes == set(_PADDLE_INITIALIZERS)


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
@row("paddle-names-03", "default Linear init", "Xavier-uniform weight, zero bias")
@pytest.mark.parametrize("fan_in, fan_out", [(400, 800), (1000, 50), (64, 2000)])
def test_paddle_linear_default_is_xavier_uniform_weight_zero_bias(fan_in, fan_out):
    """Any Linear(in_features, out_features), not just one."""
    paddle = paddle_dynamic()
    paddle.seed(0)
    fc = paddle.nn.Linear(fan_in, fan_out)
    a = math.sqrt(6 / (fan_in + fan_out))
    w = fc.weight.numpy()
    assert np.abs(w).max() <= a and np.abs(w).max() > 0.999 * a
    assert abs(w.std() / (a / math.sqrt(3)) - 1) < 0.01
    assert (fc.bias.numpy() == 0).all()
