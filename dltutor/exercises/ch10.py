"""The exercises of chapter 10 (data, checkpoints and resuming).

>>> Q2.verdict({"batches": (3, 3)}).message
'Exercise 10.2: not yet. Without drop_last the last, smaller batch (4 samples) is kept: 100 = 3 x 32 + 4.'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..i18n import text
from .answers import type_name, whole_numbers
from .checker import CheckResult, Exercise


def _sgd_state(sgd_state_keys: Any) -> CheckResult:
    got = set(sgd_state_keys)
    if got == {"step", "momentum_buffer"}:
        return None, text("ch10.momentum_buffer_why_resume")
    if got == {"momentum_buffer"}:
        return text("ch10.look_again_dltutor_also")
    if "exp_avg" in got:
        return text("ch10.exp_avg_exp_avg")
    return text("ch10.run_step_read_opt")


Q1 = Exercise(
    "10.1", names=("sgd_state_keys",),
    title="ch10.q1.title",
    expects="ch10.q1.expects",
    check=_sgd_state,
    hints=("ch10.q1.hint1",),
    solution=("from dltutor import nn, optim\n"
              "m = nn.Linear(2, 1)\n"
              "opt = optim.SGD(m.named_parameters(), lr=0.1, momentum=0.9)\n"
              "m(dt.ones(1, 2)).sum().backward()\n"
              "opt.step()\n"
              "sgd_state_keys = set(opt.state_dict()['state']['weight'])"))


def _batches(batches: Any) -> CheckResult:
    got = whole_numbers(batches)              # 4.9 is not a count of batches; 4.0 is 4
    if got is None or len(got) != 2:
        return text("ch10.give_two_whole_numbers")
    if got == (4, 3):
        return None
    if got == (3, 3):
        return text("ch10.without_drop_last_last")
    if got == (4, 4):
        return text("ch10.drop_last_true_drops")
    return text("ch10.count_len_dataloader_samples")


Q2 = Exercise(
    "10.2", names=("batches",),
    title="ch10.q2.title",
    expects="ch10.q2.expects",
    check=_batches,
    hints=("ch10.q2.hint1",),
    solution=("from dltutor.data import DataLoader, TensorDataset\n"
              "ds = TensorDataset(np.zeros((100, 2), dtype=np.float32), np.zeros(100))\n"
              "batches = (len(DataLoader(ds, batch_size=32)), "
              "len(DataLoader(ds, batch_size=32, drop_last=True)))"))


def _noise(noise: Any) -> CheckResult:
    if not callable(noise):
        return text("ch10.noise_function_noise_i")
    first, again = np.asarray(noise(5, 1)), np.asarray(noise(5, 1))
    if first.shape != (3,):
        return text("ch10.noise_i_epoch_return", shape=first.shape)
    if not np.array_equal(first, again):
        return text("ch10.two_calls_same_i")
    if np.array_equal(first, np.asarray(noise(6, 1))):
        return text("ch10.samples_get_same_noise")
    if np.array_equal(first, np.asarray(noise(5, 2))):
        return text("ch10.every_epoch_gets_same")
    return _small_and_random(np.array([np.asarray(noise(i, 1), dtype=float) for i in range(200)]))


def _small_and_random(samples: np.ndarray) -> CheckResult:
    """Noise for augmentation is small (it nudges a sample) and random (it does not follow the
    sample's index): 200 samples' noise, one row each."""
    if not np.abs(samples).max() < 1.0:
        return text("ch10.augmentation_noise_small_like")
    by_index = np.corrcoef(np.arange(len(samples)), samples[:, 0])[0, 1]
    if samples[:, 0].std() == 0 or abs(by_index) > 0.5:
        return text("ch10.noise_follows_sample_index")
    return None


Q3 = Exercise(
    "10.3", names=("noise",),
    title="ch10.q3.title",
    expects="ch10.q3.expects",
    check=_noise,
    hints=("ch10.q3.hint1", "ch10.q3.hint2"),
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
        return text("ch10.give_three_types_loaded")
    got, wanted = tuple(type_name(t) for t in loaded_types), _types_dt_load_gives()
    if got == wanted:
        return None, text("ch10.plain_values_go_into")
    if got[2] != wanted[2]:
        return text("ch10.weights_were_array_look")
    if "Tensor" in got[:2]:
        return text("ch10.only_arrays_become_tensors")
    return text("ch10.set_loaded_types_type")


Q4 = Exercise(
    "10.4", names=("loaded_types",),
    title="ch10.q4.title",
    expects="ch10.q4.expects",
    check=_loaded_types,
    hints=("ch10.q4.hint1",),
    solution=("import os, tempfile\n"
              "path = os.path.join(tempfile.mkdtemp(), 'ckpt.safetensors')\n"
              "dt.save({'weights': dt.ones(2), 'epoch': 3, 'lr': 0.05}, path)\n"
              "loaded = dt.load(path)\n"
              "loaded_types = (type(loaded['epoch']), type(loaded['lr']), "
              "type(loaded['weights']))"))

EXERCISES = [Q1, Q2, Q3, Q4]
