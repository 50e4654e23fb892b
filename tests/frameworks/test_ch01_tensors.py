"""Chapter 01 (tensors and autograd): what it says PyTorch and Paddle do, run in both."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from claims import claim, row


@claim("torch-tensors-dtype-rules")
def test_torch_tensor_keeps_numpy_dtype_and_makes_python_floats_float32():
    pixels = np.linspace(0.0, 1.0, 6).reshape(2, 3)
    assert torch.tensor(pixels).dtype == torch.float64                 # NumPy's float64 kept
    assert torch.tensor([[0.0, 0.2, 0.4]]).dtype == torch.float32      # Python floats
    assert torch.tensor([3, 1, 4]).dtype == torch.int64                # Python ints
    assert torch.tensor(np.array([3, 1, 4])).dtype == torch.int64
    assert torch.tensor(pixels, dtype=torch.float32).dtype == torch.float32
    t = torch.tensor(pixels)
    pixels[0, 0] = 99.0
    assert t[0, 0].item() == 0.0                                       # a copy


@claim("torch-tensors-dtype-rules")
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int16", "int32",
                                   "int64", "uint8", "uint16", "uint32", "uint64", "bool",
                                   "complex64", "complex128"])
def test_torch_tensor_keeps_every_numpy_dtype(dtype):
    t = torch.tensor(np.zeros(3, dtype=dtype))
    assert t.dtype == getattr(torch, dtype)


@claim("torch-tensors-shape-forms-and-normal")
def test_zeros_takes_three_shape_forms_and_normal_takes_size():
    assert torch.zeros(2, 3).shape == torch.zeros((2, 3)).shape == torch.zeros(size=(2, 3)).shape == (2, 3)
    w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)         # D2L's first line
    assert w.shape == (2, 1) and w.requires_grad and w.abs().max().item() < 0.05


@claim("torch-tensors-max-dim-pair")
@row("torch-names-01", "largest value and where", "`x.max(dim=1)` (same pair)")
def test_max_along_a_dim_returns_values_and_indices():
    scores = torch.tensor([[0.1, 2.0, -1.0], [3.0, 0.5, 0.2]])
    values, indices = scores.max(dim=1)
    assert values.tolist() == [2.0, 3.0] and indices.tolist() == [1, 0]
    _, predicted = torch.max(scores, 1)                                # the tutorials' line
    assert predicted.tolist() == [1, 0] and predicted.dtype == torch.int64
    assert scores.max().item() == 3.0 and scores.max().dim() == 0      # no dim: one tensor
    assert scores.amax(dim=(0, 1)).item() == 3.0                       # amax: values only
    assert scores.sum(dim=1, keepdim=True).shape == (2, 1)             # dim= and keepdim=


@claim("torch-tensors-max-dim-pair")
@pytest.mark.parametrize("reduction", ["sum", "mean", "max", "std", "softmax"])
def test_reductions_take_dim_and_keepdim(reduction):
    """The chapter's list "sum, mean, max, std, softmax" with ``dim=``; ``keepdim=True`` keeps
    the axis with size 1 (softmax keeps every axis anyway)."""
    x = torch.tensor([[0.1, 2.0, -1.0], [3.0, 0.5, 0.2]])
    out = getattr(x, reduction)(dim=1)
    values = out.values if reduction == "max" else out
    expected = {"sum": x.numpy().sum(1), "mean": x.numpy().mean(1), "max": x.numpy().max(1),
                "std": x.numpy().std(1, ddof=1),
                "softmax": np.exp(x.numpy()) / np.exp(x.numpy()).sum(1, keepdims=True)}
    assert np.allclose(values.numpy(), expected[reduction], atol=1e-6)
    if reduction != "softmax":
        kept = getattr(x, reduction)(dim=1, keepdim=True)
        assert (kept.values if reduction == "max" else kept).shape == (2, 1)


@claim("torch-tensors-max-grad-ties")
def test_max_dim_sends_the_gradient_to_one_element_amax_shares_it():
    x = torch.tensor([[2.0, 2.0, 1.0]], requires_grad=True)
    x.max(dim=1).values.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0]]                        # one-hot, at the index
    x.grad = None
    x.amax(dim=1).sum().backward()
    assert x.grad.tolist() == [[0.5, 0.5, 0.0]]                        # shared among the ties
    x.grad = None
    x.max().backward()
    assert x.grad.tolist() == [[0.5, 0.5, 0.0]]


@claim("paddle-tensors-mul-flattens")
@row("paddle-names-01", "flatten, then one 2-D product",
     "1.x: `fluid.layers.mul(x, y, x_num_col_dims)`")
def test_paddle_mul_flattens_both_inputs_then_multiplies():
    """Paddle 1.x's ``fluid.layers.mul`` ran the operator ``mul``; Paddle 3.3 still runs it."""
    import paddle

    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4)).astype("float32")
    b = rng.standard_normal((4, 5)).astype("float32")
    W = rng.standard_normal((12, 5)).astype("float32")
    mul = paddle._legacy_C_ops.mul
    flat = mul(paddle.to_tensor(a), paddle.to_tensor(b), "x_num_col_dims", 2, "y_num_col_dims", 1)
    assert flat.shape == [2, 3, 5]                                     # rows of x, columns of y
    assert np.allclose(flat.numpy(), a @ b, atol=1e-5)                 # agrees with batched matmul
    x = paddle.to_tensor(a, stop_gradient=False)
    summed = mul(x, paddle.to_tensor(W))                               # defaults 1, 1: (2, 12) @ (12, 5)
    assert summed.shape == [2, 5]
    assert np.allclose(summed.numpy(), np.tensordot(a, W.reshape(3, 4, 5), axes=2), atol=1e-5)
    summed.sum().backward()
    assert x.grad.shape == [2, 3, 4]                                   # gradients flow through it
    with pytest.raises(ValueError, match="X1's width = 12"):
        mul(paddle.to_tensor(a), paddle.to_tensor(b))                  # default on (4, 5): fails
    a2 = paddle.to_tensor(rng.standard_normal((2, 1, 3, 4)).astype("float32"))
    assert mul(a2, paddle.ones([12, 6]), "x_num_col_dims", 2).shape == [2, 1, 6]   # exercise 3


