"""The exercises of chapter 10 (data, checkpoints and resuming).

>>> Q2.verdict({"batches": (3, 3)}).message
'Exercise 10.2: not yet. Without drop_last the last, smaller batch (4 samples) is kept: 100 = 3 x 32 + 4.'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..i18n import sentence
from .answers import type_name, whole_numbers
from .checker import CheckResult, Exercise


def _sgd_state(sgd_state_keys: Any) -> CheckResult:
    got = set(sgd_state_keys)
    if got == {"step", "momentum_buffer"}:
        return None, ("The momentum buffer is why a resume without the optimizer's state is not "
                      "exact: the first steps after it lack the accumulated velocity.")
    if got == {"momentum_buffer"}:
        return "Look again: dltutor also keeps each parameter's step count."
    if "exp_avg" in got:
        return "exp_avg and exp_avg_sq are Adam's running averages; SGD with momentum keeps less."
    return "Run one step and read opt.state_dict()['state'] for one parameter."


Q1 = Exercise(
    "10.1", names=("sgd_state_keys",),
    title="What SGD with momentum keeps",
    expects="a set of state keys",
    check=_sgd_state,
    hints=("Make optim.SGD(model.named_parameters(), lr=0.1, momentum=0.9), take one step, then "
           "look at opt.state_dict()['state'].",),
    solution=("from dltutor import nn, optim\n"
              "m = nn.Linear(2, 1)\n"
              "opt = optim.SGD(m.named_parameters(), lr=0.1, momentum=0.9)\n"
              "m(dt.ones(1, 2)).sum().backward()\n"
              "opt.step()\n"
              "sgd_state_keys = set(opt.state_dict()['state']['weight'])"))


def _batches(batches: Any) -> CheckResult:
    got = whole_numbers(batches)              # 4.9 is not a count of batches; 4.0 is 4
    if got is None or len(got) != 2:
        return "Give two whole numbers: the batches without drop_last, then with it."
    if got == (4, 3):
        return None
    if got == (3, 3):
        return ("Without drop_last the last, smaller batch (4 samples) is kept: "
                "100 = 3 x 32 + 4.")
    if got == (4, 4):
        return "drop_last=True drops the last, incomplete batch of 4 samples."
    return ("Count len(DataLoader(...)) for 100 samples in batches of 32, without and with "
            "drop_last.")


Q2 = Exercise(
    "10.2", names=("batches",),
    title="How many batches a DataLoader gives",
    expects="two whole numbers",
    check=_batches,
    hints=("100 samples in batches of 32: three full batches and what is left.",),
    solution=("from dltutor.data import DataLoader, TensorDataset\n"
              "ds = TensorDataset(np.zeros((100, 2), dtype=np.float32), np.zeros(100))\n"
              "batches = (len(DataLoader(ds, batch_size=32)), "
              "len(DataLoader(ds, batch_size=32, drop_last=True)))"))


def _noise(noise: Any) -> CheckResult:
    if not callable(noise):
        return "noise should be a function noise(i, epoch) returning 3 numbers."
    first, again = np.asarray(noise(5, 1)), np.asarray(noise(5, 1))
    if first.shape != (3,):
        return sentence("noise(i, epoch) should return 3 numbers, not shape {shape}.",
                        shape=first.shape)
    if not np.array_equal(first, again):
        return ("Two calls with the same (i, epoch) differ: draws from a shared generator depend "
                "on the order the threads ask. Seed a generator from (i, epoch).")
    if np.array_equal(first, np.asarray(noise(6, 1))):
        return "Samples 5 and 6 get the same noise: put the index i into the seed."
    if np.array_equal(first, np.asarray(noise(5, 2))):
        return "Every epoch gets the same noise: put the epoch into the seed too."
    return _small_and_random(np.array([np.asarray(noise(i, 1), dtype=float) for i in range(200)]))


def _small_and_random(samples: np.ndarray) -> CheckResult:
    """Noise for augmentation is small (it nudges a sample) and random (it does not follow the
    sample's index): 200 samples' noise, one row each."""
    if not np.abs(samples).max() < 1.0:
        return "Augmentation noise is small, like 0.01: it nudges a sample, it does not replace it."
    by_index = np.corrcoef(np.arange(len(samples)), samples[:, 0])[0, 1]
    if samples[:, 0].std() == 0 or abs(by_index) > 0.5:
        return ("This noise follows the sample's index instead of looking random: draw it from "
                "a generator seeded with (i, epoch).")
    return None


Q3 = Exercise(
    "10.3", names=("noise",),
    title="Noise that every worker repeats",
    expects="a function noise(i, epoch) returning 3 numbers",
    check=_noise,
    hints=("A background worker may draw sample 5 before or after sample 4: the noise may not "
           "depend on the order.",
           "np.random.default_rng([i, epoch]) is a generator seeded by both numbers."),
    solution=("def noise(i, epoch):\n"
              "    return np.random.default_rng([i, epoch]).normal(0.0, 0.01, size=3)"))


#: The keys 10.4 asks about, in the order of the answer: a plain int, a plain float, an array.
LOADED_KEYS = ("epoch", "lr", "weights")


def _types_dt_load_gives() -> tuple[str, ...]:
    """The type names of what dt.load gives back for 10.4's checkpoint, measured by a real
    save and load (never written down here)."""
    import os
    import tempfile

    from ..autograd import ones
    from ..io import load, save

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "ckpt.safetensors")
        save({"weights": ones(2), "epoch": 3, "lr": 0.05}, path)
        loaded = load(path)
        return tuple(type(loaded[key]).__name__ for key in LOADED_KEYS)


def _loaded_types(loaded_types: Any) -> CheckResult:
    if not isinstance(loaded_types, (tuple, list)) or len(loaded_types) != len(LOADED_KEYS):
        return "Give three types, of the loaded 'epoch', 'lr' and 'weights', in that order."
    got, wanted = tuple(type_name(t) for t in loaded_types), _types_dt_load_gives()
    if got == wanted:
        return None, ("Plain values go into the file's JSON metadata and come back as they "
                      "were; only arrays become tensors.")
    if got[2] != wanted[2]:
        return "The weights were an array: look at type(loaded['weights'])."
    if "Tensor" in got[:2]:
        return ("Only arrays become tensors; a plain int or float is stored as JSON and comes "
                "back as it was.")
    return ("Set loaded_types = (type(loaded['epoch']), type(loaded['lr']), "
            "type(loaded['weights'])).")


Q4 = Exercise(
    "10.4", names=("loaded_types",),
    title="What a checkpoint gives back",
    expects="three types",
    check=_loaded_types,
    hints=("Save {'weights': dt.ones(2), 'epoch': 3, 'lr': 0.05}, load it and look at the type "
           "of each value.",),
    solution=("import os, tempfile\n"
              "path = os.path.join(tempfile.mkdtemp(), 'ckpt.safetensors')\n"
              "dt.save({'weights': dt.ones(2), 'epoch': 3, 'lr': 0.05}, path)\n"
              "loaded = dt.load(path)\n"
              "loaded_types = (type(loaded['epoch']), type(loaded['lr']), "
              "type(loaded['weights']))"))

EXERCISES = [Q1, Q2, Q3, Q4]
