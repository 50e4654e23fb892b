"""Fair verdicts: every checker takes its reference answer in each form that means the same, and
refuses the typical wrong answers in those forms too.

A learner's right answer may come as a NumPy scalar (``np.False_`` from ``(a != b).any()``),
a 0-d array, a list where the solution has a tuple, an int where it has a float, a type's name
where it has the type, or a number typed to four significant digits from a printed table. The
forms come from each exercise's reference and wrong answers in tests/exercises/answers/.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import exercise_checks as checks

from .answers import CHAPTERS

CASES = [(exercise_id, right, wrong) for number in sorted(CHAPTERS)
         for exercise_id, (right, wrong) in sorted(CHAPTERS[number][0].items())]


def equivalent_forms(value):
    """Other spellings of ``value`` that mean the same answer (none for values of other kinds)."""
    if isinstance(value, int):
        return [float(value), np.int64(value), np.array(value)]
    if isinstance(value, float):
        forms = [np.float64(value), np.array(value)]
        if value != 0 and math.isfinite(value) and value != round(value):
            forms.append(float(f"{value:.4g}"))           # typed from a printed table
        return forms
    if isinstance(value, tuple) and all(isinstance(v, (int, float)) for v in value):
        return [list(value), np.array(value)]
    if isinstance(value, list) and value and all(isinstance(v, (int, float)) for v in value):
        return [tuple(value), np.array(value)]
    if isinstance(value, type):
        return [value.__name__, f" {value.__name__} "]
    return []


def variants(values: dict):
    """Each answer dict with one of its values replaced by an equivalent form."""
    for name, value in values.items():
        for form in equivalent_forms(value):
            yield name, form, {**values, name: form}


@pytest.mark.parametrize("exercise_id, right, wrong", CASES, ids=[c[0] for c in CASES])
def test_a_right_answer_is_right_in_every_form(exercise_id, right, wrong):
    for name, form, values in variants(right):
        verdict = checks.exercise(exercise_id).verdict(values)
        assert verdict.status == "correct", (name, repr(form), verdict.message)


@pytest.mark.parametrize("exercise_id, right, wrong", CASES, ids=[c[0] for c in CASES])
def test_a_wrong_answer_stays_wrong_in_every_form(exercise_id, right, wrong):
    for values, _ in wrong:
        for name, form, changed in variants(values):
            verdict = checks.exercise(exercise_id).verdict(changed)
            assert verdict.status == "not yet", (name, repr(form), verdict.message)


def test_the_forms_cover_the_kinds_of_answers():
    kinds = {type(value).__name__ for _, right, _ in CASES for value in right.values()
             if equivalent_forms(value)}
    # No exercise asks True or False: a coin toss would pass it (test_not_guessable.py).
    assert {"float", "int", "list", "tuple"} <= kinds, kinds
