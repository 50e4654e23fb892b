"""optim.GradScaler: PyTorch's AMP loss scaler. Every expected number is written out by hand
(the same runs against real PyTorch are in tests/frameworks/test_ch09_clipping.py)."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn, optim

INF, NAN = float("inf"), float("nan")


def one_iteration(scaler, opt, w, factors):
    """scale -> backward -> step -> update, with loss = sum(w * factors): grad = factors * scale."""
    opt.zero_grad()
    scaler.scale((w * dt.tensor(factors)).sum()).backward()
    result = scaler.step(opt)
    scaler.update()
    return result


# -- the scale over a run ----------------------------------------------------------------------
def test_the_scale_backs_off_after_inf_and_grows_after_growth_interval_clean_steps():
    w = nn.Parameter([1.0, 2.0])
    opt = optim.SGD([w], lr=0.1)
    scaler = optim.GradScaler(init_scale=8.0, growth_factor=2.0, backoff_factor=0.5,
                              growth_interval=2)
    runs = [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, INF], [1.0, 1.0], [NAN, 1.0],
            [1.0, 1.0], [1.0, 1.0]]
    scales, trackers = [], []
    for factors in runs:
        one_iteration(scaler, opt, w, factors)
        scales.append(scaler.get_scale())
        trackers.append(scaler.state_dict()["_growth_tracker"])
    #          clean  clean(grow) clean  inf(back) clean  nan(back) clean  clean(grow)
    assert scales == [8.0, 16.0, 16.0, 8.0, 8.0, 4.0, 4.0, 8.0]
    assert trackers == [1, 0, 1, 0, 1, 0, 1, 0]
    assert opt.step_count == 6                                   # the two bad steps skipped


def test_the_scale_is_a_float32_number_and_never_grows_to_inf():
    assert optim.GradScaler(init_scale=0.1).get_scale() == 0.10000000149011612
    w = nn.Parameter([1.0])
    opt = optim.SGD([w], lr=0.1)
    scaler = optim.GradScaler(init_scale=3.3, backoff_factor=0.3)
    one_iteration(scaler, opt, w, [INF])
    # float32(3.3) * 0.3 in float64, rounded to float32 once (PyTorch gives the same number)
    assert scaler.get_scale() == 0.9900000095367432
    top = optim.GradScaler(init_scale=2.0 ** 127, growth_interval=1)
    one_iteration(top, opt, w, [1.0])
    assert top.get_scale() == 2.0 ** 127                        # 2**128 is inf in float32
    assert top.state_dict()["_growth_tracker"] == 0


def test_update_with_new_scale_sets_it_and_refuses_a_bad_one():
    scaler = optim.GradScaler()
    scaler.scale(dt.tensor(1.0))
    scaler.update(new_scale=256.0)
    assert scaler.get_scale() == 256.0
    scaler.update(new_scale=dt.tensor([0.1]))
    assert scaler.get_scale() == 0.10000000149011612
    for bad in (0.0, -1.0, NAN, INF, dt.tensor([1.0, 2.0]), dt.tensor(2.0, requires_grad=True)):
        with pytest.raises(ValueError, match="new_scale"):
            scaler.update(new_scale=bad)
        assert scaler.get_scale() == 0.10000000149011612


# -- skipped steps -------------------------------------------------------------------------------
def test_a_skipped_step_leaves_params_optimizer_state_and_step_count_unchanged():
    w = nn.Parameter([1.0, -2.0])
    opt = optim.Adam([w], lr=0.1)
    scaler = optim.GradScaler(init_scale=4.0)
    one_iteration(scaler, opt, w, [1.0, 1.0])                  # a clean step: Adam has state
    params = w.data.copy()
    state = {k: (v.copy() if hasattr(v, "copy") else v) for k, v in opt.state[w].items()}
    assert one_iteration(scaler, opt, w, [INF, 1.0]) is None
    assert w.data.tolist() == params.tolist()
    assert opt.step_count == 1 and opt.state[w]["step"] == state["step"] == 1
    assert opt.state[w]["exp_avg"].tolist() == state["exp_avg"].tolist()
    assert opt.state[w]["exp_avg_sq"].tolist() == state["exp_avg_sq"].tolist()
    assert scaler.get_scale() == 2.0


class RecordingOptimizer:
    """Just enough of an optimizer: one parameter, and a step() that records its arguments."""

    def __init__(self, param):
        self.param_groups = [{"params": [param]}]
        self.calls = []

    def step(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        return "the step's result"


def test_step_passes_arguments_on_and_returns_the_optimizers_result():
    w = nn.Parameter([1.0])
    opt = RecordingOptimizer(w)
    scaler = optim.GradScaler()
    scaler.scale(w.sum()).backward()
    assert scaler.step(opt, 1, two=2) == "the step's result"
    assert opt.calls == [((1,), {"two": 2})]


def test_with_two_optimizers_only_the_one_with_inf_is_skipped_and_the_scale_backs_off_once():
    a, b = nn.Parameter([1.0]), nn.Parameter([1.0])
    opt_a, opt_b = optim.SGD([a], lr=0.5), optim.SGD([b], lr=0.5)
    scaler = optim.GradScaler(init_scale=16.0)
    scaler.scale((a * INF + b * 2.0).sum()).backward()
    scaler.step(opt_a)
    scaler.step(opt_b)
    scaler.update()
    assert a.item() == 1.0 and b.item() == 0.0                 # b - 0.5 * 2
    assert scaler.get_scale() == 8.0


# -- unscale_ ------------------------------------------------------------------------------------
def test_unscale_divides_every_gradient_by_the_scale_exactly():
    w = nn.Parameter([0.0, 0.0, 0.0])
    opt = optim.SGD([w], lr=0.1)
    scaler = optim.GradScaler(init_scale=1024.0)
    scaler.scale((w * dt.tensor([3.0, -0.375, 1e-3])).sum()).backward()
    assert w.grad.tolist() == [3072.0, -384.0, np.float32(1e-3) * np.float32(1024.0)]
    scaler.unscale_(opt)
    assert w.grad.dtype == dt.float32
    assert w.grad.tolist() == [3.0, -0.375, float(np.float32(1e-3))]


def test_a_float64_gradient_is_multiplied_by_the_float32_reciprocal_as_pytorch_does():
    w = nn.Parameter(np.array([0.0]))                          # float64
    scaler = optim.GradScaler(init_scale=3.0)
    scaler.scale(dt.tensor(1.0))
    w.grad = dt.tensor(np.array([3.0]))
    scaler.unscale_(optim.SGD([w], lr=0.1))
    # 1/3 rounded to float32 is 0.3333333432674408; times 3 in float64 (PyTorch: the same)
    assert w.grad.tolist() == [1.0000000298023224]


def test_inf_is_looked_for_before_unscaling_as_pytorch_does():
    """A scale below 1 can make a finite gradient overflow when unscaled: PyTorch checks the
    values before it multiplies them, so that step goes ahead."""
    w = nn.Parameter([0.0])
    opt = optim.SGD([w], lr=1.0, nonfinite="apply")
    scaler = optim.GradScaler(init_scale=0.5)
    scaler.scale(dt.tensor(1.0))
    w.grad = dt.tensor([3e38])
    scaler.step(opt)
    assert w.grad.tolist() == [INF] and w.item() == -INF and opt.step_count == 1


def test_gradients_that_share_one_array_are_each_unscaled_once():
    a, b = nn.Parameter([1.0, 2.0]), nn.Parameter([3.0, 4.0])
    scaler = optim.GradScaler(init_scale=64.0)
    scaler.scale((a + b).sum()).backward()          # backward hands a and b the same array
    scaler.unscale_(optim.SGD([a, b], lr=0.1))
    assert a.grad.tolist() == [1.0, 1.0] and b.grad.tolist() == [1.0, 1.0]


def test_one_gradient_tensor_held_by_two_parameters_is_unscaled_once():
    a, b = nn.Parameter([1.0]), nn.Parameter([1.0])
    scaler = optim.GradScaler(init_scale=8.0)
    scaler.scale(dt.tensor(1.0))
    a.grad = b.grad = dt.tensor([8.0])
    scaler.unscale_(optim.SGD([a, b], lr=0.1))
    assert a.grad.tolist() == [1.0]            # (PyTorch would divide this one tensor twice)


def test_clipping_after_unscale_sees_the_true_norm():
    w = nn.Parameter([0.0, 0.0])
    opt = optim.SGD([w], lr=0.5)
    scaler = optim.GradScaler(init_scale=1024.0)
    scaler.scale((w * dt.tensor([3.0, 4.0])).sum()).backward()
    scaler.unscale_(opt)
    total = optim.clip_grad_norm_([w], max_norm=1.0)
    assert total.item() == 5.0                                 # not 5 * 1024
    scaler.step(opt)                                           # no second unscale
    scaler.update()
    coef = np.float32(1.0 / (5.0 + 1e-6))                      # PyTorch's clip coefficient
    expected = [-0.5 * float(np.float32(3.0) * coef), -0.5 * float(np.float32(4.0) * coef)]
    np.testing.assert_allclose(w.data, expected, rtol=1e-6)    # about [-0.3, -0.4]


def test_unscale_twice_or_after_step_raises_and_update_starts_a_new_iteration():
    w = nn.Parameter([1.0])
    opt = optim.SGD([w], lr=0.1)
    scaler = optim.GradScaler(init_scale=2.0)
    scaler.scale(w.sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match=r"^unscale_\(\) has already been called on this "
                                           r"optimizer since the last update\(\)\."):
        scaler.unscale_(opt)
    assert w.grad.tolist() == [1.0]                            # not divided twice
    scaler.step(opt)
    with pytest.raises(RuntimeError, match=r"^unscale_\(\) is being called after step\(\)\."):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match=r"^step\(\) has already been called since the last "
                                           r"update\(\)\."):
        scaler.step(opt)
    assert w.item() == pytest.approx(0.9)                      # stepped once
    scaler.update()
    w.grad = dt.tensor([4.0])
    scaler.unscale_(opt)                                       # READY again
    assert w.grad.tolist() == [2.0]


def test_update_without_an_inf_check_raises():
    w = nn.Parameter([1.0])
    scaler = optim.GradScaler()
    with pytest.raises(RuntimeError, match=r"update\(\) was called before any scale\(\)"):
        scaler.update()
    scaler.scale(w.sum()).backward()
    with pytest.raises(RuntimeError, match=r"^No inf checks were recorded prior to update\."):
        scaler.update()
    opt_without_grads = optim.SGD([nn.Parameter([1.0])], lr=0.1)
    with pytest.raises(RuntimeError, match="No inf checks were recorded for this optimizer"):
        scaler.step(opt_without_grads)
    with pytest.raises(RuntimeError, match="No inf checks were recorded prior to update"):
        scaler.update()


def test_step_before_any_scale_raises():
    w = nn.Parameter([1.0])
    w.grad = dt.tensor([1.0])
    with pytest.raises(RuntimeError, match=r"scaler\.scale\(loss or outputs\)"):
        optim.GradScaler().step(optim.SGD([w], lr=0.1))
    assert w.item() == 1.0


def test_a_float16_gradient_is_refused_and_nothing_changes():
    a, h, b = nn.Parameter([1.0]), nn.Parameter(np.array([1.0], np.float16)), nn.Parameter([1.0])
    opt = optim.SGD([a, h, b], lr=0.1)
    scaler = optim.GradScaler(init_scale=4.0)
    scaler.scale(dt.tensor(1.0))
    a.grad, h.grad, b.grad = dt.tensor([8.0]), dt.tensor([8.0], dtype=dt.float16), dt.tensor([8.0])
    with pytest.raises(ValueError, match=r"^Attempting to unscale FP16 gradients\.") as error:
        scaler.unscale_(opt)
    assert "#1" in str(error.value) and "float32" in str(error.value)
    assert a.grad.tolist() == [8.0] and b.grad.tolist() == [8.0]     # neither unscaled
    with pytest.raises(ValueError, match="FP16"):
        scaler.step(opt)
    assert a.item() == 1.0 and b.item() == 1.0
    h.grad = None                              # the refused calls left the optimizer READY
    scaler.unscale_(opt)
    assert a.grad.tolist() == [2.0] and b.grad.tolist() == [2.0]


def test_a_float16_activation_gradient_underflows_unless_the_loss_is_scaled():
    """Master weight in float32, compute in float16. d loss/d w = x * c = 2**-12 * 2**-14 =
    2**-26 (about 1.5e-8), below float16's smallest subnormal 2**-24 (about 6e-8)."""
    x16 = dt.tensor([2.0 ** -12], dtype=dt.float16)            # a small activation

    def loss_of(w):
        y16 = w.to(dt.float16) * x16                           # the float16 forward
        return y16.float().sum() * 2.0 ** -14                  # a float32 loss

    plain = nn.Parameter([1.0])
    loss_of(plain).backward()
    assert plain.grad.tolist() == [0.0]                        # underflowed: no learning

    w = nn.Parameter([1.0])
    scaler = optim.GradScaler(init_scale=2.0 ** 10)
    scaled_loss = scaler.scale(loss_of(w))
    assert scaled_loss.dtype == dt.float32                     # a float32 loss stays float32
    scaled_loss.backward()
    assert w.grad.tolist() == [2.0 ** -16]                     # survived, 1024 times too large
    scaler.unscale_(optim.SGD([w], lr=0.1))
    assert w.grad.tolist() == [2.0 ** -26]                     # the true gradient, in float32


