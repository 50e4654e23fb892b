"""Chapter 09 (gradient clipping and numerical trouble): what it says PyTorch 2.13 and Paddle 3.3 do.

Each test runs the real framework on a small setup and checks the numbers (or the error words)
the chapter states. The epsilon claims are checked in float64, where PyTorch's ``1e-6`` moves
the result far more than the rounding does, so that each check fails if the epsilon is
missing (PyTorch) or present (Paddle).
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import torch

import dltutor as dt
from dltutor import nn, optim

from chapters import paddle_dynamic
from claims import claim, row

U = torch.nn.utils

NAN, INF = float("nan"), float("inf")


def _torch_params(*grads, dtype=torch.float64):
    """Parameters (zeros) whose .grad are the given lists."""
    params = []
    for g in grads:
        p = torch.nn.Parameter(torch.zeros(len(g), dtype=dtype))
        p.grad = torch.tensor(g, dtype=dtype)
        params.append(p)
    return params


def _paddle_params(paddle, *grads, need_clip=None, dtype="float64"):
    """Paddle parameters (zeros) with the given gradients, made by a real backward."""
    need_clip = need_clip or [True] * len(grads)
    params = []
    for g, keep in zip(grads, need_clip):
        p = paddle.create_parameter([len(g)], dtype, attr=paddle.ParamAttr(need_clip=keep),
                                    default_initializer=paddle.nn.initializer.Constant(0.0))
        (p * paddle.to_tensor(g, dtype=dtype)).sum().backward()     # d/dp = g
        params.append(p)
    return params


def _clip_paddle(clip, params):
    """Call a Paddle clip object as the optimizer does; the clipped gradients as numpy."""
    return [g.numpy().copy() for _, g in clip([(p, p.grad) for p in params])]


# ---------------------------------------------------------------- PyTorch


TORCH_OPTIMIZERS = sorted((c for c in vars(torch.optim).values()
                           if inspect.isclass(c) and issubclass(c, torch.optim.Optimizer)),
                          key=lambda c: c.__name__)


@claim("torch-clip-functions-not-optimizer")
def test_torch_clips_with_functions_and_its_optimizers_take_no_clip():
    for name in ("clip_grad_norm_", "clip_grad_value_"):
        assert callable(getattr(U, name))
    assert len(TORCH_OPTIMIZERS) > 10                    # every optimizer torch.optim has
    for opt_class in TORCH_OPTIMIZERS:
        params = inspect.signature(opt_class).parameters
        assert not any("clip" in name for name in params), opt_class


@row("torch-names-09", "clip values (function)", "`torch.nn.utils.clip_grad_value_(params, v)`")
@claim("torch-clip-grad-value-clamps")
def test_torch_clip_grad_value_clamps_every_value_in_place():
    (w,) = _torch_params([-3.0, 0.5, 2.0])
    grad_before = w.grad
    assert U.clip_grad_value_([w], 1.0) is None
    assert w.grad.tolist() == [-1.0, 0.5, 1.0]
    assert w.grad is grad_before                        # the same tensor, changed in place


@row("torch-names-09", "clip the global norm (function)",
     "`torch.nn.utils.clip_grad_norm_(params, max_norm)`")
@claim("torch-clip-grad-norm-formula")
def test_torch_clip_grad_norm_one_factor_epsilon_and_returned_norm():
    a, b = _torch_params([3.0, 4.0], [12.0])            # per-tensor norms 5 and 12: total 13
    total = U.clip_grad_norm_([a, b], max_norm=1.0)
    assert total.item() == 13.0                         # the norm BEFORE clipping
    coef = 1.0 / (13.0 + 1e-6)                          # max_norm / (total + 1e-6)
    assert a.grad.tolist() == pytest.approx([3.0 * coef, 4.0 * coef], rel=1e-12)
    assert b.grad.tolist() == pytest.approx([12.0 * coef], rel=1e-12)
    after = torch.cat([a.grad, b.grad]).norm().item()
    # a hair under max_norm, by exactly the epsilon's share (without it 1 - after would be ~1e-16)
    assert after < 1.0
    assert 1.0 - after == pytest.approx(1e-6 / (13.0 + 1e-6), rel=1e-6)
    # below the threshold the factor is capped at 1: nothing changes
    (c,) = _torch_params([0.3, 0.4])
    assert U.clip_grad_norm_([c], 1.0).item() == pytest.approx(0.5)
    assert c.grad.tolist() == [0.3, 0.4]


@row("torch-names-09", "clip each tensor's norm", "— (`clip_grad_norm_` per parameter)")
@claim("torch-clip-per-tensor-loop")
def test_torch_has_no_per_tensor_clip_and_a_loop_of_clip_grad_norm_does_it():
    # every clipping name in torch.nn.utils, none of them per tensor
    assert {n for n in dir(U) if "clip" in n} == {
        "clip_grad", "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_"}
    a, b, c = _torch_params([3.0, 4.0], [0.0, 12.0], [0.03, 0.04])
    for p in (a, b, c):
        U.clip_grad_norm_(p, max_norm=0.5)              # one call per parameter
    assert a.grad.norm().item() == pytest.approx(0.5 * 5 / (5 + 1e-6), rel=1e-12)
    assert b.grad.norm().item() == pytest.approx(0.5 * 12 / (12 + 1e-6), rel=1e-12)
    assert c.grad.tolist() == [0.03, 0.04]               # norm 0.05, below 0.5: untouched
    assert a.grad.tolist() == pytest.approx([0.3, 0.4], rel=1e-6)   # each keeps its direction


@claim("torch-clip-grad-norm-negative-or-zero")
def test_torch_clip_grad_norm_takes_negative_and_zero_thresholds():
    (w,) = _torch_params([3.0, 4.0])
    U.clip_grad_norm_([w], max_norm=-1)                 # no error
    assert w.grad.tolist() == pytest.approx([-0.6, -0.8], rel=1e-6)    # the sign flipped
    (w,) = _torch_params([3.0, 4.0])
    U.clip_grad_norm_([w], max_norm=0)                  # no error
    assert w.grad.tolist() == [0.0, 0.0]                # zeroed


@claim("torch-clip-styles-agree-up-to-epsilon")
def test_torch_clip_grad_norm_and_paddle_global_norm_differ_by_the_epsilon_only():
    paddle = paddle_dynamic()
    grads = ([3.0, 4.0], [12.0], [-0.5, 0.25, 1.0])
    total = float(np.sqrt(9 + 16 + 144 + 0.25 + 0.0625 + 1))
    torch_params = _torch_params(*grads)
    U.clip_grad_norm_(torch_params, max_norm=1.0)
    by_torch = np.concatenate([p.grad.numpy() for p in torch_params])
    by_paddle = np.concatenate(_clip_paddle(paddle.nn.ClipGradByGlobalNorm(1.0),
                                            _paddle_params(paddle, *grads)))
    np.testing.assert_allclose(by_torch / by_paddle, total / (total + 1e-6), rtol=1e-12)
    assert not np.allclose(by_torch, by_paddle, rtol=1e-9, atol=0)   # and they do differ


@row("torch-names-09", "keep a parameter out of clipping", "— (do not pass it)")
@claim("torch-clip-subset-not-passed")
def test_torch_clip_grad_norm_counts_and_scales_only_what_it_is_given():
    a, b, bias = _torch_params([3.0, 4.0], [12.0], [100.0])
    total = U.clip_grad_norm_([a, b], max_norm=1.0)     # the "bias" is left out
    assert total.item() == 13.0                          # not counted
    assert bias.grad.tolist() == [100.0]                 # not scaled
    assert a.grad.tolist() == pytest.approx([3 / (13 + 1e-6), 4 / (13 + 1e-6)], rel=1e-12)


# Every torch.optim optimizer that steps on a dense parameter without a closure, except Rprop
# (Rprop 2.13 leaves an entry whose gradient is NaN unchanged: the chapter's sentence is narrowed)
NAN_STEPPERS = ["SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "ASGD", "NAdam",
                "RAdam", "RMSprop", "Adafactor"]


@claim("torch-sgd-steps-with-nan-grad")
@pytest.mark.parametrize("name", NAN_STEPPERS)
def test_torch_optimizers_take_a_step_with_a_nan_gradient(name):
    w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    opt = getattr(torch.optim, name)([w], lr=0.1)
    w.grad = torch.tensor([NAN, 1.0])
    opt.step()                                           # no error, no warning
    assert torch.isnan(w[0]) and torch.isfinite(w[1]) and w[1].item() < 2.0


@claim("torch-sgd-steps-with-nan-grad")
def test_torch_sgd_takes_a_step_with_a_nan_gradient():
    w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
    w.grad = torch.tensor([NAN, 1.0])
    opt.step()                                           # no error, no warning needed
    assert torch.isnan(w[0]) and w[1].item() == pytest.approx(1.9)
    w.grad = torch.tensor([0.0, 0.0])                    # a clean gradient next time ...
    opt.step()
    assert torch.isnan(w[0])                             # ... and the NaN stays (momentum too)


@claim("torch-clip-norm-nan-inf-spread")
def test_torch_global_norm_clipping_spreads_one_bad_value():
    # one NaN: the total norm is nan, and so is every scaled gradient
    a, b = _torch_params([NAN, 1.0], [2.0])
    assert torch.isnan(U.clip_grad_norm_([a, b], 1.0))
    assert torch.isnan(a.grad).all() and torch.isnan(b.grad).all()
    # one Inf: the total norm is inf, the factor 0; the Inf becomes nan, every other gradient 0
    a, b = _torch_params([INF, 1.0], [2.0])
    assert U.clip_grad_norm_([a, b], 1.0).item() == INF
    assert torch.isnan(a.grad[0]) and a.grad[1].item() == 0.0 and b.grad.tolist() == [0.0]


@claim("torch-gradscaler-skips-nonfinite-step")
@pytest.mark.parametrize("bad", [NAN, INF, -INF], ids=["nan", "inf", "-inf"])
def test_torch_grad_scaler_step_skips_a_nonfinite_step_and_update_halves_the_scale(bad):
    w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    opt = torch.optim.SGD([w], lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    scale = scaler.get_scale()
    scaler.scale((w * w).sum()).backward()
    w.grad[0] = bad
    scaler.step(opt)                                     # skipped, silently
    assert w.tolist() == [1.0, 2.0]
    assert scaler.get_scale() == scale                   # step() leaves the scale alone ...
    scaler.update()
    assert scaler.get_scale() == scale * 0.5             # ... update() halves it


@claim("torch-clip-norm-error-if-nonfinite")
def test_torch_clip_grad_norm_error_if_nonfinite():
    assert inspect.signature(U.clip_grad_norm_).parameters["error_if_nonfinite"].default is False
    for bad in (NAN, INF):
        (w,) = _torch_params([bad, 1.0])
        with pytest.raises(RuntimeError, match="non-finite"):
            U.clip_grad_norm_([w], 1.0, error_if_nonfinite=True)


def _anomaly(fn):
    """Run fn under torch.autograd.detect_anomaly(); the error it raised, or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with torch.autograd.detect_anomaly():
                fn()
        except RuntimeError as error:
            return error
    return None


