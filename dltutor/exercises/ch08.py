"""The exercises of chapter 08 (freezing, and BatchNorm's statistics).

>>> Q1.verdict({"predicted_running_mean": [2.0, 3.0, 4.0]}).message
'Exercise 08.1: not yet. That is the batch mean itself; momentum 0.5 moves the running mean only half of the way at each pass.'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import nn, optim
from ..autograd import randn
from ..i18n import sentence
from .answers import called
from .checker import CheckResult, Exercise

_BATCH_MEAN = np.array([2.0, 3.0, 4.0])


def _running_mean(predicted_running_mean: Any) -> CheckResult:
    got = np.asarray(predicted_running_mean, dtype=float).ravel()   # [[1.5, 2.25, 3.0]] too
    if got.shape != (3,):
        return "running_mean has one value per feature: 3 numbers."
    if np.allclose(got, 0.75 * _BATCH_MEAN):
        return None, "Each pass halves the distance to the batch mean: 0 -> 1/2 -> 3/4 of it."
    if np.allclose(got, _BATCH_MEAN):
        return ("That is the batch mean itself; momentum 0.5 moves the running mean only half "
                "of the way at each pass.")
    if np.allclose(got, 0.5 * _BATCH_MEAN):
        return "That is after one pass; the second pass halves the remaining distance again."
    return ("running = (1 - momentum) * running + momentum * batch_mean, starting from 0, "
            "applied twice.")


Q1 = Exercise(
    "08.1", names=("predicted_running_mean",),
    title="BatchNorm's running mean",
    expects="three numbers",
    check=_running_mean,
    hints=("running_mean starts at 0; the batch's mean is [2, 3, 4].",
           "After one pass: 0.5 * 0 + 0.5 * mean; apply the same rule once more."),
    solution=("predicted_running_mean = [1.5, 2.25, 3.0]\n"
              "bn = nn.BatchNorm1d(3, momentum=0.5)\n"
              "batch = dt.tensor([[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]])\n"
              "bn(batch); bn(batch)\n"
              "print(bn.running_mean)"))


def _zero_branch(zero_branch_cause: Any) -> CheckResult:
    if zero_branch_cause == "zero_grad":
        return None, ("The gradient exists but is all zeros; with momentum the buffer is all "
                      "zeros too, so nothing moves the weight.")
    if zero_branch_cause == "not_reached":
        return ("Backward does reach the branch (x * 0 is still an op of the graph); look at "
                "what the gradient it brings is.")
    if zero_branch_cause is None:
        return "why_not_updating found a problem: read check.cause, not check.will_move."
    return sentence("{cause!r}: run why_not_updating on 'zeroed.weight' and read .cause.",
                    cause=zero_branch_cause)


Q2 = Exercise(
    "08.2", names=("zero_branch_cause",),
    title="Why a zeroed branch does not update",
    expects="the name of a cause, a string",
    check=_zero_branch,
    hints=("Add a branch self.zeroed = nn.Linear(4, 4) whose output is multiplied by 0 before "
           "the sum, run a backward and ask dt.diagnose.why_not_updating(model, opt, "
           "'zeroed.weight', loss=loss).",),
    solution=("from dltutor import nn, optim\n"
              "from dltutor.nn import functional as F\n"
              "class Zeroed(nn.Module):\n"
              "    def __init__(self):\n"
              "        super().__init__()\n"
              "        self.a, self.zeroed, self.head = nn.Linear(4, 4), nn.Linear(4, 4), "
              "nn.Linear(4, 1)\n"
              "    def forward(self, x):\n"
              "        return self.head((self.a(x) + self.zeroed(x) * 0).tanh())\n"
              "zero_model = Zeroed()\n"
              "zero_opt = optim.SGD(zero_model.parameters(), lr=0.1, momentum=0.9)\n"
              "zero_loss = F.mse_loss(zero_model(dt.randn(8, 4)), dt.randn(8, 1))\n"
              "zero_loss.backward(retain_graph=True)\n"
              "zero_branch_cause = dt.diagnose.why_not_updating(zero_model, zero_opt, "
              "'zeroed.weight', loss=zero_loss).cause"))


def _still_gets_gradient(still_gets_gradient: Any) -> CheckResult:
    if still_gets_gradient == "lr_mult":
        return None, ("lr_mult = 0 only scales the step; backward still computes the gradient "
                      "(and momentum may still move the weight).")
    if still_gets_gradient == "requires_grad":
        return ("Not that one: after one backward, print .grad of a parameter frozen each way and "
                "see which one holds numbers.")
    return "Answer 'requires_grad' or 'lr_mult'."


Q3 = Exercise(
    "08.3", names=("still_gets_gradient",),
    title="Which freeze still gets a gradient",
    expects="'requires_grad' or 'lr_mult'",
    check=_still_gets_gradient,
    hints=("Freeze one layer each way, run a backward, and look at .grad of each.",),
    solution=("still_gets_gradient = 'lr_mult'     # its .grad is computed; requires_grad_(False) "
              "leaves .grad None"))


class _EncoderDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
        self.decoder = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 4))

    def forward(self, x: Any) -> Any:
        return self.decoder(self.encoder(x))


def _blocks_to_freeze() -> list[tuple[Any, str]]:
    """Networks and the block to freeze in each; in the first, a name match by prefix would
    also catch blocks 10 and 11."""
    return [(nn.Sequential(*[nn.Linear(4, 4) for _ in range(12)]), "1"),
            (nn.Sequential(nn.Sequential(nn.Linear(4, 5), nn.Tanh()),
                           nn.Sequential(nn.Linear(5, 5), nn.Tanh()), nn.Linear(5, 4)), "1"),
            (_EncoderDecoder(), "encoder")]


def _freeze_block(freeze_block: Any) -> CheckResult:
    if not callable(freeze_block):
        return "freeze_block should be a function of (model, name)."
    for model, block in _blocks_to_freeze():
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)
        _, failure = called("freeze_block", freeze_block, model, block)
        if failure:
            return failure
        before = {name: p.numpy().copy() for name, p in model.named_parameters()}
        model(randn(8, 4)).pow(2).mean().backward()
        opt.step()
        for name, param in model.named_parameters():
            inside = name.startswith(block + ".")
            moved = not np.array_equal(param.numpy(), before[name])
            if inside and moved:
                return sentence("{name} belongs to block {block!r} but still moved.",
                                name=name, block=block)
            if inside and param.grad is not None:
                return sentence("{name} no longer moves, but backward still computes its "
                                "gradient: requires_grad_(False) saves that work.", name=name)
            if not inside and not moved:
                return sentence("{name} is outside block {block!r} and should still train.",
                                name=name, block=block)
    return None


Q4 = Exercise(
    "08.4", names=("freeze_block",),
    title="Write freeze_block",
    expects="a function of (model, name)",
    check=_freeze_block,
    hints=("model.get_submodule(name) is the block, however deep it sits.",
           "requires_grad_(False) on the block freezes every parameter in it."),
    solution=("def freeze_block(model, name):\n"
              "    model.get_submodule(name).requires_grad_(False)"))

EXERCISES = [Q1, Q2, Q3, Q4]
