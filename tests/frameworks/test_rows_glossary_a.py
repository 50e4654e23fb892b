"""The glossary's names table (notebooks/GLOSSARY.md), rows "PaddlePaddle (Paddle)" through
"weight decay": each PyTorch and Paddle cell, run in PyTorch 2.13 and Paddle 3.3 for what the
row says it does. A "—" is proved by the absence of the spellings a learner would try."""
from __future__ import annotations

import importlib.metadata

import numpy as np
import pytest
import torch
from absence import spellings_found
from claims import row


# --- the frameworks themselves, and the topic row -------------------------------------------

@row("torch-names-glossary", "PaddlePaddle (Paddle)", "—")
@row("torch-names-glossary", "MegEngine", "—")
def test_torch_has_nothing_named_after_paddle_or_megengine():
    owners = [torch, torch.nn, torch.utils, torch.hub, torch.onnx, torch.utils.data]
    assert spellings_found(owners, ["paddle", "megengine", "mge"]) == []


@row("paddle-names-glossary", "MegEngine", "—")
def test_paddle_has_nothing_named_after_megengine(paddle):
    owners = [paddle, paddle.nn, paddle.utils, paddle.hub, paddle.onnx, paddle.io]
    assert spellings_found(owners, ["megengine", "mge"]) == []


@row("paddle-names-glossary", "PaddlePaddle (Paddle)", "`paddle` (pip package paddlepaddle)")
def test_the_pip_package_paddlepaddle_is_the_module_paddle(paddle):
    """Proposed cell (the table has "—"): the framework is imported as `paddle`."""
    assert importlib.metadata.packages_distributions()["paddle"] == ["paddlepaddle"]
    assert paddle.__version__ == importlib.metadata.version("paddlepaddle")
    assert paddle.__name__ == "paddle" and isinstance(paddle.to_tensor([1.0]), paddle.Tensor)


MANAGER = ["param_manag", "parammanag", "parameter_manag", "parametermanag", "manage_param",
           "manageparam"]


@row("torch-names-glossary", "parameter management", "—")
def test_torch_has_no_parameter_manager_object():
    owners = [torch, torch.nn, torch.nn.Module, torch.nn.utils, torch.optim]
    assert spellings_found(owners, MANAGER) == []


@row("paddle-names-glossary", "parameter management", "—")
def test_paddle_has_no_parameter_manager_object(paddle):
    owners = [paddle, paddle.nn, paddle.nn.Layer, paddle.nn.utils, paddle.optimizer]
    assert spellings_found(owners, MANAGER) == []


# --- parameters, tensors, gradients ---------------------------------------------------------

@row("torch-names-glossary", "parameter", "`torch.nn.Parameter`")
def test_torch_parameter_is_a_trainable_tensor_a_module_registers():
    module = torch.nn.Module()
    module.w = torch.nn.Parameter(torch.zeros(2, 3))
    module.plain = torch.zeros(2, 3)                     # a plain tensor is not a parameter
    assert isinstance(module.w, torch.Tensor) and module.w.requires_grad
    assert [(name, p) for name, p in module.named_parameters()] == [("w", module.w)]


@row("paddle-names-glossary", "parameter", "`paddle.create_parameter`, `ParamAttr`")
def test_paddle_create_parameter_with_a_paramattr(paddle):
    attr = paddle.ParamAttr(name="glossary_a_w", initializer=paddle.nn.initializer.Constant(0.5))
    p = paddle.create_parameter([3, 2], "float32", attr=attr)
    assert isinstance(p, paddle.base.framework.EagerParamBase) and isinstance(p, paddle.Tensor)
    assert p.name == "glossary_a_w" and not p.stop_gradient and p.trainable
    assert np.array_equal(p.numpy(), np.full((3, 2), 0.5, np.float32))
    frozen = paddle.create_parameter([2], "float32", attr=paddle.ParamAttr(trainable=False))
    assert frozen.stop_gradient
    layer = paddle.nn.Layer()
    layer.w = p
    assert [(name, q) for name, q in layer.named_parameters()] == [("w", p)]


@row("torch-names-glossary", "tensor", "`torch.tensor`")
def test_torch_tensor_copies_the_data_into_a_tensor():
    array = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    t = torch.tensor(array)
    array[0, 0] = 100.0                                  # a copy: the tensor keeps its value
    assert type(t) is torch.Tensor and t.dtype == torch.float32 and not t.requires_grad
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]