@row("torch-names-09", "find the op that made a NaN", "`with torch.autograd.detect_anomaly():` "
     "(NaN in the backward pass only, see below)")
@claim("torch-detect-anomaly-nan-backward-only")
def test_torch_detect_anomaly_checks_backward_outputs_for_nan_only():
    # forward: log(0) = -inf passes, and its backward returns inf: no error at all
    v = torch.tensor([0.0, 4.0], requires_grad=True)
    out = {}

    def log_of_zero():
        out["loss"] = torch.log(v).sum()
        out["loss"].backward()

    assert _anomaly(log_of_zero) is None
    assert out["loss"].item() == -INF and v.grad.tolist() == [INF, 0.25]
    # a backward function that returns NaN is caught and named
    v = torch.tensor([0.0, 4.0], requires_grad=True)
    error = _anomaly(lambda: (torch.sqrt(v) * 0).sum().backward())
    assert str(error) == "Function 'SqrtBackward0' returned nan values in its 0th output."


@claim("torch-detect-anomaly-misses-sqrt0")
def test_torch_detect_anomaly_misses_the_inf_gradient_of_sqrt_at_zero():
    v = torch.tensor([0.0, 4.0], requires_grad=True)
    out = {}

    def exercise():
        out["y"] = torch.sqrt(v).sum()
        out["y"].backward()

    assert _anomaly(exercise) is None                    # nothing raised
    assert out["y"].item() == 2.0                        # forward finite
    assert v.grad.tolist() == [INF, 0.25]                # the inf gradient went through


