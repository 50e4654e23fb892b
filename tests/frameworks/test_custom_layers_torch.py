"""Chapter 02's custom layers: what it says PyTorch does, run in PyTorch 2.13, and the names
its table gives for PyTorch and Paddle 3.3, run in each (the kit's own behaviour is tested in
tests/nn/test_parameter_containers.py with the same cases)."""
from __future__ import annotations

from collections import OrderedDict

import pytest
import torch

from chapters import chapter_definition, paddle_dynamic
from claims import claim, row

nn = torch.nn


def _my_linear():
    """The chapter's MyLinear class, its own source run with torch for dt."""
    return chapter_definition("02_parameter_access", "class MyLinear(nn.Module):",
                              {"nn": nn, "dt": torch})["MyLinear"]


@claim("torch-custom-mylinear-runs")
def test_the_chapters_mylinear_runs_unchanged_in_torch():
    MyLinear = _my_linear()
    torch.manual_seed(0)
    layer, x = MyLinear(4, 3), torch.rand(2, 4)
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]
    assert tuple(layer.weight.shape) == (3, 4) and tuple(layer.bias.shape) == (3,)
    assert torch.allclose(layer(x), x @ layer.weight.T + layer.bias)
    layer(x).sum().backward()
    assert torch.equal(layer.bias.grad, torch.full((3,), 2.0))


@claim("torch-custom-register-none")
def test_register_parameter_none_is_what_torch_linear_does_without_bias():
    for layer in (nn.Linear(4, 3, bias=False), _my_linear()(4, 3, bias=False)):
        assert "bias" in layer._parameters and layer._parameters["bias"] is None  # registered
        assert layer.bias is None
        assert [name for name, _ in layer.named_parameters()] == ["weight"]
        assert list(layer.state_dict()) == ["weight"]


@claim("torch-custom-plain-list-invisible")
def test_parameters_in_a_plain_list_are_not_registered_and_the_step_skips_them():
    class ScaleShift(nn.Module):
        def __init__(self, plain_list):
            super().__init__()
            params = [nn.Parameter(torch.ones(3)), nn.Parameter(torch.zeros(3))]
            self.params = params if plain_list else nn.ParameterList(params)

        def forward(self, x):
            scale, shift = self.params
            return x * scale + shift

    for plain_list, moved in [(True, False), (False, True)]:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 3), ScaleShift(plain_list))
        names = [name for name, _ in model.named_parameters()]
        registered = [] if plain_list else ["1.params.0", "1.params.1"]
        assert names == ["0.weight", "0.bias"] + registered
        assert list(model.state_dict()) == names
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(torch.rand(2, 4)).sum().backward()
        opt.step()
        shift = model[1].params[1]
        assert torch.equal(shift.grad, torch.full((3,), 2.0))       # a gradient either way,
        expected = torch.full((3,), -0.2 if moved else 0.0)          # a step only if registered
        assert torch.equal(shift.detach(), expected)


@claim("torch-custom-parameter-containers")
def test_torch_parameter_list_and_dict_name_wrap_sort_and_move():
    holder = nn.Module()
    t = torch.ones(2)
    holder.scales = nn.ParameterList([t, torch.ones(3)])
    holder.heads = nn.ParameterDict({"mean": torch.zeros(3), "log_std": torch.zeros(3)})
    holder.heads["gain"] = torch.ones(1)
    assert list(holder.state_dict()) == ["scales.0", "scales.1", "heads.log_std", "heads.mean",
                                         "heads.gain"]                 # a plain dict: sorted
    assert all(type(p) is nn.Parameter for p in holder.parameters())   # tensors were wrapped
    assert holder.scales[0].data_ptr() == t.data_ptr()                 # sharing the memory
    holder.to(torch.float64)
    assert {p.dtype for p in holder.parameters()} == {torch.float64}
    pairs = [("b", torch.ones(1)), ("a", torch.ones(1))]
    assert list(nn.ParameterDict(OrderedDict(pairs))) == ["b", "a"]  # ordered input keeps order
    assert list(nn.ParameterDict(pairs)) == ["b", "a"]


