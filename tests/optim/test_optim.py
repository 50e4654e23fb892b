"""Optimizers against update rules written out by hand, and every rule of the base class:
groups, lr multipliers, regularizer precedence, clipping, freezing, duplicates, hooks, checkpoints.

Gradients are set directly (``p.grad = ...``) so each step's input is known exactly; the
expected values come from plain NumPy loops in this file, not from the library.
"""
from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn, optim

GRADS = [np.array([0.5, -1.0, 2.0]), np.array([-0.3, 0.8, 1.5]), np.array([1.2, 0.1, -0.7]),
         np.array([0.0, -2.0, 0.4])]
START = np.array([1.0, -2.0, 0.5])


def run(make_opt, steps=4, start=START, grads=GRADS):
    """Apply ``steps`` optimizer steps to a float64 parameter with the given gradients."""
    p = nn.Parameter(start.copy())
    opt = make_opt([p])
    for g in grads[:steps]:
        p.grad = dt.tensor(g)
        opt.step()
    return p.numpy()


# --- reference rules, written out by hand ------------------------------------------------------
def ref_sgd(lr, momentum=0.0, dampening=0.0, wd=0.0, nesterov=False, maximize=False, steps=4):
    p, buf = START.copy(), None
    for g in GRADS[:steps]:
        g = -g if maximize else g.copy()
        g = g + wd * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def ref_adam(lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, decoupled=False, amsgrad=False, steps=4):
    p, m, v, vmax = START.copy(), np.zeros(3), np.zeros(3), np.zeros(3)
    for t, g in enumerate(GRADS[:steps], start=1):
        if decoupled:
            p = p * (1 - lr * wd)
        else:
            g = g + wd * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        denom = np.sqrt(vmax if amsgrad else v) / math.sqrt(1 - b2 ** t) + eps
        p = p - lr / (1 - b1 ** t) * m / denom
    return p


def ref_rmsprop(lr, alpha=0.99, eps=1e-8, momentum=0.0, centered=False, steps=4):
    p, sq, avg_g, buf = START.copy(), np.zeros(3), np.zeros(3), np.zeros(3)
    for g in GRADS[:steps]:
        sq = alpha * sq + (1 - alpha) * g * g
        if centered:
            avg_g = alpha * avg_g + (1 - alpha) * g
            avg = np.sqrt(sq - avg_g ** 2) + eps
        else:
            avg = np.sqrt(sq) + eps
        if momentum:
            buf = momentum * buf + g / avg
            p = p - lr * buf
        else:
            p = p - lr * g / avg
    return p


def ref_adagrad(lr, lr_decay=0.0, init=0.0, eps=1e-10, steps=4):
    p, total = START.copy(), np.full(3, init)
    for t, g in enumerate(GRADS[:steps], start=1):
        total = total + g * g
        p = p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(total) + eps)
    return p


@pytest.mark.parametrize("kwargs", [
    dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.1, momentum=0.9, nesterov=True), dict(lr=0.1, weight_decay=0.01),
    dict(lr=0.1, momentum=0.5, weight_decay=0.1, nesterov=True), dict(lr=0.1, maximize=True),
])
def test_sgd_matches_the_hand_written_rule(kwargs):
    ref = dict(lr=kwargs["lr"], momentum=kwargs.get("momentum", 0), dampening=kwargs.get(
        "dampening", 0), wd=kwargs.get("weight_decay", 0), nesterov=kwargs.get("nesterov", False),
        maximize=kwargs.get("maximize", False))
    np.testing.assert_allclose(run(lambda ps: optim.SGD(ps, **kwargs)), ref_sgd(**ref), rtol=1e-12)


@pytest.mark.parametrize("kwargs", [
    dict(lr=0.01), dict(lr=0.1, betas=(0.8, 0.99)), dict(lr=0.01, weight_decay=0.1),
    dict(lr=0.05, amsgrad=True), dict(lr=0.01, eps=1e-3),
])
def test_adam_matches_the_hand_written_rule(kwargs):
    b1, b2 = kwargs.get("betas", (0.9, 0.999))
    expected = ref_adam(kwargs["lr"], b1, b2, kwargs.get("eps", 1e-8), kwargs.get("weight_decay", 0),
                        amsgrad=kwargs.get("amsgrad", False))
    np.testing.assert_allclose(run(lambda ps: optim.Adam(ps, **kwargs)), expected, rtol=1e-12)


