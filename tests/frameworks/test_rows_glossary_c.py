"""The glossary's names table (notebooks/GLOSSARY.md), the rows added for issue 48: "embedding
layer", "buffer", "update-to-parameter ratio", "anomaly detection" and "loss scaler". Each
PyTorch and Paddle cell run in PyTorch 2.13 and Paddle 3.3 for what the row says it does; a "—"
is proved by the absence of the spellings a learner would try."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from absence import spellings_found
from claims import row
from paddle_amp import grad_scaler_as_on_a_gpu

# --- embedding layer: a table of rows, looked up by index, trained like any parameter ---------


@row("torch-names-glossary", "embedding layer", "`torch.nn.Embedding`")
def test_torch_embedding_looks_up_rows_and_only_those_rows_get_a_gradient():
    table = torch.nn.Embedding(5, 3)
    assert [name for name, _ in table.named_parameters()] == ["weight"]
    rows = table(torch.tensor([1, 3, 1]))
    assert torch.equal(rows, table.weight[[1, 3, 1]])
    rows.sum().backward()
    assert table.weight.grad[:, 0].tolist() == [0.0, 2.0, 0.0, 1.0, 0.0]   # row 1 used twice


@row("paddle-names-glossary", "embedding layer", "`paddle.nn.Embedding`")
def test_paddle_embedding_looks_up_rows_and_only_those_rows_get_a_gradient(paddle):
    table = paddle.nn.Embedding(5, 3)
    assert [name for name, _ in table.named_parameters()] == ["weight"]
    assert table.weight.shape == [5, 3]                 # (rows, dimension), as in PyTorch
    rows = table(paddle.to_tensor([1, 3, 1]))
    np.testing.assert_array_equal(rows.numpy(), table.weight.numpy()[[1, 3, 1]])
    rows.sum().backward()
    assert table.weight.grad.numpy()[:, 0].tolist() == [0.0, 2.0, 0.0, 1.0, 0.0]


# --- buffer: state saved with the module, never a parameter -----------------------------------


@row("torch-names-glossary", "buffer", "same")
def test_torch_register_buffer_keeps_state_out_of_the_parameters():
    module = torch.nn.Module()
    module.register_buffer("count", torch.zeros(1))
    assert [name for name, _ in module.named_buffers()] == ["count"]
    assert list(module.parameters()) == [] and list(module.state_dict()) == ["count"]
    bn = torch.nn.BatchNorm1d(2)
    assert [name for name, _ in bn.named_buffers()] == ["running_mean", "running_var",
                                                        "num_batches_tracked"]


@row("paddle-names-glossary", "buffer", "same")
def test_paddle_register_buffer_keeps_state_out_of_the_parameters(paddle):
    layer = paddle.nn.Layer()
    layer.register_buffer("count", paddle.zeros([1]))
    assert [name for name, _ in layer.named_buffers()] == ["count"]
    assert list(layer.parameters()) == [] and list(layer.state_dict()) == ["count"]
    bn = paddle.nn.BatchNorm1D(2)      # unlike PyTorch, its running statistics are not buffers
    assert list(bn.named_buffers()) == []                # but parameters that never train
    assert {name for name, p in bn.named_parameters() if p.stop_gradient} == {"_mean", "_variance"}


# --- update-to-parameter ratio: no framework computes it for you ------------------------------

RATIO = ["update_ratio", "updateratio", "update_to_param", "param_ratio", "update_norm"]


@row("torch-names-glossary", "update-to-parameter ratio", "—")
def test_torch_has_no_update_ratio():
    owners = [torch, torch.nn, torch.nn.Module, torch.nn.utils, torch.optim,
              torch.optim.Optimizer, torch.optim.SGD]
    assert spellings_found(owners, RATIO) == []


@row("paddle-names-glossary", "update-to-parameter ratio", "—")
def test_paddle_has_no_update_ratio(paddle):
    owners = [paddle, paddle.nn, paddle.nn.Layer, paddle.nn.utils, paddle.optimizer,
              paddle.optimizer.Optimizer, paddle.optimizer.SGD]
    assert spellings_found(owners, RATIO) == []


# --- anomaly detection: name the op whose result was not finite -------------------------------


@row("torch-names-glossary", "anomaly detection", "`torch.autograd.detect_anomaly()`")
def test_torch_detect_anomaly_names_the_backward_function_that_made_a_nan():
    v = torch.tensor([0.0, 4.0], requires_grad=True)
    loss = (torch.sqrt(v) * 0).sum()                     # d sqrt at 0 is inf; inf * 0 is NaN
    loss.backward()                                      # without it: NaN, and no word
    assert np.isnan(v.grad[0].item())
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with torch.autograd.detect_anomaly():
            v = torch.tensor([0.0, 4.0], requires_grad=True)
            loss = (torch.sqrt(v) * 0).sum()
            with pytest.raises(RuntimeError, match="'SqrtBackward0' returned nan values"):
                loss.backward()


@row("paddle-names-glossary", "anomaly detection", '`paddle.set_flags({"FLAGS_check_nan_inf": 1})`')
def test_paddle_check_nan_inf_names_the_op_that_made_an_inf(paddle):
    paddle.set_flags({"FLAGS_check_nan_inf": 1})
    try:
        v = paddle.to_tensor([0.0, 4.0], stop_gradient=False)
        with pytest.raises(RuntimeError, match=r"There are NAN or INF.*op=log,"):
            paddle.log(v)                                # log(0) = -inf in the forward pass
    finally:
        paddle.set_flags({"FLAGS_check_nan_inf": 0})
    assert paddle.log(paddle.to_tensor([0.0])).item() == -np.inf      # off: no word


# --- loss scaler: scale the loss up so float16 gradients do not underflow ----------------------


@row("torch-names-glossary", "loss scaler", "`torch.amp.GradScaler`")
def test_torch_grad_scaler_multiplies_the_loss_and_divides_the_gradients_back():
    w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    opt = torch.optim.SGD([w], lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    loss = (w * w).sum()
    scaled = scaler.scale(loss)
    assert scaled.item() == 1024.0 * loss.item()
    scaled.backward()
    assert w.grad.tolist() == [2048.0, 4096.0]           # scaled gradients
    scaler.unscale_(opt)
    assert w.grad.tolist() == [2.0, 4.0]                 # the true ones, ready to clip or step



@row("paddle-names-glossary", "loss scaler", "`paddle.amp.GradScaler`")
def test_paddle_grad_scaler_multiplies_the_loss_and_divides_the_gradients_back(paddle):
    with pytest.warns(UserWarning, match="can only be enabled on CUDAPlace"):
        on_cpu = paddle.amp.GradScaler()                 # a CPU build switches it off
    assert not on_cpu.is_enable()
    scaler = grad_scaler_as_on_a_gpu(paddle, 1024.0)
    w = paddle.create_parameter([2], "float32")
    w.set_value(paddle.to_tensor([1.0, 2.0]))
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=[w])
    with warnings.catch_warnings(), paddle.amp.auto_cast(dtype="float16"):
        warnings.simplefilter("ignore")                  # auto_cast: "no effect" on the CPU
        scaled = scaler.scale((w * w).sum())             # (a float32 loss: the scaler is off)
    assert scaled.item() == 1024.0 * 5.0
    scaled.backward()
    np.testing.assert_allclose(w.grad.numpy(), [2048.0, 4096.0])   # scaled gradients
    scaler.unscale_(opt)
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 4.0])          # the true ones