def test_torch_parameter_containers_refuse_what_the_kit_refuses_too():
    """The kit's docstrings: a missing key raises AttributeError in PyTorch, a method's name
    or a dotted key is refused with KeyError, and calling the container raises."""
    heads = nn.ParameterDict({"w": torch.ones(1)})
    with pytest.raises(AttributeError):
        heads["v"]
    for key in ("keys", "a.b"):
        with pytest.raises(KeyError):
            heads[key] = torch.ones(1)
    with pytest.raises(RuntimeError, match="should not be called"):
        nn.ParameterList([torch.ones(1)])(1)
    with pytest.raises(TypeError, match="iterable"):
        nn.ParameterList().extend(torch.ones(3))


# -- the names table ---------------------------------------------------------------------------
@row("torch-names-02", "a layer's own parameter",
     "`torch.nn.Parameter(t)`, assigned in `__init__`")
def test_torch_a_parameter_assigned_in_init_is_registered_under_the_attribute_name():
    class Gain(nn.Module):
        def __init__(self):
            super().__init__()
            self.gain = nn.Parameter(torch.ones(3))

    assert [name for name, _ in Gain().named_parameters()] == ["gain"]


@row("torch-names-02", "a parameter by name, or none", '`register_parameter("bias", None)`')
def test_torch_register_parameter_registers_a_parameter_or_an_empty_name():
    module = nn.Module()
    module.register_parameter("weight", nn.Parameter(torch.ones(2)))
    module.register_parameter("bias", None)
    assert [name for name, _ in module.named_parameters()] == ["weight"]
    assert module.bias is None and list(module._parameters) == ["weight", "bias"]


@row("torch-names-02", "parameters in a list", "`torch.nn.ParameterList(params)`")
def test_torch_parameter_list_registers_by_position():
    holder = nn.Module()
    holder.plist = nn.ParameterList([nn.Parameter(torch.ones(2)), torch.ones(3)])
    assert [name for name, _ in holder.named_parameters()] == ["plist.0", "plist.1"]
    assert len(holder.plist) == 2 and isinstance(holder.plist[1], nn.Parameter)


@row("torch-names-02", "parameters in a dict", '`torch.nn.ParameterDict({"w": p})`')
def test_torch_parameter_dict_registers_by_key():
    p = nn.Parameter(torch.ones(2))
    holder = nn.Module()
    holder.pdict = nn.ParameterDict({"w": p})
    assert list(holder.named_parameters()) == [("pdict.w", p)]
    assert holder.pdict["w"] is p and list(holder.pdict.keys()) == ["w"]


@row("torch-names-02", "children, every module, own parameters",
     "`net.named_children()`, `net.named_modules()`, `net.parameters(recurse=False)`")
def test_torch_children_modules_and_own_parameters():
    net = nn.Sequential(nn.Sequential(nn.Linear(2, 2)), nn.Linear(2, 1))
    net.register_parameter("gain", nn.Parameter(torch.ones(1)))
    assert [name for name, _ in net.named_children()] == ["0", "1"]
    assert [name for name, _ in net.named_modules()] == ["", "0", "0.0", "1"]
    assert list(net.parameters(recurse=False)) == [net.gain]
    assert len(list(net.parameters())) == 5


@row("paddle-names-02", "a layer's own parameter",
     "`layer.create_parameter([3, 4])`, then assigned")
def test_paddle_create_parameter_makes_one_that_assignment_registers():
    paddle = paddle_dynamic()
    layer = paddle.nn.Layer()
    w = layer.create_parameter([3, 4])
    assert list(w.shape) == [3, 4] and layer.parameters() == []      # not registered yet
    layer.w = w
    assert [name for name, _ in layer.named_parameters()] == ["w"]


