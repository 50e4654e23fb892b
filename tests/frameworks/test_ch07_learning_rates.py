"""Chapter 07 (learning rates, schedulers, step counts, your own optimizer): what it says
PyTorch 2.13 and Paddle 3.3 do, run in them.
"""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import torch

from chapters import paddle_dynamic
from claims import claim, row


# ---------------------------------------------------------------- PyTorch


_LR_CHECKED = [torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW, torch.optim.Adagrad,
               torch.optim.RMSprop]


def _nan_step_poisons(opt, w):
    """One step with a finite gradient: every weight becomes NaN."""
    (w * 2.0).sum().backward()
    opt.step()
    return bool(torch.isnan(w.detach()).all())


@claim("torch-nan-lr-checked-only-in-constructors")
@pytest.mark.parametrize("kind", _LR_CHECKED, ids=lambda kind: kind.__name__)
def test_torch_nan_lr_refused_by_four_constructors_accepted_everywhere_else(kind):
    """SGD checks `lr < 0` (NaN passes); Adam, AdamW, Adagrad, RMSprop check `not 0.0 <= lr`
    (NaN refused). All accept inf, and a NaN written into param_groups, added in a group or
    loaded from a state dict; step() then turns every weight into NaN."""
    nan = float("nan")
    w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    with pytest.raises(ValueError, match="Invalid learning rate"):
        kind([w], lr=-0.1)
    if kind is torch.optim.SGD:
        assert math.isnan(kind([w], lr=nan).param_groups[0]["lr"])          # accepted
    else:
        with pytest.raises(ValueError, match="Invalid learning rate: nan"):
            kind([w], lr=nan)
    assert kind([w], lr=float("inf")).param_groups[0]["lr"] == float("inf")

    opt = kind([w], lr=0.1)
    opt.param_groups[0]["lr"] = nan                     # by hand: no check at step()
    assert _nan_step_poisons(opt, w)

    w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    saved = kind([w], lr=0.1).state_dict()
    saved["param_groups"][0]["lr"] = nan                # a checkpoint with a NaN lr
    opt = kind([w], lr=0.1)
    opt.load_state_dict(saved)
    assert math.isnan(opt.param_groups[0]["lr"])
    assert _nan_step_poisons(opt, w)

    w, extra = torch.nn.Parameter(torch.tensor([1.0, -2.0])), torch.nn.Parameter(torch.ones(1))
    opt = kind([extra], lr=0.1)
    opt.add_param_group({"params": [w], "lr": nan})    # add_param_group: no check either
    assert _nan_step_poisons(opt, w)


@row("torch-names-07", "a group's lr under a scheduler", "same")
@claim("torch-steplr-scales-each-group")
def test_torch_scheduler_on_the_optimizer_scales_every_groups_own_lr():
    a, b = torch.nn.Parameter(torch.ones(1)), torch.nn.Parameter(torch.ones(1))
    opt = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.01}], lr=0.05)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(6):
        lrs.append([g["lr"] for g in opt.param_groups])
        opt.step()
        sched.step()
    schedule = [0.05, 0.05, 0.025, 0.025, 0.0125, 0.0125]
    assert np.allclose(lrs, np.outer(schedule, [1.0, 0.2]))      # = Paddle's schedule x scale
    assert [g["initial_lr"] for g in opt.param_groups] == [0.05, 0.01]


@row("torch-names-07", "steps taken", '`opt.state[p]["step"]` (Adam, AdamW)')
@claim("torch-adam-state-step")
def test_torch_adam_counts_steps_per_parameter_sgd_does_not():
    for kind in (torch.optim.Adam, torch.optim.AdamW):
        a, b = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(2))
        adam = kind([a, b], lr=0.01)
        for i in range(3):
            adam.zero_grad()
            (a.sum() + (b.sum() if i < 2 else 0)).backward()     # b gets no gradient at step 3
            adam.step()
        assert float(adam.state[a]["step"]) == 3 and float(adam.state[b]["step"]) == 2
    sgd = torch.optim.SGD([a], lr=0.1, momentum=0.9)
    a.grad = torch.ones(2)
    sgd.step()
    assert "step" not in sgd.state[a]


