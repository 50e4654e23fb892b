"""The exercises of chapter 11 (the same code on a GPU, and GPU memory).

>>> Q2.verdict({"factors": (0.5, 0.5)}).message
'Exercise 11.2: not yet. Each loss is a mean over its own micro-batch; with 20 and 12 samples a half each would count the 12 samples as much as the 20.'
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import nn
from ..i18n import sentence
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
        return ("step_memory_mb should be a function: "
                "def step_memory_mb(model, batch_size, optimizer='adam'): ...")
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
            return "Adam keeps two more arrays per parameter (its two running averages)."
        fixed_only = expected_mb(0, opt)
        if math.isclose(got, fixed_only, rel_tol=0.01):
            return "The activations are missing: every layer's output for the whole batch."
        if math.isclose(got, want - expected_mb(0, "sgd") / 2, rel_tol=0.01):
            return "The gradients are missing: one more array per parameter, the same size."
        return sentence("for batch {batch} with {opt} it gives {got:.1f} MB; add parameters, "
                        "gradients, the optimizer's arrays and the activations (in MB: bytes / "
                        "1024**2)", batch=batch, opt=opt, got=got)
    if len(set(rules)) > 1:
        return "Count the activations the same way for every batch size: with the input or without."
    if rules[0]:
        return None, ("You counted the input batch too: it is in memory, so that is fair. The "
                      "chapter counts every module's output only; the difference is 784 numbers "
                      "a sample.")
    return None


Q1 = Exercise(
    "11.1", names=("step_memory_mb",),
    title="Write step_memory_mb",
    expects="a function step_memory_mb(model, batch_size, optimizer) returning megabytes",
    check=_step_memory,
    hints=("Four parts: parameters, gradients (the same size), the optimizer's arrays (0 for "
           "SGD, 1 for momentum, 2 for Adam, each the size of the parameters), activations.",
           "The activations: run the model once with a forward hook on each module that adds "
           "up out.data.nbytes, as activation_bytes does; they grow with the batch."),
    solution=("def step_memory_mb(model, batch_size, optimizer='adam'):\n"
              "    params = sum(p.data.nbytes for p in model.parameters())\n"
              "    arrays = {'sgd': 0, 'momentum': 1, 'adam': 2}[optimizer]\n"
              "    return (params * (2 + arrays) + activation_bytes(model, batch_size)) / MB"))


def _factors(factors: Any) -> CheckResult:
    got = tuple(float(f) for f in factors)
    if len(got) == 2 and np.allclose(got, (20 / 32, 12 / 32)):
        return None
    if len(got) == 2 and np.allclose(got, (0.5, 0.5)):
        return ("Each loss is a mean over its own micro-batch; with 20 and 12 samples a half "
                "each would count the 12 samples as much as the 20.")
    if len(got) == 2 and np.allclose(got, (1.0, 1.0)):
        return "Two means added up are about twice the mean over all 32 samples."
    if len(got) == 2 and np.allclose(got, (12 / 32, 20 / 32)):
        return "Swapped: the first micro-batch has 20 samples, the larger share."
    return "Weight each micro-batch's mean loss by its share of the 32 samples."


Q2 = Exercise(
    "11.2", names=("factors",),
    title="Micro-batches of unequal sizes",
    expects="two numbers",
    check=_factors,
    hints=("The mean over 32 samples is the sum of all 32 losses divided by 32.",
           "A micro-batch's mean times its size is its sum: 20 * mean_20 + 12 * mean_12, all "
           "over 32."),
    solution=("factors = (20 / 32, 12 / 32)\n"
              "net.zero_grad()\n"
              "for part, factor in ((slice(0, 20), factors[0]), (slice(20, 32), factors[1])):\n"
              "    (F.cross_entropy(net(xb[part]), yb[part]) * factor).backward()"))


#: The chapter's activations_alive experiment: 10 batches of 32 samples.
_BATCHES, _BATCH_SIZE = 10, 32


def _alive_when_detached(alive_detached: Any, kept_bytes: Any, net: Any) -> CheckResult:
    if alive_detached == _BATCHES:
        return ("A detached loss has no graph (grad_fn is None): it cannot keep the activations "
                "alive. Run activations_alive(lambda loss: loss.detach()).")
    if alive_detached != 0:
        return sentence("{answer!r}: run activations_alive(lambda loss: loss.detach()) and see.",
                        answer=alive_detached)
    weight = net[0].weight.numpy()            # net[1]'s output has net[0]'s width and dtype
    one = _BATCH_SIZE * weight.shape[0] * weight.dtype.itemsize
    if kept_bytes == _BATCHES * one:
        return None, ("detach() keeps the loss's value without its graph, so nothing upstream "
                      "stays alive; the whole loss keeps one hidden output a batch.")
    if kept_bytes == one:
        return ("That is one activation; keeping the losses leaves one alive for each of the 10 "
                "batches.")
    if kept_bytes == _BATCHES * one // weight.dtype.itemsize:
        return "That counts numbers; each float32 number takes 4 bytes."
    return ("kept_bytes: count the activations activations_alive(lambda loss: loss) leaves alive, "
            "times the size of one, out.data.nbytes of net[1]'s output for a batch of 32.")


Q3 = Exercise(
    "11.3", names=("alive_detached", "kept_bytes", "net"),
    title="Activations kept by loss.detach()",
    expects="two whole numbers, and the chapter's network",
    check=_alive_when_detached,
    hints=("Which of the three, the loss, loss.item() or loss.detach(), still has a grad_fn?",
           "One hidden output is net[1](net[0](dt.randn(32, 10))); its .data.nbytes is its size."),
    solution=("alive_detached = activations_alive(lambda loss: loss.detach())     # 0\n"
              "one_output = net[1](net[0](dt.randn(32, 10)))\n"
              "kept_bytes = activations_alive(lambda loss: loss) * one_output.data.nbytes"))

EXERCISES = [Q1, Q2, Q3]