@claim("torch-isfinite-hook-catches-inf")
def test_torch_a_tensor_hook_with_isfinite_catches_the_inf_gradient():
    v = torch.tensor([0.0, 4.0], requires_grad=True)

    def check(grad):
        if not torch.isfinite(grad).all():
            raise RuntimeError(f"non-finite gradient: {grad.tolist()}")

    v.register_hook(check)
    with pytest.raises(RuntimeError, match=r"non-finite gradient: \[inf, 0.25\]"):
        torch.sqrt(v).sum().backward()
    # and in the forward pass, the same check on an output catches log(0)
    assert not torch.isfinite(torch.log(torch.tensor([0.0, 4.0]))).all()


@claim("torch-detect-anomaly-naive-cross-entropy")
def test_torch_detect_anomaly_on_a_log_of_an_underflowed_softmax():
    logits = torch.tensor([[2.0, 1.0, -1.0], [200.0, 0.0, -50.0]], requires_grad=True)
    target = torch.tensor([0, 1])
    out = {}

    def naive_cross_entropy():
        probs = torch.softmax(logits, dim=1)
        out["loss"] = -torch.log(probs[torch.arange(2), target]).mean()
        out["loss"].backward()

    error = _anomaly(naive_cross_entropy)
    assert out["loss"].item() == INF                     # log's -inf passed the forward pass
    assert str(error) == "Function 'SoftmaxBackward0' returned nan values in its 0th output."


