"""Chapter 07's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them
against dltutor/exercises/ch07.py)."""
from __future__ import annotations

from dltutor.optim import lr_scheduler


def warmup_then_cosine(opt, warmup, total):
    return lr_scheduler.SequentialLR(
        opt, [lr_scheduler.LinearLR(opt, start_factor=0.01, total_iters=warmup),
              lr_scheduler.CosineAnnealingLR(opt, T_max=total - warmup)], milestones=[warmup])


def warmup_from_zero(opt, warmup, total):
    """LinearWarmup starts at 0, not at 1% of the lr."""
    return lr_scheduler.SequentialLR(
        opt, [lr_scheduler.LinearLR(opt, start_factor=1e-9, total_iters=warmup),
              lr_scheduler.CosineAnnealingLR(opt, T_max=total - warmup)], milestones=[warmup])


def cosine_over_the_whole_run(opt, warmup, total):
    """The cosine's T_max counts the warmup steps too, so it ends above 0."""
    return lr_scheduler.SequentialLR(
        opt, [lr_scheduler.LinearLR(opt, start_factor=0.01, total_iters=warmup),
              lr_scheduler.CosineAnnealingLR(opt, T_max=total)], milestones=[warmup])


def warmup_without_returning(opt, warmup, total):
    warmup_then_cosine(opt, warmup, total)


CASES = {
    "07.1": ({"total_iters": 240},
             [({"total_iters": 10}, ["counts batches"]), ({"total_iters": 24}, ["one epoch"])]),
    "07.2": ({"effective_lr": 0.15},
             [({"effective_lr": 0.3}, ["halved"]), ({"effective_lr": 0.05}, ["lr_mult = 3"])]),
    "07.3": ({"paddle_fc_lr": 0.005},
             [({"paddle_fc_lr": 0.015}, ["overwrites", "ParamAttr"]),
              ({"paddle_fc_lr": 0.2}, ["scale"]), ({"paddle_fc_lr": 0.1}, ["scale"]),
              ({"paddle_fc_lr": 0.01}, ["stepped once"]),
              ({"paddle_fc_lr": 0.03}, ["stepped once"])]),
    "07.4": ({"first_frozen_step": 48},
             [({"first_frozen_step": 2}, ["per optimizer step"]),
              ({"first_frozen_step": 49}, ["count from 0"]),
              ({"first_frozen_step": 47}, ["last step of epoch 1"]),
              ({"first_frozen_step": 48.9}, ["whole number"])]),
    "07.5": ({"warmup_then_cosine": warmup_then_cosine},
             [({"warmup_then_cosine": warmup_from_zero}, ["1% of the lr"]),
              ({"warmup_then_cosine": cosine_over_the_whole_run}, ["total - warmup"]),
              ({"warmup_then_cosine": warmup_without_returning}, ["return the scheduler"]),
              ({"warmup_then_cosine": "SequentialLR"}, ["function"])]),
}

SELF_CONTAINED = {"07.2", "07.3"}
