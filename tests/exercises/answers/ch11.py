"""Chapter 11's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them
against dltutor/exercises/ch11.py)."""
from __future__ import annotations

from dltutor import nn
from dltutor.exercises.ch11 import MB, STATE_ARRAYS

#: The chapter's small network at the activations_alive experiment: net[1] outputs (32, 32)
#: float32 for a batch, 4096 bytes; 10 batches kept alive hold 40960.
NET = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 3))


def memory(parts=("params", "grads", "state", "activations"), input_from=None):
    """A step_memory_mb that counts only some of the four parts (a typical slip); the input
    batch counts among the activations from batch size ``input_from`` on (None: never)."""
    def step_memory_mb(model, batch_size, optimizer="adam"):
        params = sum(p.data.nbytes for p in model.parameters())
        total = 0
        total += params if "params" in parts else 0
        total += params if "grads" in parts else 0
        total += params * STATE_ARRAYS[optimizer] if "state" in parts else 0
        per_sample = 4 * (512 * 4 + 10)
        if input_from is not None and batch_size >= input_from:
            per_sample += 4 * 784                   # the input batch is in memory too
        total += per_sample * batch_size if "activations" in parts else 0
        return total / MB
    return step_memory_mb


CASES = {
    "11.1": ({"step_memory_mb": memory()},
             [({"step_memory_mb": memory(("params", "grads", "state"))}, ["activations"]),
              ({"step_memory_mb": memory(("params", "state", "activations"))}, ["gradients"]),
              ({"step_memory_mb": memory(("params", "grads", "activations"))}, ["Adam"]),
              ({"step_memory_mb": 12.5}, ["function"]),
              ({"step_memory_mb": memory(input_from=256)}, ["same way"])]),
    "11.2": ({"factors": (0.625, 0.375)},
             [({"factors": (0.5, 0.5)}, ["own micro-batch"]),
              ({"factors": (0.375, 0.625)}, ["Swapped"])]),
    "11.3": ({"alive_detached": 0, "kept_bytes": 40960, "net": NET},
             [({"alive_detached": 10, "kept_bytes": 40960, "net": NET}, ["grad_fn"]),
              ({"alive_detached": 3, "kept_bytes": 40960, "net": NET}, ["3: run"]),
              ({"alive_detached": 0, "kept_bytes": 4096, "net": NET}, ["one activation"]),
              ({"alive_detached": 0, "kept_bytes": 10240, "net": NET}, ["4 bytes"]),
              ({"alive_detached": 0, "kept_bytes": 0, "net": NET}, ["times the size of one"])]),
}

SELF_CONTAINED: set = set()