# ---------------------------------------------------------------- Paddle


@claim("paddle-clip-optimizer-grad-clip")
def test_paddle_optimizer_takes_a_clip_object_and_clips_every_step():
    paddle = paddle_dynamic()
    optimizers = [c for c in vars(paddle.optimizer).values()
                  if inspect.isclass(c) and issubclass(c, paddle.optimizer.Optimizer)]
    assert len(optimizers) > 10                          # every optimizer paddle.optimizer has
    for opt_class in optimizers:
        assert "grad_clip" in inspect.signature(opt_class).parameters, opt_class
    (w,) = _paddle_params(paddle, [3.0, 4.0], dtype="float32")
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=[w],
                               grad_clip=paddle.nn.ClipGradByNorm(1.0))
    opt.step()
    np.testing.assert_allclose(-w.numpy() / 0.1, [0.6, 0.8], rtol=1e-6)   # the clipped gradient


@claim("paddle-clip-by-value-min-default")
def test_paddle_clip_grad_by_value():
    paddle = paddle_dynamic()
    clip = paddle.nn.ClipGradByValue(1.0)
    assert (clip.min, clip.max) == (-1.0, 1.0)          # min defaults to -max
    (w,) = _paddle_params(paddle, [-3.0, 0.5, 2.0])
    assert _clip_paddle(clip, [w])[0].tolist() == [-1.0, 0.5, 1.0]


@claim("paddle-clip-by-norm-per-tensor")
def test_paddle_clip_grad_by_norm_clips_each_tensor_on_its_own():
    paddle = paddle_dynamic()
    params = _paddle_params(paddle, [3.0, 4.0], [0.0, 12.0], [0.3, 0.4], dtype="float32")
    a, b, c = _clip_paddle(paddle.nn.ClipGradByNorm(0.5), params)
    np.testing.assert_allclose(a, [0.3, 0.4], rtol=1e-6)              # norm 5 -> 0.5
    np.testing.assert_allclose(b, [0.0, 0.5], rtol=1e-6)              # norm 12 -> 0.5
    np.testing.assert_array_equal(c, np.float32([0.3, 0.4]))          # norm 0.5: untouched