def test_scale_multiplies_tensors_in_lists_and_tuples_and_refuses_anything_else():
    scaler = optim.GradScaler(init_scale=4.0)
    out = scaler.scale([dt.tensor(1.0), (dt.tensor(2.0), [dt.tensor(0.5)])])
    assert isinstance(out, list) and isinstance(out[1], tuple) and isinstance(out[1][1], list)
    assert [out[0].item(), out[1][0].item(), out[1][1][0].item()] == [4.0, 8.0, 2.0]
    half = scaler.scale(dt.tensor([0.5], dtype=dt.float16))
    assert half.dtype == dt.float16 and half.tolist() == [2.0]
    for bad in (3.0, "loss", [dt.tensor(1.0), None]):
        with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
            scaler.scale(bad)


def test_scaling_a_float16_output_rounds_once_as_pytorch_does():
    # 0.5 * 65536 = 32768 fits float16; 65536 itself does not (float16 tops out at 65504)
    out = optim.GradScaler().scale(dt.tensor([0.5], dtype=dt.float16))
    assert out.dtype == dt.float16 and out.tolist() == [32768.0]


# -- closure, disabled ---------------------------------------------------------------------------
def test_a_closure_is_refused_when_enabled():
    w = nn.Parameter([1.0])
    opt = optim.SGD([w], lr=0.1)
    scaler = optim.GradScaler()
    scaler.scale(w.sum()).backward()
    with pytest.raises(RuntimeError, match="^Closure use is not currently supported if "
                                           "GradScaler is enabled"):
        scaler.step(opt, closure=lambda: w.sum())
    assert w.item() == 1.0 and w.grad.tolist() == [65536.0]    # nothing was unscaled


