"""Chapter 09's names table (clipping), cell by cell: what each PyTorch 2.13 and Paddle 3.3 cell
does, run in the framework. Cells already proved by a @claim test in test_ch09_clipping.py carry
their @row marker there; this file proves the rest.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import torch
from absence import spellings_found
from claims import row
from paddle_amp import grad_scaler_as_on_a_gpu

T09, P09 = "torch-names-09", "paddle-names-09"
TORCH_OPTIMIZERS = sorted((c for c in vars(torch.optim).values()
                           if inspect.isclass(c) and issubclass(c, torch.optim.Optimizer)),
                          key=lambda c: c.__name__)
# logits far apart: softmax underflows to exactly 0 in float32, log(0) = -inf
LOGITS = [[0.0, 200.0, -200.0], [1.0, 2.0, 3.0]]
LABELS = [0, 2]


def _log_softmax_reference(logits=LOGITS):
    x = np.array(logits, dtype=np.float64)
    top = x.max(axis=1, keepdims=True)
    return x - top - np.log(np.exp(x - top).sum(axis=1, keepdims=True))


# --- PyTorch -------------------------------------------------------------------------------


@row(T09, "clip values (in the optimizer)", "—")
@row(T09, "clip the global norm (in the optimizer)", "—")
def test_torch_optimizers_take_no_clip_at_all():
    assert spellings_found(TORCH_OPTIMIZERS, ["clip"]) == []
    assert not [(c.__name__, n) for c in TORCH_OPTIMIZERS
                for n in inspect.signature(c).parameters if "clip" in n]
    w = torch.nn.Parameter(torch.ones(2))
    for keyword in ("grad_clip", "clip_value", "max_norm"):
        with pytest.raises(TypeError, match="unexpected keyword argument"):
            torch.optim.SGD([w], lr=0.1, **{keyword: 1.0})


@row(T09, "keep a parameter out of clipping", "— (do not pass it)")
def test_torch_has_no_flag_that_keeps_a_parameter_out_of_clipping():
    spellings = ["need_clip", "no_clip", "skip_clip", "exclude"]
    assert spellings_found([torch.nn.Parameter, torch.Tensor], spellings) == []
    for clip in (torch.nn.utils.clip_grad_norm_, torch.nn.utils.clip_grad_value_):
        assert not [n for n in inspect.signature(clip).parameters
                    if any(s in n for s in spellings + ["mask", "filter"])]
    p = torch.nn.Parameter(torch.zeros(2))
    p.need_clip = False                                  # a plain attribute: ignored
    p.grad = torch.tensor([3.0, 4.0])
    torch.nn.utils.clip_grad_norm_([p], 1.0)
    assert p.grad.tolist() == pytest.approx([0.6, 0.8], rel=1e-5)    # clipped all the same


@row(T09, "stable log of a softmax", "`F.log_softmax`, `F.cross_entropy`")
def test_torch_log_softmax_and_cross_entropy_stay_finite_where_log_of_softmax_does_not():
    F = torch.nn.functional
    logits, labels = torch.tensor(LOGITS), torch.tensor(LABELS)
    naive = torch.log(torch.softmax(logits, dim=1))
    assert torch.isinf(naive[0, 0]) and torch.isinf(naive[0, 2])      # the naive way: -inf
    stable = F.log_softmax(logits, dim=1)
    assert torch.isfinite(stable).all()
    np.testing.assert_allclose(stable.numpy(), _log_softmax_reference(), rtol=1e-6)
    loss = F.cross_entropy(logits, labels)
    assert loss.item() == pytest.approx(-(stable[0, 0] + stable[1, 2]).item() / 2, rel=1e-6)
    assert loss.item() == pytest.approx(100.0 + 0.2038, abs=1e-3)     # finite: 200 / 2 + ...


@row(T09, "scale the loss for float16", "`torch.amp.GradScaler()`")
def test_torch_grad_scaler_keeps_a_float16_gradient_from_underflowing():
    """A weight whose float16 gradient is 1e-8: 0 in float16, kept by scaling the loss."""
    assert inspect.signature(torch.amp.GradScaler).parameters["device"].default == "cuda"
    assert inspect.signature(torch.amp.GradScaler).parameters["init_scale"].default == 65536.0

    def weight_grad(scaler):
        w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
        opt = torch.optim.SGD([w], lr=0.1)
        out16 = w.half() * torch.tensor(1e-4, dtype=torch.float16)       # float16 layer
        loss = out16.float().sum() * 1e-4                                # float32 loss
        if scaler is None:
            loss.backward()
        else:
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
        return w.grad

    assert weight_grad(None).tolist() == [0.0, 0.0]                      # underflowed
    scaler = torch.amp.GradScaler("cpu")                 # the same class, on the CPU
    assert scaler.is_enabled() and scaler.get_scale() == 65536.0
    np.testing.assert_allclose(weight_grad(scaler).numpy(), [1e-8, 1e-8], rtol=2e-3)


@row(T09, "record training traces", "— (hooks, TensorBoard)")
def test_torch_has_no_trace_recorder_and_a_hook_records_gradient_norms():
    owners = [torch, torch.nn, torch.nn.Module, torch.optim, torch.optim.Optimizer,
              torch.nn.utils, torch.utils]
    assert spellings_found(owners, ["recorder", "history", "tracker"]) == []
    w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    norms = []
    w.register_hook(lambda grad: norms.append(grad.norm().item()))      # the do-it-yourself way
    opt = torch.optim.SGD([w], lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    assert norms == pytest.approx([np.hypot(2, 4) * 0.8 ** k for k in range(3)], rel=1e-6)


# --- Paddle 3.3 ------------------------------------------------------------------------------


def _paddle_params(paddle, *grads):
    """Paddle parameters (zeros) whose gradients are ``grads``, made by a real backward."""
    params = []
    for g in grads:
        p = paddle.create_parameter([len(g)], "float32",
                                    default_initializer=paddle.nn.initializer.Constant(0.0))
        (p * paddle.to_tensor(g, dtype="float32")).sum().backward()
        params.append(p)
    return params


@row(P09, "clip values (function)", "`paddle.nn.utils.clip_grad_value_(params, v)`")
def test_paddle_clip_grad_value_clamps_every_gradient_in_place(paddle):
    a, b = _paddle_params(paddle, [-3.0, 0.5, 2.0], [0.2, -7.0])
    assert paddle.nn.utils.clip_grad_value_([a, b], 1.0) is None
    assert a.grad.numpy().tolist() == [-1.0, 0.5, 1.0]
    assert b.grad.numpy().tolist() == pytest.approx([0.2, -1.0])


@row(P09, "clip the global norm (function)", "`paddle.nn.utils.clip_grad_norm_(params, max_norm)`")
def test_paddle_clip_grad_norm_scales_all_gradients_by_one_factor(paddle):
    a, b = _paddle_params(paddle, [3.0, 4.0], [12.0])                  # global norm 13
    total = paddle.nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
    assert total.item() == pytest.approx(13.0)                          # the norm before
    clipped = np.concatenate([a.grad.numpy(), b.grad.numpy()])
    np.testing.assert_allclose(clipped, np.float32([3, 4, 12]) / 13, rtol=1e-5)
    (c,) = _paddle_params(paddle, [0.3, 0.4])                          # below max_norm
    paddle.nn.utils.clip_grad_norm_([c], max_norm=1.0)
    np.testing.assert_array_equal(c.grad.numpy(), np.float32([0.3, 0.4]))


@row(P09, "clip values (in the optimizer)", "`SGD(..., grad_clip=paddle.nn.ClipGradByValue(max))`")
@row(P09, "clip each tensor's norm", "`grad_clip=paddle.nn.ClipGradByNorm(clip_norm)`")
@row(P09, "clip the global norm (in the optimizer)",
     "`grad_clip=paddle.nn.ClipGradByGlobalNorm(clip_norm)`")
def test_paddle_each_clip_object_clips_what_sgd_steps_with(paddle):
    expected = {  # the gradients [3, 4] and [0, 12], clipped at 1
        "ClipGradByValue": [[1.0, 1.0], [0.0, 1.0]],              # every value into [-1, 1]
        "ClipGradByNorm": [[0.6, 0.8], [0.0, 1.0]],               # each tensor to norm 1
        "ClipGradByGlobalNorm": [[3 / 13, 4 / 13], [0.0, 12 / 13]],   # all together: norm 13
    }
    for name, used in expected.items():
        params = _paddle_params(paddle, [3.0, 4.0], [0.0, 12.0])
        opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=params,
                                   grad_clip=getattr(paddle.nn, name)(1.0))
        opt.step()
        for p, g in zip(params, used):
            np.testing.assert_allclose(-p.numpy() / 0.1, g, rtol=1e-5, atol=1e-7, err_msg=name)


@row(P09, "stable log of a softmax", "`F.log_softmax`, `F.cross_entropy`")
def test_paddle_log_softmax_and_cross_entropy_are_finite_with_exact_gradients(paddle):
    F = paddle.nn.functional
    near, labels = [[0.0, 40.0, -20.0], [1.0, 2.0, 3.0]], paddle.to_tensor(LABELS)
    stable = F.log_softmax(paddle.to_tensor(near), axis=1).numpy()
    np.testing.assert_allclose(stable, _log_softmax_reference(near), rtol=1e-6)
    loss = F.cross_entropy(paddle.to_tensor(near), labels).item()
    assert loss == pytest.approx(-(stable[0, 0] + stable[1, 2]) / 2, rel=1e-6)
    far = F.log_softmax(paddle.to_tensor(LOGITS), axis=1).numpy()
    assert np.isfinite(far).all()
    assert far[0, 0] == far[0, 2] == -64.0               # Paddle 3.3's CPU kernel floors at -64
    logits = paddle.to_tensor(LOGITS, stop_gradient=False)
    F.cross_entropy(logits, labels).backward()           # the gradient stays exact
    expected = np.exp(_log_softmax_reference()) - np.eye(3)[LABELS]
    np.testing.assert_allclose(logits.grad.numpy(), expected / 2, atol=1e-7)



@row(P09, "scale the loss for float16", "`paddle.amp.GradScaler()`")
def test_paddle_grad_scaler_scales_the_loss_unscales_the_step_and_skips_an_overflow(paddle):

    assert inspect.signature(paddle.amp.GradScaler).parameters[
        "init_loss_scaling"].default == 65536.0
    with pytest.warns(UserWarning, match="can only be enabled on CUDAPlace.*makes no effect"):
        on_cpu = paddle.amp.GradScaler()                  # this CPU build: it switches itself off
    assert not on_cpu.is_enable() and on_cpu.scale(paddle.to_tensor(2.0)).item() == 2.0
    scaler = grad_scaler_as_on_a_gpu(paddle, 1024.0)
    w = paddle.create_parameter([2], "float32")
    w.set_value(paddle.to_tensor([1.0, 2.0]))
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=[w])
    for overflow in (False, True):
        opt.clear_grad()
        with warnings.catch_warnings(), paddle.amp.auto_cast(dtype="float16"):
            warnings.simplefilter("ignore")              # auto_cast: "no effect" on the CPU
            scaled = scaler.scale((w * w).sum())
        before = w.numpy().copy()
        assert scaled.item() == pytest.approx(1024.0 * float((before ** 2).sum()))
        scaled.backward()
        np.testing.assert_allclose(w.grad.numpy(), 2 * before * 1024.0)   # scaled gradients
        if overflow:
            w.grad.set_value(paddle.to_tensor([float("inf"), 1.0]))
        scaler.step(opt)
        if overflow:                                     # (update() is left out here: after an
            assert np.array_equal(w.numpy(), before)    # overflow it prints float() of a 1-D
        else:                                            # tensor, an error under NumPy 2.4)
            np.testing.assert_allclose(w.numpy(), before - 0.1 * 2 * before, rtol=1e-6)
            scaler.update()                              # the step used the unscaled gradient


@row(P09, "record training traces", "— (VisualDL)")
def test_paddle_has_no_trace_recorder_visualdl_is_a_callback_of_model_fit(paddle):
    owners = [paddle, paddle.nn, paddle.nn.Layer, paddle.optimizer, paddle.optimizer.Optimizer,
              paddle.utils, paddle.callbacks, paddle.hapi]
    assert spellings_found(owners, ["recorder", "history", "tracker", "monitor"]) == []
    assert issubclass(paddle.callbacks.VisualDL, paddle.callbacks.Callback)
    assert "log_dir" in inspect.signature(paddle.callbacks.VisualDL).parameters