@pytest.mark.parametrize("wd, amsgrad", [(0.01, False), (0.5, False), (0.1, True)])
def test_adamw_decays_before_the_adam_step(wd, amsgrad):
    got = run(lambda ps: optim.AdamW(ps, lr=0.05, weight_decay=wd, amsgrad=amsgrad))
    np.testing.assert_allclose(got, ref_adam(0.05, wd=wd, decoupled=True, amsgrad=amsgrad),
                               rtol=1e-12)


@pytest.mark.parametrize("kwargs", [dict(lr=0.01), dict(lr=0.01, momentum=0.9),
                                    dict(lr=0.01, centered=True, alpha=0.9)])
def test_rmsprop_matches_the_hand_written_rule(kwargs):
    expected = ref_rmsprop(kwargs["lr"], kwargs.get("alpha", 0.99), momentum=kwargs.get(
        "momentum", 0), centered=kwargs.get("centered", False))
    np.testing.assert_allclose(run(lambda ps: optim.RMSprop(ps, **kwargs)), expected, rtol=1e-12)


@pytest.mark.parametrize("kwargs", [dict(lr=0.1), dict(lr=0.1, lr_decay=0.5,
                                                       initial_accumulator_value=0.2)])
def test_adagrad_matches_the_hand_written_rule(kwargs):
    expected = ref_adagrad(kwargs["lr"], kwargs.get("lr_decay", 0),
                           kwargs.get("initial_accumulator_value", 0))
    np.testing.assert_allclose(run(lambda ps: optim.Adagrad(ps, **kwargs)), expected, rtol=1e-12)


def test_sign_sgd_example():
    np.testing.assert_allclose(run(lambda ps: optim.SignSGD(ps, lr=0.1), steps=1),
                               START - 0.1 * np.sign(GRADS[0]))


def test_float32_parameters_stay_float32_through_every_optimizer():
    for make in (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.1),
                 lambda ps: optim.Adam(ps, amsgrad=True, weight_decay=0.1),
                 lambda ps: optim.AdamW(ps), lambda ps: optim.RMSprop(ps, centered=True, momentum=0.5),
                 lambda ps: optim.Adagrad(ps)):
        p = nn.Parameter(dt.ones(3))
        opt = make([p])
        p.grad = dt.ones(3)
        opt.step()
        assert p.dtype == np.float32
        assert all(v.dtype == np.float32 for v in opt.state[p].values() if hasattr(v, "dtype"))


# --- groups, lr and lr_mult ----------------------------------------------------------------------
def lenet():
    return nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(6 * 12 * 12, 10))


def test_groups_take_missing_keys_from_the_defaults():
    net = lenet()
    conv = [p for n, p in net.named_parameters() if n.startswith("0.")]
    rest = [p for n, p in net.named_parameters() if not n.startswith("0.")]
    opt = optim.SGD([{"params": conv}, {"params": rest, "lr": 0.01}], lr=0.05, momentum=0.9)
    assert [(len(g["params"]), g["lr"], g["momentum"]) for g in opt.param_groups] == [
        (2, 0.05, 0.9), (2, 0.01, 0.9)]


def test_group_lr_edit_takes_effect_on_the_next_step_and_zero_stops_the_group():
    a, b = nn.Parameter([1.0]), nn.Parameter([1.0])
    opt = optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1)
    for step in range(4):
        if step == 2:
            opt.param_groups[1]["lr"] = 0.0
        a.grad, b.grad = dt.ones(1), dt.ones(1)
        opt.step()
    assert a.item() == pytest.approx(1 - 4 * 0.1)
    assert b.item() == pytest.approx(1 - 2 * 0.1)


@pytest.mark.parametrize("mult", [0.0, 0.5, 2.0])
def test_lr_mult_scales_the_update(mult):
    p = nn.Parameter([1.0], lr_mult=mult)
    opt = optim.SGD([p], lr=0.1)
    p.grad = dt.ones(1)
    opt.step()
    assert p.item() == pytest.approx(1 - 0.1 * mult)
    assert opt.effective_lr(p, opt.param_groups[0]) == pytest.approx(0.1 * mult)


def test_lr_mult_zero_never_moves_even_with_adam_and_decay():
    p = nn.Parameter([1.0, -1.0], lr_mult=0.0)
    opt = optim.AdamW([p], lr=0.1, weight_decay=0.5)
    for _ in range(3):
        p.grad = dt.ones(2)
        opt.step()
    assert p.tolist() == [1.0, -1.0]


