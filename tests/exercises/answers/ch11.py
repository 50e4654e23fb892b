"""Chapter 11's guided experiments: the right values and typical wrong ones with the words the
"not yet" message must contain (tests/exercises/test_chapters.py checks them).

The checks rerun the experiments, so the right values are computed the same way here."""
from __future__ import annotations

from dltutor.exercises.ch11 import _first_layer_frozen_accuracy, _late_clip_learns

CASES = {
    "11.1": ({"accuracy_first_frozen": _first_layer_frozen_accuracy()},
             [({"accuracy_first_frozen": 0.5}, ["lab.freeze('0')"]),
              ({"accuracy_first_frozen": 94.5}, ["between 0 and 1"])]),
    "11.2": ({"late_clip_learns": _late_clip_learns()},
             [({"late_clip_learns": True}, ["accuracy"]),
              ({"late_clip_learns": "no"}, ["True or False"])]),
    "11.3": ({"speedup": 1.9},
             [({"speedup": 0.5}, ["below 1"]), ({"speedup": 6.0}, ["same way"])]),
}

SELF_CONTAINED: set = set()
