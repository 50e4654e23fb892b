"""Warmup then plateau: ``LinearWarmup(opt, warmup_steps, after=ReduceLROnPlateau(...))``,
stepped with ``warm.step(val_loss)`` once per epoch (issue 49, item 7).

The expected lrs are computed by hand in each test: the ramp ``base * epoch / warmup_steps``,
the initial lr from the hand-over on, and a halving each time the validation loss has failed
to beat its best for more than ``patience`` epochs, counted from the first full-lr epoch.
"""
from __future__ import annotations

import pytest

import dltutor as dt
from bad_input import refused
from dltutor import nn, optim
from dltutor.optim import lr_scheduler as L

LR0, LR1 = 0.1, 0.03          # two groups, so that both are seen to follow the schedule
WARMUP, PATIENCE = 3, 2

# The validation loss after each epoch. The warmup's losses (epochs 0-2) end at 0.5, below
# everything the plateau sees next: a plateau that watched them would count epochs 3, 4 and 5
# as bad and halve the lr after epoch 5.
VAL_LOSSES = [1.0, 0.8, 0.5,                    # warmup: not watched
              0.65, 0.62, 0.55,                 # each one a new best
              0.56, 0.55, 0.57,                 # 3 epochs not better than 0.55 (0.55 ties)
              0.5,                              # a new best at the halved lr
              0.52, 0.51, 0.53,                 # 3 more epochs without a better one
              0.45]                             # a new best at the quartered lr

# The lr each epoch trains with (before its warm.step(val_loss)), written out by hand:
HAND = ([0 / 3, 1 / 3, 2 / 3]                   # epochs 0-2: base * epoch / 3
        + [1.0] * 6                             # epoch 3 (hand-over) to 8: the initial lr
        + [0.5] * 4                             # after epoch 8 (3rd bad in a row > 2): halve
        + [0.25])                               # after epoch 12: halve again


def make_opt():
    return optim.SGD([{"params": [nn.Parameter(dt.zeros(2))]},
                      {"params": [nn.Parameter(dt.zeros(2))], "lr": LR1}], lr=LR0)


def make_warmup(opt, **plateau_settings):
    plateau = L.ReduceLROnPlateau(opt, factor=0.5, patience=PATIENCE, **plateau_settings)
    return L.LinearWarmup(opt, warmup_steps=WARMUP, after=plateau)


def train(opt, warm, val_losses):
    """The lrs (one per group) each epoch trains with; warm.step(val_loss) after each epoch."""
    used = []
    for val_loss in val_losses:
        used.append([group["lr"] for group in opt.param_groups])
        warm.step(val_loss)
    return used


def test_warmup_then_plateau_follows_the_hand_computation():
    opt = make_opt()
    warm = make_warmup(opt)
    used = train(opt, warm, VAL_LOSSES)
    assert [lr0 for lr0, _ in used] == pytest.approx([LR0 * f for f in HAND], rel=1e-12)
    assert [lr1 for _, lr1 in used] == pytest.approx([LR1 * f for f in HAND], rel=1e-12)
    assert used[0] == [0.0, 0.0]                                  # the ramp starts at 0
    plateau = warm.after
    # 14 steps: 3 of warmup, 11 of the plateau, which counted its steps from the hand-over
    assert (warm.last_epoch, plateau.last_epoch) == (14, 11)
    assert (plateau.best, plateau.num_bad_epochs) == (0.45, 0)
    assert warm.get_last_lr() == pytest.approx([LR0 / 4, LR1 / 4], rel=1e-12)


def test_the_warmup_takes_the_loss_but_does_not_need_it():
    """During the warmup a step without the loss is fine (nothing watches it yet)."""
    opt = make_opt()
    warm = make_warmup(opt)
    for _ in range(WARMUP):
        warm.step()
    assert [g["lr"] for g in opt.param_groups] == [LR0, LR1]
    warm.step(0.9)
    assert warm.after.best == 0.9 and warm.after.last_epoch == 1


def test_a_step_without_the_loss_after_the_hand_over_is_refused_and_changes_nothing():
    opt = make_opt()
    warm = make_warmup(opt)
    train(opt, warm, VAL_LOSSES[:WARMUP])                         # the hand-over is done
    refused(lambda: warm.step(), TypeError, "LinearWarmup.step", "ReduceLROnPlateau",
            "warm.step(val_loss)", state=[opt, warm])
    refused(lambda: warm.step("0.5"), TypeError, "metrics must be the number",
            state=[opt, warm])


def test_a_wrong_loss_is_refused_during_the_warmup_too():
    opt = make_opt()
    warm = make_warmup(opt)
    refused(lambda: warm.step([0.5]), TypeError, "metrics", state=[opt, warm])


def test_a_loss_given_to_a_warmup_that_does_not_watch_one_is_refused():
    opt = make_opt()
    warm = L.LinearWarmup(opt, 2, after=L.StepLR(opt, step_size=1))
    refused(lambda: warm.step(0.5), TypeError, "StepLR", "warm.step()", state=[opt, warm])


def test_a_failed_plateau_step_leaves_the_warmup_as_it_was():
    """The plateau's min_lr was given for 2 groups; a third group added later makes its
    reduction fail. The warmup's step count must not move ahead of the plateau's."""
    opt = make_opt()
    warm = make_warmup(opt, min_lr=[0.0, 0.0])
    train(opt, warm, [1.0, 1.0, 1.0, 0.5, 0.6, 0.6])              # 2 bad epochs: the next cuts
    opt.add_param_group({"params": [nn.Parameter(dt.zeros(1))], "lr": 0.01})
    refused(lambda: warm.step(0.6), ValueError, "min_lr", state=[opt, warm])
    assert (warm.last_epoch, warm.after.last_epoch) == (6, 3)


@pytest.mark.parametrize("saved_after", [2, 7], ids=["in the warmup", "in the plateau"])
def test_state_dict_round_trip(saved_after, tmp_path):
    """Stop after some epochs, save, build everything again, load: the run goes on as if it
    had never stopped (through a file, as a checkpoint would)."""
    opt = make_opt()
    warm = make_warmup(opt)
    train(opt, warm, VAL_LOSSES[:saved_after])
    path = tmp_path / "checkpoint.safetensors"
    dt.save({"optimizer": opt.state_dict(), "scheduler": warm.state_dict()}, path)
    uninterrupted = train(opt, warm, VAL_LOSSES[saved_after:])

    opt2 = make_opt()
    warm2 = make_warmup(opt2)
    checkpoint = dt.load(path)
    opt2.load_state_dict(checkpoint["optimizer"])
    warm2.load_state_dict(checkpoint["scheduler"])
    assert train(opt2, warm2, VAL_LOSSES[saved_after:]) == uninterrupted
    assert [lr0 for lr0, _ in uninterrupted] == pytest.approx(
        [LR0 * f for f in HAND[saved_after:]], rel=1e-12)
    assert warm2.state_dict() == warm.state_dict()


@pytest.mark.parametrize("build", [
    lambda o, warm: L.SequentialLR(o, [L.StepLR(o, 2), warm], milestones=[3]),
    lambda o, warm: L.ChainedScheduler([warm]),
], ids=["SequentialLR", "ChainedScheduler"])
def test_a_scheduler_of_schedulers_refuses_a_warmup_into_a_plateau(build):
    opt = make_opt()
    warm = make_warmup(opt)
    with pytest.raises(ValueError, match=r"hands over to a ReduceLROnPlateau.*"
                                         r"warm\.step\(val_loss\)"):
        build(opt, warm)