# --- regularization ------------------------------------------------------------------------------
def test_parameter_regularizer_replaces_the_group_weight_decay():
    own = nn.Parameter(np.array([2.0]), regularizer=optim.L1Decay(0.5))
    plain = nn.Parameter(np.array([2.0]))
    opt = optim.SGD([own, plain], lr=0.1, weight_decay=0.1)
    own.grad, plain.grad = dt.tensor(np.array([1.0])), dt.tensor(np.array([1.0]))
    opt.step()
    assert own.item() == pytest.approx(2 - 0.1 * (1 + 0.5 * 1))      # L1: sign(p)
    assert plain.item() == pytest.approx(2 - 0.1 * (1 + 0.1 * 2))    # coupled L2 from the group


def test_group_weight_decay_may_be_a_regularizer_object():
    p = nn.Parameter(np.array([-2.0]))
    opt = optim.SGD([p], lr=0.1, weight_decay=optim.L1Decay(0.3))
    p.grad = dt.tensor(np.array([0.0]))
    opt.step()
    assert p.item() == pytest.approx(-2 + 0.1 * 0.3)


def test_parameter_regularizer_is_coupled_even_in_adam():
    p = nn.Parameter(START.copy(), regularizer=optim.L2Decay(0.2))
    opt = optim.Adam([p], lr=0.01)
    for g in GRADS:
        p.grad = dt.tensor(g)
        opt.step()
    np.testing.assert_allclose(p.numpy(), ref_adam(0.01, wd=0.2), rtol=1e-12)


def test_adamw_apply_decay_param_fun_excludes_biases():
    net = nn.Linear(3, 1)
    net.weight.set_value(np.ones((1, 3)))
    net.bias.set_value(np.ones(1))
    opt = optim.AdamW(net.named_parameters(), lr=0.1, weight_decay=0.5,
                      apply_decay_param_fun=lambda name: not name.endswith("bias"))
    net.weight.grad, net.bias.grad = dt.zeros(1, 3), dt.zeros(1)  # only decay can move them
    opt.step()
    np.testing.assert_allclose(net.weight.numpy(), [[1 - 0.1 * 0.5] * 3], rtol=1e-6)
    assert net.bias.tolist() == [1.0]


def test_apply_decay_param_fun_needs_names():
    with pytest.raises(ValueError, match="named_parameters"):
        optim.AdamW(nn.Linear(2, 1).parameters(), apply_decay_param_fun=lambda n: True)


# --- clipping ------------------------------------------------------------------------------------
def params_with_grads(*grads, **attrs):
    out = []
    for g in grads:
        p = nn.Parameter(np.zeros(len(g)), **attrs)
        p.grad = dt.tensor(np.array(g, dtype=np.float64))
        out.append(p)
    return out


@pytest.mark.parametrize("max_norm, expected_scale", [(10.0, 1.0), (5.0, 5 / (5 + 1e-6)),
                                                      (1.0, 1 / (5 + 1e-6))])
def test_clip_grad_norm_below_at_and_above(max_norm, expected_scale):
    a, b = params_with_grads([3.0], [4.0])
    total = optim.clip_grad_norm_([a, b], max_norm)
    assert total.item() == pytest.approx(5.0)
    assert a.grad.item() == pytest.approx(3 * min(1.0, expected_scale), rel=1e-12)
    assert b.grad.item() == pytest.approx(4 * min(1.0, expected_scale), rel=1e-12)


def test_clip_grad_norm_other_norms_and_tied_parameter_counted_once():
    a, b = params_with_grads([3.0, -4.0], [1.0])
    assert optim.clip_grad_norm_([a, b, a], 100.0, norm_type=1).item() == pytest.approx(8.0)
    assert optim.clip_grad_norm_([a, b], 100.0, norm_type=math.inf).item() == pytest.approx(4.0)
    assert optim.clip_grad_norm_([a, a], 100.0).item() == pytest.approx(5.0)


def test_clip_grad_norm_with_a_zero_and_an_infinite_gradient():
    (zero,) = params_with_grads([0.0, 0.0])
    assert optim.clip_grad_norm_([zero], 1.0).item() == 0.0
    assert zero.grad.tolist() == [0.0, 0.0]
    (bad,) = params_with_grads([np.inf, 1.0])
    with pytest.raises(RuntimeError, match="total norm of the gradients is inf"):
        optim.clip_grad_norm_([bad], 1.0, error_if_nonfinite=True)
    assert bad.grad.tolist()[1] == 1.0  # the error came before any change


