"""The glossary's names table, rows "regularization / regularizer" to "activation
checkpointing" (its last three rows are in test_rows_glossary_b2.py): each PyTorch and Paddle
cell run in the real framework for what its row means.

A test that a chapter's file already holds is called, not copied (``ch08.test_...``); "same" is
the dltutor column's code, run in the framework. MegEngine's cells are cited from its source
(notebooks/SOURCES.md).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import test_ch07_learning_rates as ch07
import test_ch08_freezing as ch08
import test_ch09_clipping as ch09
import test_ch11_gpu as ch11
from absence import spellings_found
from claims import row


def _torch_param(values):
    return torch.nn.Parameter(torch.tensor(values))


def _paddle_param(paddle, values, **attr):
    p = paddle.create_parameter([len(values)], "float32", attr=paddle.ParamAttr(**attr))
    p.set_value(paddle.to_tensor(values, dtype="float32"))
    return p


# -- regularization / regularizer --------------------------------------------------------------
@row("torch-names-glossary", "regularization / regularizer", "—")
def test_torch_has_no_regularizer_object_and_ignores_one_set_on_a_parameter():
    owners = [torch, torch.nn, torch.optim, torch.nn.Parameter, torch.optim.Optimizer,
              torch.optim.SGD, torch.nn.utils]
    assert spellings_found(owners, ["regulariz", "l2decay", "l1decay", "l2_decay"]) == []
    w = _torch_param([1.0, -2.0])
    w.regularizer = "L2Decay(0.5)"                    # a plain attribute: nothing reads it
    opt = torch.optim.SGD([w], lr=0.1)
    (w * torch.tensor([1.0, 1.0])).sum().backward()
    opt.step()
    assert w.detach().tolist() == pytest.approx([0.9, -2.1])   # lr * grad only, no penalty


@row("paddle-names-glossary", "regularization / regularizer", "`ParamAttr(regularizer=L2Decay(c))`")
def test_paddle_paramattr_regularizer_adds_c_times_w_to_the_gradient(paddle):
    c, lr = 0.5, 0.1
    w = _paddle_param(paddle, [1.0, -2.0], regularizer=paddle.regularizer.L2Decay(c))
    plain = _paddle_param(paddle, [1.0, -2.0])
    opt = paddle.optimizer.SGD(learning_rate=lr, parameters=[w, plain])
    (w.sum() + plain.sum()).backward()                # gradient 1 for both
    opt.step()
    np.testing.assert_allclose(w.numpy(), [1.0 - lr * (1 + c * 1.0), -2.0 - lr * (1 - c * 2.0)],
                               rtol=1e-6)
    np.testing.assert_allclose(plain.numpy(), [0.9, -2.1], rtol=1e-6)


# -- decoupled weight decay ----------------------------------------------------------------------
@row("torch-names-glossary", "decoupled weight decay", "`torch.optim.AdamW`")
def test_torch_adamw_shrinks_the_weight_outside_the_adaptive_step():
    """With a zero gradient AdamW multiplies w by 1 - lr * wd; Adam's L2 decay goes through
    the moments and moves w by about lr instead."""
    lr, wd = 0.1, 0.5
    moved = {}
    for kind in (torch.optim.AdamW, torch.optim.Adam):
        w = _torch_param([2.0, -4.0])
        opt = kind([w], lr=lr, weight_decay=wd)
        w.grad = torch.zeros(2)
        opt.step()
        moved[kind] = w.detach()
    assert torch.allclose(moved[torch.optim.AdamW], torch.tensor([2.0, -4.0]) * (1 - lr * wd))
    assert torch.allclose(moved[torch.optim.Adam], torch.tensor([1.9, -3.9]), atol=1e-5)


@row("paddle-names-glossary", "decoupled weight decay", "`paddle.optimizer.AdamW`")
def test_paddle_adamw_shrinks_the_weight_outside_the_adaptive_step(paddle):
    lr, wd = 0.1, 0.5
    w = _paddle_param(paddle, [2.0, -4.0])
    opt = paddle.optimizer.AdamW(learning_rate=lr, parameters=[w], weight_decay=wd)
    (w * 0.0).sum().backward()                        # a zero gradient
    opt.step()
    np.testing.assert_allclose(w.numpy(), np.array([2.0, -4.0]) * (1 - lr * wd), rtol=1e-6)


# -- freezing, stopping the gradient -------------------------------------------------------------
@row("torch-names-glossary", "freezing", "same")
def test_torch_requires_grad_false_freezes_the_layer():
    ch08.test_torch_requires_grad_false_no_grad_no_state_no_decay()


@row("paddle-names-glossary", "freezing", "`p.stop_gradient = True`")
def test_paddle_stop_gradient_true_freezes_the_parameter(paddle):
    ch08.test_paddle_stop_gradient_no_grad_no_accumulator_no_decay(paddle)


@row("torch-names-glossary", "stopping the gradient", "same")
def test_torch_detach_shares_the_values_and_cuts_the_graph():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None and d.data_ptr() == x.data_ptr()
    (x * 3 + d * 5).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]              # nothing flowed through the detached path


@row("paddle-names-glossary", "stopping the gradient", "`x.detach()`")
def test_paddle_detach_shares_the_values_and_cuts_the_graph(paddle):
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    d = x.detach()
    assert d.stop_gradient and d.tolist() == [1.0, 2.0]
    (x * 3 + d * 5).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


# -- batch normalization, running statistics, modes ---------------------------------------------
@row("torch-names-glossary", "batch normalization", "`torch.nn.BatchNorm1d`")
def test_torch_batchnorm1d_normalizes_each_feature_over_the_batch():
    x = torch.randn(64, 3) * torch.tensor([1.0, 5.0, 0.1]) + torch.tensor([3.0, -2.0, 7.0])
    out = torch.nn.BatchNorm1d(3)(x).detach()
    expected = (x - x.mean(0)) / torch.sqrt(x.var(0, unbiased=False) + 1e-5)
    assert torch.allclose(out, expected, atol=1e-4)
    assert torch.allclose(out.mean(0), torch.zeros(3), atol=1e-4)


@row("paddle-names-glossary", "batch normalization", "`paddle.nn.BatchNorm1D`")
def test_paddle_batchnorm1d_normalizes_each_feature_over_the_batch(paddle):
    x = np.random.RandomState(0).randn(64, 3) * [1.0, 5.0, 0.1] + [3.0, -2.0, 7.0]
    out = paddle.nn.BatchNorm1D(3)(paddle.to_tensor(x.astype("float32"))).numpy()
    np.testing.assert_allclose(out, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), atol=1e-4)
    np.testing.assert_allclose(out.mean(0), np.zeros(3), atol=1e-4)


@row("torch-names-glossary", "running statistics (running mean and variance)", "same")
def test_torch_running_mean_and_var_move_in_training_and_serve_in_eval():
    ch08.test_torch_batchnorm_momentum_is_the_weight_of_the_batch()
    ch08.test_torch_batchnorm_eval_and_train()


@row("paddle-names-glossary", "running statistics (running mean and variance)",
     "`_mean`, `_variance`, `use_global_stats=True`")
def test_paddle_mean_and_variance_move_and_use_global_stats_uses_them(paddle):
    ch08.test_paddle_batchnorm_momentum_is_the_weight_of_the_old_value(paddle)
    ch08.test_paddle_use_global_stats(paddle)


@row("torch-names-glossary", "training / evaluation mode", "same")
def test_torch_train_and_eval_set_every_submodules_mode():
    ch08.test_torch_batchnorm_eval_and_train()


@row("paddle-names-glossary", "training / evaluation mode", "same")
def test_paddle_train_and_eval_set_every_sublayers_mode(paddle):
    net = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.Dropout(0.5))
    net.eval()
    assert [m.training for m in net.sublayers(include_self=True)] == [False] * 3
    x = paddle.ones([8, 4])
    assert np.array_equal(net[1](x).numpy(), x.numpy())           # dropout off
    net.train()
    assert [m.training for m in net.sublayers(include_self=True)] == [True] * 3
    assert not np.array_equal(net[1](x).numpy(), x.numpy())       # dropout on again
    ch08.test_paddle_batchnorm_eval_and_train(paddle)


# -- clipping ------------------------------------------------------------------------------------
@row("torch-names-glossary", "gradient clipping", "`torch.nn.utils.clip_grad_norm_`")
@row("torch-names-glossary", "global norm", "`clip_grad_norm_(params, 1.0)`")
def test_torch_clip_grad_norm_scales_all_gradients_by_one_factor():
    ch09.test_torch_clip_grad_norm_one_factor_epsilon_and_returned_norm()


@row("paddle-names-glossary", "gradient clipping", "`paddle.nn.ClipGradByGlobalNorm`")
@row("paddle-names-glossary", "global norm", "`ClipGradByGlobalNorm(clip_norm=1.0)`")
def test_paddle_clip_grad_by_global_norm_scales_all_gradients_by_one_factor(paddle):
    assert paddle.nn.ClipGradByGlobalNorm(clip_norm=1.0).clip_norm == 1.0
    ch09.test_paddle_clip_grad_by_global_norm_has_no_epsilon()


@row("torch-names-glossary", "clipping by value", "`clip_grad_value_`")
def test_torch_clip_grad_value_clamps_each_value():
    ch09.test_torch_clip_grad_value_clamps_every_value_in_place()


@row("paddle-names-glossary", "clipping by value", "`ClipGradByValue`")
def test_paddle_clip_grad_by_value_clamps_each_value():
    ch09.test_paddle_clip_grad_by_value()


@row("torch-names-glossary", "exploding / vanishing gradients", "—")
def test_torch_has_no_exploding_or_vanishing_gradient_api():
    import torch.autograd
    owners = [torch, torch.nn, torch.nn.utils, torch.autograd, torch.optim]
    assert spellings_found(owners, ["explod", "vanish"]) == []


@row("paddle-names-glossary", "exploding / vanishing gradients", "—")
def test_paddle_has_no_exploding_or_vanishing_gradient_api(paddle):
    owners = [paddle, paddle.nn, paddle.nn.utils, paddle.autograd, paddle.optimizer, paddle.amp]
    assert spellings_found(owners, ["explod", "vanish"]) == []


# -- hooks, mini-batches, steps ------------------------------------------------------------------
@row("torch-names-glossary", "hook", "same")
def test_torch_forward_tensor_and_step_hooks_are_called():
    """register_forward_hook (a module's output), register_hook (a tensor's gradient) and
    register_step_post_hook (after each optimizer step), as the dltutor column writes them."""
    layer = torch.nn.Linear(2, 1)
    seen = []
    layer.register_forward_hook(lambda m, inputs, out: out * 10)   # a value replaces the output
    x = torch.ones(1, 2, requires_grad=True)
    x.register_hook(lambda g: seen.append(("grad", g.clone())))
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    opt.register_step_post_hook(lambda o, args, kwargs: seen.append(("step", o)))
    plain = torch.nn.functional.linear(x, layer.weight, layer.bias)
    out = layer(x)
    assert torch.allclose(out, plain * 10)
    out.sum().backward()
    assert seen[0][0] == "grad" and torch.allclose(seen[0][1], layer.weight.detach() * 10)
    opt.step()
    assert seen[-1] == ("step", opt)


@row("paddle-names-glossary", "hook", "`register_forward_post_hook`")
def test_paddle_forward_post_hook_sees_and_replaces_the_output(paddle):
    layer = paddle.nn.Linear(2, 1)
    seen = []

    def hook(module, inputs, out):
        seen.append(module)
        return out * 10

    handle = layer.register_forward_post_hook(hook)
    x = paddle.ones([1, 2])
    plain = paddle.matmul(x, layer.weight) + layer.bias
    np.testing.assert_allclose(layer(x).numpy(), plain.numpy() * 10, rtol=1e-6)
    assert seen == [layer]
    handle.remove()
    np.testing.assert_allclose(layer(x).numpy(), plain.numpy(), rtol=1e-6)


@row("torch-names-glossary", "mini-batch", "`torch.utils.data.DataLoader`")
def test_torch_dataloader_cuts_the_dataset_into_mini_batches():
    from torch.utils.data import TensorDataset
    ds = TensorDataset(torch.arange(10.0).reshape(10, 1), torch.arange(10))
    batches = list(torch.utils.data.DataLoader(ds, batch_size=4))
    assert [len(y) for _, y in batches] == [4, 4, 2]
    assert batches[0][0].shape == (4, 1) and torch.cat([y for _, y in batches]).tolist() == \
        list(range(10))


@row("paddle-names-glossary", "mini-batch", "`paddle.io.DataLoader`")
def test_paddle_dataloader_cuts_the_dataset_into_mini_batches(paddle):
    ds = paddle.io.TensorDataset([paddle.arange(10, dtype="float32").reshape([10, 1]),
                                  paddle.arange(10)])
    batches = list(paddle.io.DataLoader(ds, batch_size=4))
    assert [len(y) for _, y in batches] == [4, 4, 2]
    assert batches[0][0].shape == [4, 1]
    assert np.concatenate([y.numpy() for _, y in batches]).tolist() == list(range(10))


@row("torch-names-glossary", "epoch / step", "`opt.state[p][\"step\"]`")
def test_torch_adam_state_step_counts_the_steps():
    ch07.test_torch_adam_counts_steps_per_parameter_sgd_does_not()


@row("paddle-names-glossary", "epoch / step", "one step per `exe.run` (static graph)")
def test_paddle_static_graph_takes_one_step_per_exe_run():
    ch07.test_paddle_static_graph_counts_one_step_per_exe_run()


@row("torch-names-glossary", "gradient accumulation", "same")
def test_torch_two_backwards_add_up_and_one_step_uses_the_sum():
    w = _torch_param([1.0, 2.0])
    opt = torch.optim.SGD([w], lr=0.1)
    (3 * w).sum().backward()
    (5 * w).sum().backward()
    assert w.grad.tolist() == [8.0, 8.0]
    opt.step()
    assert w.detach().tolist() == pytest.approx([0.2, 1.2])


@row("paddle-names-glossary", "gradient accumulation", "same")
def test_paddle_two_backwards_add_up_and_one_step_uses_the_sum(paddle):
    w = _paddle_param(paddle, [1.0, 2.0])
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=[w])
    (3 * w).sum().backward()
    (5 * w).sum().backward()
    assert w.grad.tolist() == [8.0, 8.0]
    opt.step()
    np.testing.assert_allclose(w.numpy(), [0.2, 1.2], rtol=1e-6)


# -- checkpoints, mixed precision, recomputation -------------------------------------------------
@row("torch-names-glossary", "checkpoint", "`torch.save`, `torch.load`")
def test_torch_save_and_load_bring_the_weights_back(tmp_path):
    net = torch.nn.Linear(3, 2)
    torch.save(net.state_dict(), tmp_path / "ckpt.pt")
    other = torch.nn.Linear(3, 2)
    assert not torch.equal(other.weight, net.weight)
    other.load_state_dict(torch.load(tmp_path / "ckpt.pt"))
    x = torch.randn(4, 3)
    assert torch.equal(other(x), net(x))


@row("paddle-names-glossary", "checkpoint", "`paddle.save`, `paddle.load`")
def test_paddle_save_and_load_bring_the_weights_back(paddle, tmp_path):
    net = paddle.nn.Linear(3, 2)
    paddle.save(net.state_dict(), str(tmp_path / "ckpt.pdparams"))
    other = paddle.nn.Linear(3, 2)
    assert not np.array_equal(other.weight.numpy(), net.weight.numpy())
    other.set_state_dict(paddle.load(str(tmp_path / "ckpt.pdparams")))
    x = paddle.randn([4, 3])
    assert np.array_equal(other(x).numpy(), net(x).numpy())


@row("torch-names-glossary", "mixed precision", "`torch.autocast`, `torch.amp.GradScaler`")
def test_torch_autocast_computes_in_half_and_gradscaler_scales():
    ch11.test_autocast_computes_in_half_and_keeps_float32_weights()
    ch11.test_gradscaler_scales_skips_and_halves()


@row("paddle-names-glossary", "mixed precision", "`paddle.amp.auto_cast`, `paddle.amp.GradScaler`")
def test_paddle_auto_cast_lists_and_gradscaler(paddle):
    """On this CPU build Paddle's AMP switches itself off (ch11's test); what auto_cast would
    cast is its white list, and the CUDA half runs where a GPU is seen."""
    ch11.test_paddle_amp(paddle)
    assert {"matmul_v2", "conv2d"} <= set(paddle.amp.white_list()["float16"]["O1"])
    assert "matmul_v2" not in paddle.amp.black_list()["float16"]["O1"]
    if paddle.device.cuda.device_count() == 0:
        assert not paddle.amp.GradScaler().is_enable()
        return
    layer = paddle.nn.Linear(4, 3)
    with paddle.amp.auto_cast():
        assert layer(paddle.randn([2, 4])).dtype == paddle.float16
    scaler = paddle.amp.GradScaler(init_loss_scaling=1024.0)
    loss = layer(paddle.randn([2, 4])).sum()
    assert np.isclose(float(scaler.scale(loss)), float(loss) * 1024.0, rtol=1e-3)


@row("torch-names-glossary", "activation checkpointing (recomputation)",
     "`torch.utils.checkpoint.checkpoint`")
def test_torch_checkpoint_runs_the_forward_again_in_backward():
    ch11.test_torch_checkpoint_recomputes_the_forward()


@row("paddle-names-glossary", "activation checkpointing (recomputation)",
     "`paddle.distributed.fleet.utils.recompute`")
def test_paddle_recompute_runs_the_forward_again_in_backward(paddle):
    ch11.test_paddle_recompute(paddle)