@claim("paddle-clip-global-norm-no-epsilon")
def test_paddle_clip_grad_by_global_norm_has_no_epsilon():
    paddle = paddle_dynamic()
    a, b = _clip_paddle(paddle.nn.ClipGradByGlobalNorm(1.0),
                        _paddle_params(paddle, [3.0, 4.0], [12.0]))    # global norm 13
    assert np.concatenate([a, b]).tolist() == pytest.approx([3 / 13, 4 / 13, 12 / 13], rel=1e-15)
    after = float(np.linalg.norm(np.concatenate([a, b])))
    assert abs(after - 1.0) < 1e-15                                     # exactly clip_norm ...
    assert abs(after - 13 / (13 + 1e-6)) > 5e-8                         # ... not PyTorch's hair under
    # clip_norm / max(global_norm, clip_norm): below the threshold the scale is exactly 1
    small = _clip_paddle(paddle.nn.ClipGradByGlobalNorm(1.0), _paddle_params(paddle, [0.3, 0.4]))
    assert small[0].tolist() == [0.3, 0.4]


@claim("paddle-clip-grad-in-place")
def test_paddle_global_norm_clip_scales_grad_in_place_the_others_do_not():
    paddle = paddle_dynamic()
    changed = {}
    clips = {paddle.nn.ClipGradByGlobalNorm(1.0): [0.6, 0.8], paddle.nn.ClipGradByNorm(1.0): [0.6, 0.8],
             paddle.nn.ClipGradByValue(1.0): [1.0, 1.0]}             # the gradient [3, 4], clipped
    for clip, clipped in clips.items():
        (w,) = _paddle_params(paddle, [3.0, 4.0], dtype="float32")
        opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=[w], grad_clip=clip)
        opt.step()
        np.testing.assert_allclose(-w.numpy() / 0.1, clipped, rtol=1e-6)   # the step used it
        changed[type(clip).__name__] = w.grad.numpy().tolist()
    assert changed["ClipGradByGlobalNorm"] == pytest.approx([0.6, 0.8], rel=1e-6)   # .grad clipped
    assert changed["ClipGradByNorm"] == [3.0, 4.0]                                 # .grad as it was
    assert changed["ClipGradByValue"] == [3.0, 4.0]


@row("paddle-names-09", "keep a parameter out of clipping", "`ParamAttr(need_clip=False)`")
@claim("paddle-clip-need-clip-paramattr")
def test_paddle_need_clip_false_is_neither_counted_nor_scaled():
    paddle = paddle_dynamic()
    params = _paddle_params(paddle, [3.0, 4.0], [12.0], need_clip=[True, False])
    assert [p.need_clip for p in params] == [True, False]
    a, b = _clip_paddle(paddle.nn.ClipGradByGlobalNorm(1.0), params)
    assert a.tolist() == pytest.approx([0.6, 0.8], rel=1e-15)   # global norm 5: 12 not counted
    assert b.tolist() == [12.0]                                   # and not scaled
    params = _paddle_params(paddle, [3.0, 4.0], [12.0], need_clip=[True, False], dtype="float32")
    a, b = _clip_paddle(paddle.nn.ClipGradByNorm(1.0), params)
    np.testing.assert_allclose(a, [0.6, 0.8], rtol=1e-6)
    assert b.tolist() == [12.0]


@row("paddle-names-09", "find the op that made a NaN",
     '`paddle.set_flags({"FLAGS_check_nan_inf": 1})`')
@claim("paddle-check-nan-inf-forward-backward")
def test_paddle_check_nan_inf_catches_log_forward_and_sqrt_backward():
    paddle = paddle_dynamic()
    paddle.set_flags({"FLAGS_check_nan_inf": 1})
    try:
        v = paddle.to_tensor([0.0, 4.0], stop_gradient=False)
        with pytest.raises(RuntimeError, match=r"There are NAN or INF.*op=log,"):
            paddle.log(v)                                # the forward op
        v = paddle.to_tensor([0.0, 4.0], stop_gradient=False)
        y = paddle.sqrt(v).sum()                         # finite: passes
        assert y.item() == 2.0
        with pytest.raises(RuntimeError, match=r"There are NAN or INF.*op=sqrt_grad,"):
            y.backward()                                 # the backward op
    finally:
        paddle.set_flags({"FLAGS_check_nan_inf": 0})