@row("paddle-names-glossary", "tensor", "`paddle.to_tensor`")
def test_paddle_to_tensor_copies_the_data_into_a_tensor(paddle):
    array = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    t = paddle.to_tensor(array)
    array[0, 0] = 100.0
    assert isinstance(t, paddle.Tensor) and t.dtype == paddle.float32 and t.stop_gradient
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]


@row("torch-names-glossary", "autograd", "`loss.backward()`")
@row("torch-names-glossary", "gradient", "`p.grad`")
def test_torch_backward_writes_the_gradient_into_p_grad():
    p = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0]))
    assert p.grad is None                                # nothing before the backward pass
    loss = (p ** 2).sum()
    assert loss.backward() is None                       # its result is in p.grad
    assert torch.equal(p.grad, 2 * p.detach())           # d/dp sum(p^2) = 2p
    (p ** 2).sum().backward()
    assert torch.equal(p.grad, 4 * p.detach())           # a second pass adds to it


@row("paddle-names-glossary", "autograd", "`loss.backward()`")
@row("paddle-names-glossary", "gradient", "`p.grad`")
def test_paddle_backward_writes_the_gradient_into_p_grad(paddle):
    p = paddle.create_parameter([3], "float32",
                                default_initializer=paddle.nn.initializer.Assign([1.0, -2.0, 3.0]))
    assert p.grad is None
    loss = (p ** 2).sum()
    assert loss.backward() is None
    assert np.array_equal(p.grad.numpy(), 2 * p.numpy())
    (p ** 2).sum().backward()
    assert np.array_equal(p.grad.numpy(), 4 * p.numpy())


GRAD_MANAGER = ["gradmanager", "grad_manager", "gradientmanager", "gradient_manager"]