def test_clip_grad_value():
    (p,) = params_with_grads([-3.0, 0.2, 5.0])
    optim.clip_grad_value_([p], 1.0)
    assert p.grad.tolist() == [-1.0, 0.2, 1.0]


def test_global_norm_clip_in_the_optimizer_matches_paddles_formula():
    a, b = params_with_grads([3.0], [4.0])
    clip = optim.ClipGradByGlobalNorm(1.0)
    opt = optim.SGD([a, b], lr=1.0, grad_clip=clip)
    opt.step()
    assert a.item() == pytest.approx(-3 * 1.0 / 5.0) and b.item() == pytest.approx(-4 / 5.0)
    assert clip.last_total_norm == pytest.approx(5.0) and clip.last_scale == pytest.approx(0.2)
    assert a.grad.item() == 3.0  # the optimizer clipped a copy; .grad keeps what backward gave


def test_global_norm_at_and_below_threshold_changes_nothing():
    for clip_norm in (5.0, 7.0):
        a, b = params_with_grads([3.0], [4.0])
        clip = optim.ClipGradByGlobalNorm(clip_norm)
        optim.SGD([a, b], lr=1.0, grad_clip=clip).step()
        assert (a.item(), b.item()) == (-3.0, -4.0) and clip.last_scale == 1.0


def test_need_clip_false_is_neither_counted_nor_scaled():
    a, b = params_with_grads([3.0], [4.0])
    b.need_clip = False
    clip = optim.ClipGradByGlobalNorm(1.0)
    optim.SGD([a, b], lr=1.0, grad_clip=clip).step()
    assert clip.last_total_norm == pytest.approx(3.0)
    assert a.item() == pytest.approx(-1.0) and b.item() == pytest.approx(-4.0)


def test_clip_by_norm_is_per_tensor_and_by_value_clamps():
    a, b = params_with_grads([3.0, 4.0], [0.5])
    optim.SGD([a, b], lr=1.0, grad_clip=optim.ClipGradByNorm(1.0)).step()
    assert a.tolist() == pytest.approx([-0.6, -0.8]) and b.tolist() == [-0.5]
    (c,) = params_with_grads([-3.0, 0.5, 2.0])
    optim.SGD([c], lr=1.0, grad_clip=optim.ClipGradByValue(1.0, min=-0.5)).step()
    assert c.tolist() == [0.5, -0.5, -1.0]


def test_need_clip_false_is_honoured_by_norm_and_value_clips():
    (a,) = params_with_grads([3.0, 4.0], need_clip=False)
    optim.SGD([a], lr=1.0, grad_clip=optim.ClipGradByNorm(1.0)).step()
    assert a.tolist() == [-3.0, -4.0]
    (b,) = params_with_grads([3.0], need_clip=False)
    optim.SGD([b], lr=1.0, grad_clip=optim.ClipGradByValue(1.0)).step()
    assert b.tolist() == [-3.0]


@pytest.mark.parametrize("bad", [0, -1.0, "1"])
def test_clip_thresholds_must_be_positive(bad):
    with pytest.raises(ValueError, match="must be a number > 0"):
        optim.ClipGradByGlobalNorm(bad)


def test_clipping_happens_before_regularization():
    p = nn.Parameter(np.array([10.0]))
    p.grad = dt.tensor(np.array([4.0]))
    optim.SGD([p], lr=1.0, weight_decay=0.1, grad_clip=optim.ClipGradByGlobalNorm(1.0)).step()
    assert p.item() == pytest.approx(10 - (1.0 + 0.1 * 10))


# --- freezing ------------------------------------------------------------------------------------
def test_parameter_without_grad_does_not_move_even_with_momentum_and_decay():
    p, q = nn.Parameter([1.0]), nn.Parameter([1.0])
    opt = optim.SGD([p, q], lr=0.1, momentum=0.9, weight_decay=0.5)
    for _ in range(3):
        p.grad = dt.ones(1)
        q.grad = dt.ones(1)
        opt.step()
    q.grad = None                      # frozen from now on: no gradient at all
    before = q.item()
    p.grad = dt.ones(1)
    opt.step()
    assert q.item() == before and opt.state[q]["step"] == 3


