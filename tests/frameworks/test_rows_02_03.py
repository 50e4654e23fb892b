"""The names tables of chapters 02 (parameter access) and 03 (initialization), cell by cell:
each PyTorch and Paddle cell run in PyTorch 2.13 and Paddle 3.3 (cells that an existing test in
test_ch02_access.py or test_ch03_init.py already proves carry their @row markers there)."""
from __future__ import annotations

import contextlib
import io
import math

import numpy as np
import pytest
import torch
from torch import nn

from absence import spellings_found
from claims import row



def _torch_net():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def _paddle_net(paddle):
    return paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 1))


# ------------------------------------------------------------------ chapter 02, PyTorch


@row("torch-names-02", "one layer's parameters", "`net[2].state_dict()`")
def test_torch_state_dict_of_one_layer_holds_its_weight_and_bias():
    net = _torch_net()
    state = net[2].state_dict()
    assert list(state) == ["weight", "bias"]
    for name, value in state.items():
        p = getattr(net[2], name)
        assert torch.equal(value, p) and not value.requires_grad     # detached values ...
        assert value.data_ptr() == p.data_ptr()                      # ... in the same memory


@row("torch-names-02", "parameter class", "`torch.nn.Parameter`")
def test_torch_parameter_is_the_class_of_layer_parameters_and_registers_itself():
    assert isinstance(nn.Linear(2, 3).weight, nn.Parameter)
    module = nn.Module()
    module.scale = nn.Parameter(torch.ones(3))
    assert module.scale.requires_grad
    assert [(n, p) for n, p in module.named_parameters()] == [("scale", module.scale)]


@row("torch-names-02", "value as NumPy", "`p.detach().numpy()`")
def test_torch_detach_numpy_gives_a_numpy_array_of_the_values():
    p = nn.Linear(4, 8).weight
    value = p.detach().numpy()
    assert type(value) is np.ndarray and value.shape == (8, 4)
    assert np.array_equal(value, p.tolist())
    with pytest.raises(RuntimeError, match="requires grad"):
        p.numpy()                                        # why the detach is needed
    assert isinstance(p.data, torch.Tensor) and not isinstance(p.data, np.ndarray)


@row("torch-names-02", "gradient", "`p.grad`")
def test_torch_grad_is_none_until_backward_then_the_gradient():
    layer = nn.Linear(3, 2)
    assert layer.weight.grad is None and layer.bias.grad is None
    x = torch.arange(12.0).reshape(4, 3)
    layer(x).sum().backward()
    assert layer.weight.grad.shape == layer.weight.shape
    assert torch.equal(layer.bias.grad, torch.full((2,), 4.0))           # 4 rows
    assert torch.equal(layer.weight.grad, x.sum(0).expand(2, 3))


@row("torch-names-02", "names and values", "`named_parameters()`")
def test_torch_named_parameters_pairs_dotted_names_with_the_parameters():
    net = _torch_net()
    pairs = list(net.named_parameters())
    assert [n for n, _ in pairs] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert [p for _, p in pairs] == [net[0].weight, net[0].bias, net[2].weight, net[2].bias]
    assert all(p is q for (_, p), q in zip(pairs, net.parameters()))


@row("torch-names-02", "one parameter by name", '`net.get_parameter("2.bias")`')
def test_torch_get_parameter_returns_the_parameter_itself():
    net = _torch_net()
    assert net.get_parameter("2.bias") is net[2].bias
    with pytest.raises(AttributeError):
        net.get_parameter("1.bias")                      # the ReLU has none


@row("torch-names-02", "add a named child", '`add_module("block 0", m)`')
def test_torch_add_module_registers_a_child_under_that_name():
    net, m = nn.Sequential(), nn.Linear(2, 2)
    net.add_module("block 0", m)
    assert dict(net.named_children()) == {"block 0": m} and getattr(net, "block 0") is m
    assert [n for n, _ in net.named_parameters()] == ["block 0.weight", "block 0.bias"]
    assert net[0] is m


@row("torch-names-02", "table of parameters", "—")
def test_torch_has_no_function_that_tabulates_parameters():
    import torch.nn.modules.module
    import torch.nn.utils
    import torch.utils

    owners = [torch, torch.nn, torch.nn.Module, torch.nn.utils, torch.utils,
              torch.nn.modules.module]
    spellings = ["summary", "param_table", "parameter_table", "count_param", "num_param",
                 "param_count", "model_stats", "module_stats"]
    assert spellings_found(owners, spellings) == []
    text = repr(_torch_net())                            # print(net): no counts, no shapes
    assert "49" not in text and "param" not in text.lower()


