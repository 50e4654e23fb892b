"""The exercises of chapter 11 (the same code on a GPU, and GPU memory).

>>> Q2.verdict({"factors": (0.5, 0.5)}).message
'Exercise 11.2: not yet. Each loss is a mean over its own micro-batch; with 20 and 12 samples a half each would count the 12 samples as much as the 20.'
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import nn
from ..i18n import text
from .checker import CheckResult, Exercise

MB = 1024 ** 2
#: Arrays the optimizers keep per parameter.
STATE_ARRAYS = {"sgd": 0, "momentum": 1, "adam": 2}


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def expected_mb(batch_size: int, optimizer: str, with_input: bool = False) -> float:
    """The chapter's four parts for its 784-512-512-10 MLP, in MB (float32): every module's
    output counted as activations, and with ``with_input`` the input batch too (also in memory,
    so a fair way to count)."""
    params = 4 * (784 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10)
    per_sample = 4 * (512 + 512 + 512 + 512 + 10 + (784 if with_input else 0))
    fixed = params * (2 + STATE_ARRAYS[optimizer])
    return (fixed + per_sample * batch_size) / MB


def _step_memory(step_memory_mb: Any) -> CheckResult:
    if not callable(step_memory_mb):
        return text("ch11.step_memory_mb_function")
    model = _mlp()
    rules = []                                   # per setting, which way of counting matched
    for batch, opt in ((32, "adam"), (256, "adam"), (32, "sgd"), (1024, "momentum")):
        got, want = float(step_memory_mb(model, batch, opt)), expected_mb(batch, opt)
        # The closer of the two ways of counting (at batch 32 they differ by less than 1%).
        errors = {rule: abs(got / expected_mb(batch, opt, with_input=rule) - 1)
                  for rule in (False, True)}
        closest = min(errors, key=lambda rule: errors[rule])
        if errors[closest] <= 0.01:
            rules.append(closest)
            continue
        if opt == "adam" and math.isclose(got, expected_mb(batch, "sgd"), rel_tol=0.01):
            return text("ch11.adam_keeps_two_more")
        fixed_only = expected_mb(0, opt)
        if math.isclose(got, fixed_only, rel_tol=0.01):
            return text("ch11.activations_missing_every_layer")
        if math.isclose(got, want - expected_mb(0, "sgd") / 2, rel_tol=0.01):
            return text("ch11.gradients_missing_more_array")
        return text("ch11.batch_gives_mb_add", batch=batch, opt=opt, got=got)
    if len(set(rules)) > 1:
        return text("ch11.count_activations_same_way")
    if rules[0]:
        return None, text("ch11.you_counted_input_batch")
    return None


Q1 = Exercise(
    "11.1", names=("step_memory_mb",),
    title="ch11.q1.title",
    expects="ch11.q1.expects",
    check=_step_memory,
    hints=("ch11.q1.hint1", "ch11.q1.hint2"),
    solution=("def step_memory_mb(model, batch_size, optimizer='adam'):\n"
              "    params = sum(p.data.nbytes for p in model.parameters())\n"
              "    arrays = {'sgd': 0, 'momentum': 1, 'adam': 2}[optimizer]\n"
              "    return (params * (2 + arrays) + activation_bytes(model, batch_size)) / MB"))


def _factors(factors: Any) -> CheckResult:
    got = tuple(float(f) for f in factors)
    if len(got) == 2 and np.allclose(got, (20 / 32, 12 / 32)):
        return None
    if len(got) == 2 and np.allclose(got, (0.5, 0.5)):
        return text("ch11.each_loss_mean_over")
    if len(got) == 2 and np.allclose(got, (1.0, 1.0)):
        return text("ch11.two_means_added_up")
    if len(got) == 2 and np.allclose(got, (12 / 32, 20 / 32)):
        return text("ch11.swapped_first_micro_batch")
    return text("ch11.weight_each_micro_batch")


Q2 = Exercise(
    "11.2", names=("factors",),
    title="ch11.q2.title",
    expects="ch11.q2.expects",
    check=_factors,
    hints=("ch11.q2.hint1", "ch11.q2.hint2"),
    solution=("factors = (20 / 32, 12 / 32)\n"
              "net.zero_grad()\n"
              "for part, factor in ((slice(0, 20), factors[0]), (slice(20, 32), factors[1])):\n"
              "    (F.cross_entropy(net(xb[part]), yb[part]) * factor).backward()"))


#: The chapter's activations_alive experiment: 10 batches of 32 samples.
_BATCHES, _BATCH_SIZE = 10, 32


def _alive_when_detached(alive_detached: Any, kept_bytes: Any, net: Any) -> CheckResult:
    if alive_detached == _BATCHES:
        return text("ch11.detached_loss_has_no")
    if alive_detached != 0:
        return text("ch11.run_activations_alive_lambda", answer=alive_detached)
    weight = net[0].weight.numpy()            # net[1]'s output has net[0]'s width and dtype
    one = _BATCH_SIZE * weight.shape[0] * weight.dtype.itemsize
    if kept_bytes == _BATCHES * one:
        return None, text("ch11.detach_keeps_loss_value")
    if kept_bytes == one:
        return text("ch11.activation_keeping_losses_leaves")
    if kept_bytes == _BATCHES * one // weight.dtype.itemsize:
        return text("ch11.counts_numbers_each_float32")
    return text("ch11.kept_bytes_count_activations")


Q3 = Exercise(
    "11.3", names=("alive_detached", "kept_bytes", "net"),
    title="ch11.q3.title",
    expects="ch11.q3.expects",
    check=_alive_when_detached,
    hints=("ch11.q3.hint1", "ch11.q3.hint2"),
    solution=("alive_detached = activations_alive(lambda loss: loss.detach())     # 0\n"
              "one_output = net[1](net[0](dt.randn(32, 10)))\n"
              "kept_bytes = activations_alive(lambda loss: loss) * one_output.data.nbytes"))

EXERCISES = [Q1, Q2, Q3]
