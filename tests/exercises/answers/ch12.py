"""Chapter 12's guided experiments: the right values and typical wrong ones with the words the
"not yet" message must contain (tests/exercises/test_chapters.py checks them).

The checks rerun the experiments, so the right values are computed the same way here."""
from __future__ import annotations

from dltutor.exercises.ch12 import _first_layer_frozen_accuracy, _late_clip_run
from dltutor.lab import demos


def steps_to_90(lab):
    """The chapter's solution: steps until the accuracy reaches 0.9, checked every 25 steps."""
    while lab.accuracy() < 0.9:
        lab.step(25)
    return lab.steps_done


def measured_speedup():
    fast = demos.spirals_mlp()
    fast.set_lr_mult("0", 10)
    return steps_to_90(demos.spirals_mlp()) / steps_to_90(fast)


def steps_to_reach(lab, target, every):
    while lab.accuracy() < target:
        lab.step(every)
    return lab.steps_done


def steps_to_reach_one_late(lab, target, every):
    """Steps once more before it looks: one check late."""
    lab.step(every)
    while lab.accuracy() < target:
        lab.step(every)
    return lab.steps_done + every


def steps_checked_every_step(lab, target, every):
    while lab.accuracy() < target:
        lab.step(1)
    return lab.steps_done


LATE_ACCURACY, NORM_AFTER_3, FIRST_NORM, WHOLE_RUN_NORM = _late_clip_run()

CASES = {
    "12.1": ({"accuracy_first_frozen": _first_layer_frozen_accuracy()},
             [({"accuracy_first_frozen": 0.5}, ["lab.freeze('0')"]),
              ({"accuracy_first_frozen": 94.5}, ["between 0 and 1"])]),
    "12.2": ({"late_clip_accuracy": LATE_ACCURACY, "norm_after_3": NORM_AFTER_3},
             [({"late_clip_accuracy": 0.97, "norm_after_3": NORM_AFTER_3}, ["0.95"]),
              ({"late_clip_accuracy": 50.0, "norm_after_3": NORM_AFTER_3}, ["between 0 and 1"]),
              ({"late_clip_accuracy": LATE_ACCURACY, "norm_after_3": WHOLE_RUN_NORM},
               ["whole run"]),
              ({"late_clip_accuracy": LATE_ACCURACY, "norm_after_3": FIRST_NORM},
               ["first step"]),
              ({"late_clip_accuracy": LATE_ACCURACY, "norm_after_3": 1.0},
               ["first 3 rows"]),
              ({"late_clip_accuracy": False, "norm_after_3": NORM_AFTER_3}, ["two numbers"])]),
    "12.3": ({"speedup": measured_speedup()},
             [({"speedup": 0.5}, ["below 1"]), ({"speedup": 6.0}, ["same way"]),
              ({"speedup": 2.0}, ["same way"])]),             # a guess inside the old range
    "12.4": ({"steps_to_reach": steps_to_reach},
             [({"steps_to_reach": steps_to_reach_one_late}, ["first seen at step"]),
              ({"steps_to_reach": steps_checked_every_step}, ["checking every 15 steps"]),
              ({"steps_to_reach": lambda lab, target, every: 0}, ["not taken a step"]),
              ({"steps_to_reach": 100}, ["function"])]),
}

SELF_CONTAINED = {"12.4"}