def test_a_disabled_scaler_passes_everything_through():
    w = nn.Parameter([1.0, 2.0])
    opt = optim.SGD([w], lr=0.5)
    scaler = optim.GradScaler(enabled=False)
    loss = (w * w).sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    scaler.unscale_(opt)
    assert w.grad.tolist() == [2.0, 4.0]

    def closure():
        opt.zero_grad()
        value = (w * w).sum()
        value.backward()
        return value

    assert scaler.step(opt, closure=closure).item() == 5.0     # opt.step's own result
    assert w.data.tolist() == [0.0, 0.0]
    scaler.update()
    scaler.update()                                            # no "no inf checks" error
    assert scaler.get_scale() == 1.0 and not scaler.is_enabled()
    assert scaler.state_dict() == {}
    scaler.load_state_dict({})                                 # nothing to load, no error


# -- checkpoints ---------------------------------------------------------------------------------
def test_state_dict_round_trip_resumes_the_same_schedule():
    w = nn.Parameter([1.0])
    opt = optim.SGD([w], lr=0.1)
    scaler = optim.GradScaler(init_scale=8.0, growth_factor=4.0, backoff_factor=0.25,
                              growth_interval=3)
    for factors in ([1.0], [INF], [1.0], [1.0]):
        one_iteration(scaler, opt, w, factors)
    saved = scaler.state_dict()
    assert saved == {"scale": 2.0, "growth_factor": 4.0, "backoff_factor": 0.25,
                     "growth_interval": 3, "_growth_tracker": 2}
    resumed = optim.GradScaler()
    resumed.load_state_dict(saved)
    assert resumed.state_dict() == saved
    assert resumed.get_growth_factor() == 4.0 and resumed.get_backoff_factor() == 0.25
    assert resumed.get_growth_interval() == 3
    one_iteration(resumed, opt, w, [1.0])                      # the third clean step: grows
    assert resumed.get_scale() == 8.0