def test_lr_zero_with_momentum_advances_state_and_jumps_when_unfrozen():
    p = nn.Parameter([0.0])
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    opt.param_groups[0]["lr"] = 0.0
    for _ in range(5):
        p.grad = dt.ones(1)
        opt.step()
    assert p.item() == 0.0 and opt.state[p]["step"] == 5
    buf = opt.state[p]["momentum_buffer"].item()
    assert buf == pytest.approx(sum(0.9 ** k for k in range(5)))  # kept growing while frozen
    opt.param_groups[0]["lr"] = 0.1
    p.grad = dt.ones(1)
    opt.step()
    assert p.item() == pytest.approx(-0.1 * (0.9 * buf + 1))    # far more than one plain step


def test_requires_grad_false_means_no_gradient_and_no_update():
    net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    net[0].requires_grad_(False)
    frozen = net[0].weight.numpy().copy()
    opt = optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=0.1)
    for _ in range(2):
        opt.zero_grad()
        net(dt.randn(4, 2)).sum().backward()
        opt.step()
    np.testing.assert_array_equal(net[0].weight.numpy(), frozen)
    assert all(p not in opt.state for p in net[0].parameters())


# --- construction errors -------------------------------------------------------------------------
def test_a_parameter_twice_is_an_error_naming_it():
    net = nn.Linear(2, 1)
    with pytest.raises(ValueError, match="'weight' appears twice"):
        optim.SGD([{"params": net.named_parameters()},
                   {"params": [("weight", net.weight)]}], lr=0.1)
    p = nn.Parameter([1.0])
    with pytest.raises(ValueError, match="appears twice.*PyTorch only warns"):
        optim.SGD([p, p], lr=0.1)