class TorchLionLite(torch.optim.Optimizer):
    """The chapter's PyTorch LionLite, verbatim."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.99)):
        super().__init__(params, dict(lr=lr, betas=betas))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                m = self.state[p].setdefault("exp_avg", torch.zeros_like(p))
                p.add_(torch.sign(beta1 * m + (1 - beta1) * p.grad), alpha=-group["lr"])
                m.mul_(beta2).add_(p.grad, alpha=1 - beta2)


@row("torch-names-07", "write an optimizer", "subclass `torch.optim.Optimizer`, write `step`")
@row("torch-names-07-b", "the rule for one parameter", "the body of your loop in `step()`")
@claim("torch-custom-optimizer-writes-step")
def test_torch_lionlite_the_whole_step_is_yours():
    with pytest.raises(NotImplementedError):          # the base class has no step() to inherit
        torch.optim.Optimizer([torch.nn.Parameter(torch.ones(1))], {}).step()
    a = torch.nn.Parameter(torch.ones(3))
    b = torch.nn.Parameter(torch.ones(3))
    frozen = torch.nn.Parameter(torch.ones(3))
    opt = TorchLionLite([{"params": [a, frozen]}, {"params": [b], "lr": 0.05}], lr=0.1)
    ((a + b) * torch.tensor([1.0, -2.0, 3.0])).sum().backward()     # frozen: grad None
    opt.step()
    assert torch.allclose(a.detach(), 1 - 0.1 * torch.tensor([1.0, -1.0, 1.0]))
    assert torch.allclose(b.detach(), 1 - 0.05 * torch.tensor([1.0, -1.0, 1.0]))
    assert torch.equal(frozen.detach(), torch.ones(3)) and frozen not in opt.state
    assert torch.allclose(opt.state[a]["exp_avg"], 0.01 * torch.tensor([1.0, -2.0, 3.0]))
    assert opt.param_groups[1]["betas"] == (0.9, 0.99)               # defaults fill the group


# ---------------------------------------------------------------- Paddle


def _param(paddle, values, attr=None):
    return paddle.create_parameter(
        [len(values)], "float32", attr=attr,
        default_initializer=paddle.nn.initializer.Assign(np.array(values, dtype="float32")))


def _move(paddle, opt, p, grad):
    old = p.numpy().copy()
    opt.clear_grad()
    (p * paddle.to_tensor(np.array(grad, dtype="float32"))).sum().backward()
    opt.step()
    return old - p.numpy()


@row("paddle-names-07", "where the scheduler goes",
     "passed **as** the optimizer's `learning_rate`")
@row("paddle-names-07", "a group's lr under a scheduler",
     "the group's `learning_rate` is a scale of the one schedule")
@claim("paddle-scheduler-is-the-optimizer-lr")
def test_paddle_stepdecay_passed_as_learning_rate_groups_scale_it():
    paddle = paddle_dynamic()
    conv, fc = _param(paddle, [1.0, 2.0]), _param(paddle, [1.0, 2.0])
    sched = paddle.optimizer.lr.StepDecay(learning_rate=0.05, step_size=2, gamma=0.5)
    opt = paddle.optimizer.SGD(learning_rate=sched, parameters=[
        {"params": [conv]}, {"params": [fc], "learning_rate": 0.2}])
    assert opt._learning_rate is sched
    lrs = []
    for _ in range(6):
        lrs.append([_move(paddle, opt, conv, [1.0, 1.0])[0], _move(paddle, opt, fc, [1.0, 1.0])[0]])
        sched.step()                                          # once per epoch
    schedule = [0.05, 0.05, 0.025, 0.025, 0.0125, 0.0125]
    assert np.allclose(lrs, np.outer(schedule, [1.0, 0.2]), rtol=1e-5)
    assert np.isclose(lrs[0][1], 0.01, rtol=1e-5)            # 0.2 x the schedule = 0.01 at first


@row("paddle-names-07", "change the lr by hand", "`opt.set_lr(x)` (a `RuntimeError` when "
     "the lr is a scheduler); a group's scale is copied onto its parameters when the group is "
     "added, so changing it later does nothing")
@claim("paddle-set-lr-refused-with-scheduler", "paddle-group-scale-copied-when-added")
def test_paddle_changing_the_lr_by_hand():
    paddle = paddle_dynamic()
    p = _param(paddle, [1.0])
    sched = paddle.optimizer.lr.StepDecay(learning_rate=0.05, step_size=1, gamma=0.5)
    with pytest.raises(RuntimeError, match="can't be LRScheduler"):
        paddle.optimizer.SGD(learning_rate=sched, parameters=[p]).set_lr(0.1)

    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=[{"params": [p], "learning_rate": 0.2}])
    assert p.optimize_attr["learning_rate"] == 0.2            # copied onto the parameter
    opt._param_groups[0]["learning_rate"] = 0.5               # changing the group later ...
    assert np.isclose(_move(paddle, opt, p, [1.0])[0], 0.1 * 0.2, rtol=1e-5)   # ... changes nothing
    opt.set_lr(1.0)                                           # no scheduler: set_lr works
    assert np.isclose(_move(paddle, opt, p, [1.0])[0], 1.0 * 0.2, rtol=1e-5)
    p.optimize_attr["learning_rate"] = 0.5                    # the parameter's copy is what counts
    assert np.isclose(_move(paddle, opt, p, [1.0])[0], 1.0 * 0.5, rtol=1e-5)


@row("paddle-names-07", "per-parameter lr multiplier",
     "`ParamAttr(learning_rate=2.0)` (flat list only: a group overwrites it)")
@claim("paddle-schedule-times-paramattr-flat-group-overwrites")
def test_paddle_schedule_group_scale_and_paramattr():
    """Flat list: schedule x ParamAttr rate. In a group: schedule x the group's learning_rate,
    the ParamAttr rate overwritten (exercise 07.3's setting: 0.005, not 0.015)."""
    paddle = paddle_dynamic()
    sched = paddle.optimizer.lr.StepDecay(learning_rate=0.05, step_size=1, gamma=0.5)
    flat = _param(paddle, [1.0], paddle.ParamAttr(learning_rate=3.0))
    opt = paddle.optimizer.SGD(learning_rate=sched, parameters=[flat])
    sched.step()
    assert np.isclose(_move(paddle, opt, flat, [1.0])[0], 0.05 * 0.5 * 3.0, rtol=1e-5)

    sched = paddle.optimizer.lr.StepDecay(learning_rate=0.05, step_size=1, gamma=0.5)
    fc1_w = _param(paddle, [1.0], paddle.ParamAttr(learning_rate=3.0))
    fc1_b = _param(paddle, [1.0])
    conv = _param(paddle, [1.0])
    opt = paddle.optimizer.SGD(learning_rate=sched, parameters=[
        {"params": [conv]}, {"params": [fc1_w, fc1_b], "learning_rate": 0.2}])
    sched.step()
    assert fc1_w.optimize_attr == {"learning_rate": 0.2}
    assert np.isclose(_move(paddle, opt, fc1_w, [1.0])[0], 0.05 * 0.5 * 0.2, rtol=1e-5)   # 0.005
    assert np.isclose(_move(paddle, opt, fc1_b, [1.0])[0], 0.005, rtol=1e-5)
    assert np.isclose(_move(paddle, opt, conv, [1.0])[0], 0.025, rtol=1e-5)


@row("paddle-names-07", "steps taken",
     "one per `step()` (one per `exe.run` in a static graph)")
@claim("paddle-static-graph-one-step-per-run")
def test_paddle_static_graph_counts_one_step_per_exe_run():
    paddle = paddle_dynamic()
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [None, 2], "float32")
            loss = paddle.mean(paddle.static.nn.fc(x, 1))
            opt = paddle.optimizer.Adam(learning_rate=0.01, beta1=0.9)
            opt.minimize(loss)                  # forward, backward and update in one program
        beta1_pow = list(opt._accumulators["beta1_pow_acc"].values())   # weight's and bias's
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        runs = 5
        for _ in range(runs):
            values = exe.run(main, feed={"x": np.ones((4, 2), "float32")}, fetch_list=beta1_pow)
        # Adam's beta1 power starts at beta1 and is multiplied by beta1 once per step
        assert len(values) == 2
        for value in values:
            assert np.isclose(float(np.asarray(value).ravel()[0]), 0.9 ** (runs + 1), rtol=1e-5)
    finally:
        paddle.disable_static()