@row("paddle-names-02", "a parameter by name, or none", '`add_parameter("bias", None)`')
def test_paddle_add_parameter_registers_a_parameter_or_an_empty_name():
    paddle = paddle_dynamic()
    layer = paddle.nn.Layer()
    layer.add_parameter("weight", layer.create_parameter([2]))
    layer.add_parameter("bias", None)
    assert [name for name, _ in layer.named_parameters()] == ["weight"]
    assert layer.bias is None and list(layer.state_dict()) == ["weight"]


@row("paddle-names-02", "parameters in a list",
     "`paddle.nn.ParameterList(params)` (Parameters only)")
def test_paddle_parameter_list_registers_parameters_and_refuses_a_plain_tensor():
    paddle = paddle_dynamic()
    holder = paddle.nn.Layer()
    holder.plist = paddle.nn.ParameterList([holder.create_parameter([2]) for _ in range(2)])
    assert [name for name, _ in holder.named_parameters()] == ["plist.0", "plist.1"]
    with pytest.raises(AssertionError):
        paddle.nn.ParameterList([paddle.ones([2])])
    holder.plain = [holder.create_parameter([1])]                       # a plain list: unseen
    assert len(holder.parameters()) == 2


@row("paddle-names-02", "parameters in a dict",
     '`paddle.nn.ParameterDict({"w": p})` (Parameters only)')
def test_paddle_parameter_dict_registers_parameters_and_refuses_a_plain_tensor():
    paddle = paddle_dynamic()
    holder = paddle.nn.Layer()
    p = holder.create_parameter([2])
    holder.pdict = paddle.nn.ParameterDict({"w": p})
    assert [(name, q is p) for name, q in holder.named_parameters()] == [("pdict.w", True)]
    with pytest.raises(TypeError, match="should be a Parameter"):
        paddle.nn.ParameterDict({"w": paddle.ones([2])})


@row("paddle-names-02", "children, every module, own parameters",
     "`net.named_children()`, `net.named_sublayers(include_self=True)`, "
     "`net.parameters(include_sublayers=False)`")
def test_paddle_children_sublayers_and_own_parameters():
    paddle = paddle_dynamic()
    net = paddle.nn.Sequential(paddle.nn.Sequential(paddle.nn.Linear(2, 2)), paddle.nn.Linear(2, 1))
    net.add_parameter("gain", net.create_parameter([1]))
    assert [name for name, _ in net.named_children()] == ["0", "1"]
    assert [name for name, _ in net.named_sublayers(include_self=True)] == ["", "0", "0.0", "1"]
    assert net.parameters(include_sublayers=False) == [net.gain]
    assert len(net.parameters()) == 5


# -- the glossary's row "custom layer" -----------------------------------------------------------
@row("torch-names-glossary", "custom layer", "same")
def test_torch_custom_layer_subclasses_module_and_keeps_parameters_in_the_containers():
    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.scales = nn.ParameterList([torch.ones(2)])
            self.heads = nn.ParameterDict({"w": torch.ones(1)})

    assert [name for name, _ in Layer().named_parameters()] == ["scales.0", "heads.w"]


@row("paddle-names-glossary", "custom layer",
     "a subclass of `paddle.nn.Layer`; `paddle.nn.ParameterList`, `paddle.nn.ParameterDict` "
     "(Parameters only)")
def test_paddle_custom_layer_subclasses_layer_and_keeps_parameters_in_the_containers():
    paddle = paddle_dynamic()

    class Layer(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.scales = paddle.nn.ParameterList([self.create_parameter([2])])
            self.heads = paddle.nn.ParameterDict({"w": self.create_parameter([1])})

    assert [name for name, _ in Layer().named_parameters()] == ["scales.0", "heads.w"]
    with pytest.raises(AssertionError):
        paddle.nn.ParameterList([paddle.ones([2])])                # a plain tensor is refused