# ------------------------------------------------------- GradScaler: dltutor beside PyTorch


def _both_scalers(**settings):
    """PyTorch's scaler on the CPU and dltutor's, with the same settings."""
    return torch.amp.GradScaler("cpu", **settings), optim.GradScaler(**settings)


def _both_params(values, dtype="float32"):
    """The same values as a PyTorch parameter and a dltutor parameter."""
    array = np.array(values, dtype=dtype)
    return torch.nn.Parameter(torch.tensor(array)), nn.Parameter(array.copy())


def _scaled_backward(scaler, w, factors, backend):
    """scale(sum(w * w * factors)).backward(): the gradient is 2 * w * factors * scale."""
    make = torch.tensor if backend is torch else dt.tensor
    scaler.scale((w * w * make(np.array(factors, dtype=np.float32))).sum()).backward()


def _run_with_injected_gradients(backend, scaler, w, opt, bad_steps, iterations):
    """Each iteration: scaled backward, a NaN or an inf written into the gradient at
    ``bad_steps``, step, update. Returns the scale after each update, which steps were skipped
    (the parameters unchanged) and the parameters at the end."""
    scales, skipped = [], []
    for i in range(iterations):
        opt.zero_grad()
        _scaled_backward(scaler, w, [1.0, 1.0, 1.0], backend)
        if i in bad_steps:
            grad = w.grad if backend is torch else w.grad.data      # write into the gradient
            grad[1] = bad_steps[i]
        before = np.array(w.tolist())
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        skipped.append(bool((np.array(w.tolist()) == before).all()))
    return scales, skipped, np.array(w.tolist())


@claim("torch-gradscaler-backoff-and-growth")
@pytest.mark.parametrize("settings, expected", [
    # halved at each bad step; doubled after 3 clean steps in a row (steps 4-6, 8-10, 11-13)
    (dict(init_scale=1024.0, growth_interval=3),
     [1024.0, 1024.0, 512.0, 256.0, 256.0, 256.0, 512.0, 256.0, 256.0, 256.0, 512.0, 512.0,
      512.0, 1024.0]),
    # factors that are not powers of two: each product is rounded to float32 the same way
    (dict(init_scale=3.3, growth_factor=1.7, backoff_factor=0.3, growth_interval=3), None),
], ids=["powers-of-two", "float32-rounding"])
def test_gradscaler_backoff_and_growth_match_torch(settings, expected):
    bad_steps = {2: INF, 3: NAN, 7: -INF}
    results = []
    for backend, scaler in zip((torch, dt), _both_scalers(**settings)):
        w = _both_params([0.5, -1.0, 2.0])[0 if backend is torch else 1]
        opt = (torch.optim.SGD if backend is torch else optim.SGD)([w], lr=0.01, momentum=0.9)
        results.append(_run_with_injected_gradients(backend, scaler, w, opt, bad_steps, 14))
    (torch_scales, torch_skipped, torch_w), (dt_scales, dt_skipped, dt_w) = results
    assert dt_scales == torch_scales == (expected or torch_scales)
    assert torch_skipped == dt_skipped == [i in bad_steps for i in range(14)]
    np.testing.assert_allclose(dt_w, torch_w, rtol=1e-6)