@claim("paddle-tensors-fc-flattens")
def test_paddle_fc_flattens_its_input_after_the_first_axis():
    import paddle

    paddle.enable_static()
    try:
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start):
            x = paddle.static.data("x", [2, 3, 4], "float32")
            y = paddle.static.nn.fc(x, size=5)                         # num_flatten_dims=1
            shapes = sorted(tuple(p.shape) for p in main.global_block().all_parameters())
        assert tuple(y.shape) == (2, 5)
        assert shapes == [(5,), (12, 5)]                               # weight over 3 x 4 = 12 inputs
    finally:
        paddle.disable_static()


@claim("torch-tensors-complex-and-strings")
def test_torch_has_complex_tensors_and_refuses_strings_and_objects():
    assert torch.tensor([1.0 + 2.0j]).dtype == torch.complex64
    with pytest.raises(ValueError):
        torch.tensor(["a", "b"])
    with pytest.raises(TypeError):
        torch.tensor("abc")
    with pytest.raises(RuntimeError, match="Could not infer dtype of object"):
        torch.tensor([object()])


def _stages(module):
    return module.Linear(4, 8), module.Linear(8, 8), module.Linear(8, 1)


@claim("torch-tensors-detach-cuts")
@row("torch-names-01", "stop the gradient here", "`h.detach()`")
def test_detach_on_an_intermediate_output_cuts_everything_upstream():
    stage1, stage2, stage3 = _stages(torch.nn)
    x = torch.randn(16, 4)
    h = stage2(stage1(x).relu()).relu()
    cut = h.detach()
    assert not cut.requires_grad and cut.grad_fn is None
    assert np.shares_memory(cut.numpy(), h.detach().numpy())            # same numbers, shared
    stage3(cut).pow(2).mean().backward()
    assert stage1.weight.grad is None and stage2.weight.grad is None
    assert stage3.weight.grad is not None
    assert stage1.weight.requires_grad and stage2.weight.requires_grad  # not frozen