@pytest.mark.parametrize("make, message", [
    (lambda: optim.SGD([], lr=0.1), "empty parameter list"),
    (lambda: optim.SGD([nn.Parameter([1.0])], lr=-0.1), "lr must be a number >= 0"),
    (lambda: optim.SGD([{"params": [nn.Parameter([1.0])], "betas": (0.9, 0.9)}], lr=0.1),
     "unknown hyperparameter.*'betas'"),
    (lambda: optim.SGD([nn.Parameter([1.0])], lr=0.1, nesterov=True), "Nesterov.*momentum > 0"),
    (lambda: optim.SGD([nn.Parameter([1.0])], lr=0.1, momentum=0.9, dampening=0.1,
                       nesterov=True), "dampening = 0"),
    (lambda: optim.Adam([nn.Parameter([1.0])], betas=(0.9, 1.0)), r"betas\[1\]"),
    (lambda: optim.SGD(nn.Parameter([1.0]), lr=0.1), "wrap it in a list"),
    (lambda: optim.SGD([dt.ones(2, requires_grad=True) * 2], lr=0.1), "leaf tensors"),
    (lambda: optim.SGD([("a", nn.Parameter([1.0])), ("a", nn.Parameter([2.0]))], lr=0.1),
     "both named 'a'"),
])
def test_construction_errors_explain(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make()


# --- step counting and hooks ---------------------------------------------------------------------
def test_step_count_counts_steps_not_epochs_and_state_step_counts_updates():
    p, q = nn.Parameter([1.0]), nn.Parameter([1.0])
    opt = optim.SGD([p, q], lr=0.1)
    for batch in range(5):
        p.grad = dt.ones(1)
        q.grad = dt.ones(1) if batch < 2 else None
        opt.step()
    assert opt.step_count == 5 and opt.state[p]["step"] == 5 and opt.state[q]["step"] == 2


def test_hooks_run_around_the_step_and_see_updates():
    p = nn.Parameter([1.0, 2.0])
    opt = optim.SGD([("w", p)], lr=0.5)
    calls = []
    pre = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", p.tolist())))
    opt.record_steps = True
    post = opt.register_step_post_hook(
        lambda o, a, k: calls.append(("post", [(r.name, r.update.tolist(), r.lr, r.grad_norm)
                                               for r in o.last_step])))
    p.grad = dt.tensor([1.0, -2.0])
    opt.step()
    assert calls == [("pre", [1.0, 2.0]), ("post", [("w", [-0.5, 1.0], 0.5, math.sqrt(5))])]
    pre.remove()
    post.remove()
    opt.step()
    assert len(calls) == 2


# --- MultiOptimizer ------------------------------------------------------------------------------
def test_multi_optimizer_steps_each_with_its_own_rule():
    a, b = nn.Parameter(START.copy()), nn.Parameter(START.copy())
    both = optim.MultiOptimizer(optim.SGD([a], lr=0.1, momentum=0.9), optim.Adam([b], lr=0.01))
    for g in GRADS:
        a.grad, b.grad = dt.tensor(g), dt.tensor(g)
        both.step()
    np.testing.assert_allclose(a.numpy(), ref_sgd(0.1, momentum=0.9), rtol=1e-12)
    np.testing.assert_allclose(b.numpy(), ref_adam(0.01), rtol=1e-12)
    both.zero_grad()
    assert a.grad is None and b.grad is None
    state = both.state_dict()
    assert len(state["optimizers"]) == 2


def test_multi_optimizer_refuses_a_shared_parameter():
    p = nn.Parameter([1.0])
    with pytest.raises(ValueError, match="in optimizer 0 and optimizer 1"):
        optim.MultiOptimizer(optim.SGD([p], lr=0.1), optim.Adam([p]))


# --- checkpoints ---------------------------------------------------------------------------------
def train(model, opt, steps, seed, scheduler=None):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        x = dt.tensor(rng.standard_normal((8, 4)).astype(np.float32))
        y = dt.tensor(rng.integers(0, 3, 8))
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        if scheduler is not None:
            scheduler.step()


def make_run():
    dt.manual_seed(3)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = optim.Adam([{"params": model[0].named_parameters(prefix="0")},
                      {"params": model[2].named_parameters(prefix="2"), "lr": 0.003}],
                     lr=0.01, weight_decay=0.01, grad_clip=optim.ClipGradByGlobalNorm(1.0))
    return model, opt


def test_resuming_from_a_file_reproduces_the_uninterrupted_run_bit_for_bit(tmp_path):
    straight_model, straight_opt = make_run()
    straight_sched = optim.lr_scheduler.StepLR(straight_opt, step_size=2, gamma=0.5)
    train(straight_model, straight_opt, 3, seed=1, scheduler=straight_sched)
    train(straight_model, straight_opt, 3, seed=2, scheduler=straight_sched)

    model, opt = make_run()
    sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    train(model, opt, 3, seed=1, scheduler=sched)
    path = os.fspath(tmp_path / "checkpoint.safetensors")
    dt.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
             "scheduler": sched.state_dict(), "step": 3}, path)

    # New objects, as in a new process; the scheduler is built before the states are loaded.
    fresh_model, fresh_opt = make_run()
    fresh_sched = optim.lr_scheduler.StepLR(fresh_opt, step_size=2, gamma=0.5)
    checkpoint = dt.load(path)
    fresh_model.load_state_dict(checkpoint["model"])
    fresh_opt.load_state_dict(checkpoint["optimizer"])
    fresh_sched.load_state_dict(checkpoint["scheduler"])
    assert checkpoint["step"] == 3 and fresh_opt.step_count == 3
    assert fresh_sched.get_last_lr() == sched.get_last_lr()
    train(fresh_model, fresh_opt, 3, seed=2, scheduler=fresh_sched)
    for (name, a), (_, b) in zip(straight_model.state_dict().items(),
                                 fresh_model.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
    assert fresh_sched.get_last_lr() == straight_sched.get_last_lr()


def test_state_dict_is_keyed_by_names_and_by_position_without_them():
    model, opt = make_run()
    train(model, opt, 1, seed=0)
    state = opt.state_dict()
    assert set(state["state"]) == {"0.weight", "0.bias", "2.weight", "2.bias"}
    assert state["param_groups"][1]["params"] == ["2.weight", "2.bias"]
    assert state["param_groups"][1]["lr"] == 0.003
    unnamed = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    train(model, unnamed, 1, seed=0)
    assert set(unnamed.state_dict()["state"]) == {0, 1, 2, 3}


def test_loaded_lr_that_differs_from_the_code_is_reported():
    model, opt = make_run()
    train(model, opt, 1, seed=0)
    saved = opt.state_dict()
    model2, opt2 = make_run()
    opt2.param_groups[0]["lr"] = 0.5
    result = opt2.load_state_dict(saved)
    assert result.changed == {"group 0 lr": (0.5, 0.01)}
    assert "lr: 0.5 -> 0.01" in repr(result)
    assert opt2.param_groups[0]["lr"] == 0.01


def corrupt_cases():
    model, opt = make_run()
    train(model, opt, 1, seed=0)
    good = opt.state_dict()

    def edited(edit):
        state = {"optimizer": good["optimizer"], "step_count": good["step_count"],
                 "state": {k: dict(v) for k, v in good["state"].items()},
                 "param_groups": [dict(g, params=list(g["params"])) for g in good["param_groups"]]}
        edit(state)
        return state

    return [
        (edited(lambda s: s.update(optimizer="SGD")), "saved from a SGD"),
        (edited(lambda s: s["param_groups"].pop()), "1 parameter group"),
        (edited(lambda s: s["param_groups"][0]["params"].remove("0.bias")), "missing parameters"),
        (edited(lambda s: s["param_groups"][0]["params"].append("9.weight")), "unexpected"),
        (edited(lambda s: s["state"]["0.weight"].update(exp_avg=dt.zeros(3, 3))), "shape"),
        (edited(lambda s: s["param_groups"][0].update(momentum=0.9)), "unknown hyperparameter"),
    ]


@pytest.mark.parametrize("case", range(6))
def test_each_load_error_leaves_the_optimizer_unchanged(case):
    bad, message = corrupt_cases()[case]
    model, opt = make_run()
    train(model, opt, 2, seed=5)
    before = opt.state_dict()
    with pytest.raises(optim.OptimizerStateError, match=message):
        opt.load_state_dict(bad)
    after = opt.state_dict()
    assert after["param_groups"] == before["param_groups"]
    for key in before["state"]:
        for name, value in before["state"][key].items():
            other = after["state"][key][name]
            if hasattr(value, "numpy"):
                np.testing.assert_array_equal(value.numpy(), other.numpy())
            else:
                assert value == other


def test_regularizer_objects_survive_a_checkpoint(tmp_path):
    p = nn.Parameter([1.0])
    opt = optim.SGD([("p", p)], lr=0.1, weight_decay=optim.L2Decay(0.3))
    path = os.fspath(tmp_path / "opt.safetensors")
    dt.save(opt.state_dict(), path)
    opt2 = optim.SGD([("p", p)], lr=0.1)
    opt2.load_state_dict(dt.load(path))
    assert opt2.param_groups[0]["weight_decay"] == optim.L2Decay(0.3)


def test_loading_groups_with_equal_hyperparameters():
    """Regression: finding a group by equality compared the parameter tensors themselves."""
    a, b = nn.Parameter([1.0, 2.0]), nn.Parameter([3.0, 4.0])
    opt = optim.SGD([{"params": [a], "lr": 0.1}, {"params": [b], "lr": 0.05}], lr=0.1)
    saved = opt.state_dict()
    saved["param_groups"][0]["lr"] = 0.05
    result = opt.load_state_dict(saved)
    assert result.changed == {"group 0 lr": (0.1, 0.05)}


@pytest.mark.parametrize("make", [
    lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1,
                         grad_clip=optim.ClipGradByGlobalNorm(0.5)),
    lambda ps: optim.Adam(ps, amsgrad=True, maximize=True, grad_clip=optim.ClipGradByNorm(0.5)),
    lambda ps: optim.AdamW(ps, weight_decay=optim.L2Decay(0.1).coeff,
                           grad_clip=optim.ClipGradByValue(0.1)),
    lambda ps: optim.RMSprop(ps, centered=True, momentum=0.5, weight_decay=optim.L1Decay(0.1)),
    lambda ps: optim.Adagrad(ps, lr_decay=0.1), lambda ps: optim.SignSGD(ps, lr=0.1),
])
def test_optimizers_stay_on_the_parameters_backend(make, backend):
    """Under the marked backend any stray NumPy call in an optimizer or clip fails."""
    import marked_backend

    p = nn.Parameter(dt.randn(3, 2), regularizer=optim.L2Decay(0.01))
    q = nn.Parameter(dt.randn(2))
    opt = make([p, q])
    for _ in range(2):
        p.grad, q.grad = dt.randn(3, 2), dt.randn(2)
        opt.step()
    if backend == "marked":
        for t in (p, q):
            marked_backend.assert_marked(t.data, "a parameter after step")
            for name, value in opt.state[t].items():
                if hasattr(value, "shape"):
                    marked_backend.assert_marked(value, f"optimizer state {name!r}")
    total = optim.clip_grad_norm_([p, q], 0.1)
    optim.clip_grad_value_([p, q], 0.01)
    assert total.device == p.device


