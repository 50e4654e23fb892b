"""The exercises of chapter 13 (parameters across processes): the linear-scaling rule, the
global norm from every process's share, and ZeRO's optimizer memory per process.

>>> Q2.verdict({"global_norm": 7.0}).message
'Exercise 13.2: not yet. Norms do not add up; their squares do: add the squared norms of the shares, then take the square root.'
"""
from __future__ import annotations

import math
from typing import Any

from ..i18n import text
from .answers import number, same_number
from .checker import CheckResult, Exercise

#: 13.1: one process trained well at this lr, batch 32; now 8 processes, batch 32 each.
_ONE_PROCESS_LR, _PROCESSES = 0.05, 8


def _scaled_lr(scaled_lr: Any) -> CheckResult:
    got = number(scaled_lr)
    if got is None:
        return text("ch13.give_one_number_lr")
    if same_number(got, _ONE_PROCESS_LR * _PROCESSES):
        return None, text("ch13.eight_times_samples_step")
    if same_number(got, _ONE_PROCESS_LR):
        return text("ch13.same_lr_moves_less")
    if same_number(got, _ONE_PROCESS_LR / _PROCESSES):
        return text("ch13.divided_instead_multiplied")
    if same_number(got, _ONE_PROCESS_LR * math.sqrt(_PROCESSES)):
        return text("ch13.square_root_rule")
    return text("ch13.linear_rule_multiplies_n")


Q1 = Exercise(
    "13.1", names=("scaled_lr",),
    title="ch13.q1.title",
    expects="ch13.q1.expects",
    check=_scaled_lr,
    hints=("ch13.q1.hint1", "ch13.q1.hint2"),
    solution="scaled_lr = 8 * 0.05")

#: 13.2: the squared norms of the two processes' shares of the averaged gradients.
_SQUARES = (9.0, 16.0)


def _global_norm(global_norm: Any) -> CheckResult:
    got = number(global_norm)
    if got is None:
        return text("ch13.give_one_number_norm")
    if same_number(got, math.sqrt(sum(_SQUARES))):
        return None
    if same_number(got, sum(math.sqrt(s) for s in _SQUARES)):
        return text("ch13.norms_do_not_add")
    if same_number(got, sum(_SQUARES)):
        return text("ch13.sum_of_squares_root")
    if any(same_number(got, math.sqrt(s)) for s in _SQUARES):
        return text("ch13.one_process_part")
    return text("ch13.add_squares_then_root")


Q2 = Exercise(
    "13.2", names=("global_norm",),
    title="ch13.q2.title",
    expects="ch13.q2.expects",
    check=_global_norm,
    hints=("ch13.q2.hint1",),
    solution="global_norm = np.sqrt(9.0 + 16.0)")

#: 13.3: Adam over a million float32 values, on 4 processes, shared out evenly.
_VALUES, _BYTES_PER_VALUE, _MOMENTS, _ZERO_PROCESSES = 1_000_000, 4, 2, 4


def _bytes_per_process(bytes_per_process: Any) -> CheckResult:
    got = number(bytes_per_process)
    if got is None:
        return text("ch13.give_one_number_bytes")
    whole = _MOMENTS * _VALUES * _BYTES_PER_VALUE
    if same_number(got, whole / _ZERO_PROCESSES):
        return None, text("ch13.each_moment_kept_once")
    if same_number(got, whole):
        return text("ch13.plain_optimizer_every_process")
    if same_number(got, whole / _ZERO_PROCESSES / _MOMENTS):
        return text("ch13.adam_keeps_two_moments")
    if same_number(got, whole / _ZERO_PROCESSES * 2):
        return text("ch13.float32_four_bytes")
    return text("ch13.moments_values_bytes_processes")


Q3 = Exercise(
    "13.3", names=("bytes_per_process",),
    title="ch13.q3.title",
    expects="ch13.q3.expects",
    check=_bytes_per_process,
    hints=("ch13.q3.hint1", "ch13.q3.hint2"),
    solution="bytes_per_process = 2 * 1_000_000 * 4 // 4")

EXERCISES = [Q1, Q2, Q3]
