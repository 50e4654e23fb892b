"""Chapter 09's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them
against dltutor/exercises/ch09.py)."""
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
# the same gradients scaled to a global norm of 1.5, between 09.2's two thresholds (0.5 and 2.0)
SMALLER = {name: grad * np.float32(0.3) for name, grad in ORIGINAL.items()}

def clip_global_norm(params, max_norm):
    grads = [p.grad.data for p in params if p.grad is not None]
    total = float(np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads)))
    if total > max_norm:
        for g in grads:
            g *= max_norm / total
    return total


def clip_each_tensor(params, max_norm):
    """Per-tensor clipping: each gradient by its own norm."""
    total = float(np.sqrt(sum((p.grad.numpy() ** 2).sum() for p in params if p.grad is not None)))
    for p in params:
        if p.grad is not None:
            norm = float(np.sqrt((p.grad.numpy() ** 2).sum()))
            if norm > max_norm:
                p.grad.data *= max_norm / norm
    return total


def clip_always(params, max_norm):
    """Scales even when the norm is already below max_norm."""
    grads = [p.grad.data for p in params if p.grad is not None]
    total = float(np.sqrt(sum((g ** 2).sum() for g in grads)))
    for g in grads:
        g *= max_norm / total
    return total


def clip_without_returning(params, max_norm):
    clip_global_norm(params, max_norm)


def clip_every_parameter(params, max_norm):
    """Right, but forgets that a parameter may have no gradient."""
    grads = [p.grad.data for p in params]
    total = float(np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads)))
    if total > max_norm:
        for g in grads:
            g *= max_norm / total
    return total


CASES = {
    "09.1": ({"tensor_clip": optim.ClipGradByNorm(0.5)},
             [({"tensor_clip": optim.ClipGradByGlobalNorm(0.5)}, ["one factor", "on its own"]),
              ({"tensor_clip": optim.ClipGradByValue(0.5)}, ["single values"]),
              ({"tensor_clip": optim.ClipGradByNorm(1.0)}, ["threshold"])]),
    "09.2": ({"predicted_scales": (1.0, 0.5 / 1.5), "original": SMALLER},
             [({"predicted_scales": (2.0 / 1.5, 0.5 / 1.5), "original": SMALLER},
               ["only ever shrinks"]),
              ({"predicted_scales": (1.5 / 2.0, 0.5 / 1.5), "original": SMALLER},
               ["1.5000", "below 2.0"]),
              ({"predicted_scales": (1.0, 1.0), "original": SMALLER}, ["above 0.5"]),
              ({"predicted_scales": (0.5 / 1.5, 1.0), "original": SMALLER}, ["Swapped"]),
              ({"predicted_scales": (1.0, 0.5 / 1.5), "original": ORIGINAL}, ["above 2.0"]),
              ({"predicted_scales": 1.0, "original": SMALLER}, ["two numbers"])]),
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
    "09.6": ({"clip_global_norm": clip_global_norm},
             [({"clip_global_norm": clip_each_tensor}, ["one factor"]),
              ({"clip_global_norm": clip_always}, ["below max_norm"]),
              ({"clip_global_norm": clip_without_returning}, ["should return the global norm"]),
              ({"clip_global_norm": clip_every_parameter}, ["raised AttributeError"]),
              ({"clip_global_norm": 1.0}, ["function"])]),
}

SELF_CONTAINED = {"09.4", "09.6"}