@row("torch-names-02", "save one layer", "`torch.save(net[2].state_dict(), path)` (pickle)")
@row("torch-names-02", "load it", "`layer.load_state_dict(torch.load(path))`")
def test_torch_save_one_layer_then_load_it_into_another(tmp_path):
    net, layer, path = _torch_net(), nn.Linear(8, 1), tmp_path / "last.pt"
    assert not torch.equal(layer.weight, net[2].weight)
    torch.save(net[2].state_dict(), path)
    loaded = torch.load(path)
    assert list(loaded) == ["weight", "bias"]            # the layer's entries, no others
    layer.load_state_dict(loaded)
    assert torch.equal(layer.weight, net[2].weight) and torch.equal(layer.bias, net[2].bias)
    assert isinstance(layer.weight, nn.Parameter) and layer.weight is not net[2].weight


# ------------------------------------------------------------------ chapter 02, Paddle


@row("paddle-names-02", "one layer's parameters", "`net[2].state_dict()`")
def test_paddle_state_dict_of_one_layer_holds_its_weight_and_bias(paddle):
    net = _paddle_net(paddle)
    state = net[2].state_dict()
    assert list(state) == ["weight", "bias"]
    assert state["weight"] is net[2].weight and state["bias"] is net[2].bias


@row("paddle-names-02", "parameter class",
     "`paddle.nn.Parameter` (or `paddle.create_parameter(...)`, settings via `ParamAttr`)")
def test_paddle_parameter_class_and_create_parameter_with_param_attr(paddle):
    assert type(paddle.nn.Linear(2, 3).weight) is paddle.nn.Parameter
    layer = paddle.nn.Layer()
    layer.scale = paddle.nn.Parameter(paddle.ones([3]))
    assert [(n, p) for n, p in layer.named_parameters()] == [("scale", layer.scale)]
    assert layer.scale.stop_gradient is False                   # trained
    attr = paddle.ParamAttr(name="w_rows", learning_rate=0.5, trainable=False,
                            initializer=paddle.nn.initializer.Constant(2.0))
    p = paddle.create_parameter([3, 2], "float32", attr=attr)
    assert type(p) is paddle.nn.Parameter and p.name == "w_rows"
    assert p.optimize_attr == {"learning_rate": 0.5} and p.stop_gradient is True
    assert np.array_equal(p.numpy(), np.full((3, 2), 2.0, np.float32))


@row("paddle-names-02", "value as NumPy", "`p.numpy()`")
def test_paddle_numpy_gives_a_numpy_array_of_the_values(paddle):
    p = paddle.nn.Linear(4, 8).weight
    value = p.numpy()
    assert type(value) is np.ndarray and value.shape == (4, 8)
    assert np.array_equal(value, np.array(p.tolist(), dtype=np.float32))


@row("paddle-names-02", "gradient", "`p.grad`")
def test_paddle_grad_is_none_until_backward_then_the_gradient(paddle):
    layer = paddle.nn.Linear(3, 2)
    assert layer.weight.grad is None and layer.bias.grad is None
    x = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    layer(paddle.to_tensor(x)).sum().backward()
    assert isinstance(layer.weight.grad, paddle.Tensor)
    assert list(layer.weight.grad.shape) == list(layer.weight.shape) == [3, 2]
    assert np.array_equal(layer.bias.grad.numpy(), [4.0, 4.0])
    assert np.array_equal(layer.weight.grad.numpy(), np.repeat(x.sum(0)[:, None], 2, 1))


@row("paddle-names-02", "names and values", "`named_parameters()`")
def test_paddle_named_parameters_pairs_dotted_names_with_the_parameters(paddle):
    net = _paddle_net(paddle)
    pairs = list(net.named_parameters())
    assert [n for n, _ in pairs] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    expected = [net[0].weight, net[0].bias, net[2].weight, net[2].bias]
    assert all(p is q for (_, p), q in zip(pairs, expected))


@row("paddle-names-02", "one parameter by name", '`net.state_dict()["2.bias"]`')
def test_paddle_state_dict_entry_is_the_parameter_itself(paddle):
    net = _paddle_net(paddle)
    bias = net.state_dict()["2.bias"]
    assert bias is net[2].bias                           # not a copy: the parameter
    bias.set_value(np.array([7.0], np.float32))
    assert float(net[2].bias.numpy()[0]) == 7.0


@row("paddle-names-02", "add a named child", '`add_sublayer("block 0", m)`')
def test_paddle_add_sublayer_registers_a_child_under_that_name(paddle):
    net, m = paddle.nn.Sequential(), paddle.nn.Linear(2, 2)
    returned = net.add_sublayer("block 0", m)
    assert returned is m and dict(net.named_children()) == {"block 0": m}
    assert [n for n, _ in net.named_parameters()] == ["block 0.weight", "block 0.bias"]


