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


# -- SequentialLR, ChainedScheduler, OneCycleLR, ReduceLROnPlateau -----------------------------

def cos_anneal(start, end, pct):
    """OneCycleLR's documented anneal: half a cosine from start (pct 0) to end (pct 1)."""
    return end + (start - end) * (1 + math.cos(math.pi * pct)) / 2


COMPOSITE_CASES = [
    # LinearLR warmup for 4 steps, then a cosine counting its own steps from 0 at step 4
    ("SequentialLR", lambda o: L.SequentialLR(o, [
        L.LinearLR(o, start_factor=0.25, total_iters=4),
        L.CosineAnnealingLR(o, T_max=10, eta_min=COS_MIN)], milestones=[4]),
     lambda base, e: base * (0.25 + 0.75 * e / 4) if e < 4
     else COS_MIN + (base - COS_MIN) * (1 + math.cos(math.pi * (e - 4) / 10)) / 2),
    ("SequentialLR-three", lambda o: L.SequentialLR(o, [
        L.ExponentialLR(o, 0.9), L.StepLR(o, 2, 0.5), L.MultiStepLR(o, [3], 0.1)],
        milestones=[5, 11]),
     lambda base, e: base * (0.9 ** e if e < 5 else 0.5 ** ((e - 5) // 2) if e < 11
                             else 0.1 ** (e >= 14))),
    # every factor multiplies: StepLR's and ExponentialLR's
    ("ChainedScheduler", lambda o: L.ChainedScheduler([L.StepLR(o, 3, 0.5),
                                                      L.ExponentialLR(o, gamma=0.9)]),
     lambda base, e: base * 0.5 ** (e // 3) * 0.9 ** e),
    ("ChainedScheduler-optimizer", lambda o: L.ChainedScheduler(
        [L.LinearLR(o, start_factor=0.5, total_iters=4), L.MultiStepLR(o, [6], 0.1)], o),
     lambda base, e: base * (0.5 + 0.5 * min(e, 4) / 4) * 0.1 ** (e >= 6)),
]
COMPOSITE_IDS = [case[0] for case in COMPOSITE_CASES]


@pytest.mark.parametrize("name,make,formula", COMPOSITE_CASES, ids=COMPOSITE_IDS)
def test_composite_sequence_matches_formula(name, make, formula):
    test_sequence_matches_formula_for_each_group(name, make, formula)


@pytest.mark.parametrize("name,make,formula", COMPOSITE_CASES, ids=COMPOSITE_IDS)
def test_composite_state_dict_round_trip(name, make, formula):
    test_state_dict_round_trip_continues_the_sequence(name, make, formula)
    saved = make(make_opt()).state_dict()
    assert isinstance(saved["_schedulers"], list) and "last_epoch" in saved["_schedulers"][0]


def test_sequential_steps_only_the_current_scheduler():
    opt = make_opt()
    warm, decay = L.LinearLR(opt, 0.5, total_iters=2), L.ExponentialLR(opt, 0.5)
    seq = L.SequentialLR(opt, [warm, decay], milestones=[3])
    assert (warm.last_epoch, decay.last_epoch) == (0, -1)     # decay's own step 0 undone
    for _ in range(5):
        seq.step()
    assert (seq.last_epoch, warm.last_epoch, decay.last_epoch) == (5, 2, 2)


def test_chained_step_that_fails_leaves_everything_as_it_was():
    opt = make_opt()
    first = L.ExponentialLR(opt, 0.5)
    second = L.LambdaLR(opt, lambda e: 1.0 - e)          # -1 at step 2: refused
    chain = L.ChainedScheduler([first, second])
    chain.step()
    before = (lrs_of(opt), first.last_epoch, second.last_epoch)
    refused(chain.step, ValueError, "LambdaLR", "lr of param group 0", state=[opt])
    assert (lrs_of(opt), first.last_epoch, second.last_epoch) == before


OC_MAX, OC_TOTAL, OC_PCT = [1.0, 0.5], 20, 0.25


def one_cycle_expected(max_lr, e, three_phase=False):
    """OneCycleLR's lr and momentum at step e from its documented phases (cos anneal): up from
    max_lr/25 to max_lr until step pct*total - 1, then down to max_lr/25/1e4 at total - 1."""
    initial, top = max_lr / 25, max_lr
    low, up_end = initial / 1e4, OC_PCT * OC_TOTAL - 1                  # 4.0
    if e <= up_end:
        return cos_anneal(initial, top, e / up_end), cos_anneal(0.95, 0.85, e / up_end)
    if not three_phase:
        pct = (e - up_end) / (OC_TOTAL - 1 - up_end)
        return cos_anneal(top, low, pct), cos_anneal(0.85, 0.95, pct)
    down_end = 2 * OC_PCT * OC_TOTAL - 2                                 # 8.0
    if e <= down_end:
        pct = (e - up_end) / (down_end - up_end)
        return cos_anneal(top, initial, pct), cos_anneal(0.85, 0.95, pct)
    return cos_anneal(initial, low, (e - down_end) / (OC_TOTAL - 1 - down_end)), 0.95


@pytest.mark.parametrize("three_phase", [False, True])
def test_one_cycle_lr_and_momentum_follow_the_formula(three_phase):
    opt = make_opt()                                   # its lrs are replaced by max_lr / 25
    sched = L.OneCycleLR(opt, max_lr=OC_MAX, total_steps=OC_TOTAL, pct_start=OC_PCT,
                         three_phase=three_phase)
    assert sched.base_lrs == [m / 25 for m in OC_MAX]
    for e in range(OC_TOTAL):
        for group, top in zip(opt.param_groups, OC_MAX):
            lr, momentum = one_cycle_expected(top, e, three_phase)
            close(group["lr"], lr)
            close(group["momentum"], momentum)
        if e < OC_TOTAL - 1:
            sched.step()
    close(opt.param_groups[0]["lr"], 1.0 / 25 / 1e4)


def test_one_cycle_linear_epochs_and_adam_beta1():
    w = nn.Parameter(dt.zeros(1))
    opt = optim.Adam([w], lr=0.5, betas=(0.9, 0.99))
    sched = L.OneCycleLR(opt, max_lr=0.4, epochs=2, steps_per_epoch=5, pct_start=0.4,
                         anneal_strategy="linear", div_factor=4.0, final_div_factor=10.0)
    seen = []
    for _ in range(11):                                # steps 0..total_steps, as PyTorch allows
        seen.append((opt.param_groups[0]["lr"], opt.param_groups[0]["betas"]))
        opt.step()
        if len(seen) < 11:
            sched.step()
    # up from 0.1 to 0.4 over steps 0..3, down to 0.01 at step 9 (beta1 the other way)
    for e, (lr, (beta1, beta2)) in enumerate(seen):
        pct = e / 3 if e <= 3 else min((e - 3) / 6, 1.0)    # held at the end past step 9
        close(lr, 0.1 + 0.3 * pct if e <= 3 else 0.4 - 0.39 * pct)
        close(beta1, 0.95 - 0.1 * pct if e <= 3 else 0.85 + 0.1 * pct)
        assert beta2 == 0.99
    with pytest.raises(ValueError, match=r"OneCycleLR: stepped 11 times but total_steps=10"):
        sched.step()
    assert sched.last_epoch == 10 and opt.param_groups[0]["lr"] == pytest.approx(0.01)


def test_one_cycle_state_dict_round_trip():
    # max_lr / 25 are the two groups' lrs, which the shared round-trip test expects
    make = lambda o: L.OneCycleLR(o, max_lr=[LR0 * 25, LR1 * 25], total_steps=30)  # noqa: E731 - a one-line factory
    test_state_dict_round_trip_continues_the_sequence("OneCycleLR", make, None)


def plateau_run(sched, opt, metrics):
    seen = []
    for metric in metrics:
        sched.step(metric)
        seen.append(lrs_of(opt))
    return seen


def test_plateau_reduces_after_patience_bad_steps():
    opt = make_opt()
    sched = L.ReduceLROnPlateau(opt, factor=0.5, patience=2)
    # best 1.0; 1.0 and 0.99995 are not better by the relative threshold 1e-4: bad steps
    seen = plateau_run(sched, opt, [1.0, 1.0, 0.99995, 1.2, 0.9, 0.95, 0.95, 0.95])
    assert [s[0] for s in seen] == [LR0] * 3 + [LR0 * 0.5] * 4 + [LR0 * 0.25]
    assert seen[3][1] == LR1 * 0.5
    assert sched.best == 0.9 and sched.num_bad_epochs == 0 and sched.last_epoch == 8


def test_plateau_cooldown_min_lr_and_max_mode():
    opt = make_opt()
    sched = L.ReduceLROnPlateau(opt, mode="max", factor=0.1, patience=0, cooldown=2,
                                min_lr=[0.002, 0.001])
    # accuracy: 0.5 best, then no improvement; cut at once, then 2 steps of cooldown each time
    seen = plateau_run(sched, opt, [0.5, 0.4, 0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.6])
    want0 = [LR0, LR0 * 0.1, LR0 * 0.1, LR0 * 0.1, 0.002, 0.002, 0.002, 0.002, 0.002]
    assert [s[0] for s in seen] == pytest.approx(want0, rel=1e-12)
    assert [s[1] for s in seen][:5] == pytest.approx([LR1, LR1 * 0.1, LR1 * 0.1, LR1 * 0.1,
                                                      0.001], rel=1e-12)
    assert sched.best == 0.6 and sched.in_cooldown


def test_plateau_abs_threshold_and_eps():
    opt = make_opt(lr1=1e-9)
    sched = L.ReduceLROnPlateau(opt, patience=0, threshold=0.1, threshold_mode="abs")
    seen = plateau_run(sched, opt, [1.0, 0.95])           # 0.05 better: less than 0.1
    assert seen[-1] == [LR0 * 0.1, 1e-9]                  # a change under eps is skipped


def test_plateau_state_dict_round_trip():
    opt = make_opt()
    sched = L.ReduceLROnPlateau(opt, patience=1, cooldown=1)
    plateau_run(sched, opt, [1.0, 0.5, 0.6, 0.7])
    saved, saved_opt = sched.state_dict(), opt.state_dict()
    assert (saved["best"], saved["num_bad_epochs"], saved["cooldown_counter"]) == (0.5, 0, 1)
    reference = plateau_run(sched, opt, [0.7, 0.8, 0.9, 0.4])
    opt2 = make_opt()
    sched2 = L.ReduceLROnPlateau(opt2)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved)
    assert (sched2.patience, sched2.best, sched2.cooldown_counter) == (1, 0.5, 1)
    assert plateau_run(sched2, opt2, [0.7, 0.8, 0.9, 0.4]) == reference


@pytest.mark.parametrize("build,error,pattern", [
    (lambda o: L.SequentialLR(o, [L.StepLR(o, 2)], milestones=[3]), ValueError,
     r"SequentialLR: 1 schedulers need 0 milestones.*milestones=\[3\]"),
    (lambda o: L.SequentialLR(o, [L.StepLR(o, 2), L.StepLR(o, 3), L.StepLR(o, 4)], [5, 5]),
     ValueError, r"milestones must be increasing.*milestones=\[5, 5\]"),
    (lambda o: L.SequentialLR(o, [L.StepLR(o, 2), L.StepLR(o, 3)], [0]), ValueError,
     r"> 0.*milestones=\[0\]"),
    (lambda o: L.SequentialLR(o, [L.StepLR(o, 2), L.StepLR(make_opt(), 3)], [5]), ValueError,
     r"SequentialLR: schedulers\[1\] \(StepLR\) is built on another optimizer"),
    (lambda o: L.SequentialLR(o, [], []), ValueError, "schedulers is empty"),
    (lambda o: L.SequentialLR(o, [L.StepLR(o, 2), "cosine"], [5]), TypeError,
     r"schedulers\[1\] must be a scheduler"),
    (lambda o: L.SequentialLR(o, [L.StepLR(o, 2), L.ReduceLROnPlateau(o)], [5]), ValueError,
     r"schedulers\[1\] is a ReduceLROnPlateau.*metric"),
    (lambda o: L.ChainedScheduler([L.StepLR(o, 2), L.StepLR(make_opt(), 3)]), ValueError,
     r"ChainedScheduler: schedulers\[1\] \(StepLR\) is built on another optimizer"),
    (lambda o: L.ChainedScheduler([L.StepLR(o, 2)], optimizer=make_opt()), ValueError,
     r"schedulers\[0\] \(StepLR\) is built on another optimizer"),
    (lambda o: L.ChainedScheduler([]), ValueError, "ChainedScheduler: schedulers is empty"),
    (lambda o: L.ReduceLROnPlateau(o, mode="minimum"), ValueError,
     "ReduceLROnPlateau: mode must be one of 'min', 'max', got 'minimum'"),
    (lambda o: L.ReduceLROnPlateau(o, factor=1.0), ValueError,
     r"ReduceLROnPlateau: factor must be a number in \[0, 1\), got 1.0"),
    (lambda o: L.ReduceLROnPlateau(o, patience=-1), ValueError,
     "patience must be an integer >= 0, got -1"),
    (lambda o: L.ReduceLROnPlateau(o, threshold_mode="relative"), ValueError,
     "threshold_mode must be one of 'rel', 'abs'"),
    (lambda o: L.ReduceLROnPlateau(o, cooldown=-2), ValueError, "cooldown .* got -2"),
    (lambda o: L.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError,
     "min_lr is a list of 1 values but the optimizer has 2 param groups"),
    (lambda o: L.ReduceLROnPlateau(o, min_lr=-0.1), ValueError, r"min_lr must be .*-0\.1"),
    (lambda o: L.OneCycleLR(o, max_lr=0.1), ValueError,
     "OneCycleLR: give total_steps .*epochs and steps_per_epoch"),
    (lambda o: L.OneCycleLR(o, max_lr=0.1, total_steps=0), ValueError,
     "OneCycleLR: total_steps must be an integer >= 1, got 0"),
    (lambda o: L.OneCycleLR(o, max_lr=0.1, epochs=0, steps_per_epoch=3), ValueError,
     "epochs must be an integer >= 1, got 0"),
    (lambda o: L.OneCycleLR(o, max_lr=0.1, total_steps=10, pct_start=1.0), ValueError,
     r"OneCycleLR: pct_start must be a number in \(0, 1\), got 1.0"),
    (lambda o: L.OneCycleLR(o, max_lr=0.1, total_steps=10, pct_start=0), ValueError,
     r"pct_start .*got 0"),
    (lambda o: L.OneCycleLR(o, 0.1, 10, pct_start=0.6, three_phase=True), ValueError,
     r"pct_start must be a number in \(0, 0.5\).*three_phase"),
    (lambda o: L.OneCycleLR(o, 0.1, 10, pct_start=0.1), ValueError,
     "pct_start=0.1 with total_steps=10 makes phase 1 of the cycle 0 steps long"),
    (lambda o: L.OneCycleLR(o, 0.1, 10, anneal_strategy="cosine"), ValueError,
     "anneal_strategy must be one of 'cos', 'linear', got 'cosine'"),
    (lambda o: L.OneCycleLR(o, [0.1, 0.2, 0.3], 10), ValueError,
     "max_lr is a list of 3 values but the optimizer has 2"),
    (lambda o: L.OneCycleLR(o, 0.1, 10, max_momentum=1.5), ValueError,
     r"max_momentum must be a number in \[0, 1\], got 1.5"),
    (lambda o: L.OneCycleLR(StandIn(), 0.1, 10), ValueError,
     "cycle_momentum=True .*has neither; pass cycle_momentum=False"),
])
def test_new_scheduler_constructor_errors(build, error, pattern):
    with pytest.raises(error, match=pattern):
        build(make_opt())


def test_refused_one_cycle_leaves_the_optimizer_unchanged():
    opt = make_opt()
    refused(lambda: L.OneCycleLR(opt, 0.1, 10, last_epoch=-2), ValueError, "last_epoch",
            state=[opt])
    refused(lambda: L.OneCycleLR(opt, 0.1, 10, base_momentum=[0.8, 2.0]), ValueError,
            "base_momentum[1]", state=[opt])
    assert "max_lr" not in opt.param_groups[0] and opt.param_groups[0]["momentum"] == 0


def test_plateau_step_needs_the_metric():
    sched = L.ReduceLROnPlateau(make_opt())
    with pytest.raises(TypeError, match=r"metrics must be the number to watch.*step\(val_loss\)"):
        sched.step("0.5")
    assert sched.last_epoch == 0 and sched.num_bad_epochs == 0