def _clipped_amp_steps(backend, scaler, steps=3, max_norm=1.0):
    """A float32 linear model: scale -> backward -> unscale_ -> clip_grad_norm_ -> step ->
    update, ``steps`` times. Returns the norms the clip returned and the final parameters."""
    rng = np.random.default_rng(0)
    weight, bias = rng.standard_normal((2, 4)), rng.standard_normal(2)
    x, y = rng.standard_normal((8, 4)), rng.standard_normal((8, 2))
    if backend is torch:
        w, b = (torch.nn.Parameter(torch.tensor(a, dtype=torch.float32)) for a in (weight, bias))
        x, y = (torch.tensor(a, dtype=torch.float32) for a in (x, y))
        opt, clip = torch.optim.SGD([w, b], lr=0.1, momentum=0.9), U.clip_grad_norm_
    else:
        w, b = nn.Parameter(weight.astype(np.float32)), nn.Parameter(bias.astype(np.float32))
        x, y = dt.tensor(x.astype(np.float32)), dt.tensor(y.astype(np.float32))
        opt, clip = optim.SGD([w, b], lr=0.1, momentum=0.9), optim.clip_grad_norm_
    norms = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((x @ w.T + b - y) ** 2).mean()
        if scaler is None:                   # the float32 reference: no scaling at all
            loss.backward()
        else:
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
        norms.append(clip([w, b], max_norm).item())
        if scaler is None:
            opt.step()
        else:
            scaler.step(opt)
            scaler.update()
    return norms, np.concatenate([np.array(w.tolist()).ravel(), np.array(b.tolist())])


@claim("torch-gradscaler-unscale-before-clip")
def test_gradscaler_unscale_then_clip_matches_torch():
    torch_scaler, dt_scaler = _both_scalers(init_scale=1024.0)
    torch_norms, torch_params = _clipped_amp_steps(torch, torch_scaler)
    dt_norms, dt_params = _clipped_amp_steps(dt, dt_scaler)
    plain_norms, plain_params = _clipped_amp_steps(torch, None)
    np.testing.assert_allclose(torch_norms, plain_norms, rtol=1e-6)   # the unscaled norm ...
    np.testing.assert_allclose(dt_norms, torch_norms, rtol=1e-6)      # ... in both
    assert min(torch_norms) > 1.0                                      # so the clip did clip
    np.testing.assert_allclose(torch_params, plain_params, rtol=1e-6)
    np.testing.assert_allclose(dt_params, torch_params, rtol=1e-6)


@claim("torch-gradscaler-unscale-twice-raises")
def test_gradscaler_unscale_twice_and_step_twice_raise_in_both():
    for backend, scaler in zip((torch, dt), _both_scalers(init_scale=4.0)):
        w = _both_params([1.0, 2.0])[0 if backend is torch else 1]
        opt = (torch.optim.SGD if backend is torch else optim.SGD)([w], lr=0.1)
        _scaled_backward(scaler, w, [1.0, 1.0], backend)
        scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match=r"^unscale_\(\) has already been called on this "
                                               r"optimizer since the last update\(\)\."):
            scaler.unscale_(opt)
        assert w.grad.tolist() == [2.0, 4.0]                 # unscaled once, not twice
        scaler.step(opt)
        with pytest.raises(RuntimeError, match=r"^step\(\) has already been called since the "
                                               r"last update\(\)\."):
            scaler.step(opt)
        with pytest.raises(RuntimeError, match=r"^unscale_\(\) is being called after step"):
            scaler.unscale_(opt)
        scaler.update()
        assert w.tolist() == pytest.approx([0.8, 1.6])        # one step, not two


@claim("torch-gradscaler-refuses-fp16-grads")
def test_gradscaler_refuses_float16_gradients_in_both():
    for backend, scaler in zip((torch, dt), _both_scalers(init_scale=4.0)):
        master = _both_params([1.0])[0 if backend is torch else 1]
        half = _both_params([1.0, 2.0], dtype="float16")[0 if backend is torch else 1]
        opt = (torch.optim.SGD if backend is torch else optim.SGD)([master, half], lr=0.1)
        scaler.scale((master * 3.0).sum() + (half * half).float().sum()).backward()
        assert str(half.grad.dtype).endswith("float16")
        with pytest.raises(ValueError, match=r"^Attempting to unscale FP16 gradients\."):
            scaler.unscale_(opt)
        assert master.grad.tolist() == [12.0]                # nothing was unscaled
        with pytest.raises(ValueError, match=r"^Attempting to unscale FP16 gradients\."):
            scaler.step(opt)
        assert master.tolist() == [1.0]                       # and nothing stepped


