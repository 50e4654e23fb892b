"""Chapter 09's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them)."""
from __future__ import annotations

import numpy as np

from dltutor import optim

# gradients with the chapter's shapes: layers 0 and 2 have norm 3 together, layer 4 has norm 4
ORIGINAL = {"0.weight": np.full((16, 4), 0.25, dtype=np.float32),       # norm 2
            "0.bias": np.zeros(16, dtype=np.float32),
            "2.weight": np.zeros((16, 16), dtype=np.float32),
            "2.bias": np.full(16, np.sqrt(5) / 4, dtype=np.float32),      # norm sqrt(5)
            "4.weight": np.zeros((1, 16), dtype=np.float32),
            "4.bias": np.array([4.0], dtype=np.float32)}                  # norm 4

CASES = {
    "09.1": ({"tensor_clip": optim.ClipGradByNorm(0.5)},
             [({"tensor_clip": optim.ClipGradByGlobalNorm(0.5)}, ["one factor", "on its own"]),
              ({"tensor_clip": optim.ClipGradByValue(0.5)}, ["single values"]),
              ({"tensor_clip": optim.ClipGradByNorm(1.0)}, ["threshold"])]),
    "09.2": ({"predicted_scale": 1.0},
             [({"predicted_scale": 2.0 / 1.4647}, ["only ever shrinks"]),
              ({"predicted_scale": 1.0 / 1.4647}, ["below 2.0"])]),
    "09.3": ({"norm_without_last": 3.0, "original": ORIGINAL},
             [({"norm_without_last": 5.0, "original": ORIGINAL}, ["still counted", "need_clip"]),
              ({"norm_without_last": 4.0, "original": ORIGINAL}, ["own norm"])]),
    "09.4": ({"bad_op": "sqrt", "bad_pass": "backward"},
             [({"bad_op": "sqrt", "bad_pass": "forward"}, ["finite", "derivative"]),
              ({"bad_op": "sum", "bad_pass": "backward"}, ["before it"])]),
    "09.5": ({"shrunk": ["0.weight", "2.weight", "4.weight"]},
             [({"shrunk": ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"]},
               ["biases", "below 0.5"]),
              ({"shrunk": ["2.weight"]}, ["each by its own factor"])]),
}

SELF_CONTAINED = {"09.4"}
