"""The exercises of chapter 07 (learning rates during training, schedulers, step counts).

>>> Q1.verdict({"total_iters": 10}).message
'Exercise 07.1: not yet. Stepped once per batch, the scheduler counts batches: total_iters must be the number of batches in the whole run.'
"""
from __future__ import annotations

import math
from typing import Any

from .. import nn, optim
from ..i18n import sentence
from .answers import number, called, same_number
from .checker import CheckResult, Exercise

_EPOCHS, _BATCHES = 10, 24          # the chapter's full run: 10 epochs of 1500 / 64 -> 24 batches


def _total_iters(total_iters: Any) -> CheckResult:
    if total_iters == _EPOCHS * _BATCHES:
        return None, "In code: total_iters = EPOCHS * len(loader)."
    if total_iters == _EPOCHS:
        return ("Stepped once per batch, the scheduler counts batches: total_iters must be the "
                "number of batches in the whole run.")
    if total_iters == _BATCHES:
        return "That is one epoch's batches; the lr should reach its end after all 10 epochs."
    return "The number of scheduler steps in the run: epochs x batches per epoch."


Q1 = Exercise(
    "07.1", names=("total_iters",),
    title="total_iters when stepping per batch",
    expects="a whole number",
    check=_total_iters,
    hints=("How many times is sched.step() called in 10 epochs, once per batch?",
           "len(make_loader()) is the number of batches of one epoch."),
    solution="total_iters = 10 * len(make_loader())        # 240")


def _effective_lr(effective_lr: Any) -> CheckResult:
    if same_number(effective_lr, 0.1 * 0.5 * 3.0):
        return None, ("effective lr = group lr (after the scheduler) x lr_mult; explain_lr "
                      "shows both parts.")
    if same_number(effective_lr, 0.1 * 3.0):
        return ("The scheduler already halved the group's lr; lr_mult multiplies what the "
                "group has now.")
    if same_number(effective_lr, 0.1 * 0.5):
        return "lr_mult = 3 multiplies the group's lr for this parameter."
    return "Multiply the group's current lr by the parameter's lr_mult."


