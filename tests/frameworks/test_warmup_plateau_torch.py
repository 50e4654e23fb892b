"""Chapter 07, warmup then plateau: what it says PyTorch 2.13 does, run in PyTorch.

PyTorch has no warmup class that hands over to a ReduceLROnPlateau, and its SequentialLR
refuses one; the spelling its users write by hand (a LambdaLR ramp for k epochs, then
``plateau.step(val_loss)``) gives the lrs of dltutor's
``LinearWarmup(opt, k, after=ReduceLROnPlateau(...))`` stepped with ``warm.step(val_loss)``.
"""
from __future__ import annotations

import pytest
import torch
from torch.optim.lr_scheduler import LambdaLR, ReduceLROnPlateau, SequentialLR

from claims import claim

# The chapter's run: lr 0.1, 3 warmup epochs, factor 0.5, patience 2, these losses.
LR, WARMUP = 0.1, 3
EPOCH_LOSSES = [1.0, 0.8, 0.5, 0.65, 0.62, 0.55, 0.56, 0.55, 0.57, 0.5, 0.52, 0.51, 0.53, 0.45]
BY_HAND = [LR * e / 3 for e in range(3)] + [LR] * 6 + [LR / 2] * 4 + [LR / 4]


def torch_by_hand(lr1):
    """The PyTorch spelling, on two groups (lr and lr1): the lrs each epoch trains with."""
    w, v = torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([{"params": [w]}, {"params": [v], "lr": lr1}], lr=LR)
    warmup = LambdaLR(opt, lambda e: e / WARMUP)
    plateau = ReduceLROnPlateau(opt, factor=0.5, patience=2)
    used = []
    for epoch, val_loss in enumerate(EPOCH_LOSSES):
        used.append([group["lr"] for group in opt.param_groups])
        opt.step()                                        # (training: no warning from torch)
        warmup.step() if epoch < WARMUP else plateau.step(val_loss)
    return used


def dltutor_warmup_then_plateau(lr1):
    import dltutor as dt
    from dltutor import nn, optim
    from dltutor.optim import lr_scheduler as L

    opt = optim.SGD([{"params": [nn.Parameter(dt.zeros(1))]},
                     {"params": [nn.Parameter(dt.zeros(1))], "lr": lr1}], lr=LR)
    warm = L.LinearWarmup(opt, warmup_steps=WARMUP,
                          after=L.ReduceLROnPlateau(opt, factor=0.5, patience=2))
    used = []
    for val_loss in EPOCH_LOSSES:
        used.append([group["lr"] for group in opt.param_groups])
        warm.step(val_loss)
    return used


@claim("torch-warmup-then-plateau-by-hand")
def test_torch_lambdalr_warmup_then_plateau_step_gives_the_kits_lrs():
    ours = dltutor_warmup_then_plateau(lr1=0.03)
    theirs = torch_by_hand(lr1=0.03)
    assert theirs == ours                                  # bit for bit, both groups
    assert [lr0 for lr0, _ in theirs] == pytest.approx(BY_HAND, rel=1e-12)


@claim("torch-sequentiallr-refuses-plateau")
def test_torch_sequentiallr_refuses_a_reduce_lr_on_plateau():
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=LR)
    with pytest.raises(ValueError, match="SequentialLR does not support `ReduceLROnPlateau`"):
        SequentialLR(opt, [LambdaLR(opt, lambda e: e / WARMUP), ReduceLROnPlateau(opt)],
                     milestones=[WARMUP])