# ---------------------------------------------------------------------------------------------
# Paddle's and MegEngine's clear_grad (004: optimizer.step(); optimizer.clear_grad())
# ---------------------------------------------------------------------------------------------
def test_clear_grad_is_paddles_zero_grad_with_paddles_default_zeros():
    """Paddle's clear_grad() leaves zeros (set_to_zero=True); set_to_zero=False leaves None,
    PyTorch's zero_grad() default. (Both run in Paddle and PyTorch in tests/frameworks.)"""
    w = nn.Parameter([1.0, 2.0])
    opt = optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    grad = w.grad
    opt.clear_grad()
    assert w.grad is grad and w.grad.tolist() == [0.0, 0.0]
    (w * w).sum().backward()
    assert w.grad.tolist() == [2.0, 4.0]                  # the zeros took the new gradient
    opt.clear_grad(set_to_zero=False)
    assert w.grad is None


def test_zero_grad_set_to_none_false_zeros_without_touching_a_shared_array():
    """backward hands ``a + b``'s gradient array to both inputs; zeroing one parameter's
    gradient must not zero the other's through that shared array."""
    a, b = nn.Parameter([1.0, 2.0]), nn.Parameter([3.0, 4.0])
    (a + b).sum().backward()
    optim.SGD([a], lr=0.1).zero_grad(set_to_none=False)
    assert a.grad.tolist() == [0.0, 0.0] and b.grad.tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="set_to_none must be True or False"):
        optim.SGD([b], lr=0.1).zero_grad(set_to_none="yes")
    assert b.grad.tolist() == [1.0, 1.0]