Q2 = Exercise(
    "07.2", names=("effective_lr",),
    title="An effective learning rate",
    expects="a number",
    check=_effective_lr,
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


def _paddle_group_lr(paddle_fc_lr: Any) -> CheckResult:
    got = paddle_fc_lr
    if same_number(got, 0.05 * 0.5 * 0.2):
        return None, ("Paddle: group lr = the scheduler's lr x the group's learning_rate; in "
                      "dltutor write the group's own lr, 0.01, and the scheduler scales it.")
    if same_number(got, 0.05 * 0.5 * 0.2 * 3.0):
        return ("In a parameter group, Paddle overwrites a parameter's ParamAttr learning rate "
                "with the group's learning_rate when it adds the group: the 3.0 no longer counts.")
    if same_number(got, 0.2) or same_number(got, 0.2 * 0.5):
        return ("In Paddle a group's learning_rate is a scale of the optimizer's learning rate, "
                "not a learning rate of its own.")
    if same_number(got, 0.05 * 0.2) or same_number(got, 0.05 * 0.2 * 3.0):
        return "The scheduler was stepped once: StepDecay(step_size=1, gamma=0.5) halved 0.05."
    return "Multiply the scheduler's current lr by the group's learning_rate scale."


Q3 = Exercise(
    "07.3", names=("paddle_fc_lr",),
    title="An effective learning rate in Paddle",
    expects="a number",
    check=_paddle_group_lr,
    hints=("In Paddle the optimizer's learning_rate is the scheduler; what is its lr after one "
           "step of StepDecay(0.05, step_size=1, gamma=0.5)?",
           "A group's 'learning_rate' multiplies that lr for the group's parameters.",
           "Does the ParamAttr rate still count inside a group? Paddle writes the group's "
           "learning_rate into each parameter's optimize_attr when it adds the group."),
    solution=("paddle_fc_lr = 0.05 * 0.5 * 0.2    # scheduler lr x the group's scale: 0.005;\n"
              "                                   # the group overwrote ParamAttr's 3.0"))


def _first_frozen_step(first_frozen_step: Any) -> CheckResult:
    step = number(first_frozen_step)
    if step is None or step != int(step):
        return "A step is a whole number: the row of the Recorder's series."
    if step == 2 * _BATCHES:
        return None, ("The Recorder has one row per optimizer step, counted from 0: epochs 0 "
                      "and 1 are rows 0 to 47.")
    if step == 2:
        return "That is an epoch; the Recorder has one row per optimizer step (per batch)."
    if step == 2 * _BATCHES + 1:
        return "Rows count from 0: the 48 steps of epochs 0 and 1 are rows 0 to 47."
    if step == 2 * _BATCHES - 1:
        return "Row 47 is the last step of epoch 1, still at lr 0.01: its update is not zero."
    return "Find the first row of fc1's column in rec.series('update_norm') that is 0."


Q4 = Exercise(
    "07.4", names=("first_frozen_step",),
    title="The first frozen step in a Recorder",
    expects="a whole number",
    check=_first_frozen_step,
    hints=("rec.series('update_norm') is an array with one row per step and one column per "
           "layer; rec.names.index('fc1') is fc1's column.",
           "np.flatnonzero(column == 0)[0] is the first row where the column is 0."),
    solution=("column = rec.series('update_norm')[:, rec.names.index('fc1')]\n"
              "first_frozen_step = int(np.flatnonzero(column == 0)[0])          # 48"))


# Fresh runs for 07.5: (the optimizer's lr, warmup steps, total steps).
_WARMUP_RUNS = ((0.05, 5, 20), (0.3, 2, 11), (1.0, 10, 30))


def warmup_cosine_lr(step: int, lr: float, warmup: int, total: int) -> float:
    """The lr step ``step`` (from 0) uses: 1% of ``lr`` rising in a line to ``lr`` over
    ``warmup`` steps, then a cosine from ``lr`` down to 0 at step ``total``.

    >>> [round(warmup_cosine_lr(k, 1.0, 2, 4), 4) for k in range(5)]
    [0.01, 0.505, 1.0, 0.5, 0.0]
    """
    if step < warmup:
        return lr * (0.01 + 0.99 * step / warmup)
    return lr * (1 + math.cos(math.pi * (step - warmup) / (total - warmup))) / 2


def _warmup_then_cosine(warmup_then_cosine: Any) -> CheckResult:
    if not callable(warmup_then_cosine):
        return "warmup_then_cosine should be a function of (opt, warmup, total)."
    for lr, warmup, total in _WARMUP_RUNS:
        opt = optim.SGD([nn.Parameter([0.0])], lr=lr)
        scheduler, failure = called("warmup_then_cosine", warmup_then_cosine, opt, warmup, total)
        if failure:
            return failure
        if not hasattr(scheduler, "step"):
            return "warmup_then_cosine should return the scheduler it makes."
        for step in range(total + 1):
            got, want = opt.param_groups[0]["lr"], warmup_cosine_lr(step, lr, warmup, total)
            if not math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-12):
                return _where_it_differs(step, warmup, total, got, want)
            scheduler.step()
    return None


def _where_it_differs(step: int, warmup: int, total: int, got: float, want: float) -> str:
    if step == 0:
        return sentence("The first step should use 1% of the lr ({want:.4g}); this schedule "
                        "gives {got:.4g}.", want=want, got=got)
    if step < warmup:
        return sentence("During the {warmup} warmup steps the lr should rise in a straight "
                        "line; at step {step} it should be {want:.4g}, not {got:.4g}.",
                        warmup=warmup, step=step, want=want, got=got)
    return sentence("After warmup the cosine should run from the full lr down to 0 at step "
                    "{total}, over total - warmup steps; at step {step} the lr should be "
                    "{want:.4g}, not {got:.4g}.", total=total, step=step, want=want, got=got)


Q5 = Exercise(
    "07.5", names=("warmup_then_cosine",),
    title="Write warmup_then_cosine",
    expects="a function of (opt, warmup, total) returning a scheduler",
    check=_warmup_then_cosine,
    hints=("The SequentialLR of the warmup section does this for warmup 5 and the run's length.",
           "LinearLR(opt, start_factor=0.01, total_iters=warmup), then "
           "CosineAnnealingLR(opt, T_max=total - warmup), joined at milestones=[warmup]."),
    solution=("def warmup_then_cosine(opt, warmup, total):\n"
              "    return lr_scheduler.SequentialLR(\n"
              "        opt, [lr_scheduler.LinearLR(opt, start_factor=0.01, total_iters=warmup),\n"
              "              lr_scheduler.CosineAnnealingLR(opt, T_max=total - warmup)],\n"
              "        milestones=[warmup])"))

EXERCISES = [Q1, Q2, Q3, Q4, Q5]
