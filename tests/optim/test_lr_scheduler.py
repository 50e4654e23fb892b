"""Learning-rate schedulers: PyTorch's numbers (written out here as formulas), per-group scaling,
the chainable forms, checkpoints, LinearWarmup, preview() and the errors.

The expected values are the closed-form schedules written by hand; the schedulers compute them
with PyTorch's recursive (chainable) formulas, so they agree up to rounding (rel 1e-12). They
were also checked bit for bit against torch 2.13 outside this suite (torch is not a dependency).
"""
from __future__ import annotations

import math
import types

import numpy as np
import pytest

import dltutor as dt
from bad_input import refused
from dltutor import nn, optim
from dltutor.optim import lr_scheduler as L

LR0, LR1 = 0.1, 0.03          # the two groups' initial lrs
STEPS = 25


def close(got, want):
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


def make_opt(lr0=LR0, lr1=LR1):
    """A real SGD with two groups of different lrs."""
    return optim.SGD([{"params": [nn.Parameter(dt.zeros(2))]},
                      {"params": [nn.Parameter(dt.zeros(2))], "lr": lr1}], lr=lr0)


class StandIn:
    """The only interface the schedulers use: param_groups, a list of dicts with an 'lr'."""

    def __init__(self, lrs=(LR0, LR1)):
        self.param_groups = [{"lr": lr, "params": []} for lr in lrs]


def lrs_of(opt):
    return [group["lr"] for group in opt.param_groups]


def run(opt, sched, steps=STEPS):
    """The lrs of every group at steps 0..steps-1 (what each step's updates would use)."""
    seen = []
    for _ in range(steps):
        seen.append(lrs_of(opt))
        assert sched.get_last_lr() == lrs_of(opt)
        sched.step()
    return seen


