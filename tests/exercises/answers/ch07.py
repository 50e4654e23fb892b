"""Chapter 07's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them)."""
from __future__ import annotations

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
}

SELF_CONTAINED = {"07.2", "07.3"}