@row("paddle-names-02", "table of parameters", "`paddle.summary(net, input_size)`")
def test_paddle_summary_prints_one_row_per_layer_with_its_parameter_count(paddle):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        totals = paddle.summary(_paddle_net(paddle), input_size=(2, 4))
    rows = [line.split() for line in printed.getvalue().splitlines()
            if line.strip().startswith(("Linear-", "ReLU-"))]
    assert [(r[0].split("-")[0], r[-1]) for r in rows] == [("Linear", "40"), ("ReLU", "0"),
                                                           ("Linear", "9")]   # Param #
    assert totals == {"total_params": 49, "trainable_params": 49}


@row("paddle-names-02", "save one layer",
     "`paddle.save(net[2].state_dict(), path)` (1.x: `fluid.io.save_vars`)")
@row("paddle-names-02", "load it",
     "`layer.set_state_dict(paddle.load(path))` (1.x: `fluid.io.load_vars`)")
def test_paddle_save_one_layer_then_load_it_into_another(paddle, tmp_path):
    """Paddle 3.3's half of the cells (the 1.x names are cited in SOURCES.md, paddle1-names-02)."""
    net, layer, path = _paddle_net(paddle), paddle.nn.Linear(8, 1), str(tmp_path / "last.pdparams")
    paddle.nn.initializer.Constant(3.0)(layer.bias)
    weight = layer.weight
    paddle.save(net[2].state_dict(), path)
    loaded = paddle.load(path)
    assert sorted(loaded) == ["bias", "weight"]
    layer.set_state_dict(loaded)
    assert np.array_equal(layer.weight.numpy(), net[2].weight.numpy())
    assert np.array_equal(layer.bias.numpy(), net[2].bias.numpy()) and layer.weight is weight


@row("paddle-names-02", "state that is not a parameter", '`register_buffer("mean", t)`')
def test_paddle_buffer_is_saved_but_never_trained(paddle):
    layer = paddle.nn.Linear(3, 1)
    layer.register_buffer("mean", paddle.zeros([3]))
    assert [n for n, _ in layer.named_buffers()] == ["mean"]
    assert "mean" not in [n for n, _ in layer.named_parameters()]
    assert "mean" in layer.state_dict()
    opt = paddle.optimizer.SGD(0.1, parameters=layer.parameters())
    layer(paddle.ones([2, 3]) + layer.mean).sum().backward()
    opt.step()
    assert layer.mean.grad is None and not layer.mean.numpy().any()


# ------------------------------------------------------------------ chapter 03, PyTorch


@row("torch-names-03", "visit every layer", "`net.apply(fn)`")
def test_torch_apply_calls_fn_on_every_module_children_first():
    net, seen = _torch_net(), []
    assert net.apply(seen.append) is net
    assert seen == [net[0], net[1], net[2], net]
    net.apply(lambda m: nn.init.zeros_(m.bias) if isinstance(m, nn.Linear) else None)
    assert not net[0].bias.any() and not net[2].bias.any()


def _torch_weight(fan_in=1000, fan_out=500):
    return nn.Linear(fan_in, fan_out).weight              # (out, in)


@row("torch-names-03", "normal / uniform / constant", "`nn.init.normal_`, `uniform_`, `constant_`")
def test_torch_normal_uniform_constant_fill_the_tensor_in_place():
    w = _torch_weight()
    assert nn.init.normal_(w, 0.5, 0.02) is w
    v = w.detach()
    assert abs(float(v.mean()) - 0.5) < 0.001 and abs(float(v.std()) / 0.02 - 1) < 0.01
    assert nn.init.uniform_(w, -0.3, 0.1) is w
    v = w.detach()
    assert -0.3 <= float(v.min()) < -0.299 and 0.099 < float(v.max()) <= 0.1
    assert abs(float(v.mean()) + 0.1) < 0.001
    assert nn.init.constant_(w, 0.25) is w and torch.all(w == 0.25)


@row("torch-names-03", "Xavier (Glorot)", "`nn.init.xavier_uniform_`, `xavier_normal_`")
def test_torch_xavier_uses_the_average_of_both_fans():
    w, std = _torch_weight(), math.sqrt(2 / (1000 + 500))
    assert nn.init.xavier_uniform_(w) is w
    top = float(w.detach().abs().max())
    assert top <= math.sqrt(3) * std < top * 1.001
    assert nn.init.xavier_normal_(w) is w and abs(float(w.detach().std()) / std - 1) < 0.01


@row("torch-names-03", "Kaiming (He)", "`nn.init.kaiming_uniform_`, `kaiming_normal_`")
def test_torch_kaiming_uses_fan_in_and_the_gain_of_relu():
    w, std = _torch_weight(), math.sqrt(2 / 1000)          # a=0: the gain is sqrt(2)
    assert nn.init.kaiming_uniform_(w) is w
    top = float(w.detach().abs().max())
    assert top <= math.sqrt(3) * std < top * 1.001
    assert nn.init.kaiming_normal_(w) is w and abs(float(w.detach().std()) / std - 1) < 0.01


