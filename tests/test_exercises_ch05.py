"""Chapter 05's exercises answer back (the checks are in ``tests/exercise_checks.py``)."""
from __future__ import annotations

from exercise_checks import chapter_tests

CASES = {
    "05.1": ({"total_iters": 240},
             [({"total_iters": 10}, ["counts batches"]), ({"total_iters": 24}, ["one epoch"])]),
    "05.2": ({"effective_lr": 0.15},
             [({"effective_lr": 0.3}, ["halved"]), ({"effective_lr": 0.05}, ["lr_mult = 3"])]),
    "05.3": ({"moves": False, "gets_gradient": True},
             [({"moves": True, "gets_gradient": True}, ["does not move"]),
              ({"moves": False, "gets_gradient": False}, ["still computes"])]),
}

SELF_CONTAINED = {"05.2"}

globals().update(chapter_tests("05", CASES, SELF_CONTAINED))
