"""Chapter 07's exercises answer back (the checks are in ``tests/exercise_checks.py``)."""
from __future__ import annotations

import numpy as np

from exercise_checks import chapter_tests

G = np.array([0.3, -2.0])

CASES = {
    "07.1": ({"scaled_grads": [3.0, 4.0]},
             [({"scaled_grads": [6.0, 8.0]}, ["5 / 10"]),
              ({"scaled_grads": [5.0, 5.0]}, ["value"])]),
    "07.2": ({"by_value": [0.3, -1.0], "by_norm": G / np.linalg.norm(G)},
             [({"by_value": G / np.linalg.norm(G), "by_norm": [0.3, -1.0]}, ["Swapped"]),
              ({"by_value": [0.3, -1.0], "by_norm": [0.3, -1.0]}, ["direction"])]),
    "07.3": ({"counted_in_global_norm": False},
             [({"counted_in_global_norm": True}, ["neither"])]),
}

SELF_CONTAINED = {"07.1", "07.2", "07.3"}

globals().update(chapter_tests("07", CASES, SELF_CONTAINED))