# ------------------------------------------------------------------ chapter 03, Paddle


@row("paddle-names-03", "visit every layer", "`net.apply(fn)`")
def test_paddle_apply_calls_fn_on_every_layer_children_first(paddle):
    net, seen = _paddle_net(paddle), []
    assert net.apply(seen.append) is net
    assert seen == [net[0], net[1], net[2], net]
    zero = paddle.nn.initializer.Constant(0.0)
    net.apply(lambda m: zero(m.weight) if isinstance(m, paddle.nn.Linear) else None)
    assert not net[0].weight.numpy().any() and not net[2].weight.numpy().any()


def _paddle_weight(paddle, fan_in=1000, fan_out=500):
    return paddle.nn.Linear(fan_in, fan_out).weight       # (in, out)


@row("paddle-names-03", "normal / uniform / constant",
     "`nn.initializer.Normal`, `Uniform`, `Constant`")
def test_paddle_normal_uniform_constant_objects_fill_a_parameter(paddle):
    init, w = paddle.nn.initializer, _paddle_weight(paddle)
    init.Normal(0.5, 0.02)(w)
    a = w.numpy()
    assert abs(a.mean() - 0.5) < 0.001 and abs(a.std() / 0.02 - 1) < 0.01
    init.Uniform(-0.3, 0.1)(w)
    a = w.numpy()
    assert -0.3 <= a.min() < -0.299 and 0.099 < a.max() <= 0.1 and abs(a.mean() + 0.1) < 0.001
    init.Uniform()(w)                                      # the default range: [-1, 1]
    assert -1 <= w.numpy().min() < -0.999 and 0.999 < w.numpy().max() <= 1
    init.Constant(0.25)(w)
    assert (w.numpy() == 0.25).all()


@row("paddle-names-03", "Xavier (Glorot)", "`nn.initializer.XavierUniform`, `XavierNormal`")
def test_paddle_xavier_uses_the_average_of_both_fans(paddle):
    init, w = paddle.nn.initializer, _paddle_weight(paddle)
    std = math.sqrt(2 / (1000 + 500))
    init.XavierUniform()(w)
    assert np.abs(w.numpy()).max() <= math.sqrt(3) * std < np.abs(w.numpy()).max() * 1.001
    init.XavierNormal()(w)
    assert abs(w.numpy().std() / std - 1) < 0.01


@row("paddle-names-03", "Kaiming (He)", "`nn.initializer.KaimingUniform`, `KaimingNormal`")
def test_paddle_kaiming_uses_fan_in_and_the_gain_of_relu(paddle):
    init, w = paddle.nn.initializer, _paddle_weight(paddle)    # fan_in: 1000, the rows
    std = math.sqrt(2 / 1000)
    init.KaimingUniform()(w)
    assert np.abs(w.numpy()).max() <= math.sqrt(3) * std < np.abs(w.numpy()).max() * 1.001
    init.KaimingNormal()(w)
    assert abs(w.numpy().std() / std - 1) < 0.01


@row("paddle-names-03", "gain of an activation", "`nn.initializer.calculate_gain`")
def test_paddle_calculate_gain_table(paddle):
    g = paddle.nn.initializer.calculate_gain
    assert g("linear") == 1 and g("sigmoid") == 1 and g("conv2d") == 1
    assert math.isclose(g("tanh"), 5 / 3) and math.isclose(g("relu"), math.sqrt(2))
    assert math.isclose(g("leaky_relu"), math.sqrt(2 / (1 + 0.01 ** 2)))
    assert math.isclose(g("leaky_relu", 0.2), math.sqrt(2 / (1 + 0.2 ** 2)))
    assert math.isclose(g("selu"), 3 / 4)
    with pytest.raises(ValueError):
        g("softmax")


@row("paddle-names-03", "an initializer for one layer",
     "`nn.Linear(4, 8, weight_attr=ParamAttr(initializer=Normal(0.0, 0.02)))`")
def test_paddle_weight_attr_gives_one_layer_its_initializer(paddle):
    def make(fan_in, fan_out):
        return paddle.nn.Linear(fan_in, fan_out, weight_attr=paddle.ParamAttr(
            initializer=paddle.nn.initializer.Normal(0.0, 0.02)))

    small = make(4, 8)
    assert list(small.weight.shape) == [4, 8] and np.abs(small.weight.numpy()).max() < 0.1
    assert not small.bias.numpy().any()                    # the bias keeps its default
    wide = make(400, 800).weight.numpy()                   # enough draws to see the std
    assert abs(wide.std() / 0.02 - 1) < 0.01 and abs(wide.mean()) < 0.001
    default = paddle.nn.Linear(400, 800).weight.numpy()
    assert abs(default.std() / math.sqrt(2 / 1200) - 1) < 0.01   # without it: Xavier