def _paddle_lionlite(paddle):
    class LionLite(paddle.optimizer.Optimizer):
        def __init__(self, learning_rate, parameters, betas=(0.9, 0.99), grad_clip=None):
            super().__init__(learning_rate=learning_rate, parameters=parameters,
                             grad_clip=grad_clip)
            self.type = "lion_lite"
            self._beta1, self._beta2 = betas
            self.seen = []                     # (lr, gradient) as _append_optimize_op gets them

        def _create_accumulators(self, block, parameters):
            for p in parameters:
                if p.name not in self._accumulators.get("exp_avg", {}):
                    self._add_accumulator("exp_avg", p)

        def _append_optimize_op(self, block, param_and_grad):
            p, g = param_and_grad
            m = self._get_accumulator("exp_avg", p)
            lr = self._create_param_lr(param_and_grad)
            self.seen.append((float(lr), g.numpy().copy()))
            with paddle.no_grad():
                paddle.assign(p - lr * paddle.sign(self._beta1 * m + (1 - self._beta1) * g), p)
                paddle.assign(self._beta2 * m + (1 - self._beta2) * g, m)

    return LionLite


@row("paddle-names-07", "write an optimizer",
     "subclass `paddle.optimizer.Optimizer`, override `_append_optimize_op`")
@row("paddle-names-07-b", "the rule for one parameter",
     "`_append_optimize_op(block, (param, grad))`")