# Each case: (name, make the scheduler, the lr at step e of a group whose initial lr is base).
COS_T, COS_MIN = 10, 0.001
CASES = [
    ("StepLR", lambda o: L.StepLR(o, step_size=3, gamma=0.5),
     lambda base, e: base * 0.5 ** (e // 3)),
    ("StepLR-default-gamma", lambda o: L.StepLR(o, 4),
     lambda base, e: base * 0.1 ** (e // 4)),
    ("MultiStepLR", lambda o: L.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.5),
     lambda base, e: base * 0.5 ** sum(e >= m for m in [2, 5, 5, 9])),
    ("MultiStepLR-at-0", lambda o: L.MultiStepLR(o, [0, 7], gamma=0.4),
     lambda base, e: base * 0.4 ** (1 + (e >= 7))),
    ("ExponentialLR", lambda o: L.ExponentialLR(o, gamma=0.9),
     lambda base, e: base * 0.9 ** e),
    ("LinearLR", lambda o: L.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=8),
     lambda base, e: base * (0.25 + 0.75 * min(e, 8) / 8)),
    ("LinearLR-defaults", lambda o: L.LinearLR(o),
     lambda base, e: base * (1 / 3 + (1 - 1 / 3) * min(e, 5) / 5)),
    ("LinearLR-decay", lambda o: L.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=12),
     lambda base, e: base * (1.0 - 0.9 * min(e, 12) / 12)),
    ("CosineAnnealingLR", lambda o: L.CosineAnnealingLR(o, T_max=COS_T, eta_min=COS_MIN),
     # past T_max it climbs back along the cosine, as in PyTorch
     lambda base, e: COS_MIN + (base - COS_MIN) * (1 + math.cos(math.pi * e / COS_T)) / 2),
    ("CosineAnnealingLR-to-0", lambda o: L.CosineAnnealingLR(o, T_max=30),
     lambda base, e: base * (1 + math.cos(math.pi * e / 30)) / 2),
    ("LambdaLR", lambda o: L.LambdaLR(o, lambda e: 1 / math.sqrt(e + 1)),
     lambda base, e: base / math.sqrt(e + 1)),
    ("LinearWarmup", lambda o: L.LinearWarmup(o, warmup_steps=6),
     lambda base, e: base * min(1.0, e / 6)),
    ("LinearWarmup-start", lambda o: L.LinearWarmup(o, warmup_steps=5, start_factor=0.2),
     lambda base, e: base * (0.2 + 0.8 * e / 5 if e < 5 else 1.0)),
    ("LinearWarmup+Cosine",
     lambda o: L.LinearWarmup(o, 5, after=L.CosineAnnealingLR(o, T_max=15, eta_min=COS_MIN)),
     lambda base, e: base * e / 5 if e < 5
     else COS_MIN + (base - COS_MIN) * (1 + math.cos(math.pi * (e - 5) / 15)) / 2),
    ("LinearWarmup+StepLR", lambda o: L.LinearWarmup(o, 4, 0.5, after=L.StepLR(o, 3, 0.5)),
     lambda base, e: base * (0.5 + 0.5 * e / 4) if e < 4 else base * 0.5 ** ((e - 4) // 3)),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize("name,make,formula", CASES, ids=IDS)
def test_sequence_matches_formula_for_each_group(name, make, formula):
    opt = make_opt()
    sched = make(opt)
    assert sched.base_lrs == [LR0, LR1]
    assert [g["initial_lr"] for g in opt.param_groups] == [LR0, LR1]
    for e, (lr0, lr1) in enumerate(run(opt, sched)):
        close(lr0, formula(LR0, e))
        close(lr1, formula(LR1, e))          # each group scaled from its own initial lr
    assert sched.last_epoch == STEPS
    assert [g["initial_lr"] for g in opt.param_groups] == [LR0, LR1]


@pytest.mark.parametrize("name,make,formula", CASES[:6], ids=IDS[:6])
def test_stand_in_optimizer_is_enough(name, make, formula):
    opt = StandIn()
    for e, (lr0, lr1) in enumerate(run(opt, make(opt), 12)):
        close(lr0, formula(LR0, e))
        close(lr1, formula(LR1, e))


def test_lambda_per_group():
    opt = make_opt()
    sched = L.LambdaLR(opt, [lambda e: 0.9 ** e, lambda e: 1.0 + e])
    for e, (lr0, lr1) in enumerate(run(opt, sched, 20)):
        close(lr0, LR0 * 0.9 ** e)
        close(lr1, LR1 * (1.0 + e))


def test_constructor_performs_step_zero_and_step_counts():
    opt = make_opt()
    sched = L.LinearLR(opt, start_factor=0.5, total_iters=4)
    assert sched.last_epoch == 0
    assert lrs_of(opt) == [LR0 * 0.5, LR1 * 0.5] == sched.get_last_lr()
    sched.step()
    sched.step()
    assert sched.last_epoch == 2
    last = sched.get_last_lr()
    last[0] = 99.0                                   # a copy: the scheduler is unaffected
    assert sched.get_last_lr() == lrs_of(opt) != last


def test_optimizer_step_uses_the_scheduled_lr():
    w = nn.Parameter(dt.zeros(2))
    opt = optim.SGD([w], lr=0.1)
    sched = L.StepLR(opt, step_size=1, gamma=0.5)
    moves = []
    for _ in range(3):
        before = w.data.copy()
        w.grad = dt.ones(2)
        opt.step()
        moves.append(float((before - w.data)[0]))
        sched.step()
    assert moves == pytest.approx([0.1, 0.05, 0.025], rel=1e-6)
    assert opt.param_groups[0]["lr"] == 0.0125


# -- chainable forms: a learner's change to a group's lr carries through ---------------------

def test_steplr_manual_edit_carries_through():
    opt = make_opt()
    sched = L.StepLR(opt, step_size=3, gamma=0.5)
    for _ in range(4):
        sched.step()
    opt.param_groups[0]["lr"] = 0.4                  # edited at step 4
    for e in range(5, 20):
        sched.step()
        # PyTorch multiplies the *current* lr by gamma at every multiple of step_size
        close(opt.param_groups[0]["lr"], 0.4 * 0.5 ** (e // 3 - 4 // 3))
        close(opt.param_groups[1]["lr"], LR1 * 0.5 ** (e // 3))


def test_cosine_manual_edit_carries_through():
    opt = make_opt()
    sched = L.CosineAnnealingLR(opt, T_max=20, eta_min=COS_MIN)
    for _ in range(6):
        sched.step()
    opt.param_groups[0]["lr"] = 0.5                  # edited at step 6
    for e in range(7, 20):
        sched.step()
        ratio = (1 + math.cos(math.pi * e / 20)) / (1 + math.cos(math.pi * 6 / 20))
        close(opt.param_groups[0]["lr"], COS_MIN + (0.5 - COS_MIN) * ratio)


def test_exponential_edit_carries_but_lambda_edit_does_not():
    opt = make_opt()
    exp = L.ExponentialLR(opt, gamma=0.9)
    exp.step()
    opt.param_groups[0]["lr"] = 1.0
    exp.step()
    close(opt.param_groups[0]["lr"], 0.9)
    opt = make_opt()
    lam = L.LambdaLR(opt, lambda e: 0.9 ** e)        # closed form: recomputed from base_lrs
    lam.step()
    opt.param_groups[0]["lr"] = 1.0
    lam.step()
    close(opt.param_groups[0]["lr"], LR0 * 0.81)


# -- checkpoints ---------------------------------------------------------------------------

@pytest.mark.parametrize("name,make,formula", CASES, ids=IDS)
def test_state_dict_round_trip_continues_the_sequence(name, make, formula):
    opt = make_opt()
    sched = make(opt)
    for _ in range(7):
        sched.step()
    saved_opt, saved = opt.state_dict(), sched.state_dict()
    assert "optimizer" not in saved and saved["last_epoch"] == 7
    reference = run(opt, sched, 12)                  # the uninterrupted run

    opt2 = make_opt()
    sched2 = make(opt2)                              # build the scheduler first,
    opt2.load_state_dict(saved_opt)                  # then load the optimizer (its lrs),
    sched2.load_state_dict(saved)                    # then the scheduler
    assert sched2.last_epoch == 7 and sched2.base_lrs == [LR0, LR1]
    assert run(opt2, sched2, 12) == reference


def test_state_dict_is_a_copy_and_survives_dt_save(tmp_path):
    opt = make_opt()
    sched = L.LinearWarmup(opt, 3, after=L.MultiStepLR(opt, [2, 4], gamma=0.5))
    for _ in range(5):
        sched.step()
    state = sched.state_dict()
    state["base_lrs"].append(1.0)
    assert sched.base_lrs == [LR0, LR1]
    path = tmp_path / "sched.safetensors"
    dt.save({"scheduler": sched.state_dict(), "optimizer": opt.state_dict()}, path)
    reference = run(opt, sched, 8)

    loaded = dt.load(path)
    opt2 = make_opt()
    sched2 = L.LinearWarmup(opt2, 3, after=L.MultiStepLR(opt2, [2, 4], gamma=0.5))
    opt2.load_state_dict(loaded["optimizer"])
    sched2.load_state_dict(loaded["scheduler"])
    assert run(opt2, sched2, 8) == reference


def test_state_dict_contents():
    opt = make_opt()
    sched = L.StepLR(opt, step_size=3, gamma=0.5)
    assert sched.state_dict() == {"step_size": 3, "gamma": 0.5, "base_lrs": [LR0, LR1],
                                  "last_epoch": 0, "_step_count": 1, "_last_lr": [LR0, LR1]}
    # a PyTorch state dict carries two bookkeeping keys of its own: they are ignored
    sched.load_state_dict({**sched.state_dict(), "last_epoch": 4,
                           "_get_lr_called_within_step": False, "_is_initial": False})
    assert sched.last_epoch == 4 and "_is_initial" not in sched.__dict__


def test_lambda_state_dict_saves_no_functions_but_callable_objects_state():
    class Decay:
        def __init__(self):
            self.rate = 0.5

        def __call__(self, e):
            return self.rate ** e

    opt = make_opt()
    fn, obj = (lambda e: 1.0), Decay()
    sched = L.LambdaLR(opt, [fn, obj])
    obj.rate = 0.25
    state = sched.state_dict()
    assert state["lr_lambdas"] == [None, {"rate": 0.25}]
    assert isinstance(fn, types.FunctionType)
    obj2 = Decay()
    sched2 = L.LambdaLR(make_opt(), [fn, obj2])
    sched2.load_state_dict(state)
    assert obj2.rate == 0.25 and sched2.lr_lambdas[0] is fn
    assert state["lr_lambdas"] == [None, {"rate": 0.25}]       # the input is not changed


def test_resume_with_last_epoch_uses_initial_lr():
    opt = make_opt()
    for group in opt.param_groups:                   # as loaded from an optimizer checkpoint
        group["initial_lr"], group["lr"] = group["lr"], group["lr"] * 0.9 ** 5
    sched = L.ExponentialLR(opt, gamma=0.9, last_epoch=5)
    assert sched.last_epoch == 6 and sched.base_lrs == [LR0, LR1]
    close(opt.param_groups[0]["lr"], LR0 * 0.9 ** 5)  # the constructor does not decay again
    sched.step()
    close(opt.param_groups[0]["lr"], LR0 * 0.9 ** 6)


def test_resume_without_initial_lr_explains():
    with pytest.raises(KeyError, match=r"initial_lr.*param_groups\[0\]") as info:
        L.StepLR(make_opt(), step_size=3, last_epoch=4)
    text = str(info.value)
    assert "last_epoch=4" in text and "load_state_dict" in text and not text.startswith("'")


# -- LinearWarmup ---------------------------------------------------------------------------

@pytest.mark.parametrize("make_after", [
    lambda o: L.LinearLR(o, start_factor=0.5, total_iters=3),      # changes the lr when built
    lambda o: L.MultiStepLR(o, [0, 4], gamma=0.5),                 # so does a milestone at 0
    lambda o: L.CosineAnnealingLR(o, T_max=8),
])
def test_warmup_is_not_broken_by_building_after_first(make_after):
    opt = make_opt()
    after = make_after(opt)
    warm = L.LinearWarmup(opt, warmup_steps=4, start_factor=0.1, after=after)
    assert warm.base_lrs == [LR0, LR1] == [g["initial_lr"] for g in opt.param_groups]
    seen = run(opt, warm, 4)
    for e, (lr0, lr1) in enumerate(seen):
        close(lr0, LR0 * (0.1 + 0.9 * e / 4))
        close(lr1, LR1 * (0.1 + 0.9 * e / 4))
    # at the hand-over, `after` starts again from its own step 0
    ref_opt = make_opt()
    reference = run(ref_opt, make_after(ref_opt), 10)
    assert after.last_epoch == 0
    np.testing.assert_allclose(run(opt, warm, 10), reference, rtol=1e-12)
    assert after.last_epoch == 10 and warm.last_epoch == 14


def test_warmup_without_after_then_leaves_the_lr_alone():
    opt = make_opt()
    warm = L.LinearWarmup(opt, warmup_steps=2)
    assert lrs_of(opt) == [0.0, 0.0]
    warm.step()
    warm.step()
    assert lrs_of(opt) == [LR0, LR1]
    opt.param_groups[0]["lr"] = 0.7
    warm.step()
    assert lrs_of(opt) == [0.7, LR1] == warm.get_last_lr()


def test_zero_warmup_steps_is_just_after():
    opt = make_opt()
    warm = L.LinearWarmup(opt, 0, after=L.StepLR(opt, 2, 0.5))
    for e, (lr0, _) in enumerate(run(opt, warm, 6)):
        close(lr0, LR0 * 0.5 ** (e // 2))


# -- preview -------------------------------------------------------------------------------

def test_preview():
    lrs = L.preview(lambda opt: L.CosineAnnealingLR(opt, T_max=20), 30, lr=0.2)
    assert isinstance(lrs, np.ndarray) and lrs.shape == (30,)
    assert lrs[0] == 0.2
    for e in range(30):
        close(lrs[e], 0.2 * (1 + math.cos(math.pi * e / 20)) / 2)
    assert L.preview(lambda opt: L.StepLR(opt, 2), 0).shape == (0,)
    assert L.preview(lambda opt: L.StepLR(opt, 1, 0.5), 3).tolist() == [0.1, 0.05, 0.025]


def test_preview_without_sgd_uses_a_stand_in(monkeypatch):
    monkeypatch.delattr(optim, "SGD")
    assert L.preview(lambda opt: L.ExponentialLR(opt, 0.5), 3, lr=1.0).tolist() == [1.0, 0.5, 0.25]


def test_preview_errors():
    other = make_opt()
    with pytest.raises(ValueError, match="steps must be an integer >= 0, got -1"):
        L.preview(lambda opt: L.StepLR(opt, 2), -1)
    with pytest.raises(ValueError, match="the optimizer it is given"):
        L.preview(lambda opt: L.StepLR(other, 2), 3)
    with pytest.raises(TypeError, match="must return a scheduler"):
        L.preview(lambda opt: opt, 3)


# -- errors teach -------------------------------------------------------------------------

@pytest.mark.parametrize("build,error,pattern", [
    (lambda o: L.StepLR(o, step_size=0), ValueError, "step_size must be an integer >= 1, got 0"),
    (lambda o: L.StepLR(o, step_size=-3), ValueError, "step_size must be an integer >= 1, got -3"),
    (lambda o: L.StepLR(o, step_size=2.5), TypeError, "step_size must be an integer.*2.5"),
    (lambda o: L.CosineAnnealingLR(o, T_max=0), ValueError, "T_max must be a number > 0, got 0"),
    (lambda o: L.CosineAnnealingLR(o, T_max=-5), ValueError, "T_max must be a number > 0, got -5"),
    (lambda o: L.MultiStepLR(o, milestones=[10, 5]), ValueError,
     r"milestones must be increasing.*milestones=\[10, 5\].*\[5, 10\]"),
    (lambda o: L.MultiStepLR(o, milestones=[-1, 5]), ValueError, r"milestones=\[-1, 5\]"),
    (lambda o: L.MultiStepLR(o, milestones=5), TypeError, "milestones must be a list"),
    (lambda o: L.LambdaLR(o, [lambda e: 1.0]), ValueError,
     "lr_lambda is a list of 1 functions but the optimizer has 2 param groups"),
    (lambda o: L.LambdaLR(o, 0.5), TypeError, "lr_lambda must be a function.*0.5"),
    (lambda o: L.LinearLR(o, start_factor=0), ValueError,
     r"start_factor must be a number in \(0, 1\], got 0"),
    (lambda o: L.LinearLR(o, start_factor=1.5), ValueError, "start_factor .*, got 1.5"),
    (lambda o: L.LinearLR(o, start_factor=-0.1), ValueError, r"start_factor .*, got -0\.1"),
    (lambda o: L.LinearLR(o, end_factor=2.0), ValueError,
     r"end_factor must be a number in \[0, 1\], got 2.0"),
    (lambda o: L.LinearLR(o, total_iters=0), ValueError,
     "total_iters must be an integer >= 1, got 0"),
    (lambda o: L.LinearWarmup(o, warmup_steps=-1), ValueError,
     "warmup_steps must be an integer >= 0, got -1"),
    (lambda o: L.LinearWarmup(o, 5, start_factor=1.5), ValueError, "start_factor .*, got 1.5"),
    (lambda o: L.LinearWarmup(o, 5, after=L.StepLR(make_opt(), 2)), ValueError,
     "same optimizer"),
    (lambda o: L.LinearWarmup(o, 5, after="cosine"), TypeError, "after must be a scheduler"),
    (lambda o: L.StepLR(o, 3, last_epoch=-2), ValueError,
     "last_epoch must be an integer >= -1, got -2"),
])
def test_constructor_errors(build, error, pattern):
    with pytest.raises(error, match=pattern):
        build(make_opt())


def test_not_an_optimizer():
    params = nn.Linear(2, 1).parameters()
    with pytest.raises(TypeError, match="StepLR needs an optimizer.*optim.SGD"):
        L.StepLR(params, step_size=3)


def test_load_state_dict_unknown_keys():
    sched = L.StepLR(make_opt(), step_size=3)
    cosine_state = L.CosineAnnealingLR(make_opt(), T_max=10).state_dict()
    with pytest.raises(ValueError,
                       match=r"unknown key\(s\) \['T_max', 'eta_min'\].*different kind"):
        sched.load_state_dict(cosine_state)
    assert sched.last_epoch == 0                     # nothing was loaded
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['lr'\]"):
        sched.load_state_dict({"lr": 0.1})
    with pytest.raises(TypeError, match="expects the dict"):
        sched.load_state_dict([("last_epoch", 3)])


def test_load_state_dict_mismatches():
    opt = make_opt()
    with pytest.raises(ValueError, match="lr_lambdas.*1 entries.*2 lr_lambdas"):
        L.LambdaLR(opt, lambda e: 1.0).load_state_dict({"lr_lambdas": [None]})
    warm = L.LinearWarmup(opt, 3)
    with_after = L.LinearWarmup(opt, 3, after=L.StepLR(opt, 2)).state_dict()
    with pytest.raises(ValueError, match="had an `after` schedule but this one has none"):
        warm.load_state_dict(with_after)


def test_group_added_after_the_scheduler():
    opt = StandIn()
    sched = L.LambdaLR(opt, lambda e: 0.5)
    opt.param_groups.append({"lr": 0.2, "params": []})
    with pytest.raises(ValueError, match="built for 2 param groups.*now has 3"):
        sched.step()


def test_step_lr_takes_a_whole_float_step_size():
    # epochs / 4 is a float in Python 3
    lrs = []
    for step_size in (4.0, 4):
        opt = optim.SGD([nn.Parameter([0.0])], lr=1.0)
        sched = optim.lr_scheduler.StepLR(opt, step_size=step_size, gamma=0.5)
        seen = []
        for _ in range(9):
            seen.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        lrs.append(seen)
    assert lrs[0] == lrs[1] == [1.0] * 4 + [0.5] * 4 + [0.25]
    opt = optim.SGD([nn.Parameter([0.0])], lr=1.0)
    refused(lambda: optim.lr_scheduler.StepLR(opt, step_size=2.5), TypeError, "step_size")



def test_rounding_below_zero_is_zero_but_a_negative_lr_is_refused():
    """CosineAnnealingLR from a frozen group (lr 0) up to eta_min and back rounds to about
    -3.5e-18 at its bottom: the schedule runs on with 0 there (PyTorch runs on too; its numbers
    are compared in tests/frameworks). A schedule that really goes below 0 is still refused."""
    w = nn.Parameter([1.0])
    opt = optim.SGD([{"params": [w], "lr": 0.0}], lr=0.1)
    sched = L.CosineAnnealingLR(opt, T_max=4, eta_min=0.01)
    seen = []
    for _ in range(20):
        opt.step(), sched.step()
        seen.append(opt.param_groups[0]["lr"])
    assert min(seen) == 0.0 and seen[7] == 0.0 and max(seen) == pytest.approx(0.01)
    opt = optim.SGD([w], lr=0.1)
    sched = L.LambdaLR(opt, lambda step: 1.0 - step)      # 0 at step 1, -1 at step 2
    sched.step()
    with pytest.raises(ValueError, match="lr of param group 0 must be a number >= 0"):
        sched.step()
    assert opt.param_groups[0]["lr"] == 0.0 and sched.last_epoch == 1