@row("torch-names-glossary", "gradient manager", "—")
def test_torch_has_no_gradient_manager_the_tensor_records_itself():
    owners = [torch, torch.autograd, torch.nn, torch.nn.Module, torch.Tensor, torch.optim]
    assert spellings_found(owners, GRAD_MANAGER) == []
    x = torch.ones(2, requires_grad=True)                # nothing to attach it to
    (3 * x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


@row("paddle-names-glossary", "gradient manager", "—")
def test_paddle_has_no_gradient_manager_the_tensor_records_itself(paddle):
    owners = [paddle, paddle.autograd, paddle.nn, paddle.nn.Layer, paddle.Tensor, paddle.optimizer]
    assert spellings_found(owners, GRAD_MANAGER) == []
    x = paddle.ones([2])
    x.stop_gradient = False
    (3 * x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


@row("torch-names-glossary", "forward / backward pass", "same")
def test_torch_net_of_x_runs_forward_and_backward_fills_every_grad():
    net = torch.nn.Sequential(torch.nn.Linear(3, 2))
    x = torch.tensor([[1.0, 2.0, 3.0]])
    out = net(x)
    assert torch.allclose(out, x @ net[0].weight.T + net[0].bias)
    loss = out.sum()
    loss.backward()
    assert torch.equal(net[0].weight.grad, torch.ones(2, 1) @ x)   # d sum(xW^T+b)/dW
    assert torch.equal(net[0].bias.grad, torch.ones(2))


@row("paddle-names-glossary", "forward / backward pass", "same")
def test_paddle_net_of_x_runs_forward_and_backward_fills_every_grad(paddle):
    net = paddle.nn.Sequential(paddle.nn.Linear(3, 2))
    x = paddle.to_tensor([[1.0, 2.0, 3.0]])
    out = net(x)
    assert np.allclose(out.numpy(), x.numpy() @ net[0].weight.numpy() + net[0].bias.numpy())
    loss = out.sum()
    loss.backward()
    assert np.array_equal(net[0].weight.grad.numpy(), x.numpy().T @ np.ones((1, 2)))
    assert np.array_equal(net[0].bias.grad.numpy(), np.ones(2, np.float32))


# --- reading, saving and initializing parameters --------------------------------------------

@row("torch-names-glossary", "parameter access", "same")
def test_torch_named_parameters_and_one_layers_state_dict():
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    named = list(net.named_parameters())
    assert [n for n, _ in named] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert named[2][1] is net[2].weight and isinstance(named[2][1], torch.nn.Parameter)
    sd = net[2].state_dict()
    assert list(sd) == ["weight", "bias"] and torch.equal(sd["weight"], net[2].weight)


@row("paddle-names-glossary", "parameter access", "`net.named_parameters()`, `net[2].state_dict()`")
def test_paddle_named_parameters_and_one_layers_state_dict(paddle):
    net = paddle.nn.Sequential(paddle.nn.Linear(4, 3), paddle.nn.ReLU(), paddle.nn.Linear(3, 2))
    named = list(net.named_parameters())
    assert [n for n, _ in named] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert named[2][1] is net[2].weight
    sd = net[2].state_dict()
    assert list(sd) == ["weight", "bias"]
    assert np.array_equal(sd["weight"].numpy(), net[2].weight.numpy())


@row("torch-names-glossary", "state dict", "same")
def test_torch_load_state_dict_copies_the_values_into_another_net():
    make = lambda: torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(),  # noqa: E731 - a one-line factory
                                       torch.nn.Linear(3, 2))
    a, b = make(), make()
    x = torch.rand(5, 4)
    assert not torch.equal(a(x), b(x))
    sd = a.state_dict()
    assert list(sd) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    b.load_state_dict(sd)
    assert torch.equal(a(x), b(x)) and b[0].weight is not a[0].weight     # values, copied


@row("paddle-names-glossary", "state dict", "`state_dict()`, `set_state_dict()`")
def test_paddle_set_state_dict_copies_the_values_into_another_net(paddle):
    make = lambda: paddle.nn.Sequential(paddle.nn.Linear(4, 3), paddle.nn.ReLU(),  # noqa: E731 - a one-line factory
                                        paddle.nn.Linear(3, 2))
    a, b = make(), make()
    x = paddle.rand([5, 4])
    assert not np.array_equal(a(x).numpy(), b(x).numpy())
    sd = a.state_dict()
    assert list(sd) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    b.set_state_dict(sd)
    assert np.array_equal(a(x).numpy(), b(x).numpy()) and b[0].weight is not a[0].weight


@row("torch-names-glossary", "initialization / initializer", "`torch.nn.init.normal_`")
def test_torch_init_normal_fills_the_tensor_in_place():
    w = torch.nn.Parameter(torch.zeros(500, 200))
    assert torch.nn.init.normal_(w, 0, 0.01) is w         # in place, the same object back
    assert abs(w.mean().item()) < 1e-3 and abs(w.std().item() - 0.01) < 1e-3


@row("paddle-names-glossary", "initialization / initializer", "`paddle.nn.initializer.Normal`")
def test_paddle_initializer_normal_fills_a_new_weight_and_an_existing_one(paddle):
    normal = paddle.nn.initializer.Normal(0, 0.01)
    fc = paddle.nn.Linear(500, 200, weight_attr=paddle.ParamAttr(initializer=normal))
    w = fc.weight.numpy()
    assert abs(w.mean()) < 1e-3 and abs(w.std() - 0.01) < 1e-3
    other = paddle.nn.Linear(500, 200).weight
    normal(other)                                        # called on a parameter: in place
    assert abs(other.numpy().std() - 0.01) < 1e-3


@row("torch-names-glossary", "lazy (deferred) initialization", "`torch.nn.LazyLinear`")
def test_torch_lazy_linear_takes_its_input_size_from_the_first_batch():
    layer = torch.nn.LazyLinear(8)
    assert isinstance(layer.weight, torch.nn.parameter.UninitializedParameter)
    layer(torch.rand(2, 20))
    assert type(layer) is torch.nn.Linear and layer.in_features == 20
    assert tuple(layer.weight.shape) == (8, 20)


@row("paddle-names-glossary", "lazy (deferred) initialization",
     "— (give `in_features`; `paddle.LazyGuard` defers only the values)")
def test_paddle_has_no_lazy_layers_lazyguard_only_delays_the_values(paddle):
    """Proposed cell (the table has "—"): no layer infers its input size; LazyGuard exists."""
    assert spellings_found([paddle.nn], ["lazy"]) == []
    assert spellings_found([paddle], ["lazy"]) == ["paddle.LazyGuard"]
    with paddle.LazyGuard():
        with pytest.raises(TypeError, match="in_features"):
            paddle.nn.Linear(out_features=4)
        layer = paddle.nn.Linear(20, 4)
    assert layer.weight.shape == [20, 4] and not layer.weight._is_initialized()
    layer.weight.initialize()
    assert layer.weight._is_initialized() and layer.weight.numpy().shape == (20, 4)
