"""The exercises of chapter 07 (learning rates during training, schedulers, step counts).

>>> Q1.verdict({"total_iters": 10}).message
'Exercise 07.1: not yet. Stepped once per batch, the scheduler counts batches: total_iters must be the number of batches in the whole run.'
"""
from __future__ import annotations

import math
from typing import Any

from .. import nn, optim
from ..i18n import text
from .answers import number, called, same_number
from .checker import CheckResult, Exercise

_EPOCHS, _BATCHES = 10, 24          # the chapter's full run: 10 epochs of 1500 / 64 -> 24 batches


def _total_iters(total_iters: Any) -> CheckResult:
    if total_iters == _EPOCHS * _BATCHES:
        return None, text("ch07.code_total_iters_epochs")
    if total_iters == _EPOCHS:
        return text("ch07.stepped_once_per_batch")
    if total_iters == _BATCHES:
        return text("ch07.epoch_batches_lr_reach")
    return text("ch07.number_scheduler_steps_run")


Q1 = Exercise(
    "07.1", names=("total_iters",),
    title="ch07.q1.title",
    expects="ch07.q1.expects",
    check=_total_iters,
    hints=("ch07.q1.hint1", "ch07.q1.hint2"),
    solution="total_iters = 10 * len(make_loader())        # 240")


def _effective_lr(effective_lr: Any) -> CheckResult:
    if same_number(effective_lr, 0.1 * 0.5 * 3.0):
        return None, text("ch07.effective_lr_group_lr")
    if same_number(effective_lr, 0.1 * 3.0):
        return text("ch07.scheduler_already_halved_group")
    if same_number(effective_lr, 0.1 * 0.5):
        return text("ch07.lr_mult_multiplies_group")
    return text("ch07.multiply_group_current_lr")


Q2 = Exercise(
    "07.2", names=("effective_lr",),
    title="ch07.q2.title",
    expects="ch07.q2.expects",
    check=_effective_lr,
    hints=("ch07.q2.hint1", "ch07.q2.hint2"),
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
        return None, text("ch07.paddle_group_lr_scheduler")
    if same_number(got, 0.05 * 0.5 * 0.2 * 3.0):
        return text("ch07.parameter_group_paddle_overwrites")
    if same_number(got, 0.2) or same_number(got, 0.2 * 0.5):
        return text("ch07.paddle_group_learning_rate")
    if same_number(got, 0.05 * 0.2) or same_number(got, 0.05 * 0.2 * 3.0):
        return text("ch07.scheduler_stepped_once_stepdecay")
    return text("ch07.multiply_scheduler_current_lr")


Q3 = Exercise(
    "07.3", names=("paddle_fc_lr",),
    title="ch07.q3.title",
    expects="ch07.q3.expects",
    check=_paddle_group_lr,
    hints=("ch07.q3.hint1", "ch07.q3.hint2", "ch07.q3.hint3"),
    solution=("paddle_fc_lr = 0.05 * 0.5 * 0.2    # scheduler lr x the group's scale: 0.005;\n"
              "                                   # the group overwrote ParamAttr's 3.0"))


def _first_frozen_step(first_frozen_step: Any) -> CheckResult:
    step = number(first_frozen_step)
    if step is None or step != int(step):
        return text("ch07.step_whole_number_row")
    if step == 2 * _BATCHES:
        return None, text("ch07.recorder_has_row_per")
    if step == 2:
        return text("ch07.epoch_recorder_has_row")
    if step == 2 * _BATCHES + 1:
        return text("ch07.rows_count_from_steps")
    if step == 2 * _BATCHES - 1:
        return text("ch07.row_last_step_epoch")
    return text("ch07.find_first_row_fc1")


Q4 = Exercise(
    "07.4", names=("first_frozen_step",),
    title="ch07.q4.title",
    expects="ch07.q4.expects",
    check=_first_frozen_step,
    hints=("ch07.q4.hint1", "ch07.q4.hint2"),
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
        return text("ch07.warmup_then_cosine_function")
    for lr, warmup, total in _WARMUP_RUNS:
        opt = optim.SGD([nn.Parameter([0.0])], lr=lr)
        scheduler, failure = called("warmup_then_cosine", warmup_then_cosine, opt, warmup, total)
        if failure:
            return failure
        if not hasattr(scheduler, "step"):
            return text("ch07.warmup_then_cosine_return")
        for step in range(total + 1):
            got, want = opt.param_groups[0]["lr"], warmup_cosine_lr(step, lr, warmup, total)
            if not math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-12):
                return _where_it_differs(step, warmup, total, got, want)
            scheduler.step()
    return None


def _where_it_differs(step: int, warmup: int, total: int, got: float, want: float) -> str:
    if step == 0:
        return text("ch07.first_step_use_lr", want=want, got=got)
    if step < warmup:
        return text("ch07.during_warmup_steps_lr", warmup=warmup, step=step, want=want, got=got)
    return text("ch07.after_warmup_cosine_run", total=total, step=step, want=want, got=got)


Q5 = Exercise(
    "07.5", names=("warmup_then_cosine",),
    title="ch07.q5.title",
    expects="ch07.q5.expects",
    check=_warmup_then_cosine,
    hints=("ch07.q5.hint1", "ch07.q5.hint2"),
    solution=("def warmup_then_cosine(opt, warmup, total):\n"
              "    return lr_scheduler.SequentialLR(\n"
              "        opt, [lr_scheduler.LinearLR(opt, start_factor=0.01, total_iters=warmup),\n"
              "              lr_scheduler.CosineAnnealingLR(opt, T_max=total - warmup)],\n"
              "        milestones=[warmup])"))

EXERCISES = [Q1, Q2, Q3, Q4, Q5]