@claim("torch-gradscaler-state-dict-keys")
def test_gradscaler_state_dict_keys_and_values_match_torch():
    saved = []
    for backend, scaler in zip((torch, dt), _both_scalers(init_scale=256.0, growth_interval=3)):
        w = _both_params([0.5, -1.0, 2.0])[0 if backend is torch else 1]
        opt = (torch.optim.SGD if backend is torch else optim.SGD)([w], lr=0.01)
        _run_with_injected_gradients(backend, scaler, w, opt, {1: INF}, iterations=6)
        saved.append(scaler.state_dict())
        saved.append((scaler.get_scale(), scaler.get_growth_factor(),
                      scaler.get_backoff_factor(), scaler.get_growth_interval()))
    torch_state, torch_getters, dt_state, dt_getters = saved
    assert dt_getters == torch_getters == (256.0, 2.0, 0.5, 3)
    assert list(dt_state) == list(torch_state) == ["scale", "growth_factor", "backoff_factor",
                                                   "growth_interval", "_growth_tracker"]
    assert dt_state == torch_state == {"scale": 256.0, "growth_factor": 2.0,
                                       "backoff_factor": 0.5, "growth_interval": 3,
                                       "_growth_tracker": 1}
    assert torch.amp.GradScaler("cpu", enabled=False).state_dict() == {}
    assert optim.GradScaler(enabled=False).state_dict() == {}
    resumed = optim.GradScaler()
    resumed.load_state_dict(torch_state)                      # PyTorch's checkpoint loads here
    assert resumed.state_dict() == torch_state


@claim("torch-autocast-half-linear-float-loss")
def test_torch_autocast_computes_linear_in_float16_and_the_loss_in_float32():
    """What chapter 09's cells do by hand (`.to(dt.float16)` into the layer, `.float()` before
    the loss, float32 master weights), PyTorch's autocast does op by op."""
    torch.manual_seed(0)
    layer = torch.nn.Linear(16, 1)
    x, y = torch.randn(8, 16), torch.randn(8, 1)
    with torch.autocast("cpu", dtype=torch.float16):
        out = layer(x)
        loss = torch.nn.functional.mse_loss(out, y)
    assert out.dtype == torch.float16 and loss.dtype == torch.float32
    loss.backward()
    assert layer.weight.dtype == layer.weight.grad.dtype == torch.float32
    # The kit's hand-cast version computes the same loss (float16 rounding aside).
    dt_layer = nn.Linear(16, 1)
    dt_layer.load_state_dict({k: v.detach().numpy() for k, v in layer.state_dict().items()})
    dx, dy = dt.tensor(x.numpy()), dt.tensor(y.numpy())
    F = nn.functional
    dt_out = F.linear(dx.to(dt.float16), dt_layer.weight.to(dt.float16),
                      dt_layer.bias.to(dt.float16))
    dt_loss = F.mse_loss(dt_out.float(), dy)
    assert dt_out.dtype == dt.float16 and dt_loss.dtype == dt.float32
    dt_loss.backward()
    assert dt_layer.weight.grad.dtype == dt.float32
    assert abs(dt_loss.item() - loss.item()) < 1e-2 * loss.item()


@claim("torch-nan-value-written-kept")
def test_torch_keeps_a_nan_written_into_a_weight_and_steps_with_it():
    """A NaN copied into a weight (under no_grad, or from a loaded state dict) stays there; the
    NaN gradient it makes is then applied by the step, without a word."""
    layer = torch.nn.Linear(2, 1)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([[NAN, 1.0]]))
    assert torch.isnan(layer.weight[0, 0]) and layer.weight[0, 1] == 1.0
    other = torch.nn.Linear(2, 1)
    other.load_state_dict(layer.state_dict())
    assert torch.isnan(other.weight[0, 0])
    opt = torch.optim.SGD(other.parameters(), lr=0.1)
    (other.weight * other.weight).sum().backward()
    assert torch.isnan(other.weight.grad[0, 0])
    opt.step()                                              # no error, no warning
    assert torch.isnan(other.weight[0, 0])