@pytest.mark.parametrize("key, bad", [("scale", 0.0), ("scale", NAN), ("growth_factor", 0.5),
                                      ("backoff_factor", 1.0), ("growth_interval", 0),
                                      ("growth_interval", 2.5), ("_growth_tracker", -1)])
def test_a_bad_state_dict_changes_nothing(key, bad):
    scaler = optim.GradScaler(init_scale=8.0)
    before = scaler.state_dict()
    saved = {"scale": 2.0, "growth_factor": 4.0, "backoff_factor": 0.25, "growth_interval": 3,
             "_growth_tracker": 2, key: bad}
    with pytest.raises((ValueError, TypeError), match=key):
        scaler.load_state_dict(saved)
    assert scaler.state_dict() == before


def test_an_empty_or_incomplete_state_dict_is_refused():
    scaler = optim.GradScaler(init_scale=8.0)
    with pytest.raises(RuntimeError, match="^The source state dict is empty, possibly because it "
                                           "was saved from a disabled instance of GradScaler"):
        scaler.load_state_dict({})
    with pytest.raises(KeyError, match=r"the state dict has no \['growth_interval'\]"):
        scaler.load_state_dict({"scale": 2.0, "growth_factor": 4.0, "backoff_factor": 0.25,
                                "_growth_tracker": 0})
    assert scaler.get_scale() == 8.0


