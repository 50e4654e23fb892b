"""The exercises of chapter 05 (optimizers, parameter groups, per-parameter settings).

>>> Q1.verdict({"total_iters": 10}).message
'Exercise 05.1: not yet. Stepped once per batch, the scheduler counts batches: total_iters must be the number of batches in the whole run.'
"""
from __future__ import annotations

import math
from typing import Any

from .checker import Exercise

_EPOCHS, _BATCHES = 10, 24          # the chapter's full run: 10 epochs of 1500 / 64 -> 24 batches


def _total_iters(total_iters: Any) -> str | None:
    if total_iters == _EPOCHS * _BATCHES:
        return None, "In code: total_iters = EPOCHS * len(loader)."
    if total_iters == _EPOCHS:
        return ("Stepped once per batch, the scheduler counts batches: total_iters must be the "
                "number of batches in the whole run.")
    if total_iters == _BATCHES:
        return "That is one epoch's batches; the lr should reach its end after all 10 epochs."
    return "The number of scheduler steps in the run: epochs x batches per epoch."


Q1 = Exercise(
    "05.1", names=("total_iters",), check=_total_iters,
    hints=("How many times is sched.step() called in 10 epochs, once per batch?",
           "len(make_loader()) is the number of batches of one epoch."),
    solution="total_iters = 10 * len(make_loader())        # 240")


def _effective_lr(effective_lr: Any) -> str | None:
    got = float(effective_lr)
    if math.isclose(got, 0.1 * 0.5 * 3.0, rel_tol=1e-6):
        return None, ("effective lr = group lr (after the scheduler) x lr_mult; explain_lr "
                      "shows both parts.")
    if math.isclose(got, 0.1 * 3.0, rel_tol=1e-6):
        return ("The scheduler already halved the group's lr; lr_mult multiplies what the "
                "group has now.")
    if math.isclose(got, 0.1 * 0.5, rel_tol=1e-6):
        return "lr_mult = 3 multiplies the group's lr for this parameter."
    return "Multiply the group's current lr by the parameter's lr_mult."


Q2 = Exercise(
    "05.2", names=("effective_lr",), check=_effective_lr,
    hints=("An SGD with lr=0.1, StepLR(opt, step_size=1, gamma=0.5) stepped once, and "
           "p.lr_mult = 3.",
           "dt.diagnose.explain_lr(opt, name).effective_lr, or opt.effective_lr(p, group)."),
    solution=("from dltutor import nn, optim\n"
              "from dltutor.optim import lr_scheduler\n"
              "layer = nn.Linear(2, 1)\n"
              "layer.weight.lr_mult = 3.0\n"
              "opt = optim.SGD(layer.named_parameters(), lr=0.1)\n"
              "lr_scheduler.StepLR(opt, step_size=1, gamma=0.5).step()\n"
              "effective_lr = dt.diagnose.explain_lr(opt, 'weight').effective_lr      # 0.15"))


def _mult_zero(moves: Any, gets_gradient: Any) -> str | None:
    if moves is True:
        return "lr_mult = 0 makes every step of this parameter zero (plain SGD): it does not move."
    if gets_gradient is False:
        return ("lr_mult only scales the step: backward still computes the gradient "
                "(requires_grad is still True).")
    if moves is False and gets_gradient is True:
        return None, ("why_not_updating names it: lr_mult_zero. The gradient is computed for "
                      "nothing; requires_grad_(False) would save that work.")
    return "Answer True or False for each."


Q3 = Exercise(
    "05.3", names=("moves", "gets_gradient"), check=_mult_zero,
    hints=("Set net.conv1.weight.lr_mult = 0, train one step, compare the weight before and "
           "after, and look at net.conv1.weight.grad.",
           "diagnose.why_not_updating(net, opt, 'conv1.weight') says why."),
    solution=("net = make_net()\n"
              "net.conv1.weight.lr_mult = 0.0\n"
              "opt = optim.SGD(net.named_parameters(), lr=0.05)\n"
              "before = net.conv1.weight.numpy().copy()\n"
              "xb, yb = next(iter(make_loader()))\n"
              "F.cross_entropy(net(xb), yb).backward()\n"
              "opt.step()\n"
              "moves = not np.array_equal(before, net.conv1.weight.numpy())      # False\n"
              "gets_gradient = net.conv1.weight.grad is not None                   # True"))

EXERCISES = [Q1, Q2, Q3]
