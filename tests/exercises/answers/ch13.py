"""Chapter 13's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them
against dltutor/exercises/ch13.py)."""
from __future__ import annotations

import numpy as np

CASES = {
    "13.1": ({"scaled_lr": 0.4},
             [({"scaled_lr": 0.05}, ["8 times less"]), ({"scaled_lr": 0.00625}, ["divided"]),
              ({"scaled_lr": 0.05 * np.sqrt(8)}, ["square-root"]), ({"scaled_lr": 0.3}, ["multiplies"]),
              ({"scaled_lr": "0.4"}, ["one number"])]),
    "13.2": ({"global_norm": 5.0},
             [({"global_norm": 7.0}, ["squares do"]), ({"global_norm": 25.0}, ["square root"]),
              ({"global_norm": 4.0}, ["one process"]), ({"global_norm": 3.5}, ["all_reduce"])]),
    "13.3": ({"bytes_per_process": 2_000_000},
             [({"bytes_per_process": 8_000_000}, ["every process"]),
              ({"bytes_per_process": 1_000_000}, ["two moments"]),
              ({"bytes_per_process": 4_000_000}, ["4 bytes"]),
              ({"bytes_per_process": 3}, ["share them out"])]),
}

SELF_CONTAINED = {"13.1", "13.2", "13.3"}