@row("paddle-names-07-b", "per-parameter buffers", "`_add_accumulator` / `_get_accumulator`")
@row("paddle-names-07-b", "the lr for this parameter", "`self._create_param_lr(param_and_grad)`")
@row("paddle-names-07-b", "skip, decay, clip", "the base class (`regularization`, `grad_clip`)")
@claim("paddle-custom-optimizer-append-optimize-op")
def test_paddle_lionlite_one_parameter_at_a_time():
    """_append_optimize_op gets one (param, grad) after the base class clipped it and added the
    regularizer; _create_param_lr is the schedule x the ParamAttr rate; accumulators hold m."""
    paddle = paddle_dynamic()
    LionLite = _paddle_lionlite(paddle)
    from paddle.regularizer import L2Decay
    w = _param(paddle, [1.0, 2.0, -3.0], paddle.ParamAttr(learning_rate=0.5, regularizer=L2Decay(0.1)))
    sched = paddle.optimizer.lr.StepDecay(learning_rate=0.1, step_size=1, gamma=0.5)
    idle = _param(paddle, [1.0])                                       # never gets a gradient
    opt = LionLite(sched, [w, idle], grad_clip=paddle.nn.ClipGradByGlobalNorm(1.0))
    old = w.numpy().copy()
    (w * paddle.to_tensor([3.0, -4.0, 0.0])).sum().backward()
    opt.step()
    assert len(opt.seen) == 1                                         # idle was skipped
    lr, grad = opt.seen[-1]
    assert math.isclose(lr, 0.1 * 0.5, rel_tol=1e-6)                  # schedule x ParamAttr rate
    clipped = np.array([3.0, -4.0, 0.0]) / 5.0                          # global norm 5 -> 1
    np.testing.assert_allclose(grad, clipped + 0.1 * old, rtol=1e-5)  # clip, then the L2 term
    np.testing.assert_allclose(w.numpy(), old - 0.05 * np.sign(clipped + 0.1 * old), rtol=1e-6)
    m = opt._get_accumulator("exp_avg", w)
    np.testing.assert_allclose(m.numpy(), 0.01 * (clipped + 0.1 * old), rtol=1e-5)
    sched.step()
    opt.clear_grad()
    (w * paddle.to_tensor([3.0, -4.0, 0.0])).sum().backward()
    opt.step()
    assert math.isclose(opt.seen[-1][0], 0.05 * 0.5, rel_tol=1e-6)    # the schedule moved on


@claim("paddle-own-optimizers-call-c-ops")
def test_paddle_sgd_update_is_a_fused_c_ops_kernel():
    paddle = paddle_dynamic()
    source = inspect.getsource(paddle.optimizer.SGD._append_optimize_op)
    assert "_C_ops.sgd_(" in source and "in_dynamic_or_pir_mode()" in source
    assert "block.append_op(" in source                          # the legacy static-graph branch
    p = _param(paddle, [1.0, 2.0])
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=[p])
    np.testing.assert_allclose(_move(paddle, opt, p, [1.0, -2.0]), [0.1, -0.2], rtol=1e-6)


@row("torch-names-07", "schedulers", "`torch.optim.lr_scheduler.LinearLR`, `StepLR`, "
     "`CosineAnnealingLR`, `SequentialLR`")
@claim("torch-sequentiallr-warmup-cosine")
def test_torch_sequentiallr_warmup_then_cosine_as_chapter_06_prints():
    w = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([w], lr=0.05)
    sched = torch.optim.lr_scheduler.SequentialLR(
        opt, [torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.01, total_iters=5),
              torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=25)], milestones=[5])
    lrs = []
    for _ in range(30):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    np.testing.assert_allclose(lrs[:6], [0.0005, 0.0104, 0.0203, 0.0302, 0.0401, 0.05])
    assert max(lrs[5:]) == pytest.approx(0.05)
    from dltutor.optim import lr_scheduler as L
    ours = L.preview(lambda o: L.SequentialLR(
        o, [L.LinearLR(o, start_factor=0.01, total_iters=5), L.CosineAnnealingLR(o, T_max=25)],
        milestones=[5]), 30, lr=0.05)
    np.testing.assert_allclose(ours, lrs, rtol=1e-12, atol=1e-15)


@claim("torch-plateau-reduces-after-patience")
def test_torch_reduce_lr_on_plateau_halves_after_more_than_patience_bad_epochs():
    w = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([w], lr=0.1)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=2)
    lrs = []
    for val_loss in [1.0, 0.8, 0.7, 0.7, 0.71, 0.69, 0.7, 0.7, 0.7, 0.65]:
        sched.step(val_loss)
        lrs.append(opt.param_groups[0]["lr"])
    assert lrs == [0.1] * 8 + [0.05] * 2