# -- the constructor -----------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, error, words", [
    (dict(init_scale=0.0), ValueError, "init_scale must be a number > 0, got 0.0"),
    (dict(init_scale=-1), ValueError, "init_scale must be a number > 0, got -1"),
    (dict(init_scale=INF), ValueError, "init_scale must be a finite number > 0, got inf"),
    (dict(init_scale=NAN), ValueError, "init_scale must be a number > 0, got nan"),
    (dict(init_scale=1e39), ValueError, "init_scale must be a number > 0, got 1e+39"),
    (dict(init_scale=1e-50), ValueError, "init_scale must be a number > 0, got 1e-50"),
    (dict(init_scale="cpu"), ValueError, "init_scale must be a number > 0, got 'cpu' (dltutor's"),
    (dict(growth_factor=1.0), ValueError, "growth_factor must be a number > 1, got 1.0"),
    (dict(growth_factor=0.5), ValueError, "growth_factor must be a number > 1, got 0.5"),
    (dict(growth_factor=INF), ValueError, "growth_factor must be a finite number"),
    (dict(backoff_factor=1.0), ValueError, "backoff_factor must be a number in (0, 1), got 1.0"),
    (dict(backoff_factor=0), ValueError, "backoff_factor must be a number in (0, 1), got 0"),
    (dict(backoff_factor=-0.5), ValueError, "backoff_factor must be a number in"),
    (dict(growth_interval=0), ValueError, "growth_interval must be an integer >= 1, got 0"),
    (dict(growth_interval=2.5), TypeError, "growth_interval must be an integer, got 2.5"),
    (dict(growth_interval=True), TypeError, "growth_interval must be an integer, got True"),
    (dict(enabled=1), TypeError, "enabled must be True or False, got 1"),
    (dict(enabled=False, growth_factor=0.5), ValueError, "growth_factor"),   # checked anyway
])
def test_the_constructor_refuses_bad_settings_naming_them(kwargs, error, words):
    with pytest.raises(error, match="^GradScaler: " + re.escape(words)):
        optim.GradScaler(**kwargs)


def test_the_defaults_are_pytorchs():
    scaler = optim.GradScaler()
    assert scaler.state_dict() == {"scale": 65536.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                   "growth_interval": 2000, "_growth_tracker": 0}
    assert scaler.is_enabled() and isinstance(scaler.get_scale(), float)


# -- devices ---------------------------------------------------------------------------------------
def test_the_scaler_keeps_gradients_on_the_parameters_backend(backend):
    import marked_backend

    w = nn.Parameter(dt.tensor([1.0, 2.0]))
    opt = optim.SGD([w], lr=0.5)
    scaler = optim.GradScaler(init_scale=16.0)
    scaler.scale((w * w).sum()).backward()
    scaler.unscale_(opt)
    if backend == "marked":
        marked_backend.assert_marked(w.grad.data, "a gradient after unscale_")
    assert w.grad.tolist() == [2.0, 4.0]
    scaler.step(opt)
    scaler.update()
    assert w.data.tolist() == [0.0, 0.0] and not math.isnan(scaler.get_scale())