def test_sgds_setting_errors_name_the_subclass_the_learner_made():
    """A subclass of SGD is checked by SGD's rules, and its errors say its own name (as Adam's
    do), so the learner knows which optimizer was given the bad setting."""
    class MomentumSGD(optim.SGD):
        pass
    w = nn.Parameter([1.0])
    with pytest.raises(ValueError, match="^MomentumSGD: momentum must be a number >= 0"):
        MomentumSGD([w], lr=0.1, momentum=-0.9)
    with pytest.raises(ValueError, match="^MomentumSGD: Nesterov momentum needs"):
        MomentumSGD([w], lr=0.1, nesterov=True)


def test_paddles_clear_grad_refuses_a_flag_that_is_not_a_bool_on_optimizer_and_module():
    """``clear_grad(0)`` is a slip (0 is falsy: it would mean None); both spellings refuse it
    before any gradient changes, naming the method."""
    layer = nn.Linear(2, 1)
    layer(dt.ones(1, 2)).sum().backward()
    with pytest.raises(TypeError, match=r"^SGD\.clear_grad: set_to_zero must be True or False"):
        optim.SGD(layer.parameters(), lr=0.1).clear_grad(0)
    with pytest.raises(TypeError, match=r"^Linear\.clear_gradients: set_to_zero must be True"):
        layer.clear_gradients("yes")
    assert layer.bias.grad.tolist() == [1.0]


def test_step_with_a_closure_returns_its_loss_and_takes_the_step():
    """PyTorch's step(closure): the closure runs first, with gradients recorded even inside
    no_grad, and step returns its loss; the update is the usual one (w -= lr * 2w)."""
    w = nn.Parameter([1.0, -2.0])
    opt = optim.SGD([w], lr=0.1)
    seen = []
    opt.register_step_pre_hook(lambda o, args, kwargs: seen.append(len(args)))

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with dt.no_grad():
        loss = opt.step(closure)
    assert loss.item() == pytest.approx(5.0) and seen == [1]
    np.testing.assert_allclose(w.data, [0.8, -1.6], rtol=1e-6)
    assert opt.step() is None
    with pytest.raises(TypeError, match="closure must be a function"):
        opt.step(3.0)


def test_clear_grad_of_several_optimizers_at_once():
    net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    both = optim.MultiOptimizer(optim.SGD(net[0].parameters(), lr=0.1),
                                optim.Adam(net[1].parameters()))
    net(dt.ones(3, 2)).sum().backward()
    both.step()
    both.clear_grad()
    assert all(p.grad is not None and not p.grad.numpy().any() for p in net.parameters())
    both.zero_grad()
    assert all(p.grad is None for p in net.parameters())



def test_clip_grad_norm_of_an_infinite_gradient_gives_nan_silently_as_pytorch():
    (bad,) = params_with_grads([np.inf, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # no NumPy RuntimeWarning for inf * 0
        total = optim.clip_grad_norm_([bad], 1.0)
    assert total.item() == np.inf
    assert np.isnan(bad.grad.numpy()[0]) and bad.grad.numpy()[1] == 0.0