@claim("paddle-tensors-stop-gradient-intermediate")
@row("paddle-names-01", "stop the gradient here", "`h.stop_gradient = True` or `h.detach()`")
@pytest.mark.parametrize("how", ["h.stop_gradient = True", "h.detach()"])
def test_paddle_stop_gradient_on_an_intermediate_output_cuts_upstream(how):
    import paddle

    paddle.seed(0)
    stage1, stage2, stage3 = _stages(paddle.nn)
    relu = paddle.nn.functional.relu
    h = relu(stage2(relu(stage1(paddle.randn([16, 4])))))
    if how == "h.detach()":
        h = h.detach()
        assert h.stop_gradient is True
    else:
        h.stop_gradient = True
    stage3(h).pow(2).mean().backward()
    assert stage1.weight.grad is None and stage2.weight.grad is None
    assert stage3.weight.grad is not None
    assert not stage1.weight.stop_gradient                             # stage1 is not frozen


@claim("paddle-tensors-max-values-only")
@row("paddle-names-01", "largest value and where",
     "`paddle.max(x, axis=1)` (values only), `paddle.argmax`")
def test_paddle_max_along_an_axis_returns_the_values_only():
    import paddle

    scores = paddle.to_tensor([[0.1, 2.0, -1.0], [3.0, 0.5, 0.2]])
    values = paddle.max(scores, axis=1)
    assert isinstance(values, paddle.Tensor) and values.tolist() == [2.0, 3.0]
    assert paddle.argmax(scores, axis=1).tolist() == [1, 0]


@claim("torch-backward-inputs")
def test_torch_backward_inputs_writes_only_the_listed_leaves():
    a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    b.grad = torch.full((2,), 5.0)
    (a * b * 3).sum().backward(inputs=[a])
    assert a.grad.tolist() == [3.0, 3.0] and b.grad.tolist() == [5.0, 5.0]   # b untouched
    c = torch.ones(2, requires_grad=True)
    (a * c * 3).sum().backward(inputs=[a])
    assert c.grad is None and a.grad.tolist() == [6.0, 6.0]                  # a accumulates


@claim("paddle-to-tensor-stops-gradient")
def test_paddle_to_tensor_stops_the_gradient_by_default_and_parameters_do_not(paddle):
    assert paddle.to_tensor([1.0, 2.0]).stop_gradient is True
    assert paddle.to_tensor([1.0, 2.0], stop_gradient=False).stop_gradient is False
    layer = paddle.nn.Linear(2, 1)
    assert layer.weight.stop_gradient is False and layer.bias.stop_gradient is False
    x = paddle.to_tensor([[1.0, 2.0]])
    layer(x).sum().backward()
    assert x.grad is None and layer.weight.grad is not None


_PADDLE_LAYERS = {
    "Linear": lambda nn: nn.Linear(2, 2), "Conv2D": lambda nn: nn.Conv2D(2, 2, 1),
    "LayerNorm": lambda nn: nn.LayerNorm(2), "GroupNorm": lambda nn: nn.GroupNorm(1, 2),
    "Embedding": lambda nn: nn.Embedding(4, 2), "LSTM": lambda nn: nn.LSTM(2, 2),
    "PReLU": lambda nn: nn.PReLU(), "BatchNorm1D": lambda nn: nn.BatchNorm1D(2),
    "BatchNorm2D": lambda nn: nn.BatchNorm2D(2),
}


@claim("paddle-to-tensor-stops-gradient")
@pytest.mark.parametrize("layer", list(_PADDLE_LAYERS))
def test_paddle_layer_parameters_start_with_stop_gradient_false_but_batchnorm_statistics(
        paddle, layer):
    """Every trainable parameter starts with ``stop_gradient=False``. BatchNorm's running
    ``_mean`` and ``_variance`` are parameters too, not trainable, with ``stop_gradient=True``."""
    named = dict(_PADDLE_LAYERS[layer](paddle.nn).named_parameters())
    assert named and all(not p.stop_gradient for p in named.values() if p.trainable)
    frozen = sorted(name for name, p in named.items() if p.stop_gradient)
    assert frozen == (["_mean", "_variance"] if layer.startswith("BatchNorm") else [])
    assert all(not named[name].trainable for name in frozen)
